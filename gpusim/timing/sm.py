"""One streaming multiprocessor of the timing model: warp slots, four warp
schedulers (SMSPs) with their scoreboards and pipes, the shared-memory data
stage, and the stall accounting of every warp.

Owns: when each warp instruction issues and why a warp did not issue earlier,
and when each CTA's barriers complete. A warp instruction is executed by the
functional engine (:class:`gpusim.functional.warpstep.CTAStepper`) no later
than the cycle it issues; this module uses only the outcome (active lanes,
addresses, next PC, threads exited or arrived at a barrier).

The model (hardware-facts.md section numbers; MEAS = measured on the H100):

* Warps go to schedulers by warp slot modulo ``sm.scheduler.count`` (§1, JIA18).
  Each scheduler issues at most ``issue_width`` instructions per cycle (§1,
  PG-MP) from its warps (SASS instructions: a PTX instruction takes one cycle
  per SASS instruction ptxas makes of it, none when folded, and an expansion's SASS issue
  one at a time, as their dependencies allow, with other warps' instructions between them;
  see :mod:`gpusim.timing.decode`), chosen by the config's policy, a class of
  :mod:`gpusim.timing.policies` (users may register more): ``gto``
  (greedy: the last issued warp while it can issue, then the oldest), ``lrr`` (loose round
  robin from the warp after the last issued) or ``two_level`` (round robin
  inside fetch groups of ``sm.scheduler.group_warps`` warps, moving to the next group only
  when no warp of the current one can issue; Narasiman et al., MICRO 2011).
* A warp issues its instructions in the order ptxas scheduled them inside a straight-line
  region (:attr:`gpusim.sass.KernelSass.order`: a load ptxas hoisted above an earlier add
  issues first, so both loads are in flight), and across regions in program order;
  without a SASS listing, in program order.
* A warp may issue when every register its next instruction reads or writes
  is ready (a scoreboard per warp), the instruction's unit pipe is free (one
  pipe per class per scheduler, busy ``issue_interval`` cycles per warp
  instruction, and busy too while an instruction holds it besides its own:
  ``Timed.holds``, the H100's ``IMAD.WIDE``) and, for memory instructions, the memory queues have
  room: for shared memory, the scheduler's own MIO queue (:meth:`Scheduler.queue_shared`: fewer than
  ``sm.mio_queue_instructions`` of its shared instructions waiting for the SM's data stage, or,
  without it, the data stage ending its latest less than ``sm.mio_queue_cycles`` ahead), so that
  the four sub-partitions take turns at a full data stage (``validation/probes/lds_width.py``); for
  the L1TEX path, the SM's tag stage less than ``sm.lg_queue_cycles`` behind. With
  ``sm.mio_queue_instructions`` a global or local access also enters the L1TEX only after the
  shared instructions its sub-partition queued before it (``validation/probes/mio_pressure.py``).
* Results: fixed-latency units after ``latency`` cycles; shared memory after
  its wavefronts pass the L1TEX's data stage (one wavefront per cycle, §5; global loads'
  wavefronts hold it too, ``validation/probes/data_stage.py``) plus
  ``shared.latency_cycles`` (§3), each wavefront beyond the access's
  conflict-free count taking ``shared.conflict_latency_cycles`` (H100: 2, MEAS); constant loads ``sm.const_transaction_cycles``
  later per serialised transaction after the first (ASSUMED 1); global and local memory when
  :class:`gpusim.timing.memsys.MemorySystem` says; ``bar.sync`` releases the
  CTA's warps ``units.sync.latency`` cycles after the last warp arrives.
* Stall reasons use Nsight Compute's warp-state names. Between two issues of a
  warp, the cycles until its next instruction's operands were ready count for
  the reason of the last operand to become ready (or ``barrier``), cycles in
  which only its unit was busy count as ``math_pipe_throttle`` /
  ``mio_throttle`` / ``lg_throttle`` (``dispatch_stall`` where another
  instruction holds the pipe, ``Timed.holds``), and the rest (ready but another warp was
  chosen) as ``not_selected``; the issue cycle is ``selected``. Summed over
  warps and cycles these are what ``smsp__pcsamp_warps_issue_stalled_<reason>``
  samples, with every cycle sampled.

Imports numpy, gpusim.functional, gpusim.memmodel and the timing
package's ``context``, ``memsys`` and ``policies``; never simpy (the schedulers are processes of
:class:`gpusim.timing.eventloop.EventLoop`, reached through the launch); never ``gpu`` (the launch is seen
through :class:`gpusim.timing.context.LaunchContext`) and never cupy.
"""

from __future__ import annotations

import math
from collections import deque
from heapq import heappush
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from gpusim.functional.warpstep import DONE
from gpusim.memmodel import partial_sectors, shared_wavefronts
from gpusim.timing.context import LaunchContext
from gpusim.timing.decode import unused_atom_results
from gpusim.timing.memsys import LOCAL_BASE, _lines
from gpusim.timing.policies import make_policy
from isa.opcodes import Kind

if TYPE_CHECKING:  # pragma: no cover
    from gpusim.timing.decode import Timed

__all__ = ["Warp", "CTA", "Scheduler", "SM", "IssueEvent", "REASONS", "INF"]

INF = float("inf")
#: Warp-state (stall) reasons reported, in Nsight Compute's names (NCU #warp-stall-reasons).
REASONS = ("selected", "not_selected", "wait", "short_scoreboard", "long_scoreboard", "barrier",
           "math_pipe_throttle", "mio_throttle", "lg_throttle", "branch_resolving", "dispatch_stall")
_R = {r: i for i, r in enumerate(REASONS)}
#: Folded (zero-cycle) instructions a scheduler issues in one cycle before time moves on (a guard).
_MAX_FOLDED = 64
_BRA, _BAR, _WGMMA, _CPASYNC, _FENCE = Kind.BRA, Kind.BAR, Kind.WGMMA, Kind.CPASYNC, Kind.FENCE
#: Queued outcomes of a warp the scheduler looks through for the one ptxas scheduled first (a
#: bound on the search, not a hardware fact: the suite's straight-line regions are shorter).
_WINDOW = 32


class IssueEvent(NamedTuple):
    """One issued warp instruction (recorded with ``Device(record_events=True)``).

    Attributes:
        cycle: the SM cycle it issued.
        sm, slot: the SM and the warp slot on it (slot mod 4 is the scheduler).
        cta, warp: linear CTA id and warp index inside the CTA.
        pc: index of the instruction in the kernel (``Kernel.instrs``).
        active: threads that executed it.
        ready: the cycle its results are ready (memory: when the data returns).
        space: state space of its memory access (``"global"``, ``"shared"``,
            ``"local"``...) or ``""``.
        stalls: the warp's cycles since its previous issue as ``(first cycle,
            end cycle (exclusive), reason)`` segments, reasons of :data:`REASONS`;
            they tile the cycles from the previous issue + 1 to ``cycle``.
        accesses: its memory accesses (:class:`gpusim.functional.memops.Access`:
            per-lane addresses, lanes, width, shared wavefronts), or ``()``.
        served: global loads and atomics: where each 32 B sector came from,
            ``{address // 32: "L1" | "L2" | "DRAM"}`` (L2 for a sector that missed
            in L1 and hit in L2); ``None`` for other instructions.
        slots: the issue cycles it took, ``cycle`` to ``cycle + slots - 1`` (its SASS
            instructions; 0 for an instruction ptxas folds into others).

    An expansion whose SASS issue one at a time (:attr:`gpusim.timing.decode.Timed.micro`) is one
    event at its last SASS's issue; the issue cycles of the others are ``"selected"`` segments of
    its ``stalls``.
    """

    cycle: int
    sm: int
    slot: int
    cta: int
    warp: int
    pc: int
    active: int
    ready: int
    space: str
    stalls: tuple
    accesses: tuple = ()
    served: dict | None = None
    slots: int = 1


#: ``a.min()`` of a 1-D array without the method's Python-level wrappers (a few microseconds a call).
_min = np.minimum.reduce

#: Wavefront counts of warp access patterns seen (:func:`_wavefronts`); host-side, no timing effect.
_WF_CACHE: dict = {}
_WF_CACHE_MAX = 1 << 16


def _wavefronts(lanes: np.ndarray, addrs: np.ndarray, width: int, load: bool) -> int:
    """Shared memory's wavefronts (§5, :func:`gpusim.memmodel.shared_wavefronts`) of one warp's
    access by lanes ``lanes`` (ascending; their lane in the warp is ``lanes & 31``) at byte
    ``addrs``, ``width`` bytes a lane. The count depends only on the addresses relative to an
    aligned 128-byte row (banks x bank bytes), so it is cached under the lanes (none for a whole
    warp) and those relative addresses."""
    a = addrs.astype(np.int64)
    a -= int(_min(a)) & ~127
    key = (a.tobytes(), width, load) if len(lanes) == 32 else ((lanes & 31).tobytes(), a.tobytes(), width, load)
    wf = _WF_CACHE.get(key)
    if wf is None:
        lanes = lanes & 31
        rows = np.zeros((1, 32), np.int64)
        act = np.zeros((1, 32), np.bool_)
        rows[0, lanes] = addrs  # the given addresses: a fault names them
        act[0, lanes] = True
        wf = int(shared_wavefronts(rows, width, load, act).wavefronts[0])
        if len(_WF_CACHE) >= _WF_CACHE_MAX:
            _WF_CACHE.clear()
        _WF_CACHE[key] = wf
    return wf


def _warp_wavefronts(acc, addrs: np.ndarray, width: int, load: bool) -> int:
    """Shared memory's wavefronts (§5) of one warp's access ``acc`` at byte ``addrs`` (one per
    lane of ``acc.lanes``), ``width`` bytes a lane."""
    return _wavefronts(acc.lanes, addrs, width, load)


def _data_wavefronts(addrs: np.ndarray, acc) -> int:
    """The L1 data stage's wavefronts for one warp's global or local load: shared memory's bank
    rule (:func:`gpusim.memmodel.shared_wavefronts`) over the lanes' byte addresses, as the
    H100's ``l1tex__data_pipe_lsu_wavefronts.sum`` counts them for loads of 1 to 32 lines
    (``validation/probes/l1_stride.py``)."""
    rel = (addrs - (_min(addrs) & ~np.uint64(127))).astype(np.int64)
    return _wavefronts(acc.lanes, rel, max(1, acc.width), True)


#: Global load patterns seen (:func:`_load_pattern`); host-side, no timing effect.
_LD_CACHE: dict = {}


def _load_pattern(addrs: np.ndarray, acc, base: int) -> tuple[int, int, list[int], list[int], int]:
    """A warp's global load at byte ``addrs`` (uint64, one per lane of ``acc``), relative to
    ``base`` (its lowest address rounded down to 128 bytes): (sectors, the lowest sector, the
    lines (each minus ``base >> 7``) and 4-bit sector masks of ``memsys._lines``, the data stage's
    wavefronts, :func:`_data_wavefronts`). They depend only on the lanes and the addresses
    relative to ``base``, so they are cached under those."""
    rel = addrs - np.uint64(base)
    full = len(acc.lanes) == 32  # a whole warp: lanes 0..31 (the key needs no lane list)
    key = (rel.tobytes(), acc.width) if full else ((acc.lanes & 31).tobytes(), rel.tobytes(), acc.width)
    got = _LD_CACHE.get(key)
    if got is None:
        lanes = acc.lanes & 31
        sectors = np.unique(rel >> np.uint64(5)).astype(np.int64)
        lines, masks = _lines(sectors)
        got = (len(sectors), int(sectors[0]), lines, masks,
               _wavefronts(lanes, rel.astype(np.int64), max(1, acc.width), True))
        if len(_LD_CACHE) >= _WF_CACHE_MAX:
            _LD_CACHE.clear()
        _LD_CACHE[key] = got
    return got


#: Global loads seen, by their absolute addresses (:func:`_global_load`); host-side, no timing effect.
_GL_CACHE: dict = {}


def _global_load(addrs: np.ndarray, acc) -> tuple[int, int, tuple[int, ...], tuple[int, ...], int]:
    """A warp's global load at byte ``addrs`` (uint64, one per lane of ``acc``): (sectors, the
    lowest sector, the lines and 4-bit sector masks of ``memsys._lines``, the data stage's
    wavefronts), :func:`_load_pattern` made absolute. Cached under the lanes and the absolute
    addresses: CTAs that load the same tile (a matmul's operands) skip the lowest address and the
    relative addresses' key."""
    full = len(acc.lanes) == 32  # a whole warp: lanes 0..31 (the key needs no lane list)
    key = (addrs.tobytes(), acc.width) if full else ((acc.lanes & 31).tobytes(), addrs.tobytes(), acc.width)
    got = _GL_CACHE.get(key)
    if got is None:
        base = int(_min(addrs)) & ~127
        n, first, lines, masks, wf = _load_pattern(addrs, acc, base)
        got = (n, (base >> 5) + first, tuple([(base >> 7) + line for line in lines]), tuple(masks), wf)
        if len(_GL_CACHE) >= _WF_CACHE_MAX:
            _GL_CACHE.clear()
        _GL_CACHE[key] = got
    return got


class CTA:
    """A resident thread block: its functional state and its warps.

    ``stepper`` executes the CTA's instructions (with the other CTAs of its group);
    the CTA's warps are the stepper's warps ``base .. base + warps_per_block - 1``.
    ``live_threads`` and ``arrived`` count, as warps issue, the CTA's threads that
    have not exited and those waiting at its barrier (``bar.sync`` completes when
    they are equal, PTX ISA 9.0 §9.7.13.1); ``counted`` is the cycle the SM's barrier unit
    has counted the arrivals so far by.
    """

    __slots__ = ("block", "stepper", "base", "warps", "live_warps", "sm", "slots", "start", "live_threads",
                 "arrived", "counted")

    def __init__(self, block: int, stepper, base: int, threads: int, sm: "SM", slots: list[int]):
        self.block, self.stepper, self.base, self.sm, self.slots = block, stepper, base, sm, slots
        self.warps: list[Warp] = []
        self.live_warps = 0
        self.start = 0  # the cycle it became resident
        self.live_threads, self.arrived, self.counted = threads, 0, 0.0


class AsyncGroups:
    """One warp's asynchronous operations of one kind and their groups (PTX ISA 9.0 cp.async.commit_group /
    wait_group, wgmma.commit_group / wait_group): an operation (``cp.async``, ``wgmma.mma_async``)
    completes at the cycle :meth:`book` is given; ``commit_group`` closes the ones since the last into a
    group; ``wait_group N`` waits until every group but the ``N`` most recent has completed, and
    ``cp.async.wait_all`` until every operation has."""

    __slots__ = ("open", "groups")

    def __init__(self) -> None:
        self.open = 0.0  # when the operations since the last commit_group complete
        self.groups: list[float] = []  # when each committed, not yet waited-for group completes

    def book(self, ins, done: float) -> float:
        """Book instruction ``ins`` (``done``: when an operation completes). Returns the cycle the warp may
        go on (0: at once)."""
        op = ins.op.rsplit(".", 1)[-1]
        if op in ("async", "mma_async"):
            self.open = max(self.open, done)
            return 0.0
        if op == "commit_group":
            self.groups.append(self.open)
            self.open = 0.0
            return 0.0
        if op == "wait_all":
            t = max(self.groups + [self.open])
            self.groups, self.open = [], 0.0
            return t
        if op != "wait_group":  # wgmma.fence
            return 0.0
        keep = int(ins.operands[0].value)
        old = self.groups[:max(len(self.groups) - keep, 0)]
        self.groups = self.groups[len(old):]
        return max(old, default=0.0)


class Warp:
    """Timing state of one resident warp.

    ``pend`` maps a register to ``(cycle its value is ready, stall reason)``;
    ``dep_ready``/``dep_reason`` summarise it for the next instruction. ``gw`` is
    the warp's index in its CTA's stepper, ``lanes`` its threads not yet exited,
    ``waiting`` whether it waits at the CTA's barrier, ``loads`` the global load instructions
    it has issued.
    """

    __slots__ = ("cta", "wid", "gw", "slot", "sched", "pc", "pend", "dep_ready", "dep_reason", "last_issue",
                 "timed", "done", "lanes", "waiting", "mem_steps", "qidx", "expansion", "micro_i",
                 "event", "cp", "wg", "cand", "cord", "cdone", "sidx", "q", "plan", "plan_i", "issued", "gseq")

    def __init__(self, cta: CTA, wid: int, slot: int, sched: "Scheduler", now: int, launch: LaunchContext):
        self.cta, self.wid, self.slot, self.sched = cta, wid, slot, sched
        self.gw = cta.base + wid
        self.pc = cta.stepper.warp_pc(self.gw)
        self.pend: dict[str, tuple[float, str]] = {}
        self.dep_ready, self.dep_reason = now, "wait"
        self.last_issue = now - 1
        self.timed = launch.timed[min(self.pc, len(launch.timed) - 1)]
        self.done = False
        self.lanes = min(32, launch.grid.threads_per_block - 32 * wid)
        self.waiting = False
        self.mem_steps = 0  # global load and store instructions issued (for the sampler's shadow CTAs)
        self.issued = 0  # issues (PTX instructions, or each SASS one of an expansion): a store's distance from the last
        self.gseq = 0    # the value of ``issued`` at its last global or local memory instruction
        self.qidx = 0  # which queued outcome issues next (> 0: one ptxas scheduled earlier)
        self.expansion: Timed | None = None  # an expansion whose SASS it is issuing (Timed.micro)
        self.micro_i = 0  # the index in expansion.micro of the SASS it issues next
        self.event: tuple[list, int] | None = None  # the expansion's stall segments so far and its active threads
        self.cp = AsyncGroups()  # the warp's cp.async copies
        self.wg = AsyncGroups()  # its wgmma.mma_async
        self.cand: list[int] | None = None  # SM._sass_next's candidates (PCs), their orders, and
        self.cord: list[int] = []  # whether a queued outcome outside their region ends them
        self.cdone = False
        self.sidx = 0  # its index in its scheduler's warps (Scheduler.changed)
        self.q = cta.stepper.queued[self.gw]  # its queued outcomes (the stepper's deque, never replaced)
        self.plan: tuple | None = None  # a region's precomputed picks (SM._plan) being followed, and
        self.plan_i = 0  # the index in it of the next one

    def forget_issue_window(self) -> None:
        """Drop what :meth:`SM._sass_next` keeps between issues (the queue index, candidates and a
        region's plan): for a warp whose queued outcomes were taken by someone else (the loop
        sampler running it ahead functionally, :mod:`gpusim.timing.itersampling`)."""
        self.qidx, self.cand, self.cord, self.cdone = 0, None, [], False
        self.plan, self.plan_i = None, 0


class _PlanWarp:
    """The state :meth:`SM._sass_search` reads and keeps of a warp, for :meth:`SM._region_plan`'s
    simulated warp: its queued outcomes ``q`` (tuples whose first item is the PC), its PC and
    its candidates."""

    __slots__ = ("q", "pc", "cand", "cord", "cdone")

    def __init__(self, pc: int, q: deque):
        self.q, self.pc, self.cand, self.cord, self.cdone = q, pc, None, [], False


class Scheduler:
    """One warp scheduler (SM sub-partition): a process of the launch's event loop
    (:class:`gpusim.timing.eventloop.EventLoop`) issuing instructions."""

    def __init__(self, sm: "SM", index: int):
        self.sm, self.index = sm, index
        launch = sm.launch
        self.launch, self.env = launch, launch.env
        self.warps: list[Warp] = []
        #: a policy whose order depends on (warps, last) alone (``policy.cached``): per warp index i,
        #: its order after warps[i] issued (None until first needed: after_of); None for other
        #: policies (policy.order is called)
        self.after: list[list[Warp] | None] | None = None
        #: the order for the next pick while ``after`` is not None: after[last.sidx], or warps when no
        #: warp has issued or the last one exited (kept by changed() and SM.issue)
        self.order: list[Warp] = self.warps
        self.unit_free = {name: 0 for name in launch.cfg.sm.units}
        self.unit_free[""] = 0  # SASS of an expansion that uses no pipe (Timed.micro)
        self.unit_free[None] = 0  # Timed.pipe of a folded instruction: never booked
        #: per pipe, until when another instruction holds it (Timed.holds): a warp that waits for it
        #: then stalls in dispatch_stall, as Nsight Compute names it, not math_pipe_throttle
        self.held = dict.fromkeys(self.unit_free, 0)
        self.wgmma_free = 0.0  # when the tensor pipe's queue of wgmma.mma_async is empty
        #: this sub-partition's MIO queue (:meth:`queue_shared`): the cycle from which its warps may
        #: issue a shared-memory instruction (before it, mio_throttle), and the data-stage start of its
        #: latest one (its global and local accesses enter the L1TEX after it, with
        #: ``sm.mio_queue_instructions`` set)
        self.mio_gate = 0.0
        self.mio_last = 0.0
        n = launch.cfg.sm.mio_queue_instructions
        #: the data-stage starts of its last ``sm.mio_queue_instructions`` shared instructions (None:
        #: the backlog is counted in cycles, ``sm.mio_queue_cycles``)
        self.mio_starts: deque[float] | None = deque(maxlen=n) if n else None
        self.last: Warp | None = None
        self.sleep_until: float | None = None
        #: This scheduler's warp selection policy (:mod:`gpusim.timing.policies`), by config name.
        self.policy = make_policy(launch.cfg)
        self.cached = getattr(self.policy, "cached", False)  # _run keeps their orders (after, order)
        self.folded = 0  # folded instructions issued in this cycle so far
        self.token = 0  # the wake-up the scheduler waits for (older ones are stale)
        self._wake = self._run  # the bound method, made once
        self.env.urgent(self._wake, 0)

    def changed(self) -> None:
        """Its warps changed (a warp was added or exited): note each warp's place in them, and, for a
        cached policy, forget its orders after each (:attr:`after`) and make the current one
        (:attr:`order`)."""
        warps = self.warps
        for i, w in enumerate(warps):
            w.sidx = i
        if self.cached:
            self.after = [None] * len(warps)
            last = self.last
            self.order = warps if last is None or last.done else self.after_of(last.sidx)

    def after_of(self, i: int) -> list[Warp]:
        """The policy's order after ``warps[i]`` issued (``policy.order(warps, warps[i])``), made once
        per change of the warps (:attr:`after`)."""
        warps = self.warps
        order = self.after[i] = self.policy.order(warps, warps[i])
        return order

    # ---------------------------------------------------------------- process
    def _run(self, token: int) -> None:
        """Issue at the current cycle, then schedule the next wake-up: after the issue cycles of
        what issued, or (nothing could issue) at the cycle something can, unless woken earlier
        (:meth:`wake`).

        The warp to issue is the first in the policy's order that can issue now (:meth:`ready_at`),
        issued with the cycle it became ready and what held it until then; the choice is
        inlined here (it runs once per issue and per idle wake-up, the engine's hottest code)."""
        if token != self.token:  # a wake-up superseded by an earlier one
            return
        self.sleep_until = None
        now = self.env.now
        sm = self.sm
        unit_free = self.unit_free
        while True:
            # Choose the warp: in the policy's order, the first whose ready_at(w) <= now.
            t_next = INF  # else the earliest ready_at of a warp
            # a cached policy's order is kept (order: policy.order(warps, last), made ahead)
            order = self.order if self.after is not None else self.policy.order(self.warps, self.last)
            for w in order:
                dep = w.dep_ready
                if dep > now:  # operands not ready: ready_at(w) >= dep_ready, so it cannot issue now
                    continue
                timed = w.timed
                u = unit_free[timed.pipe]  # (a folded instruction uses no pipe: pipe None, always free)
                queue = timed.queue
                if not queue:
                    if u <= now:
                        if u > dep:
                            t, reason = u, "dispatch_stall" if self.held[timed.pipe] >= u else "math_pipe_throttle"
                        else:
                            t, reason = dep, w.dep_reason
                        break
                    if u < t_next and not (w.waiting or w.pc == DONE):  # ready_at(w) is u (else INF)
                        t_next = u
                    continue
                # (a warp waiting at a barrier or with no runnable lane has dep_ready INF, but
                # during an expansion, whose SASS use no memory queue: ready_at's INF case is
                # excluded by the test above here)
                if u > dep:
                    t, reason = u, "dispatch_stall" if self.held[timed.pipe] >= u else "math_pipe_throttle"
                else:
                    t, reason = dep, w.dep_reason
                if queue == "mio":
                    q = self.mio_gate
                    if q > t:
                        t, reason = q, "mio_throttle"
                else:
                    q = sm.l1.free - sm.lg_queue
                    if q > t:
                        t, reason = q, "lg_throttle"
                if t <= now:
                    break
                if t < t_next:
                    t_next = t
            else:  # no warp can issue now: t_next from the warps whose operands were not ready, in order
                for w in order:
                    t = w.dep_ready
                    if t <= now or t >= t_next:  # ready_at(w) >= dep_ready (the others were seen above)
                        continue
                    if w.waiting or w.pc == DONE:  # ready_at(w) is INF
                        continue
                    timed = w.timed  # ready_at(w)[0], inlined
                    u = unit_free[timed.pipe]
                    if u > t:
                        t = u
                    queue = timed.queue
                    if queue:
                        q = self.mio_gate if queue == "mio" else sm.l1.free - sm.lg_queue
                        if q > t:
                            t = q
                    if t < t_next:
                        t_next = t
                break
            cycles = sm.issue(w, now, t, reason)
            if cycles or self.folded == _MAX_FOLDED:  # instructions ptxas folds away take no issue cycle
                self.folded = 0
                self.token = token = token + 1
                # self.env.at(now + cycles if cycles > 1 else now + 1, self._wake, token), inlined
                # (EventLoop.at for a later cycle: its bucket of events)
                t = now + cycles if cycles > 1 else now + 1
                env = self.env
                b = env.buckets.get(t)
                if b is None:
                    env.buckets[t] = b = []
                    heappush(env.times, t)
                b.append((self._wake, token))
                return
            self.folded += 1
        self.sleep_until = t_next
        self.token = token = token + 1
        if t_next != INF:  # self.env.at(math.ceil(t_next), self._wake, token), inlined as above (t_next > now)
            t = math.ceil(t_next)
            env = self.env
            b = env.buckets.get(t)
            if b is None:
                env.buckets[t] = b = []
                heappush(env.times, t)
            b.append((self._wake, token))

    def queue_shared(self, start: float, end: float) -> None:
        """A shared-memory instruction of this sub-partition passes the SM's data stage from cycle
        ``start`` to ``end``: move :attr:`mio_gate`. With ``sm.mio_queue_instructions`` = N, its warps
        may issue the next one once fewer than N of its shared instructions wait for the data stage
        (from the start of the N-th latest); otherwise once the data stage ends its latest less than
        ``sm.mio_queue_cycles`` ahead (``validation/probes/lds_width.py``: four sub-partitions, each
        throttled on its own backlog, take turns at a full data stage)."""
        starts = self.mio_starts
        if starts is None:
            self.mio_gate = end - self.sm.mio_queue
            return
        if end <= start:  # words another load's LDS.128 brought (no SASS instruction of its own)
            return
        starts.append(start)
        self.mio_last = start
        if len(starts) == starts.maxlen:
            self.mio_gate = starts[0]

    def hold(self, holds: tuple[tuple[str, int], ...], now: int) -> None:
        """Book :attr:`gpusim.timing.decode.Timed.holds` of an instruction issued at cycle ``now``:
        each ``(unit, cycles)`` pipe stays busy until ``now + cycles`` at least (``unit_free``), and a
        warp waiting for it until then stalls in ``dispatch_stall`` (``held``)."""
        for u, c in holds:
            end = now + c
            if self.held[u] < end:
                self.held[u] = end
            if self.unit_free[u] < end:
                self.unit_free[u] = end

    def wake(self, t: float) -> None:
        """Something may issue at cycle ``t``: end a longer sleep."""
        if self.sleep_until is not None and t < self.sleep_until:
            self.sleep_until = None
            self.token += 1
            self.env.urgent(self._wake, self.token)

    # ---------------------------------------------------------------- selection
    def ready_at(self, w: Warp) -> tuple[float, str]:
        """The cycle ``w`` can issue its next instruction, and what holds it until then."""
        if w.waiting or w.pc == DONE:
            return INF, "barrier"
        t, reason = w.dep_ready, w.dep_reason
        timed = w.timed
        u = self.unit_free[timed.unit] if timed.slots else 0  # a folded instruction uses no pipe
        if u > t:
            t, reason = u, "dispatch_stall" if self.held[timed.unit] >= u else "math_pipe_throttle"
        queue = timed.queue
        if queue:
            sm = self.sm
            if queue == "mio":
                q = self.mio_gate
                if q > t:
                    t, reason = q, "mio_throttle"
            else:
                q = sm.l1.free - sm.lg_queue
                if q > t:
                    t, reason = q, "lg_throttle"
        return t, reason


class SM:
    """One SM: schedulers, warp slots, resident CTAs; its L1TEX (tag and data stages) is ``l1``."""

    def __init__(self, launch: LaunchContext, index: int):
        self.launch, self.index = launch, index
        cfg = launch.cfg
        self.mio_queue, self.lg_queue = cfg.sm.mio_queue_cycles, cfg.sm.lg_queue_cycles
        #: this SM's L1TEX: its tag stage's backlog throttles global accesses (``lg_throttle``), and its
        #: data stage (``l1.data_free``), which shared accesses share with global loads, shared ones (``mio_throttle``)
        self.l1 = launch.mem.l1(index)
        self.schedulers = [Scheduler(self, i) for i in range(cfg.sm.scheduler.count)]
        self.free_slots = list(range(cfg.sm.max_warps))
        self.ctas: list[CTA] = []
        shared = cfg.shared  # shared memory's data stage: bytes a cycle, latency, extra latency a conflict
        self.shared_cost = (shared.bytes_per_cycle, shared.conflict_latency_cycles - 1, shared.latency_cycles)
        self.atom_kinds: dict[int, tuple[bool, bool]] = {}   # _atom_kind's cache
        self.unused_atoms: frozenset[int] | None = None
        self.barrier_free = 0.0     # when the barrier unit may count the next warp's arrival
        self.active_warps = 0
        self.warp_cycles = 0.0      # integral of resident warps over cycles
        self.active_cycles = 0.0    # cycles with at least one resident warp
        self.t_mark = 0

    # ---------------------------------------------------------------- occupancy
    def _mark(self, now: int, delta: int) -> None:
        dt = now - self.t_mark
        if self.active_warps:
            self.warp_cycles += self.active_warps * dt
            self.active_cycles += dt
        self.t_mark = now
        self.active_warps += delta

    def add_cta(self, cta: CTA, now: int) -> None:
        launch = self.launch
        n_sched = len(self.schedulers)
        for wid, slot in enumerate(cta.slots):
            sched = self.schedulers[slot % n_sched]
            w = Warp(cta, wid, slot, sched, now, launch)
            if w.pc == DONE:  # a warp with no thread (cannot happen for valid blocks)
                w.done = True
                continue
            cta.warps.append(w)
            sched.warps.append(w)
            sched.changed()
            sched.wake(now)
        cta.live_warps = len(cta.warps)
        cta.start = now
        self.ctas.append(cta)
        self._mark(now, cta.live_warps)

    def _warp_exit(self, w: Warp, now: int) -> None:
        w.done = True
        w.sched.warps.remove(w)
        w.sched.changed()
        self._mark(now, -1)
        # The warp was resident in the cycle it issued its exit too (the stall states tile it).
        self.warp_cycles += 1
        if not self.active_warps:
            self.active_cycles += 1
        cta = w.cta
        cta.live_warps -= 1
        if cta.live_warps == 0:
            self.ctas.remove(cta)
            self.free_slots.extend(cta.slots)
            self.free_slots.sort()
            self.launch.cta_done(self, cta, now)
            cta.warps = []  # no reference cycle left: the CTA, its warps and its stepper are freed without the GC

    # ---------------------------------------------------------------- issue
    def issue(self, w: Warp, now: int, t_ready: float, reason: str) -> int:
        """Execute ``w``'s next instruction at cycle ``now`` and book its timing; ``t_ready`` and
        ``reason`` are :meth:`Scheduler.ready_at` of ``w``. Returns the issue cycles it takes
        (its SASS instructions; 0 for one ptxas folds away)."""
        launch = self.launch
        sched = w.sched
        w.issued += 1
        # Stall accounting for the cycles since the warp's previous issue.
        first = w.last_issue + 1
        dep = w.dep_ready
        if dep < first:
            dep = first
        if dep > now:
            dep = now
        dep_reason = w.dep_reason
        timed = w.timed
        stalls = launch.stalls[timed.pc]
        events = launch.events
        segs = [] if events is not None else None
        if dep > first:
            stalls[_R[dep_reason]] += dep - first
            if segs is not None:
                segs.append((first, dep, dep_reason))
        if reason != dep_reason and t_ready > dep:
            end = t_ready if t_ready <= now else now  # min(t_ready, now)
            stalls[_R[reason]] += end - dep
            if segs is not None:
                segs.append((dep, end, reason))
            dep = end
        if now > dep:
            stalls[1] += now - dep  # not_selected
            if segs is not None:
                segs.append((dep, now, "not_selected"))
        # The next order of the scheduler's policy (its last issued warp is w)
        sched.last = w
        if sched.after is not None:  # the policy's next order (Scheduler.order)
            order = sched.after[w.sidx]
            sched.order = order if order is not None else sched.after_of(w.sidx)
        if w.expansion is not None:
            return self._issue_micro(w, now, segs)

        cta = w.cta
        # The outcome (a Step's fields): CTAStepper.step, its two common cases inlined (a queued
        # outcome and no CTA started since the last run-ahead; an outcome ptxas scheduled early).
        q, qidx = w.q, w.qidx
        if qidx:  # issued ahead of its turn: the warp's next instruction in program order is unchanged
            _, _, active, accesses, next_pc, taken, exited, waits = q[qidx]
            del q[qidx]
            next_pc = q[0][0]  # CTAStepper.warp_pc (q[0] is still queued)
        elif q and not cta.stepper.pending:
            _, _, active, accesses, next_pc, taken, exited, waits = q.popleft()
        else:
            _, _, active, accesses, next_pc, taken, exited, waits = cta.stepper.step(w.gw)
        if timed.plain:
            # A plain instruction (Timed.plain: no branch, barrier, exit, asynchronous group or
            # expansion; so no thread exited or waits): the general path's steps below without the
            # tests that cannot hold, with _next and _sass_next's plan step inlined.
            slots = timed.slots
            pend = w.pend
            if slots:
                stalls[0] += slots  # "selected"
                w.last_issue = now + slots - 1
                sched.unit_free[timed.unit] = now + timed.interval
                if timed.holds:
                    sched.hold(timed.holds, now)
            elif w.last_issue < now - 1:
                w.last_issue = now - 1
            served = None
            reason = timed.reason
            if not accesses:
                done = now + timed.latency
                for r in timed.forward:  # folded by ptxas: ready when its sources are (Timed.forward)
                    p = pend.get(r)
                    if p is not None and p[0] > done:
                        done, reason = p
            elif events is not None and timed.space not in ("shared", "local"):
                served = launch.mem.served = {}
                done = self._memory(w, accesses, now)
                launch.mem.served = None
            else:
                done = self._memory(w, accesses, now)
            if timed.writes:
                p = (done, reason)
                for r in timed.writes:
                    pend[r] = p
            if events is not None:
                events.append(IssueEvent(now, self.index, w.slot, cta.block, w.wid, timed.pc, active,
                                         int(np.ceil(done)), timed.space or "", tuple(segs), tuple(accesses),
                                         served or None, slots))
            if next_pc == DONE:
                w.pc = next_pc = cta.stepper.warp_pc(w.gw)
                if next_pc == DONE:  # its other lanes wait at the barrier
                    w.waiting = True
                    w.dep_ready, w.dep_reason = INF, "barrier"
                    return slots
            w.pc = next_pc
            # _next(w, now + slots, "wait"), inlined
            if launch.block:
                plan = w.plan
                if plan is not None:  # _sass_next's first step (following a region's plan), inlined
                    k = w.plan_i
                    if k + 1 == len(plan):
                        w.plan = None
                    else:
                        w.plan_i = k + 1
                    w.qidx, pc = plan[k]
                elif w.cand is None and q and launch.in_order[q[0][0]]:
                    w.qidx, pc = 0, q[0][0]  # _sass_next when its search's first cases hold, inlined
                else:
                    w.qidx, pc = self._sass_next(w)
            else:
                pc = next_pc
            timed = w.timed = launch.timed[pc]
            t, reason = now + slots, "wait"
            for r in timed.regs:
                p = pend.get(r)
                if p is not None and p[0] > t:
                    t, reason = p
            w.dep_ready, w.dep_reason = t, reason
            return slots
        slots = timed.slots
        kind = timed.kind
        skipped = timed.skip_slots and taken == active  # an if-converted branch all threads took
        if skipped:
            slots += timed.skip_slots
        if slots:
            stalls[0] += slots  # "selected"
            w.last_issue = now + slots - 1
            if kind_is_wgmma := kind is _WGMMA:
                start = max(now, sched.wgmma_free)  # queued behind the wgmmas before it; the warp goes on
                sched.wgmma_free = start + timed.interval
            else:
                sched.unit_free[timed.unit] = now + timed.interval
                if timed.holds:
                    sched.hold(timed.holds, now)
        else:
            kind_is_wgmma = False
        if not slots and w.last_issue < now - 1:
            w.last_issue = now - 1
        floor = now + slots
        done = (start if kind_is_wgmma else now) + timed.latency
        served = None
        if accesses:
            if events is not None and timed.space not in ("shared", "local"):
                served = launch.mem.served = {}
            done = self._memory(w, accesses, now)
            launch.mem.served = None
        elif kind is _BRA:
            launch.branches += 1
            if 0 < taken < active:
                launch.divergent_branches += 1
            floor = max(floor, now + timed.latency)
        why = "branch_resolving" if kind is _BRA else "wait"
        if skipped and timed.skip_shared:
            # its guarded LDS/STS still pass the data stage, a cycle each, and with a guarded reader
            # of a load the warp waits for the loads (Timed.skip_shared, skip_wait)
            l1 = self.l1
            t0 = max(l1.data_free, now)
            l1.data_free = t0 + timed.skip_shared
            w.sched.queue_shared(t0, l1.data_free)
            if timed.skip_wait and t0 + timed.skip_shared + self.shared_cost[2] > floor:
                floor, why = t0 + timed.skip_shared + self.shared_cost[2], "short_scoreboard"
        if kind is _CPASYNC or kind is _WGMMA or kind is _FENCE:
            ins = launch.kernel.instrs[timed.pc]
            groups = w.cp if kind is Kind.CPASYNC else w.wg if ins.op.startswith("wgmma.") else None
            t = groups.book(ins, done) if groups is not None else 0.0
            if t > floor:
                floor, why = t, "long_scoreboard" if kind is Kind.CPASYNC else "wait"
        if timed.micro:  # an expansion: its other SASS issue one by one (_issue_micro), then its results
            w.expansion, w.micro_i = timed, 0
            if segs is not None:
                w.event = (segs + [(now, now + 1, "selected")], active)
        else:
            for r in timed.writes:
                w.pend[r] = (done, timed.reason)
        if events is not None and not timed.micro:
            events.append(IssueEvent(now, self.index, w.slot, cta.block, w.wid, timed.pc, active,
                                     int(np.ceil(done)), timed.space or "", tuple(segs), tuple(accesses),
                                     served or None, slots))
        w.pc = next_pc
        if kind is _BAR:
            # the SM's barrier unit counts one warp's arrival at a time
            self.barrier_free = cta.counted = max(now, self.barrier_free) + launch.cfg.sm.barrier_arrive_cycles
            cta.arrived += active
            if cta.arrived >= cta.live_threads:
                floor = max(floor, self._release(cta, cta.counted))  # the last warp waits for the release too
                w.pc = cta.stepper.warp_pc(w.gw)  # complete functionally too: every thread has executed it
            elif waits:
                w.waiting = True
                w.dep_ready, w.dep_reason = INF, "barrier"
                return slots
        if exited:
            cta.live_threads -= exited
            w.lanes -= exited
            if cta.arrived and cta.arrived >= cta.live_threads:
                self._release(cta, max(now, cta.counted))
            if not w.lanes:
                self._warp_exit(w, now)
                return slots
        if w.pc == DONE:
            w.pc = cta.stepper.warp_pc(w.gw)
        if w.expansion is not None:
            micro = timed.micro[0]
            w.timed, w.dep_ready, w.dep_reason = micro, now + micro.latency, "wait"
            return slots
        if w.pc == DONE:  # its other lanes wait at the barrier
            w.waiting = True
            w.dep_ready, w.dep_reason = INF, "barrier"
            return slots
        self._next(w, floor, why)
        if kind is _BRA and next_pc <= timed.pc and launch.on_back_edge is not None:
            launch.on_back_edge(w, now, timed.pc)  # a loop's back edge (the loop sampler may park the warp)
        return slots

    def _issue_micro(self, w: Warp, now: int, segs: list | None) -> int:
        """Issue the next SASS instruction of the expansion ``w`` is in (:attr:`Timed.micro`: its
        own pipe, one issue cycle); after the last, its results are pending and the warp goes on."""
        timed, parent = w.timed, w.expansion
        launch = self.launch
        launch.stalls[timed.pc][0] += 1  # "selected"
        w.last_issue = now
        sched = w.sched
        sched.unit_free[timed.unit] = max(sched.unit_free[timed.unit], now + timed.interval)
        if timed.holds:
            sched.hold(timed.holds, now)
        if segs is not None:
            w.event[0].extend(segs)
        w.micro_i += 1
        if w.micro_i < len(parent.micro):
            micro = parent.micro[w.micro_i]
            w.timed, w.dep_ready, w.dep_reason = micro, now + micro.latency, "wait"
            if segs is not None:
                w.event[0].append((now, now + 1, "selected"))
            return 1
        w.expansion = None
        done = now + parent.latency
        for r in parent.writes:
            w.pend[r] = (done, parent.reason)
        if segs is not None:  # one event for the expansion, at its last SASS (IssueEvent)
            (stalls, active), w.event = w.event, None
            launch.events.append(IssueEvent(now, self.index, w.slot, w.cta.block, w.wid, parent.pc, active, done, "",
                                            tuple(stalls), (), None, 1))
        if w.pc == DONE:
            w.pc = w.cta.stepper.warp_pc(w.gw)
        if w.pc == DONE:
            w.waiting = True
            w.dep_ready, w.dep_reason = INF, "barrier"
            return 1
        self._next(w, now + 1, "wait")
        return 1

    def _next(self, w: Warp, floor: float, reason: str) -> None:
        """Choose the warp's next instruction (:meth:`_sass_next`) and look up what it waits for."""
        launch = self.launch
        if launch.block:
            q = w.q
            if w.plan is None and w.cand is None and q and launch.in_order[q[0][0]]:
                w.qidx, pc = 0, q[0][0]  # _sass_next when its search's first cases hold, inlined
            else:
                w.qidx, pc = self._sass_next(w)
        else:
            pc = w.pc
        timed = w.timed = launch.timed[pc]
        t = floor
        pend = w.pend
        for r in timed.regs:
            p = pend.get(r)
            if p is not None and p[0] > t:
                t, reason = p
        w.dep_ready, w.dep_reason = t, reason

    def _sass_next(self, w: Warp) -> tuple[int, int]:
        """Which of the warp's queued outcomes issues next, as (queue index, PC): the one ptxas
        scheduled first (:attr:`gpusim.sass.KernelSass.order`) among the next outcomes of the
        same straight-line region (:attr:`~gpusim.sass.KernelSass.block`), at most
        :data:`_WINDOW` ahead; a branch, barrier or exit issues only in program order. With
        nothing queued, the warp's next PC.

        The candidates (the PCs of the queue's first outcomes that qualify, ``w.cand``, with
        their orders ``w.cord``) are kept between calls: each call takes one of them (the one
        the warp issues next), and the list only grows at its end, from outcomes queued since,
        until a queued outcome outside the region ends it (``w.cdone``).

        Host-side shortcut (same picks): when a warp enters a region with the rest of it queued
        (every PC to the region's end, then an outcome that ends the candidates), the picks
        follow from the region alone; they are computed once per region entry PC
        (:meth:`_plan`) and followed (``w.plan``) instead of searched."""
        plan = w.plan
        if plan is not None:
            k = w.plan_i
            if k + 1 == len(plan):
                w.plan = None
            else:
                w.plan_i = k + 1
            return plan[k]
        q = w.q
        if q and w.cand is None:
            pc0 = q[0][0]
            launch = self.launch
            if pc0 < len(launch.block) and not launch.region_end[pc0] and launch.overtaken[pc0]:
                plan = self._plan(pc0, q)
                if plan is not None:
                    w.plan, w.plan_i = plan, 1
                    return plan[0]
        return self._sass_search(w)

    def _plan(self, pc0: int, q) -> tuple | None:
        """The picks of :meth:`_sass_search` (``(queue index, PC)`` each) for a warp with no
        candidates that enters the straight-line region at ``pc0`` with queue ``q``, when ``q``
        holds the rest of the region (``pc0``, ``pc0 + 1``... to its end) and then an outcome
        that ends the candidates: they depend on the region alone (outcomes queued later come
        after that one), so they are computed once per ``pc0`` (:meth:`_region_plan`). ``None``
        otherwise (the search then runs)."""
        plans = self.launch.plans
        got = plans.get(pc0, False)
        if got is False:
            got = plans[pc0] = self._region_plan(pc0)
        if got is None:
            return None
        last, picks = got
        m = last - pc0 + 1
        if len(q) <= m or q[0][0] != pc0 or q[m - 1][0] != last:
            return None
        pc = pc0  # the queued PCs must be the region's, in order (a deque's indexing is cheap near its ends)
        for i, o in enumerate(q):
            if i == m:
                x = o[0]  # the outcome after the region must end the candidates (as _sass_search tests)
                launch = self.launch
                block = launch.block
                if x <= last or x >= len(block) or block[x] != block[pc0] or launch.region_end[x]:
                    return picks
                return None
            if o[0] != pc:
                return None
            pc += 1
        return None

    def _region_plan(self, pc0: int) -> tuple[int, tuple] | None:
        """(the region's last PC, the picks :meth:`_sass_search` makes for a warp with no
        candidates whose queue holds the region from ``pc0`` on, then an outcome outside it), or
        ``None`` if the search would keep candidates past the region (never expected)."""
        launch = self.launch
        block, ends = launch.block, launch.region_end
        last = pc0
        while last + 1 < len(block) and block[last + 1] == block[pc0] and not ends[last + 1]:
            last += 1
        sim = _PlanWarp(last + 1, deque((pc,) for pc in range(pc0, last + 2)))
        sim.q[-1] = (-1,)  # ends the candidates (a PC no later than the one before it)
        picks = []
        for _ in range(last - pc0 + 1):
            qidx, pc = self._sass_search(sim)
            picks.append((qidx, pc))
            del sim.q[qidx]
        return (last, tuple(picks)) if sim.cand is None else None

    def _sass_search(self, w: "Warp | _PlanWarp") -> tuple[int, int]:
        """:meth:`_sass_next`'s search of the candidates (its docstring)."""
        q = w.q
        if not q and (not isinstance(w, Warp) or not w.cta.stepper.run_ahead_for(w.gw)):
            # Nothing to choose from (the queue is topped up first, so that the choice does not
            # depend on how far the warp's group had run ahead). The stepper's next PC, not w.pc:
            # when outcomes queued after the last one issued were issued ahead of it, w.pc (the
            # last issued outcome's next PC) is one of theirs.
            w.cand = None
            return 0, (w.cta.stepper.warp_pc(w.gw) if isinstance(w, Warp) else w.pc)
        launch = self.launch
        block = launch.block
        pc0 = q[0][0]
        if pc0 >= len(block) or launch.region_end[pc0]:
            w.cand = None
            return 0, pc0
        cand = w.cand
        if not launch.overtaken[pc0]:  # no later PC of its region was scheduled before it
            if cand is not None:
                if cand[0] == pc0 and len(cand) > 1:
                    del cand[0]
                    del w.cord[0]
                else:
                    w.cand = None
            return 0, pc0
        order = launch.order
        if cand is None or cand[0] != pc0:
            cand = w.cand = [pc0]
            cord = w.cord = [order[pc0]]
            w.cdone = False
        else:
            cord = w.cord
        if not w.cdone:
            i, n = len(cand), min(len(q), _WINDOW)
            if i == n < _WINDOW and isinstance(w, Warp) and w.cta.stepper.run_ahead_for(w.gw, n + 1):
                n = min(len(q), _WINDOW)  # the region may go on past the queue: top the queue up first
            if i < n:
                ends, b, prev = launch.region_end, block[pc0], cand[-1]
                while i < n:
                    pc = q[i][0]
                    if pc <= prev or pc >= len(block) or block[pc] != b or ends[pc]:
                        w.cdone = True
                        break
                    cand.append(pc)
                    cord.append(order[pc])
                    prev = pc
                    i += 1
                    if i == n < _WINDOW and isinstance(w, Warp) and w.cta.stepper.run_ahead_for(w.gw, n + 1):
                        n = min(len(q), _WINDOW)
        best_i = cord.index(min(cord))
        pc = cand[best_i]
        if len(cand) == 1:
            w.cand = None
        else:
            del cand[best_i]
            del cord[best_i]
        return best_i, pc

    def _release(self, cta: CTA, counted: float) -> int:
        """A barrier of ``cta`` completed (its last arrival counted at ``counted``): its waiting
        warps go on after the sync latency; returns that cycle."""
        cta.arrived = 0
        t = math.ceil(counted) + self.launch.cfg.sm.units["sync"].latency
        for w in cta.warps:
            if w.done or not w.waiting:
                continue
            w.waiting = False
            w.pc = cta.stepper.warp_pc(w.gw)
            if w.pc == DONE:
                continue
            self._next(w, t, "barrier")
            w.sched.wake(t)
        return t

    def _atom_kind(self, timed) -> tuple[bool, bool]:
        """A global atomic's (reduction, floating-point): a ``red``, or an ``atom`` whose result is
        never read (ptxas makes it ``RED``, :func:`gpusim.timing.decode.unused_atom_results`); a
        float type (``l2.atomic_*_float`` costs). Cached per PC."""
        kinds = self.atom_kinds
        k = kinds.get(timed.pc)
        if k is None:
            kernel = self.launch.kernel
            if self.unused_atoms is None:
                self.unused_atoms = unused_atom_results(kernel)
            red = timed.kind is Kind.ATOM and (not timed.writes or timed.pc in self.unused_atoms)
            fp = any(ty.startswith(("f", "bf")) for ty in kernel.instrs[timed.pc].types)
            k = kinds[timed.pc] = (red, fp)
        return k

    def _memory(self, w: Warp, accesses: list, now: int) -> float:
        """Book the memory accesses of one instruction (:attr:`Step.accesses`); return when its
        results are ready."""
        launch = self.launch
        mem = launch.mem
        done = now + w.timed.latency
        after = shared_start = None
        # with sm.mio_queue_instructions, a global or local access enters the L1TEX behind the shared
        # instructions its sub-partition queued before it (validation/probes/mio_pressure.py)
        at = w.sched.mio_last if w.sched.mio_starts is not None and w.sched.mio_last > now else now
        if launch.on_global_access is not None and any(a.space == "global" for a in accesses):
            after = launch.on_global_access(w.cta.block, w.mem_steps)
            w.mem_steps += 1
        for acc in accesses:
            if acc.space == "const":  # constant cache: sm.const_transaction_cycles per serialised transaction
                c = launch.cfg.sm.const_transaction_cycles
                done = max(done, now + w.timed.latency + int(acc.warp_wavefronts.max()) * c - c)
                continue
            if acc.space == "shared":
                wf = acc.wavefronts
                vector = w.timed.shared_width
                if vector == 0:  # its words came with another load's LDS.128 (decode.Timed.shared_width)
                    wf = 0
                elif vector > acc.width and acc.op == "ld":  # the LDS.128 ptxas made of several loads
                    wf = _warp_wavefronts(acc, acc.addrs.astype(np.int64) & -vector, vector, True)
                elif wf is None:  # shared atomics: read and write the words of a store pattern
                    wf = 2 * _warp_wavefronts(acc, acc.addrs, max(4, acc.width), False)
                l1 = self.l1  # the data stage, shared with global loads' wavefronts (L1.load)
                t0 = l1.data_free
                if t0 < now:
                    t0 = now
                l1.data_free = t0 + wf
                if shared_start is None:
                    shared_start = t0
                per_cycle, conflict, latency = self.shared_cost
                width = acc.width
                ideal = -(-len(acc.lanes) * (vector if vector > width else width) // per_cycle)  # conflict-free
                if ideal < 1:
                    ideal = 1
                t = t0 + latency + (wf - 1 if wf > 1 else 0)
                if wf > ideal:
                    t += (wf - ideal) * conflict
                if t > done:
                    done = t
                continue
            a = acc.addrs
            if acc.space == "local":
                lane = (acc.lanes & 31).astype(np.uint64)
                gw = np.uint64(w.cta.block * launch.grid.warps_per_block + w.wid)
                words = np.uint64(max(1, -(-launch.kernel.local_bytes // 4)))
                a = np.uint64(LOCAL_BASE) + (((gw * words + (a >> np.uint64(2))) * np.uint64(32) + lane) << np.uint64(2))
            prev, w.gseq = w.gseq, w.issued
            if acc.op == "ld" and acc.space != "local":
                n, first, lines, masks, wf = _global_load(a, acc)
                t = mem.load_lines(self.index, at, lines, masks, n, first, w.timed.cache_l1, wf)
                if t > done:
                    done = t
                continue
            sectors = np.unique(a >> np.uint64(5)).astype(np.int64)
            if acc.op == "ld":  # local: its lanes' words interleaved, no data-stage wavefronts
                t = mem.load(self.index, at, sectors, w.timed.cache_l1, None)
            elif acc.op == "st":
                part = partial_sectors(a, acc.width, len(sectors)) if acc.space == "global" else ()
                t = mem.store(self.index, at, sectors, part, acc.width, w, w.issued, prev)
            else:
                serial = int(np.unique(a, return_counts=True)[1].max())
                red, fp = self._atom_kind(w.timed)
                if w.timed.pc in launch.aggregated_atoms:  # one lane per address reaches the L1
                    a = np.unique(a)
                t = mem.atomic(self.index, at, sectors, serial, red, a, fp)
            done = max(done, t)
        if after is not None:
            after()
        if shared_start is not None:
            w.sched.queue_shared(shared_start, self.l1.data_free)
        return done
