"""Loop-iteration sampling of a detailed launch: time a grid too small for wave sampling
(:mod:`gpusim.timing.sampling`) from the first iterations of its main loop. Results are never
sampled; only cycles and the timing model's own counters are estimated.

Owns: :class:`LoopSampler` (attached to a :class:`gpusim.timing.gpu.Launch` through
:func:`gpusim.timing.gpu.run_detailed`'s ``hooks``), :func:`outer_loops` (a kernel's candidate
loops) and :data:`LOOP_EXACT` / :data:`LOOP_ESTIMATED`.

The method (docs/model/sampling.md, "Loop-iteration sampling"):

1. **Candidate loops** are the kernel's outermost loops: backward branches (``bra`` to a label
   at or before it) whose body ``[head, branch]`` lies in no other backward branch's body.
   Every warp's issue of such a back edge (the SM's ``on_back_edge`` hook) ends one iteration
   of that warp.
2. **Progress**: per loop, ``m`` = back edges issued / warps that issued one (the warps' mean
   iteration). The run is cut into chunks of at least ``policy.iteration_chunk`` mean
   iterations and ``policy.iteration_chunk_cycles`` cycles; a chunk's *period* is its cycles per
   mean iteration. When the last ``policy.window`` periods agree within ``policy.tolerance`` of
   their mean, that mean is within it of the ``window`` periods before (no drift), at least
   ``policy.iteration_min_chunks`` chunks ran, no warp joined the loop in the window and none has
   left it (a loop whose warps run different trip counts is not extrapolated from its tail:
   ``gemv_thread_row``, decided at its 13th of 16 iterations, came out +6 %) and every warp
   inside the loop's body completed an iteration over the window (else the others' rate is
   taken for all: ``lds_width.py``'s ``lds32_b``, whose 16 warps of one sub-partition waited,
   came out 0.70x), the loop is *stable*. When single chunks disagree, periods of 2, 4... chunks (up to
   ``policy.iteration_max_stride``) are judged the same way, for loops whose iterations alternate
   between a slow and a fast one with a steady mean. Once stable, its period ``p`` (the window's
   mean) and the rates per warp-iteration of the timing model's additive counters over the
   window (L2/DRAM counts, stall warp-cycles per PC) are kept. The first loop to be stable is
   chosen; nothing else changes in the run before.
3. **Park and skip**: from then, each warp of a CTA stops (is *parked*, issuing nothing) at the
   back edge that ends its iteration ``K``, one past the most any warp of its CTA had completed
   when the CTA's first back edge after the decision issued (so no warp of a CTA can be parked
   while another waits for it at a barrier inside the loop; one that does anyway, a back edge
   the SM never reported, is parked with the others: :meth:`LoopSampler._adopt`, a safety net
   since the SM's stale-PC slip was fixed). Once every live warp of the CTA is
   parked, waits at a barrier outside the loop, or has exited, its parked warps *skip ahead*: they
   run functionally (the same :class:`~gpusim.functional.warpstep.CTAStepper`, so every
   instruction still runs exactly once, on the device memory, in the functional order) until
   they leave the loop, counting the ``R`` iterations so run; then each resumes, in detail, at the
   loop's exit, ``R * p`` cycles after it was parked. Outside a slice the skip runs
   :attr:`LoopSampler.check_every` iterations at a time and looks its global loads up in the
   caches, filling them (:meth:`gpusim.timing.memsys.MemorySystem.warm_load`); when the share of
   the loaded sectors the L1 held or DRAM served leaves the window's by more than
   ``policy.iteration_cache_tolerance``, the warps resume in detail inside the loop and the
   period is learnt again (:meth:`LoopSampler._relearn`: a chase's second pass over what its
   first brought into L2). The code after the loop (stores, the reductions' trees) is simulated
   in detail, with the caches as the simulated iterations and the skipped loads left them.
4. **Counters**: instructions, branches (counted from the skipped outcomes) and the functional
   address-pattern counters are exact; the memory system's counts and the stall warp-cycles of
   the skipped iterations are added at the window's rate per warp-iteration; occupancy integrals
   count the parked warps as resident.

5. **Inside a wave-sampled slice** (``in_slice``, :func:`gpusim.timing.sampling.run_sampled`) the
   same happens to the slice's CTAs: the period is learnt once, in the slice's first wave (where
   every CTA starts together; later waves' CTAs keep joining the loop, so the no-join rule holds
   only there) and applies to every later CTA, which parks at its first back edge. The skipped
   iterations' counts are added as they are skipped, so that the wave sampler's snapshots hold
   them, and each skipped warp's count of global memory instructions advances as if it had issued
   them, so that the shadow CTAs' L2 fills stay in step (their counts get no rate: their fills are
   simulated).
6. **A partial last wave**: a CTA that reaches the loop after the decision, once every CTA of the
   launch (or slice, unless the wave sampler cut it short) has been dispatched, while fewer warps
   are resident on the launch's SMs than when the period was learnt (by more than
   ``policy.tolerance``) is timed in detail, not parked: its warps share the L2 and DRAM with fewer
   others, so the period would make it slow (``validation/probes/l2_bandwidth.py``'s ``ldcg`` at
   8 MiB, 1.3 waves of 6 CTAs an SM: +50 % with the period, +5.7 % now, +7.3 % without loop
   sampling, against the H100).

The sampler never engages for kernels reading ``%clock``, ``%clock64`` or ``%globaltimer``
(their values are the issue cycle), when events are recorded, or without a candidate loop.
A kernel whose iterations differ systematically in anything but where their loads hit (a triangular loop, a loop whose trip count
changes with the data) can be stable early and extrapolate wrongly: time it with
``Device(sampling=False)`` or ``Policy(iterations=False)``.

Imports numpy, isa, gpusim.errors, gpusim.functional (read-only use of the steppers) and the
timing package's ``sm``; never ``gpu`` or ``sampling`` (they import this module), never simpy
or cupy.
"""

from __future__ import annotations

import math

import numpy as np

from gpusim.errors import KernelFault
from gpusim.functional.parallel import ORDERED, communicates
from gpusim.functional.warpstep import DONE
from gpusim.timing.sm import INF, REASONS
from isa.contract import read, written
from isa.ir import Kernel
from isa.opcodes import Kind

__all__ = ["LoopSampler", "outer_loops", "LOOP_EXACT", "LOOP_ESTIMATED"]

#: Metrics of a loop-sampled launch that are exact: every instruction ran functionally and
#: branches are counted from the skipped iterations' outcomes too.
LOOP_EXACT = ("smsp__inst_executed.sum", "smsp__thread_inst_executed.sum", "smsp__inst_executed_op_*",
              "l1tex__t_requests_pipe_lsu_mem_global_op_*", "l1tex__t_sectors_pipe_lsu_mem_global_op_*",
              "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_*", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_*",
              "sm__maximum_warps_per_active_cycle_pct", "smsp__sass_*branch*")
#: Metrics of a loop-sampled launch that are estimated (cycles; the memory system's counts and the
#: stall warp-cycles, extrapolated at their rate per warp-iteration).
LOOP_ESTIMATED = ("sm__cycles_elapsed.avg", "sm__cycles_active.avg", "gpu__time_duration.sum",
                  "sm__warps_active.avg.pct_of_peak_sustained_active", "l1tex__t_sector_hit_rate.pct",
                  "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "lts__t_*", "dram__bytes_*",
                  "smsp__pcsamp_warps_issue_stalled_*")

#: Cycles between two looks at a CTA some of whose warps are parked (host-side; the resumed warps'
#: cycles do not depend on it).
_POLL = 16
#: Special registers whose values depend on the timing: a kernel reading one is not loop-sampled.
_TIMED = ("clock", "clock64", "globaltimer")


def _strides(most: int) -> list[int]:
    """The chunk strides a window is judged at: 1, 2, 4... up to ``most``."""
    return [1 << i for i in range(most.bit_length()) if 1 << i <= most]


def _waits_on_others(ins) -> bool:
    """Whether ``ins`` can make a loop's trip count depend on other threads: an atomic (any
    space: a spin lock), an ordered load or store (``.volatile``, ``.acquire``...: a flag) or a
    fence. Running such a loop ahead functionally could wait forever for a parked warp."""
    kind = ins.spec.kind
    return (kind is Kind.ATOM or kind is Kind.FENCE
            or kind in (Kind.LD, Kind.ST) and bool(set(ins.mods) & ORDERED))


def back_edges(kernel: Kernel) -> dict[int, int]:
    """The kernel's loops: back-edge PC -> head PC, for every ``bra`` to a label at or before it."""
    edges = {}
    for pc, ins in enumerate(kernel.instrs):
        if ins.spec.kind is Kind.BRA and ins.operands and getattr(ins.operands[0], "name", None) in kernel.labels:
            head = kernel.labels[ins.operands[0].name]
            if head <= pc:
                edges[pc] = head
    return edges


def waits_on_ctas(kernel: Kernel) -> str | None:
    """Where the kernel waits on what other CTAs do while it runs: the first loop whose body holds an
    ordered load wider than the CTA (``ld.volatile``, ``ld.acquire.gpu``...: a flag, :func:`gpusim.
    functional.parallel.communicates`), as ``"ld.volatile in the loop at lines A-B"``, or a branch
    whose guard depends on the value a global ``atom`` returned in the same loop (a retry loop, as
    an ``atom.cas`` hash insert's or a spin lock's), as ``"atom.global.cas.b32 decides the loop at
    lines A-B"``; ``None`` if neither. Such a loop's trip count is set by the other CTAs' progress."""
    instrs = kernel.instrs
    for back, head in sorted(back_edges(kernel).items()):
        body = instrs[head:back + 1]
        where = f"the loop at lines {instrs[head].loc.line}-{instrs[back].loc.line}"
        for ins in body:
            why = communicates(ins) if ins.spec.kind is Kind.LD else None
            if why is not None:
                return f"{why} in {where}"
        atoms = [ins for ins in body if ins.spec.kind is Kind.ATOM and communicates(ins) is not None]
        tainted = set().union(*(written(ins) for ins in atoms)) if atoms else set()
        grew = bool(tainted)
        while grew:  # what the atomics' results flow into, through the body's registers (loop-carried too)
            grew = False
            for ins in body:
                uses = set(read(ins)) | ({ins.guard.name} if ins.guard is not None else set())
                out = written(ins)
                if uses & tainted and not out <= tainted:
                    tainted |= out
                    grew = True
        if any(ins.spec.kind is Kind.BRA and ins.guard is not None and ins.guard.name in tainted for ins in body):
            return f"{atoms[0].mnemonic} decides {where}"
    return None


def outer_loops(kernel: Kernel) -> dict[int, int]:
    """The kernel's outermost loops: back-edge PC -> head PC, for every ``bra`` to a label at or
    before it whose body ``[head, back edge]`` lies in no other such branch's body, and holds no
    instruction that waits on other threads (:func:`_waits_on_others`: a spin loop is no
    candidate; its iterations are not alike anyway)."""
    edges = back_edges(kernel)
    outer = {b: h for b, h in edges.items()
             if not any(h2 <= h and b <= b2 and (h2, b2) != (h, b) for b2, h2 in edges.items())}
    return {b: h for b, h in outer.items() if not any(_waits_on_others(i) for i in kernel.instrs[h:b + 1])}


class _Loop:
    """One candidate loop's progress: iterations per warp and the chunk marks."""

    __slots__ = ("back", "head", "counts", "issued", "marks", "next")

    def __init__(self, back: int, head: int):
        self.back, self.head = back, head
        self.counts: dict = {}   # warp -> iterations it completed (back edges issued)
        self.issued = 0          # back edges issued, all warps
        self.marks: list = []    # (cycle, mean iteration, warps, back edges, counter snapshot, slowest warp's iterations)
        self.next = 1            # the mean iteration (a whole number) at which to look for a mark


class LoopSampler:
    """Samples a detailed launch's main loop (module docstring). Use ``attach`` / ``finish``
    (``run_detailed(..., hooks=sampler)``); afterwards :attr:`engaged` says whether iterations
    were skipped and :meth:`summary` what was sampled.

    Args:
        kernel: the launch's kernel.
        policy: a :class:`gpusim.timing.sampling.Policy` (``window``, ``tolerance``,
            ``iteration_chunk``, ``iteration_chunk_cycles``, ``iteration_min_chunks``).
        in_slice: the launch is a wave-sampled slice of SMs (:func:`gpusim.timing.sampling.run_sampled`):
            the skipped iterations' estimated counts are added when they are skipped (so that the
            wave sampler's snapshots at wave ends hold them), not at :meth:`finish`, and the shadow
            CTAs' counts (``shadow_*``: their L2 fills are simulated, in step with the slice CTA's
            global accesses, skipped ones included) get no rate.
    """

    def __init__(self, kernel: Kernel, policy, in_slice: bool = False):
        self.kernel, self.policy, self.in_slice = kernel, policy, in_slice
        self.loops = {b: _Loop(b, h) for b, h in outer_loops(kernel).items()}
        self.launch = None
        self.chosen: _Loop | None = None
        self.last: _Loop | None = None      # the loop chosen last (chosen is None again after _relearn)
        self.period = 0.0
        self.periods: list[float] = []      # the window's periods (cycles per iteration)
        self.rates: dict = {}               # memory-system count -> per warp-iteration
        self.stall_rates = None             # per PC and reason, per warp-iteration
        self.limit: dict = {}               # CTA -> iteration K its warps park at
        self.parked: dict = {}              # warp -> cycle it was parked
        self.polling: set = set()
        self.skipped = 0                    # warp-iterations run functionally only
        self.ctas_skipped = 0
        self.adopted = 0                    # warps parked at a barrier inside the loop (_adopt)
        self.longest = 0.0                  # the most cycles one warp's skip was costed
        self.decided_at = 0
        self.trips = 0                      # the fewest iterations (simulated and skipped) of a skipped warp
        self.due: dict = {}                 # ready CTA -> the soonest cycle one of its warps may resume
        self.held: dict = {}                # parked warp -> (dep_ready, dep_reason) it had (for _relearn)
        self.unadded = 0                    # skipped warp-iterations whose counts are not added yet
        self.baseline = None                # the window's (L1-held, DRAM-served) shares of loaded sectors
        self.check_every = 0                # iterations a skip runs between two looks at the caches
        self.relearned = 0                  # times the skipped loads left the window's cache behaviour
        self.resident = 0                   # live warps on the launch's SMs when the period was learnt

    @staticmethod
    def why_not(kernel: Kernel, record_events: bool) -> str:
        """Why the loop sampler cannot be used on ``kernel`` (``""`` if it can)."""
        from gpusim.functional.warpstep import reads_specials
        if record_events:
            return "events are recorded"
        if not outer_loops(kernel):
            return "the kernel has no loop"
        if reads_specials(kernel, _TIMED).any():
            return "the kernel reads %clock or %globaltimer"
        return ""

    @property
    def engaged(self) -> bool:
        """Whether some iterations were skipped (their cycles extrapolated)."""
        return self.skipped > 0

    # ---------------------------------------------------------------- hooks
    def attach(self, launch) -> None:
        """Install the back-edge hook on ``launch`` (a :class:`gpusim.timing.gpu.Launch`)."""
        self.launch = launch
        launch.on_back_edge = self.back_edge

    def back_edge(self, w, now: int, pc: int) -> None:
        """Warp ``w`` issued the back edge at ``pc`` at cycle ``now``."""
        loop = self.loops.get(pc)
        if loop is None:
            return
        c = loop.counts[w] = loop.counts.get(w, 0) + 1
        loop.issued += 1
        if self.chosen is None:
            self._mark(loop, now)
            return
        if loop is not self.chosen:
            return
        cta = w.cta
        k = self.limit.get(cta)
        if k is None:
            counts = loop.counts
            k = self.limit[cta] = max(counts.get(x, 0) for x in cta.warps) + 1
            d = self.launch.dispatcher
            if d.next_block >= d.limit == len(d.blocks) and self._resident() < (1 - self.policy.tolerance) * self.resident:
                k = self.limit[cta] = math.inf   # the last, partial wave: the period does not hold, time it in detail
        if c >= k:
            self.parked[w] = now
            self.held[w] = (w.dep_ready, w.dep_reason)
            w.dep_ready, w.dep_reason = INF, "barrier"   # issues nothing until resumed
            self._try_skip(cta, now)

    # ---------------------------------------------------------------- stability
    def _snapshot(self) -> tuple[dict, np.ndarray]:
        launch = self.launch
        return dict(launch.mem.count), np.array(launch.stalls, np.float64)

    def _mark(self, loop: _Loop, now: int) -> None:
        p = self.policy
        warps = len(loop.counts)
        if loop.issued < loop.next * warps:
            return
        m = loop.issued // warps   # the mean iteration just reached a whole number
        g = p.iteration_chunk
        loop.next = (m // g + 1) * g
        marks = loop.marks
        if marks and now - marks[-1][0] < p.iteration_chunk_cycles:
            return
        marks.append((now, m, warps, loop.issued, self._snapshot(), self._slowest(loop)))
        w = p.window
        for stride in _strides(p.iteration_max_stride):
            if len(marks) < max(p.iteration_min_chunks, 2 * w * stride) + 1:
                return
            used = marks[-1 - 2 * w * stride::stride]
            if used[0][2] != warps:   # warps still joining the loop
                return
            if marks[-1][5] <= used[w][5]:
                return   # a warp in the loop completed no iteration in the window: it has not joined yet, or
                # waits while the others run (lds_width.py's lds32_b: 14 of 64 warps for 36 iterations)
            per = np.array([(b[0] - a[0]) / (b[1] - a[1]) for a, b in zip(used[:-1], used[1:])])
            last, before = per[-w:], per[:w]
            mean = last.mean()
            if last.max() - last.min() <= p.tolerance * mean and abs(mean - before.mean()) <= p.tolerance * mean:
                break
        else:
            return
        if any(x.done or not loop.head <= x.timed.pc <= loop.back for x in loop.counts):
            return   # warps are leaving the loop: its tail, where those left iterate faster than the period
        a, b = marks[-1 - w * stride], marks[-1]
        n = b[3] - a[3]
        (ca, sa), (cb, sb) = a[4], b[4]
        self.chosen, self.period, self.periods, self.decided_at = loop, float(mean), [float(x) for x in last], now
        self.last, self.resident = loop, self._resident()
        self.rates = {k: (v - ca.get(k, 0)) / n for k, v in cb.items() if isinstance(v, (int, float))
                      and not (self.in_slice and k.startswith("shadow_"))}
        self.stall_rates = (sb - sa) / n
        loaded = self.rates.get("l1_ld_sectors", 0)
        if not self.in_slice and loaded:
            sector = self.launch.cfg.l2.sector_bytes
            self.baseline = (self.rates.get("l1_ld_hits", 0) / loaded,
                             self.rates.get("dram_read_bytes_global_ld", 0) / (sector * loaded))
            self.check_every = max(1, b[1] - a[1])

    def _resident(self) -> int:
        """Live warps resident on the launch's SMs now (parked ones included)."""
        return sum(not x.done for sm in self.launch.sms for cta in sm.ctas for x in cta.warps)

    def _slowest(self, loop: _Loop) -> int:
        """The fewest iterations completed by a live warp now inside ``loop``'s body (0 for one
        that has completed none)."""
        counts, head, back = loop.counts, loop.head, loop.back
        return min((counts.get(x, 0) for sm in self.launch.sms for cta in sm.ctas for x in cta.warps
                    if not x.done and head <= x.timed.pc <= back), default=0)

    # ---------------------------------------------------------------- park and skip
    def _ready(self, cta) -> bool:
        """Whether every live warp of ``cta`` (some of them parked) is parked, waits at a barrier
        or has exited. A warp waiting at a barrier inside the loop is then *adopted*: parked from
        its barrier arrival (:meth:`_adopt`)."""
        loop = self.chosen
        adopt = []
        for x in cta.warps:
            if x.done or x in self.parked:
                continue
            if not x.waiting:
                return False
            if loop.head <= x.timed.pc <= loop.back:
                adopt.append(x)
        if adopt:
            at = max(self.parked[x] for x in cta.warps if x in self.parked)
            for x in adopt:
                self._adopt(x, min(at, x.last_issue + 1))
        return True

    def _adopt(self, x, at: int) -> None:
        """Park warp ``x``, which waits at a barrier inside the loop while the rest of its CTA is
        parked, as from cycle ``at`` (when the last of the others was parked). They completed
        iteration ``K``, barriers included, so ``x`` is in iteration ``K + 1``: its back edge
        ``K`` went unreported (an SM once issued that outcome under another instruction's timing
        when a warp's queue ran dry right after outcomes issued ahead of their turn, leaving a
        ``matmul_tiled`` CTA waiting at the barrier for warps parked for good; fixed since, this is a
        safety net). Its
        arrival is taken back from the barrier; the skip runs it with the others, so it resumes
        with them (``R`` counts its iteration ``K + 1``)."""
        cta = x.cta
        self.parked[x] = at
        self.adopted += 1
        x.waiting = False
        cta.arrived = max(0, cta.arrived - x.lanes)

    def _poll(self, cta) -> None:
        self.polling.discard(cta)
        if cta.warps and any(x in self.parked for x in cta.warps):
            self._try_skip(cta, self.launch.env.now)

    def _try_skip(self, cta, now: int) -> None:
        """Skip the CTAs of ``cta``'s stepper (its group of CTAs run functionally together) once each
        of them that still iterates the loop is ready (:meth:`_ready`), or the ready ones when
        waiting longer could delay one of them: a warp parked after ``k`` iterations skips at least
        one, and at least ``trips - k`` (:attr:`trips`: the fewest iterations a skipped warp has run
        in all so far), so it resumes ``max(1, trips - k) * p`` cycles after it was parked at the
        soonest. Else look again later."""
        loop = self.chosen
        ready, wait = [], False
        for c in [c for sm in self.launch.sms for c in sm.ctas if c.stepper is cta.stepper]:
            if any(x in self.parked for x in c.warps):
                if self._ready(c):
                    ready.append(c)
                else:
                    wait = True
            elif any(not x.done and not x.waiting and loop.head <= x.timed.pc <= loop.back for x in c.warps):
                wait = True   # it will park soon
        if wait and ready:
            due = self.due
            for c in ready:
                if c not in due:   # a ready CTA stays ready (its warps parked) until it is skipped
                    due[c] = min(self.parked[x] + max(1, self.trips - loop.counts[x]) * self.period
                                 for x in c.warps if x in self.parked)
            wait = now + _POLL < min(due[c] for c in ready)
        if wait or not ready:
            # look again (a warp of a waiting CTA may next wait at a barrier, issuing no back edge)
            if cta not in self.polling:
                self.polling.add(cta)
                self.launch.env.at(now + _POLL, self._poll, cta)
            return
        self._skip(ready, now)

    def _skip(self, ctas: list, now: int) -> None:
        """Run the parked warps of ``ctas`` (CTAs of one stepper) functionally to the loop's exit;
        resume each ``R * p`` cycles after it was parked, ``R`` the iterations it so ran."""
        launch, loop = self.launch, self.chosen
        st = ctas[0].stepper
        head, back = loop.head, loop.back
        warps = [x for c in ctas for x in c.warps if x in self.parked]
        runs = dict.fromkeys(warps, 0)
        queued = st.queued
        bra = Kind.BRA
        # The outcomes the warps have queued (run ahead before they were parked) are taken first;
        # then the stepper runs them to the loop's exit, queueing nothing.
        for x in warps:
            gw = x.gw
            q = queued[gw]
            while q:
                pc = q[0][0]
                if pc < head or pc > back:
                    break
                t = q.popleft() if not st.pending else st.step(gw)   # st.step(gw), without its checks
                if pc == back:
                    runs[x] += 1
                ins = t[1]
                if t[3] and any(a.space == "global" for a in t[3]):
                    x.mem_steps += 1   # keeps the wave sampler's shadow CTAs in step (SM._memory)
                if ins is not None and ins.spec.kind is bra:
                    launch.branches += 1
                    if 0 < t[5] < t[2]:
                        launch.divergent_branches += 1
                if t[6]:
                    x.cta.live_threads -= t[6]
                    x.lanes -= t[6]
        inside = [x for x in warps if not queued[x.gw]]
        changed = self._run_inside(st, inside, runs) if inside else False
        self.ctas_skipped += len(ctas)
        for c in ctas:
            self.due.pop(c, None)
        if self.in_slice:
            self._add(sum(runs.values()))
        fewest = min(loop.counts[x] + runs[x] for x in warps)
        self.trips = min(self.trips, fewest) if self.trips else fewest
        for x in warps:
            r = runs[x]
            self.skipped += r
            self.unadded += r
            self.longest = max(self.longest, r * self.period)
            self.held.pop(x, None)
            self._resume(x, max(now, math.ceil(self.parked.pop(x) + r * self.period)))
        if changed:
            self._relearn(now)

    def _run_inside(self, st, inside: list, runs: dict) -> bool:
        """Run the parked warps ``inside`` (nothing queued) functionally to the loop's exit, adding
        the iterations each ran to ``runs``. Outside a slice, with a window that loaded global
        memory, they run :attr:`check_every` iterations at a time, their global loads looked up in
        the caches (and left there, :meth:`gpusim.timing.memsys.MemorySystem.warm_load`); once
        ``policy.iteration_cache_sectors`` sectors were looked up, a share held by the L1 or
        served by DRAM further than ``policy.iteration_cache_tolerance`` from the window's
        (:attr:`baseline`) stops the run: returns True, the warps not done with the loop staying
        in it. Raises KernelFault when a warp cannot leave the loop (a barrier in it waits for a
        warp not in it)."""
        launch, loop = self.launch, self.chosen
        head, back = loop.head, loop.back
        most = self.check_every if self.baseline is not None else None
        looked = [0, 0, 0]   # sectors loaded, held by the L1, served by DRAM (bytes), since the last look
        order = sorted(inside, key=lambda x: x.gw)
        while order:
            loads = [] if most else None
            got = st.run_through(np.array([x.gw for x in order], np.int64), head, back, most, loads)
            launch.branches += int(got["branches"].sum())
            launch.divergent_branches += int(got["divergent"].sum())
            for x, r, g, e in zip(order, got["at_hi"].tolist(), got["global"].tolist(), got["exited"].tolist()):
                runs[x] += r
                x.mem_steps += g
                x.cta.live_threads -= e
                x.lanes -= e
            capped = got["at_hi"] == most if most else np.zeros(len(order), bool)
            # left with a next PC in the loop, or waiting at a barrier in it: no warp of theirs can complete it
            stuck = [x for x, c in zip(order, capped) if not c and (head <= st.warp_pc(x.gw) <= back
                     or (st.warp_pc(x.gw) == DONE and st.live_by_warp[x.gw].any()))]
            if stuck:
                raise KernelFault(f"kernel {self.kernel.name}: loop sampling: warps of CTA {stuck[0].cta.block} "
                                  f"cannot leave the loop at PC {back} functionally (a barrier inside it waits for a "
                                  f"warp not in it); time this kernel with Device(sampling=False)")
            order = [x for x, c in zip(order, capped) if c and head <= st.warp_pc(x.gw) <= back]
            if most and self._caches_moved(loads, looked, {x.gw: x.cta.sm.index for x in inside}):
                return bool(order)
        return False

    def _caches_moved(self, loads: list, looked: list, sm_of: dict) -> bool:
        """Look up ``loads`` (``(pc, access)`` of skipped global loads) in the caches, per warp,
        adding to ``looked`` (sectors, L1-held sectors, DRAM bytes); once it holds
        ``policy.iteration_cache_sectors`` sectors, whether their shares moved from the window's
        by more than ``policy.iteration_cache_tolerance`` (``looked`` then starts again)."""
        mem, timed = self.launch.mem, self.launch.timed
        for pc, acc in loads:
            warp = acc.lanes >> 5
            for gw in np.unique(warp).tolist():
                sectors = np.unique(acc.addrs[warp == gw] >> np.uint64(5)).astype(np.int64)
                held, dram = mem.warm_load(sm_of[gw], sectors, timed[pc].cache_l1)
                looked[0] += sectors.size
                looked[1] += held
                looked[2] += dram
        n = looked[0]
        if n < self.policy.iteration_cache_sectors:
            return False
        l1, dram = looked[1] / n, looked[2] / (self.launch.cfg.l2.sector_bytes * n)
        looked[:] = [0, 0, 0]
        tol = self.policy.iteration_cache_tolerance
        return abs(l1 - self.baseline[0]) > tol or abs(dram - self.baseline[1]) > tol

    def _relearn(self, now: int) -> None:
        """The skipped iterations' loads left the window's cache behaviour: add the iterations
        skipped so far at the window's rates, forget the period, let every warp still parked issue
        again from where it is, and learn the loop's period anew from the next chunks."""
        if not self.in_slice:
            self._add(self.unadded)
            self.unadded = 0
        self.relearned += 1
        self.chosen, self.baseline = None, None
        self.limit.clear()
        self.due.clear()
        self.trips = 0
        for loop in self.loops.values():
            loop.marks.clear()
            loop.next = loop.issued // max(1, len(loop.counts)) + 1
        for x in list(self.parked):
            self.parked.pop(x)
            if x in self.held:
                ready, reason = self.held.pop(x)
                x.dep_ready, x.dep_reason = max(ready, now), reason
                x.sched.wake(x.dep_ready)
            else:   # adopted at a barrier inside the loop: it waits there again
                x.waiting = True
                x.cta.arrived += x.lanes

    def _resume(self, x, t: int) -> None:
        """Warp ``x`` (parked) issues again from cycle ``t`` on, at its next PC."""
        x.forget_issue_window()
        x.pc = x.cta.stepper.warp_pc(x.gw)
        x.last_issue = t - 1   # the skipped cycles are not stalls of the next instruction (finish adds them)
        sm = x.cta.sm
        if not x.lanes:
            self.launch.env.at(t, lambda _, x=x: sm._warp_exit(x, t))
            return
        if x.pc == DONE:   # its lanes wait at a barrier outside the loop
            x.waiting = True
            x.dep_ready, x.dep_reason = INF, "barrier"
            return
        sm._next(x, t, "wait")
        x.sched.wake(x.dep_ready)

    # ---------------------------------------------------------------- the end
    def finish(self, launch) -> None:
        """Add the skipped iterations' estimated counts: memory-system counts and stall warp-cycles
        at the window's rate per warp-iteration."""
        launch.on_back_edge = None
        if self.unadded and not self.in_slice:
            self._add(self.unadded, whole=True)

    def _add(self, n: int, whole: bool = False) -> None:
        """Add ``n`` skipped warp-iterations' counts to the launch's: memory-system counts and stall
        warp-cycles at the window's rate per warp-iteration (``whole``: rounded to integers, once
        at the end; else as fractions, at each skip)."""
        if not n:
            return
        launch = self.launch
        count = launch.mem.count
        for k, r in self.rates.items():
            if r:
                v = count.get(k, 0) + r * n
                count[k] = int(round(v)) if whole else v
        add = self.stall_rates * n
        for pc, row in enumerate(launch.stalls):
            for i in range(len(REASONS)):
                row[i] += add[pc, i]

    def summary(self) -> dict:
        """What was sampled: the loop (``pc``, ``label``, ``where``), ``warp_iterations_simulated``
        (back edges the timing model issued), ``warp_iterations_skipped``, ``period`` (cycles per
        iteration), ``periods`` (the window's), ``spread_pct`` (half the window's relative spread
        applied to the longest skip, in percent of ``cycles`` once set by the caller) and
        ``ctas_skipped`` and ``relearned`` (times the period was learnt again: :meth:`_relearn`)."""
        loop = self.last
        if loop is None:
            return {}
        labels = [name for name, pc in self.kernel.labels.items() if pc == loop.head]
        ins = self.kernel.instrs[loop.back]
        per = np.array(self.periods)
        return {"pc": loop.back, "label": labels[0] if labels else f"PC {loop.head}",
                "where": f"{ins.loc.file}:{ins.loc.line}", "warp_iterations_simulated": loop.issued,
                "warp_iterations_skipped": self.skipped, "period": self.period, "periods": self.periods,
                "half_spread": float((per.max() - per.min()) / (2 * per.mean())) if per.size else 0.0,
                "longest": self.longest, "ctas_skipped": self.ctas_skipped, "relearned": self.relearned}
