"""The watchdog's proof that a kernel can never finish: its state repeats.

Owns: the process-wide *effect epoch* (a counter every instruction that may write
memory or change barrier or exit state increments: ``st``, ``atom``/``red``,
``bar``, ``exit``, ``cp.async``, ``wgmma`` and any kind not known to be pure), the
fingerprint of a :class:`~gpusim.functional.engine.ChunkExecutor`'s functional state
(PCs, live and waiting threads, every register) and :class:`Watchdog`, which takes
fingerprints at most every :data:`INTERVAL_S` seconds of wall time and reports a repeat.

Why it is exact: the engines are deterministic. If the complete functional state of
every thread (PCs, registers, which threads live and wait) at one moment equals the state
at an earlier moment, and no instruction that writes memory ran in between (same
epoch: memory is unchanged too), then the threads will run the same instructions on the
same values forever: the kernel is in an endless loop (``loop: bra loop;``, a spin on a
flag no thread will set). A legitimate loop changes a register (its counter, its
accumulator) or memory on every iteration, so it is never stopped by this check, however
long it runs. Kernels that read ``%clock``, ``%clock64`` or ``%globaltimer`` (whose value
is the time, not part of the state) are not checked: only the step and cycle budgets
(``Device(max_steps=..., max_cycles=...)``) stop them. A loop whose state never repeats
(a counter incremented forever) is stopped by those budgets too.

Imports numpy, the standard library and isa; never simpy or cupy.
"""

from __future__ import annotations

import hashlib
import time

import numpy as np

from isa.ir import Addr, Kernel, Special
from isa.opcodes import Kind

__all__ = ["EPOCH", "INTERVAL_S", "PURE_KINDS", "TIME_SPECIALS", "Watchdog", "checkable", "fingerprint",
           "impure_pcs"]

#: Instruction kinds that change only registers and PCs (their effects are in the fingerprint).
PURE_KINDS = frozenset({Kind.ALU, Kind.MOV, Kind.CVTA, Kind.BRA, Kind.LD, Kind.SHFL, Kind.VOTE, Kind.ACTIVEMASK,
                        Kind.MMA, Kind.FENCE})
#: Seconds of wall time between two fingerprints (at least; more when fingerprints are costly).
INTERVAL_S = 0.25
#: Special registers whose values are the time, not part of the state: kernels that read them are not checked.
TIME_SPECIALS = ("clock", "clock64", "globaltimer")


class _Epoch:
    """A counter of instructions with effects outside the fingerprint (process-wide: a write by
    any launch only makes a repeat less likely to be seen, never a false one)."""

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


EPOCH = _Epoch()


def impure_pcs(kernel: Kernel) -> list[bool]:
    """Per PC (and one more for the implicit return at the end): may the instruction write
    memory or change barrier/exit state?"""
    return [ins.spec.kind not in PURE_KINDS and not _cas(ins) for ins in kernel.instrs] + [True]


def _cas(ins) -> bool:
    """``atom.cas``: writes memory only where its comparison holds, so its handler
    (:func:`gpusim.functional.memops.atomic`) advances the epoch itself, then only (a spin on a
    lock that is never released writes nothing, and its state repeats)."""
    return ins.spec.kind is Kind.ATOM and ins.op == "atom" and ins.has("cas")


def checkable(kernel: Kernel) -> bool:
    """Whether the repeat check applies: the kernel reads no clock or timer."""
    def reads(op) -> bool:
        if isinstance(op, Special):
            return op.name in TIME_SPECIALS
        return isinstance(op, Addr) and reads(op.base)
    return not any(reads(op) for ins in kernel.instrs for op in ins.operands)


def fingerprint(ex, h=None):
    """Add the functional state of executor ``ex`` (PCs, live and waiting threads, barrier
    state, every register) to the hash ``h`` (a new blake2b if ``None``); returns ``h``."""
    h = h or hashlib.blake2b(digest_size=16)
    h.update(repr((ex.converged, ex.pc, ex.n_live, ex.n_waiting)).encode())
    arrays = [ex.live, ex.waiting, ex.bar_pc]
    if not ex.converged:
        arrays.append(ex.pcs)
    if getattr(ex, "n_parked", 0):
        arrays.append(ex.parked_pc)
    for name in ("started", "bar_id", "bar_count", "bar_val"):
        a = getattr(ex, name, None)
        if a is not None:
            arrays.append(a)
    data = ex.regs.data
    arrays += [data[n] for n in sorted(data)]
    for a in arrays:
        h.update(np.ascontiguousarray(a).view(np.uint8).data)
    return h


class Watchdog:
    """Reports when the state of a launch repeats with no memory written in between.

    ``due()`` says (cheaply) whether a fingerprint should be taken now; ``seen(key, digest,
    progress)`` records one taken at a comparable point (``key``: e.g. the PC of the branch it
    was taken at) and returns ``True`` when the same state was recorded before under the same
    epoch with fewer instructions run (the timing model's functional run-ahead may stand still
    while the SMs catch up: a state seen twice without an instruction run in between proves
    nothing). Fingerprints are taken at most every :data:`INTERVAL_S` seconds, and at most
    about 2 % of the wall time (an interval of 50 times the cost of the last one).
    """

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.interval = INTERVAL_S
        self.next = time.perf_counter() + self.interval
        self.epoch = -1
        self.states: dict = {}

    def due(self) -> bool:
        return self.enabled and time.perf_counter() >= self.next

    def seen(self, key, digest: bytes, progress: int, cost: float = 0.0) -> bool:
        """Record fingerprint ``digest`` taken at ``key`` (which took ``cost`` seconds) when ``progress``
        instructions had run (an int, or a tuple of counts of parts that each must have run, ``None``
        for a part with nothing to run); whether the same state was recorded before, under the same
        epoch, with fewer instructions run (some ran in between and came back to it)."""
        self.interval = max(INTERVAL_S, 50 * cost)
        self.next = time.perf_counter() + self.interval
        if EPOCH.n != self.epoch:
            self.epoch, self.states = EPOCH.n, {}
        item = (key, digest)
        before = self.states.setdefault(item, progress)
        if isinstance(progress, tuple):  # one count per part (None: that part cannot run, nothing to prove)
            return before != progress and all(p is None or b < p for b, p in zip(before, progress))
        return before < progress
