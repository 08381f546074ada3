"""Jupyter display of gpusim's results (``_repr_html_``), as small HTML tables.

Owns: :func:`launch_html` (a :class:`gpusim.functional.launch.LaunchResult`: shape, mode,
cycles and time, instructions, occupancy, top stall, how it was timed, and every Nsight-named
metric in a collapsed list) and :func:`occupancy_html` (a
:class:`gpusim.occupancy.OccupancyResult`: blocks and warps per SM, occupancy, each
resource's block limit with the binding ones marked). The result classes' ``_repr_html_``
call these, so importing this module is never needed by hand. The lessons' comparison tables
render through :meth:`gpusim.lessons.LessonResult._repr_html_`.

Needs jinja2's markupsafe only (a base dependency). Must not import: simpy, cupy, matplotlib.
"""

from __future__ import annotations

__all__ = ["launch_html", "occupancy_html"]

_STYLE = ("<style>.gpusim-t td,.gpusim-t th{padding:2px 8px;text-align:left;border-bottom:1px solid #ddd}"
          ".gpusim-t td.n{text-align:right;font-variant-numeric:tabular-nums}</style>")


def _fmt(v) -> str:
    if isinstance(v, bool) or v is None:
        return "" if v is None else str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e6 else f"{v:,.0f}"
    return str(v)


def _table(title: str, rows: list[tuple[str, object]], extra: str = "") -> str:
    from markupsafe import escape

    body = "".join(f"<tr><th>{escape(k)}</th><td class='n'>{escape(_fmt(v))}</td></tr>" for k, v in rows)
    return f"{_STYLE}<div><b>{escape(title)}</b><table class='gpusim-t'>{body}</table>{extra}</div>"


def launch_html(res) -> str:
    """HTML table of a launch result (``LaunchResult._repr_html_``)."""
    from markupsafe import escape

    m = res.metrics
    rows: list[tuple[str, object]] = [("grid", "x".join(map(str, res.grid))), ("block", "x".join(map(str, res.block))),
                                      ("dynamic shared memory (B)", res.shared_mem), ("mode", res.mode)]
    if res.cycles is not None:
        rows.append(("cycles (sm__cycles_elapsed.avg)", int(res.cycles)))
        if "gpu__time_duration.sum" in m:
            rows.append(("time (us, gpu__time_duration.sum)", float(m["gpu__time_duration.sum"]) / 1e3))
    rows.append(("warp instructions (smsp__inst_executed.sum)", m.get("smsp__inst_executed.sum")))
    if "sm__warps_active.avg.pct_of_peak_sustained_active" in m:
        rows.append(("achieved occupancy %", m["sm__warps_active.avg.pct_of_peak_sustained_active"]))
    stalls = {k.rsplit("_stalled_", 1)[1]: v for k, v in m.items() if "_issue_stalled_" in k}
    top = max(((v, k) for k, v in stalls.items() if k not in ("selected", "not_selected")), default=(0, ""))
    if top[1]:
        rows.append(("top stall reason", top[1]))
    if res.sampling is not None:
        rows.append(("timed from", str(res.sampling)))
    rows.append(("CTAs run", res.parallel))
    rows.append(("host seconds", round(res.host_seconds, 3)))
    items = "".join(f"<tr><td>{escape(k)}</td><td class='n'>{escape(_fmt(v))}</td></tr>" for k, v in sorted(m.items()))
    extra = f"<details><summary>all {len(m)} metrics</summary><table class='gpusim-t'>{items}</table></details>"
    return _table(f"gpusim launch of {res.kernel}", rows, extra)


def occupancy_html(occ) -> str:
    """HTML table of an occupancy result (``OccupancyResult._repr_html_``)."""
    rows: list[tuple[str, object]] = [
        ("GPU", occ.gpu), ("block size", occ.block_size), ("registers per thread", occ.regs_per_thread),
        ("shared memory per block (static + dynamic, B)", occ.static_smem + occ.dynamic_smem),
        ("blocks per SM", occ.blocks_per_sm), ("active warps per SM", f"{occ.active_warps} of {occ.max_warps}"),
        ("theoretical occupancy %", occ.occupancy_pct), ("limited by", occ.limited_by or "nothing")]
    for name in ("warps", "registers", "shared_mem", "blocks", "barriers"):
        lim = getattr(occ, f"limit_{name}", None)
        mark = " (binding)" if name in occ.limiters else ""
        rows.append((f"block limit: {name}", "none" if lim is None else f"{lim}{mark}"))
    return _table("occupancy", rows)
