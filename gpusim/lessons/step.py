"""A step-through of one warp: its PTX one issue at a time (``gpusim step CASE --warp W``).

Owns: :class:`Issue` (one issued instruction of the watched warp: PTX text, active mask,
registers written with their per-lane values, per-lane addresses with their shared-memory
banks or global sectors, the issue cycle and the stall reasons since the warp's previous
issue) and :func:`walk`, which produces them.

How: the suite case runs in timing mode with events recorded (:mod:`gpusim.viz.capture`),
which gives each issue's cycle and stall segments; the chosen CTA is then replayed warp by
warp on a snapshot of the device memory taken just before the launch, by the functional
engine's own stepper (:class:`gpusim.functional.warpstep.CTAStepper`, the same min-PC
reconvergence the timing engine uses), watching one warp: its active lanes at each PC and
every register it writes. The two are joined in order, by PC.

Must not import: simpy, cupy (timing mode is reached through ``gpusim.Device``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpusim.errors import GpusimError

__all__ = ["Issue", "Walk", "walk"]


@dataclass
class Issue:
    """One issue of the watched warp.

    Attributes:
        seq: 0-based issue number of the warp.
        pc: instruction index; ``ptx``: its PTX text (``"ret (end of kernel)"`` past the end).
        line: PTX line number (0 past the end).
        mask: bool (32,): lanes that executed it (guard-false lanes included, as Nsight counts).
        writes: ``[(register, lanes int array, values array)]`` of the registers it wrote.
        space, op: memory space and ``ld``/``st``/``atom`` of its access ("" for others).
        addrs: int64 (32,) byte addresses per lane (0 for inactive lanes), or None.
        width: bytes per lane of the access.
        units: per lane, the shared bank (``addr // 4 % 32``) or the global 32 B sector
            (``addr // 32``), -1 for inactive lanes; None for non-memory instructions.
        cost: shared wavefronts or global sectors of the access (:mod:`gpusim.memmodel`).
        cycle: issue cycle in the timing run (None if it could not be matched).
        stalls: ``[(reason, cycles)]`` of the warp since its previous issue.
        served: global loads: ``{sector: "L1" | "L2" | "DRAM"}``.
        next_pc: the warp's next PC after it (min over its lanes; reconvergence shows here).
    """

    seq: int
    pc: int
    ptx: str
    line: int
    mask: np.ndarray
    writes: list = field(default_factory=list)
    space: str = ""
    op: str = ""
    addrs: np.ndarray | None = None
    width: int = 0
    units: np.ndarray | None = None
    cost: int | None = None
    cycle: int | None = None
    stalls: list = field(default_factory=list)
    served: dict | None = None
    next_pc: int | None = None


@dataclass
class Walk:
    """A step-through: the case, launch, CTA, warp, the PTX file and the issues in order."""

    case: str
    n: int
    launch: int
    cta: int
    warp: int
    kernel: str
    ptx_path: str
    issues: list[Issue]


def _stepper_class():
    from gpusim.functional.warpstep import CTAStepper

    class Watcher(CTAStepper):
        """A :class:`CTAStepper` that records what one warp executes and writes."""

        watch = 0
        captured: list
        _cap = None

        def _step_batch(self, pc, warps):
            w = self.watch
            if w in warps:
                self._cap = {"pc": pc, "mask": (self.by_warp[w] == pc).copy(), "writes": []}
            moved = super()._step_batch(pc, warps)
            if self._cap is not None:
                t = self.queued[w][-1]
                self._cap["accesses"], self._cap["next_pc"] = t[3], t[4]
                self.captured.append(self._cap)
                self._cap = None
            return moved

        def write(self, op, value, ty, sel):
            if self._cap is not None and sel is not None:
                sel_arr = np.asarray(sel)
                mine = (sel_arr >> 5) == self.watch
                if mine.any():
                    val = np.asarray(value)
                    vals = val[mine] if val.shape[:1] == sel_arr.shape else np.broadcast_to(val, sel_arr.shape)[mine]
                    self._cap["writes"].append((str(getattr(op, "name", op)), sel_arr[mine] & 31, vals.copy(), ty))
            return super().write(op, value, ty, sel)

    return Watcher


def _replay(kernel, grid, params, memory, shared_mem, cfg, cta: int, warp: int) -> list[dict]:
    from gpusim.functional.launch import memory_counters
    from gpusim.functional.warpstep import DONE

    n = len(kernel.instrs) + 1
    st = _stepper_class()(kernel, grid, cta, params, memory, shared_mem, (np.zeros(n, np.int64), np.zeros(n, np.int64)),
                          memory_counters(), cfg.sm_count, cfg.sm.max_warps, 0, 0, lambda: 0, n_blocks=1)
    st.watch, st.captured = warp, []
    st.start(0)
    for _ in range(1 << 24):
        moved = False
        for w in range(st.n_warps):
            if st.warp_pc(w) != DONE:
                st.step(w)
                moved = True
        if not moved:
            return st.captured
    raise GpusimError(f"step: CTA {cta} of {kernel.name} did not finish")


def walk(case: str, warp: int = 0, *, cta: int = 0, n: int | None = None, launch: int = 0,
         gpu: str = "h100", seed: int = 0) -> Walk:
    """Step through warp ``warp`` of CTA ``cta`` of suite ``case``'s launch ``launch``.

    Args:
        case: a key of :data:`gpusim.suite.CASES`; n: its size (default: its small ``test_n``).
        warp: warp index in the CTA, ``0 <= warp < warps per block``.
        cta: linear CTA id, ``0 <= cta < CTAs of the grid``.

    Raises:
        gpusim.errors.GpusimError: unknown case, or ``warp``/``cta``/``launch`` out of range
            (the message names the argument and the allowed range).
    """
    import gpusim
    from gpusim.functional.engine import Grid
    from gpusim.suite import CASES, SizeError, run_case
    from gpusim.viz.capture import record_launch

    if case not in CASES:
        raise GpusimError(f"unknown suite case {case!r}: CASE must be one of {', '.join(CASES)}")
    if warp < 0 or cta < 0 or launch < 0:
        raise GpusimError("--warp, --cta and --launch must be >= 0")
    caught: dict = {}

    class _K:
        def __init__(self, k):
            self._k = k

        def __getattr__(self, name):
            return getattr(self._k, name)

        def __setattr__(self, name, value):   # max_dynamic_shared_size_bytes goes to the real kernel
            if name.startswith("_"):
                object.__setattr__(self, name, value)
            else:
                setattr(self._k, name, value)

        def __call__(self, grid, block, args, *, shared_mem: int = 0, stream=None):
            i = caught.setdefault("count", 0)
            caught["count"] = i + 1
            if i != launch:
                return self._k(grid, block, args, shared_mem=shared_mem)
            dev = gpusim.get_device()
            caught["params"] = self._k._pack(dev, args)
            caught["memory"] = dev.memory.snapshot()
            caught["cfg"] = dev.config
            rec = record_launch(self._k, grid, block, args, shared_mem, label=case)
            caught["rec"] = rec
            return rec.result

    class _M:
        def __init__(self, m):
            self._m = m

        def __getattr__(self, name):
            return getattr(self._m, name)

        def get_function(self, name):
            return _K(self._m.get_function(name))

    class _XP:
        def __getattr__(self, name):
            return getattr(gpusim, name)

        def RawModule(self, *a, **kw):  # noqa: N802 - mirrors cupy.RawModule
            return _M(gpusim.RawModule(*a, **kw))

    size = CASES[case].test_n if n is None else n
    with gpusim.Device(gpu, "timing", record_events=True):
        try:
            run_case(CASES[case], _XP(), size, seed)
        except SizeError as exc:  # a ValueError of the suite's (which imports no gpusim): the user's -n
            raise GpusimError(f"-n {n}: {exc}") from None
    if "rec" not in caught:
        raise GpusimError(f"--launch {launch}: {case} makes {caught.get('count', 0)} launch(es) (0-based index)")
    rec = caught["rec"]
    grid = Grid(rec.grid, rec.block)
    if cta >= grid.n_blocks:
        raise GpusimError(f"--cta {cta}: the grid of {case} at n={size:,} has {grid.n_blocks} CTAs (0..{grid.n_blocks - 1})")
    if warp >= grid.warps_per_block:
        raise GpusimError(f"--warp {warp}: a CTA of {case} has {grid.warps_per_block} warp(s) "
                          f"(0..{grid.warps_per_block - 1})")
    caps = _replay(rec.kernel, grid, caught["params"], caught["memory"], rec.shared_mem, caught["cfg"], cta, warp)
    events = [e for e in rec.result.events if e.cta == cta and e.warp == warp]
    used = [False] * len(events)
    issues = []
    for seq, c in enumerate(caps):
        ins = rec.instr(c["pc"])
        iss = Issue(seq, c["pc"], rec.ptx_lines[ins.loc.line - 1].strip() if ins else "ret (end of kernel)",
                    ins.loc.line if ins else 0, c["mask"], c["writes"], next_pc=c["next_pc"])
        for j, e in enumerate(events):           # the first unused timing issue of the same PC
            if not used[j] and e.pc == c["pc"]:
                used[j] = True
                iss.cycle = e.cycle
                agg: dict = {}
                for a, b, reason in e.stalls:
                    agg[reason] = agg.get(reason, 0) + (b - a)
                iss.stalls = sorted(agg.items(), key=lambda kv: -kv[1])
                iss.served = e.served
                break
        if c["accesses"]:
            _memory(iss, c["accesses"][0], caught["cfg"])
        issues.append(iss)
    return Walk(case, size, launch, cta, warp, rec.kernel.name, rec.ptx_path, issues)


def _memory(iss: Issue, acc, cfg) -> None:
    from gpusim.memmodel import global_sectors, shared_wavefronts

    addrs = np.zeros(32, np.int64)
    act = np.zeros(32, bool)
    lanes = np.asarray(acc.lanes) & 31
    addrs[lanes] = np.asarray(acc.addrs, np.int64)
    act[lanes] = True
    iss.space, iss.op, iss.addrs, iss.width = acc.space, acc.op, addrs, int(acc.width)
    if acc.space == "shared":
        banks, bw = cfg.shared.banks, cfg.shared.bank_width_bytes
        iss.units = np.where(act, (addrs // bw) % banks, -1)
        iss.cost = int(shared_wavefronts(addrs, iss.width, acc.op == "ld", act, banks, bw).wavefronts[0])
    else:
        iss.units = np.where(act, addrs // 32, -1)
        iss.cost = int(global_sectors(addrs, iss.width, act).sectors[0])
