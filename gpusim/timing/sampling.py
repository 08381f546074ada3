"""Sampled timing of large grids: SM slicing plus wave sampling. Results are
never sampled; only cycles and the timing model's own counters are estimated.

Owns: :func:`run_timing`, the timing mode's entry point, which picks the
detailed engine (:func:`gpusim.timing.gpu.run_detailed`) or sampling for a
launch; :class:`Policy` (when and how much to sample), :class:`SamplingInfo`
(what a launch's timing was estimated from, ``LaunchResult.sampling``),
:func:`plan` (is sampling sound for this launch?) and :func:`run_sampled`.

The method, for a grid of ``n`` CTAs on ``N`` SMs with ``B`` resident CTAs per SM:

1. **Every CTA runs functionally first**, exactly once, on the device memory,
   in the chunked engine (:func:`gpusim.functional.launch.run_blocks`): outputs
   are bit for bit those of functional mode, and the instruction and
   address-pattern counters are exact. The CTAs of the first rounds also
   record their global-load footprints (:mod:`gpusim.functional.footprint`).
2. **SM slicing** (as in the trend tests, and in Principal Kernel Analysis,
   Baddouh et al., MICRO 2021, for homogeneous CTAs): on a snapshot of the
   memory taken before step 1, the timing model simulates ``k`` SMs
   (:attr:`Policy.sms`) with the L2 and DRAM bandwidth scaled by ``k / N`` (each
   SM keeps its share) on the CTAs those SMs get when CTAs are dealt round
   robin (:func:`slice_blocks`: CTA ``b`` with ``b % N < k``), so each SM's mix
   of CTAs and its L1 locality are the whole GPU's. The L2 keeps its full size,
   and the other SMs' CTAs warm it as *shadows*: each is dealt to a slice CTA
   of its round and its load footprint enters the L2 in lockstep with that CTA's
   loads (:class:`_Shadows`), so data that CTAs of different SMs share is
   cached, and first fetched from DRAM, as on the whole GPU.
3. **Wave sampling** (TBPoint, Huang et al., ISPASS 2014): the slice runs wave
   after wave (a wave = ``k * B`` CTA retirements) until the durations of the
   last :attr:`Policy.window` waves agree within :attr:`Policy.tolerance`
   (at least :attr:`Policy.min_waves`, at most :attr:`Policy.max_waves`
   waves); then no further CTA is dispatched and the resident ones drain. The
   cycles of the slice CTAs not simulated are extrapolated at the cycles per
   CTA of that last window; the timing model's additive counters (L2 sectors,
   DRAM bytes, stall warp-cycles, branches) at their rate per CTA over it.
4. **Grids that overflow the L2** are sampled in the L2's steady state: the
   waves start at the first round after the grid's distinct sectors exceed the
   L2 (the CTAs before only fill it, :meth:`_Shadows.replay`), where fills
   evict and write back dirty lines. The slice CTAs before that point ran
   while the L2 filled and nothing was written back (a copy then has the DRAM
   to its reads alone); they are costed at the rate of waves simulated from
   the grid's first CTA, until stable as in 3. Before, they were costed at the
   steady rate: full-occupancy copies of 64 MiB came out 12-18 % over the H100.

5. **Loops inside the slice** (:attr:`Policy.iterations`): the slice's CTAs have their main loop
   sampled as a detailed launch's (:class:`gpusim.timing.itersampling.LoopSampler`, ``in_slice``):
   once the loop's period per iteration is stable in the slice's first wave, every slice CTA's
   warps park at their next back edge (later CTAs at their first), run the rest of the loop
   functionally on the snapshot and resume ``R`` periods later. Waves are then marked and found
   stable as before, their durations holding the skipped cycles (``method`` gains ``"+loop"``).

Which metrics are exact and which estimated: :data:`EXACT`, :data:`ESTIMATED`.

Sampling is sound, and used, when the grid has at least two slice waves of
CTAs (``n >= 2 * k * B``; smaller grids are simulated in detail, which is
fast anyway), the GPU has more than ``k`` SMs, events are not recorded, and
the kernel reads no ``%clock``, ``%clock64``, ``%globaltimer``, ``%smid`` or
``%warpid``, whose values depend on the timing. It assumes CTAs alike in
their work (the course notes' kernels; grid-stride loops; tiles); a grid
whose CTAs differ systematically with their index, or that communicate
through memory while they run, should be timed with ``Device(sampling=False)``.
The snapshot doubles the host memory that the device's allocations take.

A launch simulated in detail under a policy (not ``Device(sampling=False)``), like the slice
of a sampled one (5), may still have its main loop sampled (:attr:`Policy.iterations`, :mod:`gpusim.timing.itersampling`): every
instruction runs functionally in the detailed launch as before, but once the loop's period per
iteration is stable, its remaining iterations' cycles are extrapolated (``method == "loop"``).

Imports numpy, gpusim.config, gpusim.functional and the timing package's own
modules; never cupy.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field

import numpy as np

from gpusim.config import GPUConfig
from gpusim.errors import LaunchError
from gpusim.functional.engine import Grid
from gpusim.functional.footprint import run_footprints
from gpusim.functional.launch import LaunchResult, memory_counters, run_blocks, split_counters
from gpusim.functional.memory import GlobalMemory
from gpusim.functional.parallel import combine, serial_reason
from gpusim.functional.warpstep import reads_specials
from gpusim.memmodel.coalesce import FULL_SECTOR
from gpusim.occupancy import OccupancyResult
from gpusim.sass import KernelSass
from gpusim.timing.gpu import STALL_METRIC, Launch, run_detailed
from gpusim.timing.itersampling import LOOP_ESTIMATED, LOOP_EXACT, LoopSampler, waits_on_ctas
from gpusim.timing.memsys import far_line
from gpusim.timing.sm import REASONS
from isa.ir import Kernel

__all__ = ["run_timing", "Policy", "SamplingInfo", "plan", "run_sampled", "slice_blocks", "slice_sides", "EXACT", "ESTIMATED"]

#: Metrics of a sampled launch that are exact: counted by the functional run of every CTA
#: (instructions, address-pattern counters) or set by the launch shape (occupancy).
EXACT = ("smsp__inst_executed.sum", "smsp__thread_inst_executed.sum", "smsp__inst_executed_op_*",
         "l1tex__t_requests_pipe_lsu_mem_global_op_*", "l1tex__t_sectors_pipe_lsu_mem_global_op_*",
         "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_*", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_*",
         "sm__maximum_warps_per_active_cycle_pct")
#: Metrics of a sampled launch that are estimated from the simulated slice and waves.
ESTIMATED = ("sm__cycles_elapsed.avg", "sm__cycles_active.avg", "gpu__time_duration.sum",
             "sm__warps_active.avg.pct_of_peak_sustained_active", "l1tex__t_sector_hit_rate.pct",
             "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "lts__t_*", "dram__bytes_*",
             "smsp__sass_*branch*", "smsp__pcsamp_warps_issue_stalled_*")

_TIMED = ("clock", "clock64", "globaltimer", "smid", "warpid")


@dataclass(frozen=True)
class Policy:
    """How a large grid is sampled (defaults chosen so that the suite's kernels at 2^20
    elements agree with the detailed engine; see the table in docs/model/sampling.md).

    Attributes:
        sms: SMs simulated in detail (the slice), >= 1.
        min_waves, max_waves: slice waves simulated at least / at most before extrapolating.
        window: waves whose durations must agree, and over which the rate per CTA is measured.
        tolerance: relative spread ``(max - min) / mean`` of those durations that counts as stable;
            their mean must also be within it of the mean of the ``window`` waves before (no drift:
            the CTAs of a grid start in step and fall out of it over several waves; the seeds'
            reduce7_8 at 2^26 on the h100 ran waves of 13,019, 12,671, 12,642, 12,104 cycles, then
            10,923-11,293, and two agreeing transient waves had stopped it at 1.10x the whole slice).
        iterations: loop-iteration sampling (:mod:`gpusim.timing.itersampling`) of the launches too
            small for wave sampling and of a sampled launch's slice CTAs: their main loop's cycles
            are extrapolated once its period per iteration is stable (``window`` chunks agreeing
            within ``tolerance``). ``False``: those launches, and the slice's CTAs, are simulated in
            detail, every instruction of every warp.
        iteration_chunk, iteration_chunk_cycles: a chunk of the loop's progress spans at least this
            many mean iterations and this many cycles.
        iteration_min_chunks: chunks simulated at least before the loop may be found stable.
        iteration_max_stride: when the chunks' periods disagree, the window is judged again on
            periods of 2, 4... chunks (powers of two up to this many). ``matmul_smem_regtile`` at
            512 runs iterations of about 2,440 and 2,850 cycles in no fixed order; single chunks
            agreed only from its 42nd of 64 iterations, pairs of chunks from its 11th
            (docs/model/sampling.md).
        iteration_cache_tolerance: the skipped iterations' global loads are looked up in the
            caches as they are skipped (:mod:`gpusim.timing.itersampling`); when the share of
            their sectors the L1 holds, or the share DRAM serves, moves further than this from the
            window's, skipping stops and the loop's period is learnt again (a chase's second pass
            over the lines its first pass brought into L2: random_access.py's one-thread chase,
            +124 % timed from its first pass alone, the H100 taking 688 cycles an L2 miss and 283
            an L2 hit).
        iteration_cache_sectors: loaded sectors the skipped iterations gather before each such look.
    """

    sms: int = 8
    min_waves: int = 4
    max_waves: int = 12
    window: int = 2
    tolerance: float = 0.02
    iterations: bool = True
    iteration_chunk: int = 1
    iteration_chunk_cycles: int = 1000
    iteration_min_chunks: int = 6
    iteration_max_stride: int = 4
    iteration_cache_tolerance: float = 0.25
    iteration_cache_sectors: int = 64

    def __post_init__(self):
        if self.sms < 1 or self.window < 1 or self.min_waves < self.window + 1 or self.max_waves < self.min_waves:
            raise ValueError(f"bad sampling policy {self}: need sms >= 1, window >= 1, "
                             f"min_waves > window and max_waves >= min_waves")
        if not 0 < self.tolerance < 1:
            raise ValueError(f"bad sampling policy {self}: tolerance must be in (0, 1)")
        if (self.iteration_chunk < 1 or self.iteration_chunk_cycles < 0 or self.iteration_min_chunks < 2 * self.window
                or self.iteration_max_stride < 1):
            raise ValueError(f"bad sampling policy {self}: need iteration_chunk >= 1, iteration_chunk_cycles >= 0, "
                             f"iteration_min_chunks >= 2 * window and iteration_max_stride >= 1")
        if not 0 < self.iteration_cache_tolerance <= 1 or self.iteration_cache_sectors < 1:
            raise ValueError(f"bad sampling policy {self}: need 0 < iteration_cache_tolerance <= 1 and "
                             f"iteration_cache_sectors >= 1")


@dataclass
class SamplingInfo:
    """What a timing-mode launch's cycles were computed from (``LaunchResult.sampling``).

    Attributes:
        method: ``"detailed"`` (every CTA on every SM simulated), ``"sm_slice"`` (``sms_simulated``
            of ``sms`` SMs, all their CTAs), ``"sm_slice+waves"`` (and only the first waves) or
            ``"loop"`` (every CTA on every SM, the main loop's iterations after it was stable
            skipped: :mod:`gpusim.timing.itersampling`); ``"sm_slice+loop"`` and
            ``"sm_slice+waves+loop"``: a slice whose CTAs' main loop was also sampled so (the loop
            fields say how much).
        reason: why the launch was not wave-sampled (``"loop"``, ``"detailed"``; for ``"detailed"``
            also why the loop sampler did not engage, after ``"; "``); for a slice whose loop was not
            sampled, why not (``"loop: no loop became stable"``...); else ``""``.
        sms_simulated, sms: SMs simulated and SMs of the GPU.
        ctas_simulated, ctas: CTAs whose timing was simulated, and CTAs of the grid (all run functionally).
        fraction: ``ctas_simulated / ctas``.
        waves_simulated: slice waves (``sms_simulated * blocks_per_sm`` CTA retirements) simulated.
        wave_cycles: durations of the simulated waves after the first, in cycles.
        spread_pct: half the relative spread of the extrapolation window's wave durations, applied to
            the extrapolated cycles, in percent of the estimate (0 where nothing was extrapolated).
        exact, estimated: metric name patterns that are exact / estimated (:data:`EXACT`, :data:`ESTIMATED`).
        warmup_ctas: CTAs before the sampled waves whose recorded accesses only filled the L2
            (:func:`run_sampled`: grids touching more memory than the L2 holds), 0 if none.
        fill_ctas: of ``ctas_simulated``, the slice CTAs simulated from the grid's first CTA,
            whose waves' rate costs the slice's CTAs before the sampled waves (0 if none).
        loop: ``"loop"`` only: the sampled loop, ``"<head label> (back edge PC <pc>, <file>:<line>)"``.
        iterations_simulated, iterations_skipped: ``"loop"`` only: warp-iterations of the loop
            simulated in detail, and run functionally only (their cycles extrapolated); for
            ``"loop"``, ``fraction`` is the simulated share of the loop's warp-iterations. For a
            ``"+loop"`` slice, those of the slice's CTAs (``fraction`` stays their share of CTAs).
        period_cycles: ``"loop"`` only: cycles per iteration of the loop (the stable window's mean);
            ``wave_cycles`` then holds the window's periods and ``spread_pct`` their half relative
            spread applied to the longest skip, in percent of the estimate. For a ``"+loop"`` slice,
            the period learnt in its first wave (``loop_periods``: the window's periods), and
            ``spread_pct`` adds the periods' half relative spread times the share of the slice's
            warp-iterations skipped.
        loop_periods: ``"+loop"`` slices only: the loop's periods over its stable window.
        relearned: ``"loop"`` only: times the loop's period was learnt again because the skipped
            iterations' loads met the caches otherwise than the window's (``period_cycles`` is
            then the last period learnt).
    """

    method: str
    reason: str = ""
    sms_simulated: int = 0
    sms: int = 0
    ctas_simulated: int = 0
    ctas: int = 0
    fraction: float = 1.0
    waves_simulated: float = 0.0
    wave_cycles: list = field(default_factory=list)
    spread_pct: float = 0.0
    exact: tuple = ()
    estimated: tuple = ()
    warmup_ctas: int = 0
    fill_ctas: int = 0
    loop: str = ""
    iterations_simulated: int = 0
    iterations_skipped: int = 0
    period_cycles: float = 0.0
    loop_periods: list = field(default_factory=list)
    relearned: int = 0

    def __str__(self) -> str:
        if self.method == "detailed":
            return f"detailed ({self.reason})" if self.reason else "detailed"
        if self.method == "loop":
            total = self.iterations_simulated + self.iterations_skipped
            return (f"loop: {self.loop}, {self.iterations_simulated:,}/{total:,} warp-iterations simulated "
                    f"({100 * self.fraction:.1f} %) on all {self.sms} SMs and {self.ctas:,} CTAs, "
                    f"{self.period_cycles:,.1f} cycles an iteration"
                    + (f" (learnt {self.relearned + 1} times: the skipped loads met the caches otherwise)"
                       if self.relearned else "") + f", +/-{self.spread_pct:.1f} %")
        return (f"{self.method}: {self.sms_simulated}/{self.sms} SMs, {self.ctas_simulated:,}/{self.ctas:,} CTAs "
                f"({100 * self.fraction:.1f} %), {self.waves_simulated:.1f} waves, +/-{self.spread_pct:.1f} %"
                + (f", after {self.warmup_ctas:,} CTAs filled the L2 (costed by {self.fill_ctas:,} CTAs "
                   f"simulated from the first)" if self.warmup_ctas else "")
                + (f"; loop: {self.loop}, {self.iterations_simulated:,}/"
                   f"{self.iterations_simulated + self.iterations_skipped:,} warp-iterations of the slice's CTAs "
                   f"simulated ({100 * self._loop_fraction():.1f} %), {self.period_cycles:,.1f} cycles an iteration"
                   if self.method.endswith("+loop") else ""))

    def _loop_fraction(self) -> float:
        total = self.iterations_simulated + self.iterations_skipped
        return self.iterations_simulated / total if total else 1.0


def plan(kernel: Kernel, grid: Grid, cfg: GPUConfig, occ: OccupancyResult, policy: Policy | None,
         record_events: bool) -> SamplingInfo | None:
    """``None`` if the launch is to be sampled under ``policy``, else the :class:`SamplingInfo` of a
    detailed run saying why."""
    if policy is None:
        return SamplingInfo("detailed", "sampling=False", ctas_simulated=grid.n_blocks, ctas=grid.n_blocks,
                            sms=cfg.sm_count, sms_simulated=cfg.sm_count)
    why = ""
    if record_events:
        why = "events are recorded"
    elif cfg.sm_count <= policy.sms:
        why = f"{cfg.sm_count} SMs, no more than the {policy.sms} a slice simulates"
    elif grid.n_blocks < 2 * policy.sms * occ.blocks_per_sm:
        why = f"{grid.n_blocks} CTAs, fewer than two waves of a {policy.sms}-SM slice"
    elif reads_specials(kernel, _TIMED).any():
        why = "the kernel reads %clock, %globaltimer, %smid or %warpid"
    elif waits := waits_on_ctas(kernel):
        # A slice's CTAs run on the memory as it was at the launch: they would find the flags of
        # the CTAs outside it set (those ran functionally first), where on the GPU they wait for
        # them (the corpus's scan_lookback: 44,268 cycles sampled, 71,952 in detail), and an empty
        # hash table where the grid's later CTAs probe a fuller one (hash_insert_75 at 196,608
        # keys: 19,805 cycles sampled, 69,291 in detail).
        why = f"the kernel waits on other CTAs ({waits})"
    if why:
        return SamplingInfo("detailed", why, ctas_simulated=grid.n_blocks, ctas=grid.n_blocks,
                            sms=cfg.sm_count, sms_simulated=cfg.sm_count)
    return None


def _stable(durations: np.ndarray, window: int, tolerance: float) -> bool:
    """The last ``window`` wave durations agree within ``tolerance`` of their mean, and their mean
    is within ``tolerance`` of the mean of the ``window`` before (no drift)."""
    if len(durations) < 2 * window:
        return False
    last, before = durations[-window:], durations[-2 * window:-window]
    mean = last.mean()
    return last.max() - last.min() <= tolerance * mean and abs(mean - before.mean()) <= tolerance * mean


class _Waves:
    """Watches a slice's retirements: marks every wave's end with a snapshot of the additive
    timing counters, and stops dispatching once the wave durations are stable. With
    ``wait_for_full_l2`` (a storing grid that overflows the L2 but could not be sampled after
    a warm-up, :func:`_record`) it is not stopped before its ``window`` waves after the L2
    filled up: until then no dirty line is evicted, so no write-back takes DRAM bandwidth, and
    the early waves are faster than the rest of the grid's."""

    def __init__(self, launch: Launch, wave: int, policy: Policy, shadows: "_Shadows", wait_for_full_l2: bool = False):
        self.launch, self.wave, self.policy, self.shadows = launch, wave, policy, shadows
        self.ends: list[int] = []
        self.snaps: list[dict] = []
        self.steady: list[int] = []   # the waves that ended while CTAs were still dispatched
        self.stopped = False
        self.full_at = None if wait_for_full_l2 else 0  # the wave at whose end the L2 was full
        launch.on_retire = self

    def last(self) -> int | None:
        """The index of the last wave end that :meth:`rate` and the counters' rates are measured to:
        the last one reached while CTAs were still dispatched, with ``policy.window`` waves before
        it (else the last one); ``None`` before ``window + 1`` wave ends. A slice that runs out of
        CTAs ends in its drain, where CTAs retire with most of their work done before and the
        waves' rates are not the grid's (the corpus's stencil3d_7pt: L2 reads 72.5 a CTA retired
        and 114.6 a CTA dispatched over its drain, 102.7 over the steady waves before it)."""
        w = self.policy.window
        if len(self.ends) <= w:
            return None
        j = next((i for i in reversed(self.steady) if i >= w), None)
        return len(self.ends) - 1 if j is None else j

    def rate(self) -> float | None:
        """Cycles per CTA over the ``policy.window`` waves up to :meth:`last`, or ``None`` before
        that many."""
        j, w = self.last(), self.policy.window
        return None if j is None else (self.ends[j] - self.ends[j - w]) / (w * self.wave)

    def __call__(self, now: int, retired: int, cta: int) -> None:
        self.shadows.retire(cta)
        if retired % self.wave or self.stopped:
            return
        self.ends.append(now)
        self.snaps.append(_additive(self.launch, self.shadows))
        d = self.launch.dispatcher
        if d.next_block < d.limit:
            self.steady.append(len(self.ends) - 1)
        p = self.policy
        waves = len(self.ends)
        if self.full_at is None and self.launch.mem.l2.full:
            self.full_at = waves
        if waves < p.min_waves or self.launch.dispatcher.limit - self.launch.dispatcher.next_block < self.wave:
            return
        if waves < p.max_waves and (self.full_at is None or waves - self.full_at < p.window):
            return
        if waves >= p.max_waves or _stable(np.diff(self.ends), p.window, p.tolerance):
            self.launch.dispatcher.limit = self.launch.dispatcher.next_block
            self.stopped = True


class _Shadows:
    """Lets the CTAs of the SMs not simulated fill the slice's L2 (:meth:`MemorySystem.warm`).

    The ``N - k`` shadow CTAs of each round (CTAs ``r*N .. r*N + N-1``, one per SM, which start
    together on the whole GPU) are dealt evenly to the slice's ``k`` CTAs of that round, and each
    shadow accesses memory in lockstep with its slice CTA: when a warp of the slice CTA issues
    its ``j``-th global load, store or atomic, the sectors its shadows first touched in their ``j``-th
    memory step go into the L2, loaded ones clean and stored ones dirty, so that their fills
    evict (and write back) lines as on the whole GPU (the rest when the slice CTA retires). Which CTA of a group sharing a sector
    loads it first is a race on the GPU; here the slice CTA goes first in one step of
    ``shadows + 1`` (a fixed hash of CTA and step), so it misses on shared data about as often
    as any of them does."""

    def __init__(self, launch: Launch, footprints: dict, sms: int, k: int, limit: int, busy: int | None = None):
        self.mem, self.footprints, self.sms, self.k, self.limit = launch.mem, footprints, sms, k, limit
        self.env = launch.env
        busy = sms if busy is None else busy   # SMs with CTAs: min(N, CTAs), as for the rates' share
        launch.mem.l2.eviction_share = k / busy
        launch.mem.l2.address_share = busy / k
        self.covered = 0   # shadow CTAs dealt to slice CTAs that retired so far
        self.active: dict[int, list] = {}  # slice CTA -> [followers [[sectors, steps, stored, written, next index]], count, steps done]
        launch.on_dispatch, launch.on_global_access = self.dispatch, self.access

    def dispatch(self, b: int) -> None:
        r, s = divmod(b, self.sms)
        span = self.sms - self.k
        lo = min(self.limit, r * self.sms + self.k + -(-s * span // self.k))
        hi = min(self.limit, r * self.sms + self.k + -(-(s + 1) * span // self.k))
        followers = [[*self.footprints.pop(c), 0, self._side(c)] for c in range(lo, hi) if c in self.footprints]
        self.active[b] = [followers, hi - lo, -1]

    def _side(self, cta: int) -> int:
        """The L2 partition near the SM that CTA ``cta`` runs on in the whole GPU (CTA ``b`` on SM
        ``b % N``, as in every first wave)."""
        return self.mem.l2.side(cta % self.sms)

    def _take(self, followers: list, upto: float) -> tuple[dict, np.ndarray, np.ndarray] | None:
        """The followers' sectors of their steps up to ``upto``, not taken before: (loaded, by the
        L2 partition near their SMs; stored; the stored ones' bytes written)."""
        parts, stored, written, sides = [], [], [], []
        for f in followers:
            sec, steps, st, wr, i, side = f
            j = int(np.searchsorted(steps, upto, side="right")) if upto != np.inf else sec.size
            if j > i:
                parts.append(sec[i:j])
                stored.append(st[i:j])
                written.append(wr[i:j])
                sides.append(np.full(j - i, side))
                f[4] = j
        if not parts:
            return None
        sec, st, wr, side = (np.concatenate(x) for x in (parts, stored, written, sides))
        loads = {int(k): np.unique(sec[~st & (side == k)]) for k in np.unique(side[~st])}
        stores, wr = sec[st], wr[st]
        if np.all(wr == FULL_SECTOR):
            return loads, np.unique(stores), None
        order = np.argsort(stores, kind="stable")  # unite the bytes that several shadows wrote
        stores, wr = stores[order], wr[order]
        first = np.flatnonzero(np.r_[True, stores[1:] != stores[:-1]])
        return loads, stores[first], np.bitwise_or.reduceat(wr, first)

    def replay(self, cta: int) -> None:
        """All of CTA ``cta``'s recorded accesses enter the L2 (the warm-up before the sampled waves)."""
        fp = self.footprints.pop(cta, None)
        if fp is not None:
            self.fill(self._take([[*fp, 0, self._side(cta)]], np.inf))

    def fill(self, taken: tuple[dict, np.ndarray, np.ndarray | None]) -> None:
        """Put (loaded by partition side, stored, bytes written or None for whole sectors) sectors
        into the L2: loaded ones clean, as read near their side, stored ones dirty."""
        loads, stores, written = taken
        for side, sec in loads.items():
            if sec.size:
                self.mem.warm(sec, now=self.env.now, side=side)
        if stores.size:
            self.mem.warm(stores, stored=True, written=written, now=self.env.now)

    def access(self, cta: int, step: int):
        """A warp of slice CTA ``cta`` issues its ``step``-th global load, store or atomic: its shadows'
        accesses of that step enter the L2, now or (returned as a callable) after the slice CTA's own."""
        st = self.active.get(cta)
        if st is None or step <= st[2]:
            return None
        st[2] = step
        taken = self._take(st[0], step)
        if taken is None:
            return None
        if (cta * 2654435761 + step * 40503) % (st[1] + 1) == 0:
            return lambda: self.fill(taken)
        self.fill(taken)
        return None

    def retire(self, cta: int) -> None:
        st = self.active.pop(cta, None)
        if st is not None:
            self.covered += st[1]
            taken = self._take(st[0], np.inf)
            if taken is not None:
                self.fill(taken)


#: Counters that the shadow CTAs add to (extrapolated per CTA covered, slice or shadow): DRAM
#: reads of global loads (with the reads that complete the partially written sectors any fill of
#: the shared L2 evicts), and DRAM writes (write-backs of the dirty lines that any fill evicts).
#: The rest of the DRAM reads (local memory, atomics) are the slice's own.
_COVERED = ("dram_read_global_ld", "dram_write_bytes")
#: :func:`_additive`'s keys that are not the memory system's counts
_NOT_MEMORY = ("branches", "divergent_branches", "ctas", "covered")


def _additive(launch: Launch, shadows: _Shadows) -> dict:
    """The launch's additive timing counters now: memory system counts (DRAM reads of global
    loads with the shadow CTAs', the other DRAM reads apart), stall warp-cycles per reason,
    branches, and the CTAs retired so far: simulated (``ctas``) and with their shadows
    (``covered``). Per CTA retired, not dispatched: over a slice's drain CTAs retire and none are
    dispatched."""
    out = dict(launch.mem.count)
    ld = out.pop("dram_read_bytes_global_ld", 0)
    out["dram_read_bytes"] = out.get("dram_read_bytes", 0) - ld
    out["dram_read_global_ld"] = ld + out.pop("shadow_dram_read_bytes", 0)
    out["dram_write_bytes"] = out.get("dram_write_bytes", 0) + out.pop("shadow_dram_write_bytes", 0)
    totals = [sum(col) for col in zip(*launch.stalls)]
    out.update({("stall", r): v for r, v in zip(REASONS, totals)})
    out["branches"], out["divergent_branches"] = launch.branches, launch.divergent_branches
    out["ctas"], out["covered"] = launch.retired, launch.retired + shadows.covered
    return out


def slice_blocks(n: int, sms: int, k: int) -> np.ndarray:
    """The CTAs that SMs ``0 .. k-1`` of a ``sms``-SM GPU run of an ``n``-CTA grid when the block
    scheduler deals CTAs round robin (CTA ``b`` to SM ``b % sms``, as in every first wave): linear
    ids in increasing order, int64. Neighbouring CTAs thus share an SM as on the whole GPU."""
    b = np.arange(n)
    return b[b % sms < k]


def slice_sides(sides: tuple[int, ...], k: int) -> tuple[int, ...]:
    """The L2 partitions near a slice's ``k`` SMs: each partition gets its share of the GPU's SMs
    (``sides``: ``l2.sm_partitions``, one entry per SM), rounded by largest remainder, and the
    partitions alternate over the slice's SMs. The GPU's first ``k`` entries would not do: on the
    measured H100 its SMs 0-7 are two near partition 0 and six near partition 1, so the slice's
    share of a single hot address's far requests was 0.75 or 0.25 where the GPU's is 0.5
    (``bfs_bottomup``'s ``lts__t_sectors_op_red`` at 2^22: 235K sampled so, 198K now, H100 206K).

    Returns a tuple of ``k`` partition indices."""
    n = len(sides)
    parts = sorted(set(sides))
    quota = {p: k * sides.count(p) / n for p in parts}
    take = {p: int(q) for p, q in quota.items()}
    for p in sorted(parts, key=lambda p: take[p] - quota[p])[:k - sum(take.values())]:
        take[p] += 1
    out: list[int] = []
    given = dict.fromkeys(parts, 0)
    for _ in range(k):
        p = min((p for p in parts if given[p] < take[p]), key=lambda p: ((given[p] + 0.5) / take[p], p))
        out.append(p)
        given[p] += 1
    return tuple(out)


def run_sampled(kernel: Kernel, grid: Grid, params: np.ndarray, memory: GlobalMemory, dynamic_shared: int,
                cfg: GPUConfig, occ: OccupancyResult, max_cycles: int, max_steps: int, policy: Policy,
                sass: KernelSass | None = None, jobs: int = 1) -> LaunchResult:
    """Simulate a slice of ``policy.sms`` SMs for some waves, run the rest of the grid functionally
    (in up to ``jobs`` worker processes: :func:`gpusim.functional.launch.run_blocks`), and extrapolate
    the timing (module docstring). Returns a ``"timing"`` :class:`LaunchResult` whose ``sampling``
    says what was simulated and ``parallel`` how its functional runs ran.

    Raises:
        gpusim.errors.KernelFault: a fault in any CTA, or a slice longer than ``max_cycles``.
    """
    t0 = time.perf_counter()
    N, k, B, n = cfg.sm_count, policy.sms, occ.blocks_per_sm, grid.n_blocks
    blocks = slice_blocks(n, N, k)
    wave = k * B
    # 1. Every CTA runs functionally, exactly once, on the device memory (the results), recording
    #    the load footprints of the rounds the slice may reach; the slice runs on a snapshot.
    snapshot = memory.snapshot()
    counters = (np.zeros(len(kernel.instrs) + 1, np.int64), np.zeros(len(kernel.instrs) + 1, np.int64))
    stats = memory_counters()
    rounds = (policy.max_waves + 2) * B + 1
    paths: list[str] = []
    footprints, start, cover, overflows = _record(kernel, grid, params, memory, dynamic_shared, cfg, max_steps,
                                                  counters, stats, rounds, (policy.min_waves + 1) * B * N, jobs, paths)
    paths.append(run_blocks(kernel, grid, params, memory, dynamic_shared, N, cfg.sm.max_warps, max_steps, cover, n,
                            counters, stats, jobs=jobs))
    # 2. The slice: k SMs with their share of the L2 and DRAM bandwidth and of the block scheduler's
    #    dispatch rate, the other SMs' CTAs as shadows.
    #    (The slice's share of the CTAs instead of k / N was tried: local_hist8 +3.4 % -> +0.6 %,
    #    matmul_naive at 256, 64 CTAs, -2.5 % -> -8.4 % against the detailed engine.)
    #    A grid of fewer CTAs than SMs leaves SMs idle: the slice is k of the min(N, CTAs) busy SMs
    #    (validation/probes/random_access.py: stores and atomics of 66 one-per-SM CTAs came out
    #    +51 % and +72 % against the H100 with k / N, the ports' rates halved).
    scale = k / min(N, n)
    shares = {f"l2.{f}": getattr(cfg.l2, f) * scale for f in ("bandwidth_bytes_per_s", "write_bandwidth_bytes_per_s",
                                                               "write_data_bytes_per_s", "write_requests_per_cycle",
                                                               "read_requests_per_cycle")
              if getattr(cfg.l2, f) is not None}
    shares |= {f"dram.{f}": getattr(cfg.dram, f) * scale for f in ("row_activations_per_s",
                                                                   "write_row_activations_per_s",
                                                                   "translation_misses_per_s")}
    #    Contended atomics: the GPU-wide atomic request rate gets its k / N share; an address or a
    #    slice granule that two of the k SMs update is taken as updated by all N, and is busy N / k
    #    times longer an update (``L2.address_share``, set by _Shadows). When every address and
    #    slice was scaled so, a COO SpMV's rows, each updated by one warp, came out 9x slower
    #    than in the detailed engine.
    shares |= {f"l2.{f}": getattr(cfg.l2, f) * scale for f in ("atomic_requests_per_cycle",
                                                               "atomic_return_requests_per_cycle")}
    #    A channel's write drain gathers the slice's share of the write-backs: its share of the bytes
    #    keeps the drains as long and as frequent as on the whole GPU.
    if cfg.dram.write_drain_bytes:
        shares["dram.write_drain_bytes"] = max(1, round(cfg.dram.write_drain_bytes * scale))
    #    Its reads queue at its share of the read channels, each as fast as on the whole GPU.
    read_channels = cfg.dram.read_channels or cfg.dram.channels
    if cfg.dram.read_channel_bytes and read_channels:
        shares["dram.read_channels"] = max(1, round(read_channels * scale))
    #    The slice's SMs sit near the L2 partitions in the GPU's proportions (slice_sides).
    if cfg.l2.sm_partitions:
        shares["l2.sm_partitions"] = slice_sides(tuple(cfg.l2.sm_partitions[:N]), k)
    sliced = cfg.with_overrides({"sm_count": k, **shares,
                                 "dram.bandwidth_bytes_per_s": cfg.dram.bandwidth_bytes_per_s * scale,
                                 "cta_dispatch_cycles": cfg.cta_dispatch_cycles / scale})
    # 3. A grid that overflows the L2 is sampled where the L2 is full (from CTA ``start``); the
    #    slice CTAs before it, which run while the L2 fills and no dirty line is yet written back,
    #    are costed at the rate of some waves simulated from the grid's first CTA.
    pre = int(np.count_nonzero(blocks < start))
    # The slice's steppers let every CTA of their group run ahead from the group's first dispatch
    # (Launch.prestart; host-side, no timing effect) when no result can tell the CTAs' order: a
    # slice's CTAs start one by one as others retire, and stepped one CTA at a time, reduce_v1 at
    # 2^22 spent two thirds of its slice in the functional run (36 s -> 15 s on 2 cores). A group's
    # CTAs that the waves never reach run on the snapshot for nothing: 31 at most.
    prestart = serial_reason(kernel) is None
    fill_rate, fill_ctas = None, 0
    samplers: list[LoopSampler | None] = []   # loop-iteration sampling inside the slice's CTAs
    if pre:
        first = Launch(kernel, grid, params, snapshot, dynamic_shared, sliced, occ, max_cycles,
                       blocks=blocks[:pre], gpu_sms=N, sass=sass)
        first.prestart = prestart
        fill = _Waves(first, wave, policy, _Shadows(first, dict(footprints), N, k, start, min(N, n)))
        samplers.append(_slice_loops(kernel, policy, first))
        first.run()
        if samplers[-1] is not None:
            samplers[-1].finish(first)
        fill_ctas, fill_rate = first.dispatcher.next_block, fill.rate()
    launch = Launch(kernel, grid, params, snapshot, dynamic_shared, sliced, occ, max_cycles,
                    blocks=blocks[(blocks >= start) & (blocks < cover)], gpu_sms=N, sass=sass)
    launch.prestart = prestart
    shadows = _Shadows(launch, footprints, N, k, cover, min(N, n))
    for c in range(start):  # the CTAs before the sampled waves only fill the L2, in grid order
        shadows.replay(c)
    launch.mem.count.clear()
    # A grid that overflows the L2 but left too few CTAs to start after the warm-up: wait for the L2 to fill.
    wait = overflows and not start and any(f[2].any() for f in footprints.values())
    waves = _Waves(launch, wave, policy, shadows, wait_for_full_l2=wait)
    samplers.append(_slice_loops(kernel, policy, launch))
    t_sim = launch.run()
    if samplers[-1] is not None:
        samplers[-1].finish(launch)
    del snapshot, footprints
    m = launch.dispatcher.next_block
    final = _additive(launch, shadows)
    slice_metrics = launch.metrics(t_sim)

    cycles, est, spread, method = _extrapolate(waves, final, t_sim, m, len(blocks), n, policy.window,
                                               pre if fill_rate is not None else 0, fill_rate or 0.0)
    if method == "sm_slice+waves" and "dram_write_bytes" in est:
        # Write-backs go on at the steady rate until the last CTA; what the L2 then holds dirty
        # (as much as at the slice's end, the L2 being in the same state) is never written.
        est["dram_write_bytes"] = max(0.0, est["dram_write_bytes"] - launch.mem.l2.dirty_sectors() * cfg.l2.sector_bytes)
    res = LaunchResult(kernel.name, grid.grid, grid.block, dynamic_shared, mode="timing", parallel=combine(paths))
    warps, threads = counters
    res.inst_executed, res.thread_inst_executed = warps[:-1], threads[:-1]
    totals, res.pc_metrics = split_counters(stats, len(kernel.instrs))
    res.metrics, res.stalls = _metrics(launch, est, slice_metrics, totals, cycles, t_sim, cfg.clock_hz)
    res.metrics["smsp__inst_executed.sum"] = int(warps.sum())
    res.metrics["smsp__thread_inst_executed.sum"] = int(threads.sum())
    res.cycles = cycles
    res.sampling = SamplingInfo(method, "", k, N, m + fill_ctas, n, (m + fill_ctas) / n, (m + fill_ctas) / wave,
                                [int(x) for x in np.diff(waves.ends)], spread, EXACT, ESTIMATED, start, fill_ctas)
    _slice_loop_info(res.sampling, kernel, policy, samplers)
    res.host_seconds = time.perf_counter() - t0
    return res


def _record(kernel: Kernel, grid: Grid, params: np.ndarray, memory: GlobalMemory, dynamic_shared: int,
            cfg: GPUConfig, max_steps: int, counters, stats, rounds: int, keep: int, jobs: int = 1,
            paths: list | None = None) -> tuple[dict, int, int, bool]:
    """Run CTAs functionally from the first, recording their footprints, up to ``rounds`` rounds (of
    one CTA per SM) past the CTA where the slice starts: the first of the round after the grid's
    distinct sectors so far exceed the L2's capacity (so that the sampled waves see the L2 in its
    steady state: full, and evicting dirty lines), or CTA 0 when the grid never touches more or
    fewer than ``keep`` CTAs would follow (a grid-stride kernel's few CTAs each touch much).
    The capacity is ``l2.size_bytes`` in sectors; with ``l2.localizes_far_reads`` a loaded sector
    of a far line (:func:`gpusim.timing.memsys.far_line`) takes two of them (its home's and a
    copy's in the reader's partition), and a stored sector ``l2.dirty_places``, as in the L2 model.
    Returns ``(footprints, the CTA where the slice starts, the end of the CTAs recorded, whether the
    grid touches more than the L2 holds)``. ``jobs``, ``paths``: as
    :func:`gpusim.functional.footprint.run_footprints`'s."""
    N, n = cfg.sm_count, grid.n_blocks
    capacity = cfg.l2.size_bytes // cfg.l2.sector_bytes
    parts = cfg.l2.partitions if cfg.l2.localizes_far_reads and cfg.l2.partitions > 1 else 0
    granule = max(1, cfg.l2.partition_granule_bytes // cfg.l2.line_bytes)
    dirty = cfg.l2.dirty_places - 1
    extra = 0  # second places of the loaded sectors of far lines, further places of stored sectors
    footprints: dict = {}
    seen: set[int] = set()
    start, end = None, 0
    while end < n:
        stop = min(n, (end if start is None else start) + rounds * N)
        if stop <= end:
            break
        footprints.update(run_footprints(kernel, grid, params, memory, dynamic_shared, N, cfg.sm.max_warps,
                                         max_steps, end, stop, counters, stats, jobs, paths))
        for c in range(end, stop) if start is None else ():
            fp = footprints.get(c)
            if fp is not None:
                if parts or dirty:  # a far line's loaded sector or a stored sector takes more places
                    for sec, stored in zip(fp[0].tolist(), fp[2].tolist()):
                        if sec not in seen:
                            seen.add(sec)
                            if stored:
                                extra += dirty
                            elif parts and far_line(sec >> 2, parts, granule):
                                extra += 1
                else:
                    seen.update(fp[0].tolist())
                if len(seen) + extra > capacity:
                    start = -(-(c + 1) // N) * N
                    break
        end = stop
    overflows = start is not None
    if start is None or n - start < keep:
        start = 0
    return footprints, start, end, overflows


def _slice_loops(kernel: Kernel, policy: Policy, launch: Launch) -> LoopSampler | None:
    """A loop sampler attached to a slice ``launch`` (:attr:`Policy.iterations`), or ``None`` where
    the kernel has no candidate loop or loop sampling is off."""
    if not policy.iterations or LoopSampler.why_not(kernel, False):
        return None
    loops = LoopSampler(kernel, policy, in_slice=True)
    loops.attach(launch)
    return loops


def _slice_loop_info(info: SamplingInfo, kernel: Kernel, policy: Policy, samplers: list) -> None:
    """Add to a slice's ``info`` what its loop samplers (the fill waves', the sampled waves') did:
    ``method`` gains ``"+loop"``, the loop fields are set (iterations of both runs; the loop and its
    period of the sampled waves', else of the fill waves') and ``spread_pct`` the loop's half spread
    times the share of the loop's warp-iterations skipped; else ``reason`` says why not."""
    engaged = [x for x in samplers if x is not None and x.engaged]
    if not engaged:
        why = ("loop sampling off" if not policy.iterations else LoopSampler.why_not(kernel, False)
               or ("no loop became stable" if all(x is None or x.chosen is None for x in samplers)
                   else "the loop ended before it was skipped"))
        info.reason = f"loop: {why}"
        return
    s = engaged[-1].summary()
    done = sum(x.summary()["warp_iterations_simulated"] for x in engaged)
    skipped = sum(x.summary()["warp_iterations_skipped"] for x in engaged)
    info.method += "+loop"
    info.loop = f"{s['label']} (back edge PC {s['pc']}, {s['where']})"
    info.iterations_simulated, info.iterations_skipped, info.period_cycles = done, skipped, s["period"]
    info.loop_periods = [round(p, 1) for p in s["periods"]]
    info.spread_pct += 100.0 * s["half_spread"] * skipped / (done + skipped)


def _extrapolate(waves: _Waves, final: dict, t_sim: int, m: int, n_slice: int, n: int, window: int,
                 pre: int = 0, fill_rate: float = 0.0) -> tuple[int, dict, float, str]:
    """Cycles of the whole grid, its additive counters, the spread (percent) and the method, from a
    slice that ran ``m`` of its ``n_slice`` CTAs in ``t_sim`` cycles (``final``: its counters);
    ``pre`` of the CTAs not run are costed ``fill_rate`` cycles each (those before the sampled
    waves, while the L2 fills), the others at the rate of the last waves."""
    per = {key: ("covered" if key in _COVERED else "ctas") for key in final}
    if m == n_slice:  # the whole slice ran: only the other SMs' share is scaled
        est = {key: v * n / final[per[key]] for key, v in final.items()}
        return t_sim, est, 0.0, "sm_slice"
    # Stopped after stable waves (always within the footprints' rounds, see _Waves), or ran out of
    # CTAs after a warm-up: the rates are those of the last waves before the drain (_Waves.last),
    # a counter's per CTA retired (over a drain, per CTA dispatched, bfs_bottomup at 2^22 counted
    # 224,336 red sectors for its 131,072 warps' one each).
    j = waves.last()
    d = np.diff(waves.ends[:j + 1])[-window:]
    a, b = waves.snaps[j - window], waves.snaps[j]
    extra = (n_slice - m - pre) * waves.rate() + pre * fill_rate
    cycles = int(round(t_sim + extra))
    est = {key: v + (n - final[per[key]]) * (b.get(key, 0) - a.get(key, 0)) / (b[per[key]] - a[per[key]])
           for key, v in final.items()}
    spread = 100.0 * extra * (d.max() - d.min()) / (2 * d.mean()) / cycles
    return cycles, est, spread, "sm_slice+waves"


def _metrics(launch: Launch, est: dict, slice_metrics: dict, totals: dict, cycles: int, t_sim: int,
             clock_hz: float) -> tuple[dict, dict]:
    """The sampled launch's metrics by Nsight name (the slice's ratios, ``est``'s counts, the
    functional run's ``totals``) and its per-PC stall arrays scaled to the estimated totals."""
    est = dict(est)
    est["dram_read_bytes"] += est.pop("dram_read_global_ld")
    launch.mem.count = collections.Counter({k: v for k, v in est.items() if isinstance(k, str)
                                            and k not in _NOT_MEMORY})
    metrics = dict(slice_metrics)
    metrics.update(totals)
    metrics.update(launch.mem.metrics())
    branches, divergent = est["branches"], est["divergent_branches"]
    metrics.update({
        "sm__cycles_elapsed.avg": cycles,
        "sm__cycles_active.avg": slice_metrics["sm__cycles_active.avg"] + (cycles - t_sim),
        "gpu__time_duration.sum": cycles / clock_hz * 1e9,
        "smsp__sass_branch_targets.sum": int(round(branches)),
        "smsp__sass_branch_targets_threads_divergent.sum": int(round(divergent)),
        "smsp__sass_average_branch_targets_threads_uniform.pct":
            100.0 * (branches - divergent) / branches if branches else 100.0,
    })
    stalls = launch.stall_array().astype(np.float64)
    for i, r in enumerate(REASONS):
        total = est[("stall", r)]
        metrics[STALL_METRIC.format(r)] = int(round(total))
        sim_total = stalls[:, i].sum()
        stalls[:, i] *= total / sim_total if sim_total else 0.0
    per_pc = np.rint(stalls).astype(np.int64)
    return metrics, {r: per_pc[:-1, i] for i, r in enumerate(REASONS)}


def run_timing(kernel: Kernel, grid: Grid, params: np.ndarray, memory: GlobalMemory, dynamic_shared: int,
               cfg: GPUConfig, occ: OccupancyResult, max_cycles: int, record_events: bool = False,
               policy: Policy | None = None, max_steps: int = 5_000_000, sass: KernelSass | None = None,
               jobs: int = 1) -> LaunchResult:
    """One timing-mode launch: sampled under ``policy`` where :func:`plan` finds it sound, else
    simulated in detail (``policy=None``: always in detail). ``result.sampling`` says which.
    ``sass``: SASS-aware issue costs (:class:`gpusim.timing.gpu.Launch`). ``jobs``: worker processes
    for the functional run of a sampled launch's CTAs (``result.parallel`` says how they ran; a
    detailed launch runs in this process: ``"serial (detailed timing)"``).

    Raises:
        gpusim.errors.LaunchError: no CTA fits on an SM (CUDA's "too many resources requested for launch").
        gpusim.errors.KernelFault: a fault, a deadlock or a launch longer than ``max_cycles``.
    """
    if occ.blocks_per_sm < 1:
        raise LaunchError(f"{kernel.name}: not even one block of {grid.threads_per_block} threads fits on an SM of "
                          f"{cfg.name} ({occ.reason or 'limited by ' + occ.limited_by}) "
                          f"(CUDA error: too many resources requested for launch)")
    info = plan(kernel, grid, cfg, occ, policy, record_events)
    if info is None:
        return run_sampled(kernel, grid, params, memory, dynamic_shared, cfg, occ, max_cycles, max_steps, policy, sass,
                           jobs)
    loops = None
    if policy is not None:
        why = "loop sampling off" if not policy.iterations else LoopSampler.why_not(kernel, record_events)
        if not why:
            loops = LoopSampler(kernel, policy)
        elif why not in info.reason:
            info.reason += f"; {why}"
    res = run_detailed(kernel, grid, params, memory, dynamic_shared, cfg, occ, max_cycles, record_events, sass,
                       hooks=loops)
    res.parallel = "serial (detailed timing)"
    if loops is not None and loops.engaged:
        info = _loop_info(info, loops, res.cycles)
    elif loops is not None:
        info.reason += "; no loop became stable" if loops.chosen is None else "; the loop ended before it was skipped"
    res.sampling = info
    return res


def _loop_info(info: SamplingInfo, loops: LoopSampler, cycles: int) -> SamplingInfo:
    """The :class:`SamplingInfo` of a launch whose loop ``loops`` skipped iterations of."""
    s = loops.summary()
    done, skipped = s["warp_iterations_simulated"], s["warp_iterations_skipped"]
    return SamplingInfo("loop", info.reason, info.sms_simulated, info.sms, info.ctas_simulated, info.ctas,
                        done / (done + skipped), 0.0, [round(p, 1) for p in s["periods"]],
                        100.0 * s["half_spread"] * s["longest"] / cycles if cycles else 0.0,
                        LOOP_EXACT, LOOP_ESTIMATED, loop=f"{s['label']} (back edge PC {s['pc']}, {s['where']})",
                        iterations_simulated=done, iterations_skipped=skipped, period_cycles=s["period"],
                        relearned=s["relearned"])
