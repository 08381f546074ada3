"""A timing-mode launch: the GPU built from its configuration, the CTA
dispatcher, the event loop's run, and the launch's metrics.

Owns: :class:`Launch` (one kernel launch on the timing model; it implements
:class:`gpusim.timing.context.LaunchContext`, what the SMs see of it) and
:func:`run_detailed`. The launch composes the components: the CTA dispatcher
(:class:`gpusim.timing.dispatch.CTADispatcher`: which CTA starts next, on which SM,
when), the SMs with their warp schedulers (:mod:`gpusim.timing.sm`, the selection
policy from :mod:`gpusim.timing.policies`) and the memory hierarchy
(:class:`gpusim.timing.memsys.MemorySystem`); it owns the functional steppers of
the CTAs, the CTAs' retirement and the launch's metrics. A warp idles only as long
as something keeps it from issuing: the event loop (:mod:`gpusim.timing.eventloop`) wakes
schedulers at the cycles they can issue again, so idle time is skipped rather than ticked.

Imports numpy, gpusim.config, gpusim.occupancy, gpusim.functional and
the timing package's own modules (``sm`` never imports this module); never cupy.
"""

from __future__ import annotations

import gc
import time

import numpy as np

from gpusim.config import GPUConfig
from gpusim.errors import KernelFault
from gpusim.functional.engine import Grid
from gpusim.functional.launch import LaunchResult, memory_counters, split_counters
from gpusim.functional.memory import GlobalMemory
from gpusim.functional.parallel import serial_reason
from gpusim.functional.warpstep import DONE as _DONE
from gpusim.functional.warpstep import CTAStepper, cta_specific
from gpusim.functional.watchdog import Watchdog, checkable, fingerprint
from gpusim.occupancy import OccupancyResult, launch_carveout
from gpusim.sass import KernelSass
from gpusim.timing.decode import aggregated_atoms, decode
from gpusim.timing.dispatch import CTADispatcher
from gpusim.timing.eventloop import EventLoop, Process
from gpusim.timing.memsys import MemorySystem
from gpusim.timing.sm import CTA, REASONS, SM
from isa.ir import Kernel
from isa.opcodes import Kind

__all__ = ["Launch", "run_detailed", "STALL_METRIC", "GROUP_THREADS"]

#: Instructions that issue only in program order (they end a straight-line region).
_IN_ORDER = (Kind.BRA, Kind.EXIT, Kind.BAR, Kind.FENCE)

#: Threads per group of CTAs executed by one functional stepper (host-side batching; no timing effect).
GROUP_THREADS = 8192
#: Nsight Compute name of the warp-state sample count of a stall reason.
STALL_METRIC = "smsp__pcsamp_warps_issue_stalled_{}"
#: Cycles the event loop advances between two looks of the watchdog (host-side; no timing effect).
WATCH_CYCLES = 4096


class Launch:
    """One kernel launch on the timing model (a :class:`gpusim.timing.context.LaunchContext`).

    Args:
        kernel, grid, params, memory, dynamic_shared: the launch, as for the functional engine.
        cfg: the GPU configuration.
        occ: the launch's theoretical occupancy (blocks per SM; must be >= 1).
        max_cycles: the launch fails after this many cycles (spin loops, deadlocks).
        record_events: keep an :class:`~gpusim.timing.sm.IssueEvent` per issued warp instruction in
            ``events`` and ``(cta, sm, warp slots, start cycle, end cycle)`` per CTA in ``cta_spans``.
        blocks: the CTAs to run, linear ids in increasing order (default: the whole grid); the
            sampler (:mod:`gpusim.timing.sampling`) may lower ``dispatcher.limit``, the number of
            them dispatched, while the launch runs.
        gpu_sms: the SM count kernels see in ``%nsmid`` (default ``cfg.sm_count``; the sampler
            simulates a slice of fewer SMs of a bigger GPU).
        sass: what ptxas makes of the kernel (:func:`gpusim.sass.kernel_sass`): issue cycles and
            latencies per SASS instruction (:mod:`gpusim.timing.decode`); ``None``: one issue
            cycle per PTX instruction.

    Hooks for the sampler, when set: ``on_retire(cycle, retired, cta)`` after every CTA
    retirement, ``on_dispatch(cta)`` before a CTA starts, ``on_global_access(cta, j)`` when a warp
    of ``cta`` issues its ``j``-th global load, store or atomic instruction (it may return a callable to
    run after the instruction's own cache accesses); for the loop sampler
    (:mod:`gpusim.timing.itersampling`), ``on_back_edge(warp, cycle, pc)`` after a warp issued a
    branch at ``pc`` back to a PC no later.
    """

    def __init__(self, kernel: Kernel, grid: Grid, params: np.ndarray, memory: GlobalMemory, dynamic_shared: int,
                 cfg: GPUConfig, occ: OccupancyResult, max_cycles: int, record_events: bool = False,
                 blocks: np.ndarray | None = None, gpu_sms: int | None = None, sass: KernelSass | None = None):
        self.kernel, self.grid, self.params, self.memory = kernel, grid, params, memory
        self.dynamic_shared, self.cfg, self.occ, self.max_cycles = dynamic_shared, cfg, occ, max_cycles
        self.env = EventLoop()
        self.timed = decode(kernel, cfg, sass)
        self.aggregated_atoms = aggregated_atoms(kernel, sass)
        # Issue order inside straight-line regions: ptxas's (SASS listings only; see SM._sass_next).
        self.order = sass.order if sass is not None else ()
        self.block = sass.block if sass is not None else ()
        self.region_end = [ins.spec.kind in _IN_ORDER and not (ins.spec.kind is Kind.BRA and sass.skip[pc] >= 0)
                           for pc, ins in enumerate(kernel.instrs)] if self.block else []
        # Per PC: whether a later PC of its region was scheduled before it (else it issues in order).
        self.overtaken = [False] * len(self.block)
        low = None
        for pc in range(len(self.block) - 1, -1, -1):
            if pc + 1 == len(self.block) or self.block[pc + 1] != self.block[pc] or self.region_end[pc + 1]:
                low = None
            self.overtaken[pc] = low is not None and low < self.order[pc]
            low = self.order[pc] if low is None else min(low, self.order[pc])
        # Per PC (and the implicit return): whether a warp with no candidates at it issues it next,
        # in program order (it ends its region or is not overtaken: SM._sass_search's first cases).
        self.in_order = [pc >= len(self.block) or self.region_end[pc] or not self.overtaken[pc]
                         for pc in range(len(kernel.instrs) + 1)]
        self.plans: dict = {}  # the SMs' precomputed issue orders of regions (SM._plan; host-side)
        n = len(kernel.instrs) + 1
        self.counters = (np.zeros(n, np.int64), np.zeros(n, np.int64))
        self.stats = memory_counters()
        self.stalls = [[0] * len(REASONS) for _ in range(n)]  # per PC and reason (Python numbers: exact, fast to add to)
        self.events: list | None = [] if record_events else None
        self.cta_spans: list | None = [] if record_events else None
        self.branches = self.divergent_branches = 0
        self.mem = MemorySystem(cfg, cfg.l1.size_for_carveout(launch_carveout(cfg, occ)))
        self.dispatcher = CTADispatcher(self.env, cfg, occ.blocks_per_sm,
                                        np.arange(grid.n_blocks) if blocks is None else blocks, self._start_cta)
        self.gpu_sms = gpu_sms or cfg.sm_count
        self.on_retire = self.on_dispatch = self.on_global_access = self.on_back_edge = None
        # CTAs are executed functionally in groups of consecutive CTAs (one vectorised step for the
        # warps of a whole group); kernels reading %smid or %warpid get a stepper per CTA.
        self.group_blocks = 1 if cta_specific(kernel) else max(1, GROUP_THREADS // (grid.warps_per_block * 32))
        self.groups: dict[int, CTAStepper] = {}
        #: Let every CTA of a stepper's group run ahead from the group's first dispatch (denser
        #: vectorised steps), not only the dispatched ones: set by :func:`run_detailed` and for the
        #: sampler's slice (whose groups hold slice CTAs only, in dispatch order) when the kernel's
        #: CTAs cannot communicate while they run (``serial_reason``: no global atomics, strong or
        #: volatile accesses, wide fences or clock reads), so no result can tell the order in
        #: which CTAs execute. Host-side batching; no timing effect.
        self.prestart = False
        self.retired = 0
        self.started = 0  # CTAs made resident so far
        self.watchdog = Watchdog(checkable(kernel))
        self.first_wave = None  # the dispatcher's first-wave process, once the run starts
        # CTAs go to SMs in SM order first, so SMs beyond the grid's CTA count never get one.
        self.sms = [SM(self, i) for i in range(min(cfg.sm_count, self.dispatcher.limit))]

    # ---------------------------------------------------------------- CTAs
    def _stepper(self, b: int, sm: SM, slot0: int) -> tuple[CTAStepper, int]:
        """The stepper that executes CTA ``b`` (created with the first CTA of its group) and the
        index of the CTA's first warp in it. A group is ``group_blocks`` CTAs consecutive in the
        dispatch order: consecutive ids for a whole grid, and as many of a sampled slice's CTAs
        (whose ids are not consecutive: ``slice_blocks``), so that its steps stay as wide."""
        g = self.group_blocks
        blocks = self.dispatcher.blocks
        i = int(np.searchsorted(blocks, b))   # b's place in the dispatch order (ids increase)
        first = i - i % g
        stepper = self.groups.get(first)
        if stepper is None:
            # CTAs start in increasing order: no later CTA belongs to an older group.
            self.groups = {}
            ids = blocks[first:first + g]
            n = len(ids)
            stepper = CTAStepper(self.kernel, self.grid, int(ids[0]), self.params, self.memory, self.dynamic_shared,
                                 self.counters, self.stats, self.gpu_sms, self.cfg.sm.max_warps, sm.index,
                                 slot0, lambda: self.env.now, n_blocks=n,
                                 block_ids=None if ids[-1] - ids[0] == n - 1 else np.asarray(ids, np.int64))
            stepper.on_run_ahead = self.watch
            self.groups[first] = stepper
            if self.prestart:
                stepper.prestart()
        return stepper, stepper.start(i - first)

    def _start_cta(self, sm: SM, b: int, now: int) -> None:
        """Make CTA ``b`` resident on ``sm`` at cycle ``now`` (the dispatcher's ``start``)."""
        if self.on_dispatch is not None:
            self.on_dispatch(b)
        wpb = self.grid.warps_per_block
        slots, sm.free_slots = sm.free_slots[:wpb], sm.free_slots[wpb:]
        self.started += 1
        stepper, base = self._stepper(b, sm, slots[0])
        sm.add_cta(CTA(b, stepper, base, self.grid.threads_per_block, sm, slots), now)

    def cta_done(self, sm: SM, cta: CTA, now: int) -> None:
        """Called by ``sm`` when ``cta``'s last warp exits."""
        self.retired += 1
        if self.cta_spans is not None:
            self.cta_spans.append((cta.block, sm.index, tuple(cta.slots), cta.start, now))
        if self.on_retire is not None:
            self.on_retire(now, self.retired, cta.block)
        if not self.dispatcher.refill(sm) and self.retired == self.dispatcher.next_block:
            self.env.stop()

    # ---------------------------------------------------------------- run
    def run(self) -> int:
        """Simulate to the end; return the cycles the kernel took.

        The run advances :data:`WATCH_CYCLES` at a time; between two, the watchdog
        (:mod:`gpusim.functional.watchdog`) may fingerprint the functional state of every resident
        CTA and stop a launch whose state repeats with no memory written in between.

        Raises:
            gpusim.errors.KernelFault: a functional fault, a deadlock, an endless loop, or more than
                ``max_cycles`` cycles.
        """
        # The cyclic garbage collector is off while the launch runs (host-side, no timing effect): its
        # full passes walk every queued outcome (millions of objects; a fifth of a matmul's run), and
        # the run makes almost no cyclic garbage (a retired CTA drops its warps, SM._warp_exit).
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._run()
        finally:
            if enabled:
                gc.enable()

    def _run(self) -> int:
        self.first_wave = Process(self.env, self.dispatcher.first_wave(self.sms))
        limit_at = self.env.now + self.max_cycles
        while not self.env.stopped:
            if self.env.now >= limit_at:
                self._stuck(f"watchdog: no completion after {self.max_cycles:,} cycles (max_cycles); it is "
                            f"probably stuck in a loop", limit="max_cycles")
            self.watch()
            if self.env.peek() == float("inf"):  # no event left although CTAs remain
                self._stuck("deadlock: no warp can ever issue again", limit=None)
            until = min(limit_at, self.env.now + WATCH_CYCLES)
            self.env.run(until)
        # The kernel completes once its last CTA has retired and its last write is performed.
        return max(int(self.env.now), int(np.ceil(self.mem.writes_done)))

    def watch(self) -> None:
        """The watchdog (:mod:`gpusim.functional.watchdog`), called between slices of the run and
        whenever a stepper runs ahead: when due, fingerprint the functional state of every resident
        CTA, and raise when it repeats with no memory written in between (once the first wave is
        dispatched, every CTA reserved has started, and no warp has an exit, a barrier or a store
        queued that its SM has not issued yet)."""
        watchdog = self.watchdog
        if not watchdog.due() or self.first_wave is None or not self.first_wave.triggered \
                or self.started != self.dispatcher.next_block:
            return
        t0 = time.perf_counter()
        steppers = {id(c.stepper): c.stepper for sm in self.sms for c in sm.ctas}
        h = None
        for st in sorted(steppers.values(), key=lambda st: st.first_block):
            h = fingerprint(st, h)
            h.update(repr((st.first_block, self.retired, self.started)).encode())
        if h is None:
            return
        # Each stepper with a warp that can run must have run since: one that stood still (its warps'
        # queues full while their SM catches up) proves nothing about where it goes next.
        progress = tuple(st.ran if (st.started & st.live_by_warp.any(axis=1)
                                    & (st.by_warp.min(axis=1) != _DONE)).any() else None
                         for st in sorted(steppers.values(), key=lambda st: st.first_block))
        if not watchdog.seen(None, h.digest(), progress, time.perf_counter() - t0):
            return
        for st in steppers.values():
            for q in st.queued:
                if any(t[1] is None or st.impure[t[0]] for t in q):
                    return
        self._stuck("watchdog: endless loop: the state of every resident thread (PCs, registers) repeats with no "
                    "memory written in between, so the kernel can never finish", limit=None)

    def _stuck(self, why: str, limit: str | None = "max_cycles"):
        waiting = []
        for sm in self.sms:
            for cta in sm.ctas:
                for w in cta.warps:
                    if not w.done:
                        ins = self.kernel.instrs[min(int(w.timed.pc), len(self.kernel.instrs) - 1)]
                        state = "at bar.sync" if w.waiting else "running"
                        waiting.append(f"block {self.grid.block_coords(cta.block)} warp {w.wid} {state} at "
                                       f"{ins.loc.file}:{ins.loc.line} '{ins.to_ptx()}'")
        shown = "; ".join(waiting[:8]) + (f"; and {len(waiting) - 8} more" if len(waiting) > 8 else "") or (
            f"none yet (a launch takes {self.cfg.launch_overhead_cycles} cycles before its first CTA starts)")
        hint = (f". If the kernel is just long, raise the limit: gpusim.Device({limit}=N) or 'gpusim run "
                f"--{limit.replace('_', '-')} N' (0 = unlimited)" if limit else "")
        raise KernelFault(f"kernel {self.kernel.name}: {why}. Warps resident at cycle {int(self.env.now)}: "
                          f"{shown}{hint}")

    # ---------------------------------------------------------------- metrics
    def stall_array(self) -> np.ndarray:
        """Warp-cycles per PC and reason (:data:`REASONS`), shape (instructions + 1, reasons), int64,
        rounded (memory latencies make some stall boundaries fall between cycles)."""
        return np.rint(np.array(self.stalls, np.float64)).astype(np.int64)

    def metrics(self, cycles: int) -> dict[str, float]:
        """The launch's counters under Nsight Compute names (hardware-facts.md §7)."""
        cfg = self.cfg
        for sm in self.sms:
            sm._mark(cycles, 0)
        active = sum(sm.active_cycles for sm in self.sms)
        warp_cycles = sum(sm.warp_cycles for sm in self.sms)
        warps, threads = self.counters
        m: dict[str, float] = {
            "sm__cycles_elapsed.avg": cycles,
            "sm__cycles_active.avg": active / cfg.sm_count,
            "gpu__time_duration.sum": cycles / cfg.clock_hz * 1e9,
            "smsp__inst_executed.sum": int(warps.sum()),
            "smsp__thread_inst_executed.sum": int(threads.sum()),
            "sm__warps_active.avg.pct_of_peak_sustained_active":
                100.0 * warp_cycles / (active * cfg.sm.max_warps) if active else 0.0,
            "sm__maximum_warps_per_active_cycle_pct": self.occ.occupancy_pct,
            "smsp__sass_average_branch_targets_threads_uniform.pct":
                100.0 * (self.branches - self.divergent_branches) / self.branches if self.branches else 100.0,
            "smsp__sass_branch_targets.sum": self.branches,
            "smsp__sass_branch_targets_threads_divergent.sum": self.divergent_branches,
        }
        m.update(split_counters(self.stats, len(self.kernel.instrs))[0])
        m.update(self.mem.metrics())
        totals = self.stall_array().sum(axis=0)
        for r, v in zip(REASONS, totals):
            m[STALL_METRIC.format(r)] = int(v)
        return m


def run_detailed(kernel: Kernel, grid: Grid, params: np.ndarray, memory: GlobalMemory, dynamic_shared: int,
                 cfg: GPUConfig, occ: OccupancyResult, max_cycles: int, record_events: bool = False,
                 sass: KernelSass | None = None, hooks=None) -> LaunchResult:
    """Simulate every CTA of one launch on every SM, cycle by cycle; return its :class:`LaunchResult`
    (mode ``"timing"``). ``occ`` is the launch's occupancy (:func:`gpusim.occupancy.max_active_blocks`,
    at least one block per SM); ``sass`` as for :class:`Launch`. ``hooks``: an object whose
    ``attach(launch)`` is called before the run and ``finish(launch)`` after it, before the
    metrics are read (the loop sampler, :class:`gpusim.timing.itersampling.LoopSampler`).

    Raises:
        gpusim.errors.KernelFault: a fault, a deadlock or a launch longer than ``max_cycles``.
    """
    t0 = time.perf_counter()
    launch = Launch(kernel, grid, params, memory, dynamic_shared, cfg, occ, max_cycles, record_events, sass=sass)
    launch.prestart = serial_reason(kernel) is None
    if hooks is not None:
        hooks.attach(launch)
    cycles = launch.run()
    if hooks is not None:
        hooks.finish(launch)
    res = LaunchResult(kernel.name, grid.grid, grid.block, dynamic_shared, mode="timing")
    warps, threads = launch.counters
    res.inst_executed, res.thread_inst_executed = warps[:-1], threads[:-1]
    res.metrics = launch.metrics(cycles)
    res.pc_metrics = split_counters(launch.stats, len(kernel.instrs))[1]
    res.cycles = cycles
    stalls = launch.stall_array()
    res.stalls = {r: stalls[:-1, i] for i, r in enumerate(REASONS)}
    res.events, res.cta_spans = launch.events, launch.cta_spans
    res.host_seconds = time.perf_counter() - t0
    return res
