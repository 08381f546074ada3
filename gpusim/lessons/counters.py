"""The counters that explain a lesson's differences, computed the same way from the simulator's
metrics and from the H100's Nsight Compute metrics (the same names on both sides).

Owns: :class:`Counter` and :data:`COUNTERS`; :func:`combine` (the metrics of several launches
of one run as one launch) and :func:`top_stall`.

Caveat: the H100's instruction counts are SASS instructions; the simulator's
``smsp__inst_executed.sum`` is SASS-equivalent (docs/model/timing.md, "SASS-aware costs"), so ratios of them compare.

Must not import: simpy, cupy, matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["Counter", "COUNTERS", "combine", "top_stall"]

#: stall reasons left out of "top stall": the issue itself and "eligible, another warp issued"
_NOT_STALLS = ("selected", "not_selected")
_SIM_STALL = "smsp__pcsamp_warps_issue_stalled_"
_HW_STALL = "smsp__average_warps_issue_stalled_"


def top_stall(m: dict) -> str:
    """The largest stall reason of a launch's metrics (either the simulator's
    ``smsp__pcsamp_warps_issue_stalled_<reason>`` warp-cycles or the H100's
    ``smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio``), "" when none."""
    best, name = 0.0, ""
    for k, v in m.items():
        if k.startswith(_SIM_STALL):
            reason = k[len(_SIM_STALL):]
        elif k.startswith(_HW_STALL) and k.endswith("_per_issue_active.ratio"):
            reason = k[len(_HW_STALL):-len("_per_issue_active.ratio")]
        else:
            continue
        if reason not in _NOT_STALLS and v is not None and float(v) > best:
            best, name = float(v), reason
    return name


def _ratio(num: str, den: str, scale: float = 1.0) -> Callable[[dict], float | None]:
    def f(m: dict) -> float | None:
        a, b = m.get(num), m.get(den)
        return None if a is None or not b else scale * float(a) / float(b)
    return f


def _sum_ratio(nums: tuple[str, ...], dens: tuple[str, ...]) -> Callable[[dict], float | None]:
    def f(m: dict) -> float | None:
        b = sum(float(m.get(d) or 0) for d in dens)
        return None if not b else sum(float(m.get(x) or 0) for x in nums) / b
    return f


def _get(name: str) -> Callable[[dict], float | None]:
    return lambda m: None if m.get(name) is None else float(m[name])


@dataclass(frozen=True)
class Counter:
    """A counter of a lesson table: ``label`` (column head), ``metrics`` (the Nsight Compute
    metrics it is computed from), ``value(metrics) -> number | str | None`` and ``fmt``."""

    label: str
    metrics: tuple[str, ...]
    value: Callable[[dict], object]
    fmt: str = "{:,.2f}"

    def format(self, m: dict | None) -> str:
        """The counter's value for metrics ``m`` as text ("" when it cannot be computed)."""
        if not m:
            return ""
        v = self.value(m)
        if v is None or v == "":
            return ""
        return v if isinstance(v, str) else self.fmt.format(v)


_SH = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
_SH_INST = ("smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum")

COUNTERS: dict[str, Counter] = {
    "thread_efficiency": Counter(
        "active threads per warp instruction (of 32)",
        ("smsp__thread_inst_executed.sum", "smsp__inst_executed.sum"),
        _ratio("smsp__thread_inst_executed.sum", "smsp__inst_executed.sum"), "{:.1f}"),
    "shared_wavefronts_per_request": Counter(
        "shared wavefronts per shared instruction", _SH + _SH_INST, _sum_ratio(_SH, _SH_INST), "{:.2f}"),
    "shared_ld_wavefronts_per_request": Counter(
        "shared load wavefronts per request", (_SH[0], _SH_INST[0]), _ratio(_SH[0], _SH_INST[0]), "{:.2f}"),
    "sectors_per_request": Counter(
        "global load sectors per request",
        ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
        _ratio("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
        "{:.2f}"),
    "achieved_occupancy": Counter(
        "achieved occupancy %", ("sm__warps_active.avg.pct_of_peak_sustained_active",),
        _get("sm__warps_active.avg.pct_of_peak_sustained_active"), "{:.1f}"),
    "top_stall": Counter("top stall reason", (), top_stall, "{}"),
    "warp_instructions": Counter("warp instructions", ("smsp__inst_executed.sum",),
                                 _get("smsp__inst_executed.sum"), "{:,.0f}"),
    "global_sectors": Counter("global load sectors", ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",),
                              _get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), "{:,.0f}"),
}


def combine(launches: list[dict]) -> dict:
    """Several launches' metrics as one: sums (``*.sum``, cycles, durations, stall warp-cycles)
    added; every other metric (percentages, ratios) taken from the longest launch."""
    if len(launches) == 1:
        return dict(launches[0])
    longest = max(launches, key=lambda m: float(m.get("sm__cycles_elapsed.avg") or 0))
    out = dict(longest)
    for k in set().union(*launches):
        if k.endswith(".sum") or k.startswith(_SIM_STALL) or k in ("sm__cycles_elapsed.avg", "sm__cycles_active.avg"):
            vals = [m.get(k) for m in launches]
            if all(v is not None for v in vals):
                out[k] = sum(float(v) for v in vals)
    return out
