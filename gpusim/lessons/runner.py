"""Running a lesson: its variants in timing mode, beside the H100's measurements.

Owns: :class:`Row`, :class:`LessonResult` (the table as text and as HTML, the ordering check
against the H100) and :func:`run`.

Each suite case of a lesson runs once (all its launches) in ``gpusim.Device(config,
mode="timing", sampling=True)``: large grids are timed from a slice of SMs and waves
(docs/model/sampling.md), outputs are checked against the case's oracle.

Must not import: simpy, cupy, matplotlib (pictures: :mod:`gpusim.lessons.page`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from gpusim.errors import GpusimError
from gpusim.lessons import h100
from gpusim.lessons.counters import COUNTERS, combine, top_stall
from gpusim.lessons.specs import Lesson, get

__all__ = ["Row", "LessonResult", "run", "SIZES", "TIE"]

#: ``full``: the sizes the H100 was measured at (scale tier); ``quick``: ``Lesson.quick`` (the
#: ordering tests); ``test``: each case's small ``test_n`` (seconds; notebooks' tests)
SIZES = ("full", "quick", "test")
#: two H100 times closer than this (relative) are a tie, not an order (validation.score.TIE)
TIE = 0.05
_CYC = "sm__cycles_elapsed.avg"
_NS = "gpu__time_duration.sum"


@dataclass
class Row:
    """One variant's result. Times in microseconds (``gpu__time_duration.sum``), cycles are
    ``sm__cycles_elapsed.avg``; ``hw_*`` are None where the H100 was not measured at ``n``.
    ``ratio`` = simulated / H100 cycles. ``timed``: how the simulator timed it (sampling method)."""

    label: str
    case: str
    n: int
    launch: int | None
    sim_cycles: float | None
    sim_us: float | None
    sim_metrics: dict | None
    timed: str
    hw_cycles: float | None = None
    hw_us: float | None = None
    hw_metrics: dict | None = None
    #: the H100's cycles at the lesson's full size (for the ordering check in quick mode)
    hw_full_cycles: float | None = None

    @property
    def ratio(self) -> float | None:
        """Simulated over measured cycles (None without an H100 measurement)."""
        return self.sim_cycles / self.hw_cycles if self.hw_cycles and self.sim_cycles is not None else None


@dataclass
class LessonResult:
    """A lesson's run: ``lesson``, ``size`` (one of :data:`SIZES`), ``rows`` in the lesson's
    order, ``host_seconds`` (whole run) and ``case_seconds`` per suite case."""

    lesson: Lesson
    size: str
    config: str
    rows: list[Row]
    host_seconds: float
    case_seconds: dict = field(default_factory=dict)

    @property
    def counter(self):
        """The lesson's explaining :class:`gpusim.lessons.counters.Counter`."""
        return COUNTERS[self.lesson.counter]

    def ordering(self) -> dict:
        """Does the simulator order the variants as the H100 did at the lesson's full size?

        Pairs of variants whose H100 cycles differ by more than :data:`TIE` (relative) are
        compared; returns ``{"pairs", "agree", "same", "disagreements": [(faster label,
        slower label) on the H100 that the simulator orders the other way], "ties": [pairs of labels
        within TIE on the H100], "tie_spread": the largest relative difference of the simulator's
        cycles over those tied pairs}``.
        """
        pairs, agree, bad, ties, spread = 0, 0, [], [], 0.0
        rs = [r for r in self.rows if r.hw_full_cycles and r.sim_cycles is not None]
        for i, a in enumerate(rs):
            for b in rs[i + 1:]:
                lo, hi = (a, b) if a.hw_full_cycles <= b.hw_full_cycles else (b, a)
                if hi.hw_full_cycles - lo.hw_full_cycles > TIE * hi.hw_full_cycles:
                    pairs += 1
                    if lo.sim_cycles < hi.sim_cycles:
                        agree += 1
                    else:
                        bad.append((lo.label, hi.label))
                else:
                    ties.append((a.label, b.label))
                    spread = max(spread, abs(a.sim_cycles - b.sim_cycles) / max(a.sim_cycles, b.sim_cycles))
        return {"pairs": pairs, "agree": agree, "same": agree == pairs, "disagreements": bad, "ties": ties,
                "tie_spread": spread}

    def table_rows(self) -> list[dict]:
        """The table's cells as text, one dict per row (keys: the headers of :meth:`headers`)."""
        c = self.counter
        out = []
        for r in self.rows:
            out.append({
                "variant": r.label, "sim_us": "not run" if r.sim_us is None else f"{r.sim_us:,.1f}",
                "h100_us": "" if r.hw_us is None else f"{r.hw_us:,.1f}",
                "counter_sim": c.format(r.sim_metrics), "counter_h100": c.format(r.hw_metrics),
                "stall_sim": top_stall(r.sim_metrics or {}), "stall_h100": top_stall(r.hw_metrics or {}),
                "ratio": "" if r.ratio is None else f"{r.ratio:.2f}"})
        return out

    def headers(self) -> dict:
        """Column key -> header text."""
        return {"variant": "variant", "sim_us": "simulated us", "h100_us": "H100 us",
                "counter_sim": f"{self.counter.label} (sim)", "counter_h100": "(H100)",
                "stall_sim": "top stall (sim)", "stall_h100": "(H100)", "ratio": "sim/H100"}

    def summary(self) -> str:
        """One line: the ordering verdict and the mean simulated/measured ratio."""
        o = self.ordering()
        ratios = [r.ratio for r in self.rows if r.ratio is not None]
        if not o["pairs"]:
            verdict = (f"the H100 measured every variant within {TIE:.0%} of the others; the simulator's "
                       f"largest difference is {o['tie_spread']:.1%}")
        else:
            verdict = (f"the simulator orders {o['agree']} of {o['pairs']} pairs of variants as the H100 did"
                       + (" (all)" if o["same"] else "; not: " + ", ".join(f"{a} < {b}" for a, b in o["disagreements"])))
        if self.size != "full":
            verdict = f"{self.size} size, against the H100's order at the full size: {verdict}"
        mean = f"; sim/H100 cycles {min(ratios):.2f} to {max(ratios):.2f}" if ratios else ""
        return verdict + mean

    def text(self) -> str:
        """The lesson's terminal output: title, seed section, idea, table, verdict."""
        from gpusim.table import format_table

        hd = self.headers()
        rows = [[row[k] for k in hd] for row in self.table_rows()]
        les = self.lesson
        sizes = ", ".join(sorted({f"{r.case}={r.n:,}" for r in self.rows}, key=str)[:3])
        out = [f"Lesson {les.name}: {les.title}", f"Course notes: {les.seed}", "", les.idea, "",
               f"{len(self.rows)} variants on '{self.config}' in timing mode ({self.size} size: {sizes}"
               f"{', ...' if len(self.rows) > 3 else ''}); H100: committed ncu measurements "
               f"(gpu__time_duration.sum; sim/H100 = sm__cycles_elapsed.avg ratio)", "",
               format_table(list(hd.values()), rows), "", self.summary() + ".",
               f"Ran in {self.host_seconds:.1f} s."]
        if les.note:
            out.insert(-1, "Model note: " + les.note)
        return "\n".join(out)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        from gpusim.lessons.page import table_html

        return table_html(self)

    def write_html(self, path, *, force: bool = False, pictures: bool = True):
        """Write the lesson's HTML page (:func:`gpusim.lessons.page.lesson_html`) to ``path``.

        Raises:
            gpusim.errors.GpusimError: ``path`` exists and ``force`` is false.
        """
        from gpusim.lessons.page import write_page

        return write_page(self, path, force=force, pictures=pictures)


def _metrics(launch) -> dict:
    return {k: v for k, v in launch.metrics.items() if isinstance(v, (int, float))}


def run(name: str, size: str = "full", *, config: str = "h100", progress: Callable[[str], None] | None = None,
        overrides: dict | None = None, all_variants: bool = False) -> LessonResult:
    """Run lesson ``name`` and return its :class:`LessonResult`.

    Args:
        name: a key of :data:`gpusim.lessons.LESSONS`.
        size: ``"full"`` (the H100's scale-tier sizes), ``"quick"`` (``Lesson.quick``) or
            ``"test"`` (each case's ``test_n``; launch overhead dominates, for trying the API).
        config, overrides: the GPU configuration (as for :class:`gpusim.Device`).
        progress: called with one line per case run (None: silent).
        all_variants: at the full size, also run the variants marked ``slow`` (otherwise their
            rows carry the H100's numbers and "not run").

    Raises:
        gpusim.errors.GpusimError: unknown lesson or size; a case's output differs from its oracle.
    """
    import gpusim
    from gpusim.suite import CASES, check, run_case

    les = get(name)
    if size not in SIZES:
        raise GpusimError(f"unknown size {size!r}: --size must be one of {', '.join(SIZES)}")
    t0 = time.perf_counter()
    runs, secs = {}, {}
    skip = {v.case for v in les.variants if v.slow and size == "full" and not all_variants}
    for case in les.cases:
        if case in skip:
            continue
        n = (les.quick[case] if size == "quick" else CASES[case].test_n if size == "test"
             else next(v.n for v in les.variants if v.case == case))
        t = time.perf_counter()
        with gpusim.Device(config, mode="timing", overrides=overrides or {}, sampling=True):
            r = run_case(CASES[case], gpusim, n, seed=0)
        ok, msg = check(r)
        if not ok:
            raise GpusimError(f"lesson {name}: {case} at n={n} gave a wrong result ({msg})")
        runs[case] = (n, r.launches)
        secs[case] = round(time.perf_counter() - t, 2)
        if progress:
            progress(f"  {case} at n={n:,}: {len(r.launches)} launch(es), {secs[case]:.1f} s")
    rows = []
    for v in les.variants:
        if v.case in skip:
            hw = h100.lookup(v.case, v.n, v.launch)
            hm = combine(hw) if hw else None
            rows.append(Row(v.label, v.case, v.n, v.launch, None, None, None, "not run (slow; --all-variants)",
                            hw_cycles=None if hm is None else float(hm[_CYC]),
                            hw_us=None if hm is None else float(hm[_NS]) / 1e3, hw_metrics=hm,
                            hw_full_cycles=None if hm is None else float(hm[_CYC])))
            continue
        n, launches = runs[v.case]
        sel = launches if v.launch is None else [launches[v.launch]]
        sm = combine([_metrics(x) for x in sel])
        hw = h100.lookup(v.case, n, v.launch)
        hm = combine(hw) if hw else None
        full = h100.lookup(v.case, v.n, v.launch)
        rows.append(Row(
            v.label, v.case, n, v.launch, sim_cycles=float(sum(x.cycles for x in sel)),
            sim_us=float(sm.get(_NS, 0.0)) / 1e3, sim_metrics=sm,
            timed="+".join(dict.fromkeys(x.sampling.method for x in sel if x.sampling is not None)),
            hw_cycles=None if hm is None else float(hm[_CYC]), hw_us=None if hm is None else float(hm[_NS]) / 1e3,
            hw_metrics=hm, hw_full_cycles=None if not full else float(combine(full)[_CYC])))
    return LessonResult(les, size, config, rows, round(time.perf_counter() - t0, 2), secs)
