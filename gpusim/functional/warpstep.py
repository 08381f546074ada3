"""One CTA executed one warp instruction at a time: the functional engine's
interface to the timing engine (execute at issue, as MGPUSim and GPGPU-Sim do).

Owns: :class:`CTAStepper`, a :class:`~gpusim.functional.engine.ChunkExecutor`
over a single CTA whose :meth:`CTAStepper.step` executes the next instruction
of ONE warp (the lanes of that warp at the warp's lowest runnable PC: the same
min-PC reconvergence as the chunked engine, so results and counters are the
same), and :class:`Step`, the outcome the timing engine consumes: the
instruction, its active lanes, its memory accesses, the warp's next PC, and
whether a barrier was reached or released. Values are never recomputed by
the timing engine.

Imports numpy, isa and the functional engine; never simpy or cupy.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np

from gpusim.functional import engine as _engine
from gpusim.functional.engine import ChunkExecutor, Grid
from gpusim.functional.memory import GlobalMemory, MemoryFault
from gpusim.functional.memops import Access
from isa.ir import Instr, Kernel, Special
from isa.opcodes import Kind

__all__ = ["CTAStepper", "Step", "DONE"]

#: Next PC of a warp that has no runnable lane (all exited, or all waiting at a barrier).
DONE = int(_engine._DONE)


@dataclass(slots=True)
class Step:
    """What one warp instruction did.

    Attributes:
        instr: the instruction executed; ``None`` for the implicit return of a
            warp that ran past the kernel's last instruction.
        active: threads that executed it (guard-false threads included, as
            Nsight Compute counts ``smsp__thread_inst_executed``).
        accesses: its memory accesses (empty for non-memory instructions).
        next_pc: the warp's next PC, or :data:`DONE` if it has no runnable lane.
        released: a ``bar.sync`` completed: every warp of the CTA may go on.
        taken: for ``bra``: guard-true lanes (jumping); else 0.
    """

    instr: Instr | None
    active: int
    accesses: list[Access]
    next_pc: int
    released: bool
    taken: int


class CTAStepper(ChunkExecutor):
    """The threads of one CTA, stepped warp by warp.

    Args:
        kernel, grid, params, memory, dynamic_shared: as for
            :class:`~gpusim.functional.engine.ChunkExecutor`.
        block: linear CTA id (x fastest).
        counters, stats: per-PC and per-launch counters, accumulated in place
            (shared by all CTAs of a launch).
        sm_count, max_warps: the GPU's SMs and warp slots per SM.
        smid: the SM the CTA runs on (``%smid``).
        warp_slot0: warp slot of the CTA's first warp on that SM (``%warpid``).
        clock: a callable returning the current SM cycle (``%clock``, ``%clock64``).
    """

    def __init__(self, kernel: Kernel, grid: Grid, block: int, params: np.ndarray, memory: GlobalMemory,
                 dynamic_shared: int, counters: tuple[np.ndarray, np.ndarray], stats: "collections.Counter[str]",
                 sm_count: int, max_warps: int, smid: int, warp_slot0: int, clock):
        super().__init__(kernel, grid, block, 1, params, memory, dynamic_shared, counters, stats, sm_count,
                         max_warps, max_steps=1 << 62)
        self.smid, self.warp_slot0, self.clock = smid, warp_slot0, clock
        self.accesses = []
        self._diverge()  # per-thread PCs from the start: warps advance independently

    def warp_pc(self, w: int) -> int:
        """The next PC of warp ``w`` (:data:`DONE` if none of its lanes can run)."""
        return int(self.pcs[w * 32:w * 32 + 32].min())

    def step(self, w: int) -> Step:
        """Execute the next instruction of warp ``w`` (which must have one).

        Raises:
            gpusim.errors.KernelFault: a memory fault, a barrier or warp-sync
                misuse, exactly as in functional mode.
        """
        lo = w * 32
        pcs = self.pcs[lo:lo + 32]
        pc = int(pcs.min())
        sel = np.flatnonzero(pcs == pc) + lo
        instrs = self.instrs
        if pc >= len(instrs):  # falling off the end of the kernel is a return
            self.warp_counts[pc] += 1
            self.thread_counts[pc] += sel.size
            waiting = self.n_waiting
            self._exit(sel)
            return Step(None, int(sel.size), [], DONE, self.n_waiting < waiting, 0)
        ins = instrs[pc]
        self.warp_counts[pc] += 1
        self.thread_counts[pc] += sel.size
        acc = self.accesses = []
        waiting = self.n_waiting
        taken = 0
        kind = ins.spec.kind
        try:
            if kind is Kind.BRA:
                g = self.guarded(ins, sel)
                taken = self.count(g)
                self.branch(sel, g, self.kernel.labels[ins.operands[0].name], pc + 1)
            else:
                _engine._HANDLERS[kind](self, ins, sel)
        except MemoryFault as f:
            raise self._fault(ins, sel, f) from None
        # Threads arriving at bar.sync join the waiting count; a release (at a
        # barrier, or when exiting threads were the last ones missing) lowers it.
        released = self.n_waiting < waiting + (sel.size if kind is Kind.BAR else 0)
        return Step(ins, int(sel.size), acc, int(pcs.min()), released, taken)

    def special(self, op: Special, sel):
        """As the chunked engine, but ``%smid``, ``%warpid`` and the clocks are the timing model's."""
        n = self.count(sel)
        if op.name == "smid":
            return np.full(n, self.smid, np.uint32)
        if op.name == "warpid":
            return (self.lin_tid[sel] // 32 + self.warp_slot0).astype(np.uint32)
        if op.name in ("clock", "clock64"):
            return np.full(n, self.clock(), np.uint64 if op.name == "clock64" else np.uint32)
        return super().special(op, sel)
