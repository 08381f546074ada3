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

Run-ahead: when a warp asks for its next instruction and has none queued,
the CTA's warps run ahead functionally, lowest PC first as in the chunked
engine, each instruction once for all warps sitting at it (vectorised), and
every warp's outcomes wait in its queue (at most :data:`MAX_AHEAD`) until that
warp issues. Running a warp's instruction before its issue cycle changes
nothing a race-free kernel can observe: the warp's own earlier instructions
have all run, and every value it may read from another warp was written
before a barrier it has passed. So each warp stops at the instructions whose
timing is observable, which run one warp at a time when that warp issues:
``bar.sync`` (arrivals decide the release), ``exit``/``ret`` and the kernel's
end (exits can release a barrier), and reads of ``%clock``, ``%clock64`` and
``%globaltimer``. (A kernel that spins on a flag another CTA sets would spin
a number of times set by this functional order, not by the timing model.)

Imports numpy, isa and the functional engine; never simpy or cupy.
"""

from __future__ import annotations

import collections
from collections import deque
from dataclasses import dataclass

import numpy as np

from gpusim.functional import engine as _engine
from gpusim.functional.engine import ChunkExecutor, Grid
from gpusim.functional.memory import GlobalMemory, MemoryFault
from gpusim.functional.memops import Access
from isa.ir import Addr, Instr, Kernel, Special
from isa.opcodes import Kind

__all__ = ["CTAStepper", "Step", "DONE", "MAX_AHEAD"]

#: Outcomes a warp may have queued ahead of its issue (bounds memory in barrier-free loops).
MAX_AHEAD = 64
_TIMED_SPECIALS = ("clock", "clock64", "globaltimer")

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
        self.n_warps = grid.warps_per_block
        self.queued: list[deque[Step]] = [deque() for _ in range(self.n_warps)]
        self.batchable = _batchable(kernel)

    def warp_pc(self, w: int) -> int:
        """The next PC of warp ``w`` (:data:`DONE` if none of its lanes can run)."""
        return int(self.pcs[w * 32:w * 32 + 32].min())

    def step(self, w: int) -> Step:
        """The outcome of the next instruction of warp ``w`` (which must have
        one): executed now, or earlier while running ahead (see the module docstring).

        Raises:
            gpusim.errors.KernelFault: a memory fault, a barrier or warp-sync
                misuse, exactly as in functional mode.
        """
        q = self.queued[w]
        if q:
            return q.popleft()
        lo = w * 32
        pcs = self.pcs[lo:lo + 32]
        pc = int(pcs.min())
        if pc < len(self.instrs) and self.batchable[pc]:
            self._run_ahead()
            return q.popleft()
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

    def _run_ahead(self) -> None:
        """Run every warp of the CTA up to its next non-batchable instruction (or
        :data:`MAX_AHEAD` queued outcomes), lowest PC first, each PC once for all
        the warps at it; queue the outcomes."""
        by_warp = self.pcs.reshape(-1, 32)
        n = len(self.instrs)
        may_run = np.append(self.batchable, False)  # index n: the kernel's end (and DONE, clipped)
        while True:
            wpc = by_warp.min(axis=1)
            cand = may_run[np.minimum(wpc, n)]
            cand &= np.fromiter(map(len, self.queued), np.int64, self.n_warps) < MAX_AHEAD
            if not cand.any():
                return
            pc = int(wpc[cand].min())
            self._step_batch(pc, by_warp, cand & (wpc == pc))

    def _step_batch(self, pc: int, by_warp: np.ndarray, at: np.ndarray) -> None:
        """Execute ``pc`` for the lanes at it of every warp flagged in ``at``; queue the outcomes."""
        lanes_at = (by_warp == pc) & at[:, None]
        sel = np.flatnonzero(lanes_at)
        warps = np.flatnonzero(at)
        active = np.count_nonzero(lanes_at, axis=1)[warps]
        ins = self.instrs[pc]
        self.warp_counts[pc] += warps.size
        self.thread_counts[pc] += sel.size
        acc = self.accesses = []
        kind = ins.spec.kind
        taken = np.zeros(warps.size, np.int64)
        try:
            if kind is Kind.BRA:
                g = self.guarded(ins, sel)
                taken = np.bincount(g >> 5, minlength=self.n_warps)[warps]
                self.branch(sel, g, self.kernel.labels[ins.operands[0].name], pc + 1)
            else:
                _engine._HANDLERS[kind](self, ins, sel)
        except MemoryFault as f:
            raise self._fault(ins, sel, f) from None
        next_pc = by_warp.min(axis=1)[warps]
        per_warp = _split_accesses(acc, warps) if acc else None
        for i, v in enumerate(warps.tolist()):
            self.queued[v].append(Step(ins, int(active[i]), per_warp[i] if per_warp else [], int(next_pc[i]),
                                       False, int(taken[i])))

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


def _batchable(kernel: Kernel) -> np.ndarray:
    """Per PC: may the instruction run for several warps before they issue it?"""
    def timed(op) -> bool:
        if isinstance(op, Special):
            return op.name in _TIMED_SPECIALS
        return isinstance(op, Addr) and timed(op.base)
    return np.array([ins.spec.kind not in (Kind.BAR, Kind.EXIT) and not any(timed(op) for op in ins.operands)
                     for ins in kernel.instrs], np.bool_)


def _split_accesses(accesses: list[Access], warps: np.ndarray) -> list[list[Access]]:
    """The accesses of a batch, split by warp: one list per entry of ``warps``
    (ascending warp indices); lanes are in ascending order in every access."""
    out: list[list[Access]] = [[] for _ in range(warps.size)]
    for a in accesses:
        wl = a.lanes >> 5
        lo = np.searchsorted(wl, warps).tolist()
        hi = np.searchsorted(wl, warps, side="right").tolist()
        row = 0
        for i in range(warps.size):
            b, e = lo[i], hi[i]
            if b == e:
                continue
            if a.warp_wavefronts is None:
                out[i].append(Access(a.op, a.space, a.addrs[b:e], a.lanes[b:e], a.width))
            else:
                wf = a.warp_wavefronts[row:row + 1]
                out[i].append(Access(a.op, a.space, a.addrs[b:e], a.lanes[b:e], a.width, int(wf[0]), wf))
            row += 1
    return out
