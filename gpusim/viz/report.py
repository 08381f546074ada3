"""``gpusim report``: one self-contained HTML page per run or per comparison of variants.

Owns: :func:`report_html` / :func:`write_report`, which render ``templates/report.html.j2``
(jinja2, autoescaped) with every picture embedded as a base64 PNG, so the page is one
offline file to hand to a class. Sections: a comparison table (cycles, instructions,
achieved occupancy, shared wavefronts and bank conflicts, global sectors per request, DRAM
bytes, top stall), the roofline and stall breakdown of all launches, then per launch: the
occupancy charts (:mod:`gpusim.occupancy_charts`), the warp-state picture of SM 0, the bank
diagram of its worst shared access and the coalescing diagram of its worst global access
(when it has them), and the source view.

Must not import: simpy, cupy.
"""

from __future__ import annotations

import base64
from pathlib import Path

from gpusim.errors import GpusimError
from gpusim.viz import charts
from gpusim.viz.banks import bank_figure
from gpusim.viz.capture import Recording
from gpusim.viz.coalescing import coalescing_figure
from gpusim.viz.select import select_access
from gpusim.viz.source import source_context, source_rows, template_env
from gpusim.viz.style import png_bytes
from gpusim.viz.warpstate import warp_state_figure

__all__ = ["report_html", "write_report", "summary_rows"]


def _b64(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def summary_rows(recs: list[Recording]) -> list[dict]:
    """One dict per launch with the comparison table's numbers (Nsight Compute names in keys' docs)."""
    out = []
    for r in recs:
        m = r.result.metrics
        rows = source_rows(r)
        stalls = {k.rsplit("_stalled_", 1)[1]: v for k, v in m.items() if "_issue_stalled_" in k}
        top = max(((v, k) for k, v in stalls.items() if k != "selected"), default=(0, ""))[1]
        req = sum(x.global_requests for x in rows)
        out.append({
            "label": r.label, "kernel": r.kernel.name, "grid": "x".join(map(str, r.grid)),
            "block": "x".join(map(str, r.block)), "cycles": r.result.cycles,
            "inst": int(m["smsp__inst_executed.sum"]),
            "occ": m.get("sm__warps_active.avg.pct_of_peak_sustained_active", 0.0),
            "theo_occ": m.get("sm__maximum_warps_per_active_cycle_pct", 0.0),
            "wavefronts": sum(x.shared_wavefronts for x in rows), "conflicts": sum(x.bank_conflicts for x in rows),
            "sectors_per_req": (sum(x.global_sectors for x in rows) / req) if req else None,
            "dram": int(m.get("dram__bytes_read.sum", 0) + m.get("dram__bytes_write.sum", 0)),
            "top_stall": top,
        })
    return out


def _section(r: Recording) -> dict:
    sec: dict = {"rec": r, "src": source_context(r), "images": []}
    try:
        occ = charts.occupancy_pngs(r)
        sec["occupancy"] = [_b64(occ[k]) for k in ("block_size", "registers", "shared_mem")]
    except GpusimError:
        sec["occupancy"] = []
    sm0 = min(e.sm for e in r.result.events)
    sec["images"].append(("Warp states of SM %d (first cycles)" % sm0, _b64(png_bytes(warp_state_figure(r, sm0)))))
    if r.memory_lines("shared"):
        sel = select_access(r, "shared", cta=None, warp=None)
        sec["images"].append(("Bank diagram of the costliest shared access", _b64(png_bytes(bank_figure([sel])))))
    if r.memory_lines("global"):
        sel = select_access(r, "global", cta=None, warp=None)
        sec["images"].append(("Coalescing diagram of the costliest global access",
                              _b64(png_bytes(coalescing_figure(sel)))))
    return sec


def report_html(recs: list[Recording], title: str | None = None) -> str:
    """The HTML page for one or more recorded launches (a comparison when several).

    Raises:
        gpusim.errors.GpusimError: no recording.
    """
    if not recs:
        raise GpusimError("a report needs at least one recorded launch")
    title = title or ("gpusim report: " + ", ".join(r.label for r in recs))
    cfg = recs[0].config
    ctx = {
        "title": title, "config": cfg, "summary": summary_rows(recs),
        "roofline": _b64(png_bytes(charts.roofline_figure(recs))),
        "stalls": _b64(png_bytes(charts.stall_figure(recs))),
        "peaks": charts.peaks(cfg), "sections": [_section(r) for r in recs],
        "comparison": len(recs) > 1,
    }
    return template_env().get_template("report.html.j2").render(**ctx)


def write_report(recs: list[Recording], path: str | Path, *, title: str | None = None, force: bool = False) -> Path:
    """Write :func:`report_html` to ``path``; refuses to overwrite an existing file unless ``force``.

    Raises:
        gpusim.errors.GpusimError: ``path`` exists and ``force`` is false; no recording.
    """
    p = Path(path)
    if p.exists() and not force:
        raise GpusimError(f"{p} exists; pass --force (force=True) to overwrite it")
    html = report_html(recs, title)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(html, encoding="utf-8")
    return p
