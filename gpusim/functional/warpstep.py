"""A group of CTAs executed one warp instruction at a time: the functional
engine's interface to the timing engine (execute at issue, as MGPUSim and
GPGPU-Sim do).

Owns: :class:`CTAStepper`, a :class:`~gpusim.functional.engine.ChunkExecutor`
over a group of consecutive CTAs whose :meth:`CTAStepper.step` gives the
outcome of the next instruction of ONE warp (the lanes of that warp at the
warp's lowest runnable PC: the same min-PC reconvergence as the chunked
engine, so results and counters are the same), and :class:`Step`, the
outcome the timing engine consumes: the instruction, its active lanes, its
memory accesses, the warp's next PC, and the threads that exited or wait at
a barrier. Values are never recomputed by the timing engine.

Run-ahead: when a warp asks for its next instruction and has none queued,
the warps of the stepper's group of CTAs run ahead functionally, lowest PC
first as in the chunked engine, each instruction once for all warps sitting
at it (vectorised), and every warp's outcomes wait in its queue (at most
:data:`MAX_AHEAD`) until that warp issues. Running a warp's instruction
before its issue cycle changes nothing a race-free kernel can observe: the
warp's own earlier instructions have all run, and every value it may read
from another warp was written before a barrier it has passed. Barriers run
ahead too: functionally a ``bar.sync`` completes when every live thread of
the CTA has executed it, whatever the order; *when* it completes is the
timing model's business, which counts arrivals and exits as warps issue them
(:attr:`Step.active`, :attr:`Step.exited`, :attr:`Step.waits`). Two kinds
of instruction run one warp at a time when that warp issues, never ahead:
reads of ``%clock``, ``%clock64`` and ``%globaltimer``, whose values are the
issue cycle, and those through which CTAs communicate (global atomics,
ordered loads and stores, wide fences:
:func:`gpusim.functional.parallel.communicates`). So a CTA spinning on a
flag that another CTA sets reads it at its loads' issue cycles, and spins as
long as the timing model makes it wait (a load run ahead would read the flag
up to :data:`MAX_AHEAD` outcomes early: ``validation/probes/flag_latency.py``
measured a hop between two SMs at 12,389 cycles so, 472 at issue, 476 on an H200).

Imports numpy, isa and the functional engine; never simpy or cupy.
"""

from __future__ import annotations

import collections
from collections import deque
from itertools import repeat
from typing import NamedTuple

import numpy as np

from gpusim.functional import engine as _engine
from gpusim.functional import watchdog as _watchdog
from gpusim.functional.engine import ChunkExecutor, Grid
from gpusim.functional.its import PARKED
from gpusim.functional.memops import Access
from gpusim.functional.memory import GlobalMemory, MemoryFault
from gpusim.functional.parallel import communicates
from isa.ir import Addr, Instr, Kernel, Special
from isa.opcodes import Kind

__all__ = ["CTAStepper", "Step", "DONE", "MAX_AHEAD", "cta_specific", "reads_specials"]

#: Outcomes a warp may have queued ahead of its issue (bounds memory in barrier-free loops).
MAX_AHEAD = 256

_NO_ACCESS: list = []
#: Next PC of a warp that has no runnable lane (all exited, or all waiting at a barrier).
DONE = int(_engine._DONE)


class Step(NamedTuple):
    """What one warp instruction did.

    Attributes:
        pc: the instruction's index (``len(kernel.instrs)`` for the implicit return).
        instr: the instruction executed; ``None`` for the implicit return of a
            warp that ran past the kernel's last instruction.
        active: threads that executed it (guard-false threads included, as
            Nsight Compute counts ``smsp__thread_inst_executed``).
        accesses: its memory accesses (empty for non-memory instructions).
        next_pc: the warp's next PC once this step ran functionally, or
            :data:`DONE` if it then had no runnable lane.
        taken: for ``bra``: guard-true lanes (jumping); else 0.
        exited: threads of the warp that exited at this instruction.
        waits: ``bar.sync`` reached by every live thread of the warp: the warp
            cannot go on until the CTA's barrier completes.
    """

    pc: int
    instr: Instr | None
    active: int
    accesses: list[Access]
    next_pc: int
    taken: int
    exited: int = 0
    waits: bool = False


class CTAStepper(ChunkExecutor):
    """The threads of a group of CTAs (consecutive, or those ``block_ids`` names), stepped warp
    by warp.

    Args:
        kernel, grid, params, memory, dynamic_shared: as for
            :class:`~gpusim.functional.engine.ChunkExecutor`.
        block: linear id (x fastest) of the group's first CTA.
        n_blocks: CTAs in the group (1 for kernels that read ``%smid`` or
            ``%warpid``, whose values are those of the CTA's own SM and slots).
        counters, stats: per-PC and per-launch counters, accumulated in place
            (shared by all CTAs of a launch).
        sm_count, max_warps: the GPU's SMs and warp slots per SM.
        smid: the SM the CTA runs on (``%smid``; single-CTA groups).
        warp_slot0: warp slot of the CTA's first warp on that SM (``%warpid``).
        clock: a callable returning the current SM cycle (``%clock``, ``%clock64``).
        block_ids: the group's CTAs' linear ids when they are not consecutive (int64, shape
            (n_blocks,)); ``None``: ``block .. block + n_blocks - 1``.

    Warps are numbered across the group: warp ``w`` is warp ``w % warps_per_block``
    of CTA ``block_ids[w // warps_per_block]``.
    """

    #: Called with no argument each time the warps run ahead (the timing launch's watchdog,
    #: :meth:`gpusim.timing.gpu.Launch.watch`, which looks at the time and returns at once
    #: when it is not due); ``None``: nothing is called.
    on_run_ahead = None

    def __init__(self, kernel: Kernel, grid: Grid, block: int, params: np.ndarray, memory: GlobalMemory,
                 dynamic_shared: int, counters: tuple[np.ndarray, np.ndarray], stats: "collections.Counter[str]",
                 sm_count: int, max_warps: int, smid: int, warp_slot0: int, clock, n_blocks: int = 1,
                 block_ids: np.ndarray | None = None):
        super().__init__(kernel, grid, block, n_blocks, params, memory, dynamic_shared, counters, stats, sm_count,
                         max_warps, max_steps=1 << 62, block_ids=block_ids)
        self.smid, self.warp_slot0, self.clock = smid, warp_slot0, clock
        self.accesses = []
        self._diverge()  # per-thread PCs from the start: warps advance independently
        self.n_warps = n_blocks * grid.warps_per_block
        self.queued: list[deque[tuple]] = [deque() for _ in range(self.n_warps)]  # Step-ordered tuples
        self.batchable = np.append(_batchable(kernel), True)  # index n: the kernel's end
        #: Per PC: a warpgroup-collective instruction (wgmma.mma_async), run for whole warpgroups only.
        self.collective = np.array([i.spec.kind is Kind.WGMMA for i in kernel.instrs] + [False], np.bool_)
        self.by_warp = self.pcs.reshape(-1, 32)
        self.live_by_warp = self.live.reshape(-1, 32)
        self.started = np.zeros(self.n_warps, np.bool_)
        self.qlen = np.zeros(self.n_warps, np.int64)  # len(queued[w]) while running ahead
        self.ran = 0  # warp instructions executed (batches), for the watchdog
        self.prestarted = False  # prestart() was called
        self.pending: set[int] = set()  # CTAs started since the last run-ahead (prestart mode)

    def start(self, cta: int) -> int:
        """Let the warps of the group's CTA ``cta`` (0-based in the group) run: a CTA not started
        never executes an instruction here. Returns the index of its first warp."""
        wpb = self.grid.warps_per_block
        self.started[cta * wpb:(cta + 1) * wpb] = True
        if self.prestarted:
            self.pending.add(cta)
        return cta * wpb

    def prestart(self) -> None:
        """Let the warps of every CTA of the group run ahead from now on, before :meth:`start`
        names them (denser vectorised steps; the caller guarantees that the order in which the
        group's CTAs execute cannot change a result, e.g. no CTA reads what another writes).

        What :meth:`step` returns, and what each started warp has queued when it steps, stays
        as without it: a CTA started later has its warps' queues filled when it would have
        been, by the first run-ahead after its start (its first step runs one when no other
        warp's did), so a warp's queue never holds more than it would have."""
        self.started[:] = True
        self.prestarted = True

    def warp_pc(self, w: int) -> int:
        """The next PC of warp ``w`` (:data:`DONE` if none of its lanes can run)."""
        q = self.queued[w]
        if q:
            return q[0][0]
        return int(self.by_warp[w].min())

    def step(self, w: int, index: int = 0) -> tuple:
        """The outcome of the next instruction of warp ``w`` (which must have
        one): executed now, or earlier while running ahead (see the module docstring),
        as a plain tuple in :class:`Step`'s field order (``Step(*t)`` names the fields).
        ``index`` > 0 takes a later queued outcome instead (the timing model issuing in
        the order ptxas scheduled a straight-line region); the others stay queued in order.

        Raises:
            gpusim.errors.KernelFault: a memory fault, a barrier or warp-sync
                misuse, exactly as in functional mode.
        """
        q = self.queued[w]
        if index:
            t = q[index]
            del q[index]
            return t
        if not q:
            pc = int(self.by_warp[w].min())
            if not self.run_ahead_for(w):
                self._step_batch(pc, np.array([w]))
        elif self.pending and w // self.grid.warps_per_block in self.pending:
            self._run_ahead()  # its queue was filled ahead of its start: top up the others as then
        return q.popleft()

    def run_ahead_for(self, w: int, need: int = 1) -> bool:
        """Make warp ``w`` have at least ``need`` queued outcomes if its next instructions may
        run ahead (no ``%clock``-like read): run the group ahead as :meth:`step` would. Whether
        ``w`` then has ``need`` (False: its next instruction is not batchable, it has exited, or
        it waits at a barrier others have not reached). The timing model calls it before
        choosing which queued outcome a warp issues next, so that the choice never depends on
        how far the group happened to have run ahead (a host-side detail)."""
        q = self.queued[w]
        if len(q) >= need:
            return True
        pc = int(self.by_warp[w].min())
        if pc == DONE or not self.batchable[min(pc, len(self.batchable) - 1)]:
            return False
        before = len(q)
        self._run_ahead(cap=max(MAX_AHEAD, need))
        if len(q) == before:  # a wgmma waits for a warp of its warpgroup whose queue is full: let that one run on
            self._run_ahead(cap=None)
        return len(q) >= need

    def _run_ahead(self, cap: int | None = MAX_AHEAD) -> None:
        """Run every warp of the group up to its next non-batchable instruction (or ``cap``
        queued outcomes, ``None``: no bound), lowest PC first, each PC once for all the warps at
        it; queue the outcomes. A warpgroup-collective instruction (``wgmma.mma_async``) runs
        only for whole warpgroups: all live warps of the group at it, whatever their queues hold,
        and not before a live warp of the group that is behind has caught up."""
        if self.on_run_ahead is not None:
            self.on_run_ahead()
        self.pending.clear()
        self.qlen = np.fromiter(map(len, self.queued), np.int64, self.n_warps)
        by_warp = self.by_warp
        n = len(self.instrs)
        may_run = self.batchable
        wpc = by_warp.min(axis=1)
        blocked = np.zeros(self.n_warps, np.bool_)
        while True:
            cand = may_run[np.minimum(wpc, n)] & self.started & (wpc != DONE) & ~blocked
            if cap is not None:
                cand &= self.qlen < cap
            if not cand.any():
                return
            pc = int(wpc[cand].min())
            warps = np.flatnonzero(cand & (wpc == pc))
            if self.collective[pc]:
                warps, behind = self._warpgroups_at(pc, wpc)
                # only candidates wait: blocking a warp that is no candidate (its queue is full) changes
                # nothing, and the loop would come back to the same pc for ever
                behind = behind[cand[behind]]
                if behind.size:
                    blocked[behind] = True
                    continue
            if self._step_batch(pc, warps):
                wpc = by_warp.min(axis=1)  # a barrier or an exit may have moved other warps
            else:
                wpc[warps] = by_warp[warps].min(axis=1)

    def _warpgroups_at(self, pc: int, wpc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For a warpgroup-collective ``pc``: (the started warps at ``pc`` whose warpgroup's live warps
        are all there, the warps at ``pc`` whose warpgroup has a live warp elsewhere)."""
        at = np.flatnonzero(self.started & (wpc == pc))
        wpb = self.grid.warps_per_block
        first = (at // wpb) * wpb + (at % wpb) // 4 * 4
        live = self.live_by_warp.any(axis=1)
        ok = np.ones(at.size, np.bool_)
        for f in np.unique(first).tolist():
            members = np.arange(f, min(f + 4, (f // wpb + 1) * wpb))
            if (live[members] & (wpc[members] != pc)).any():
                ok[first == f] = False
        return at[ok], at[~ok]

    def _step_batch(self, pc: int, warps: np.ndarray) -> bool:
        """Execute ``pc`` for the lanes at it of the warps ``warps`` (ascending indices); queue
        the outcomes. Returns whether warps other than those may have moved (barriers, exits)."""
        by_warp = self.by_warp
        if pc >= len(self.instrs):  # falling off the end of the kernel is a return
            active = self._execute(pc, warps)[1]
            nxt = by_warp[warps].min(axis=1).tolist()
            for v, a, x in zip(warps.tolist(), active.tolist(), nxt):
                self.queued[v].append((pc, None, a, _NO_ACCESS, x, 0, a, False))
            self.qlen[warps] += 1
            return True
        ins, active, acc, taken, exited, waits = self._execute(pc, warps)
        kind = ins.spec.kind
        next_pc = by_warp[warps].min(axis=1).tolist()
        per_warp = _split_accesses(acc, warps) if acc else repeat(_NO_ACCESS)
        queued = self.queued
        for v, step in zip(warps.tolist(), zip(repeat(pc), repeat(ins), active.tolist(), per_warp, next_pc,
                                               taken if taken is not None else repeat(0),
                                               exited if exited is not None else repeat(0),
                                               waits if waits is not None else repeat(False))):
            queued[v].append(step)  # a plain tuple in Step's field order (cheaper to make than a Step)
        self.qlen[warps] += 1
        return kind is Kind.BAR or kind is Kind.EXIT

    def _execute(self, pc: int, warps: np.ndarray) -> tuple:
        """Execute ``pc`` for the lanes at it of the warps ``warps`` (ascending indices), queueing
        nothing. Returns ``(instr, active, accesses, taken, exited, waits)``: the instruction
        (``None`` past the kernel's end), lanes run per warp (int64 array, shape (len(warps),)),
        the batch's :class:`~gpusim.functional.memops.Access` records (all warps together), and
        per warp the guard-true lanes of a ``bra``, the lanes an ``exit`` ended and whether a
        ``bar.sync`` was reached by every live lane (lists, or ``None`` for other instructions)."""
        by_warp = self.by_warp
        self.ran += 1
        rows = by_warp[warps] == pc
        r, c = np.nonzero(rows)
        sel = warps[r] * 32 + c
        active = np.count_nonzero(rows, axis=1)
        self.warp_counts[pc] += warps.size
        self.thread_counts[pc] += sel.size
        if pc >= len(self.instrs):
            self._exit(sel)
            return None, active, _NO_ACCESS, None, active.tolist(), None
        ins = self.instrs[pc]
        acc = self.accesses = []
        kind = ins.spec.kind
        taken = exited = waits = None
        if kind is Kind.EXIT or kind is Kind.BAR:
            live_before = np.count_nonzero(self.live_by_warp[warps], axis=1)
        try:
            if kind is Kind.BRA:
                g = self.guarded(ins, sel)
                taken = np.bincount(g >> 5, minlength=self.n_warps)[warps].tolist()
                self.branch(sel, g, self.kernel.labels[ins.operands[0].name], pc + 1)
            else:
                _engine._HANDLERS[kind](self, ins, sel)
        except MemoryFault as f:
            raise self._fault(ins, sel, f) from None
        if self.impure[pc]:
            _watchdog.EPOCH.n += 1
        if kind is Kind.EXIT:
            exited = (live_before - np.count_nonzero(self.live_by_warp[warps], axis=1)).tolist()
        elif kind is Kind.BAR:
            waits = (active == live_before).tolist()
        if self.n_parked:
            self._resume_warps(warps)
        return ins, active, acc, taken, exited, waits

    def run_through(self, warps: np.ndarray, lo: int, hi: int, most: int | None = None,
                    loads: list | None = None) -> dict[str, np.ndarray]:
        """Run the warps ``warps`` (ascending indices, none with queued outcomes) functionally,
        lowest PC first and each PC once for all of them at it, queueing nothing, until none has
        a next PC in ``[lo, hi]`` (each has left that range, exited, or waits at a barrier no
        warp of them can complete), or, with ``most``, has run PC ``hi`` ``most`` times. The loop
        sampler's skip (:mod:`gpusim.timing.itersampling`): every instruction still runs once, in
        the order the detailed launch would run ahead.

        ``loads``: a list that receives ``(pc, access)`` for every global load run (the
        :class:`~gpusim.functional.memops.Access` of all the warps that ran it at once).

        Returns, per warp of ``warps`` (int64 arrays, shape (len(warps),)): ``"at_hi"``
        (instructions run at PC ``hi``: a loop's back edge), ``"global"`` (instructions with a
        global access), ``"branches"`` and ``"divergent"`` (``bra`` run; of them, those with some
        active lanes taken and some not) and ``"exited"`` (lanes that exited)."""
        n = warps.size
        out = {k: np.zeros(n, np.int64) for k in ("at_hi", "global", "branches", "divergent", "exited")}
        by_warp = self.by_warp
        index = np.full(self.n_warps, -1, np.int64)
        index[warps] = np.arange(n)
        while True:
            wpc = by_warp[warps].min(axis=1)
            cand = (wpc >= lo) & (wpc <= hi)   # DONE lies above every PC
            if most is not None:
                cand &= out["at_hi"] < most
            if not cand.any():
                return out
            pc = int(wpc[cand].min())
            at = warps[cand & (wpc == pc)]
            i = index[at]
            ins, active, acc, taken, exited, _ = self._execute(pc, at)
            if pc == hi:
                out["at_hi"][i] += 1
            lanes = [a.lanes for a in acc if a.space == "global"]
            if lanes:
                out["global"][index[np.unique(np.concatenate(lanes) >> 5)]] += 1
                if loads is not None:
                    loads += [(pc, a) for a in acc if a.space == "global" and a.op == "ld"]
            if taken is not None:
                t = np.asarray(taken)
                out["branches"][i] += 1
                out["divergent"][i] += (t > 0) & (t < active)
            if exited is not None:
                out["exited"][i] += exited

    def _resume_warps(self, warps: np.ndarray) -> None:
        """The parked lanes of those ``warps`` whose other lanes cannot run resume
        (independent thread scheduling per warp, :mod:`gpusim.functional.its`)."""
        rows = self.by_warp[warps]
        idle = warps[rows.min(axis=1) == PARKED]
        if idle.size:
            r, c = np.nonzero(self.by_warp[idle] == PARKED)
            self._unpark(idle[r] * 32 + c)

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


def reads_specials(kernel: Kernel, names: tuple[str, ...]) -> np.ndarray:
    """Per PC: does the instruction read one of the special registers ``names``? (bool array of
    shape (instructions,))"""
    def reads(op) -> bool:
        if isinstance(op, Special):
            return op.name in names
        return isinstance(op, Addr) and reads(op.base)
    return np.array([any(reads(op) for op in ins.operands) for ins in kernel.instrs], np.bool_)


def _batchable(kernel: Kernel) -> np.ndarray:
    """Per PC: may the instruction run for several warps before they issue it? Not a read of
    ``%clock``-like registers, nor an instruction through which CTAs communicate
    (:func:`gpusim.functional.parallel.communicates`: a global atomic, an ordered ``ld``/``st``
    wider than the CTA, a wide fence), so that flags, locks and counters are read and written in
    the order the timing model issues them. Barriers run ahead whatever their kind."""
    return np.array([ins.spec.kind is Kind.BAR or communicates(ins) is None for ins in kernel.instrs], np.bool_)


def cta_specific(kernel: Kernel) -> bool:
    """Does ``kernel`` read ``%smid`` or ``%warpid`` (whose values depend on where each CTA runs)?
    Such kernels are stepped one CTA per :class:`CTAStepper`."""
    return bool(reads_specials(kernel, ("smid", "warpid")).any())


def _split_accesses(accesses: list[Access], warps: np.ndarray) -> list[list[Access]]:
    """The accesses of a batch, split by warp: one list per entry of ``warps``
    (ascending warp indices); lanes are in ascending order in every access."""
    n = warps.size
    out: list[list[Access]] = [[] for _ in range(n)]
    for a in accesses:
        wl = a.lanes >> 5
        lo = np.searchsorted(wl, warps).tolist()
        hi = np.searchsorted(wl, warps, side="right").tolist()
        op, space, addrs, lanes, width, wwf = a.op, a.space, a.addrs, a.lanes, a.width, a.warp_wavefronts
        if wwf is None:
            for i, b, e in zip(range(n), lo, hi):
                if b != e:
                    out[i].append(Access(op, space, addrs[b:e], lanes[b:e], width))
            continue
        wfl = wwf.tolist()
        row = 0
        for i, b, e in zip(range(n), lo, hi):
            if b != e:
                out[i].append(Access(op, space, addrs[b:e], lanes[b:e], width, wfl[row], wwf[row:row + 1]))
                row += 1
    return out
