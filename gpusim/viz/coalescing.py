"""Global-memory coalescing diagram: a warp's lanes -> 32 B sectors -> 128 B lines.

Owns: :func:`sector_map` (per lane, the sectors it touches; the touched lines and sectors)
and :func:`coalescing_figure` (top: the 32 lanes; bottom: every 128 B line the warp touched,
drawn as its four 32 B sectors; a line from each active lane to the sector(s) it reads or
writes; touched sectors are filled with the share of their bytes the lanes asked for and,
for loads, marked with where the timing run served them: L1 hit, L2 hit or DRAM).

Numbers: :mod:`gpusim.memmodel.coalesce` (hardware-facts.md §6, exact against the H100 for
the suite's patterns): requests, sectors (``l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum``
per request) and lines. Hits and misses: ``IssueEvent.served`` of the timing run (the
sectored L1 and L2 of :mod:`gpusim.timing.memsys`); the title adds the instruction's
latency (issue to data ready, ``IssueEvent.ready``).

Must not import: simpy, cupy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpusim.errors import GpusimError
from gpusim.memmodel import global_sector_addresses, global_sectors
from gpusim.viz.select import Selected
from gpusim.viz.style import pyplot

__all__ = ["SectorMap", "sector_map", "coalescing_figure", "issue_event"]

#: Strip colour under a sector: where the timing run served it.
_LEVEL_COLOURS = {"L1": "#2ca02c", "L2": "#ff7f0e", "DRAM": "#7b3294"}


@dataclass(frozen=True)
class SectorMap:
    """Sectors of one warp access.

    Attributes:
        lane_sectors: per lane, the start addresses of the sectors it touches (empty if inactive).
        sectors: sorted start addresses of the touched sectors (bytes, multiples of ``sector_bytes``).
        lines: sorted start addresses of the touched lines.
        requests, lane_bytes: as :class:`gpusim.memmodel.GlobalCost` (bytes asked for by active lanes).
        sector_bytes, line_bytes: granularities (32, 128 on sm_70..sm_90).
    """

    lane_sectors: tuple[tuple[int, ...], ...]
    sectors: tuple[int, ...]
    lines: tuple[int, ...]
    requests: int
    lane_bytes: int
    sector_bytes: int
    line_bytes: int


def sector_map(sel: Selected) -> SectorMap:
    """The sectors and lines of a selected global (or local) access.

    Raises:
        gpusim.errors.GpusimError: the access is not to global or local memory.
    """
    a = sel.access
    if a.space not in ("global", "local"):
        raise GpusimError(f"{sel.describe()}: the coalescing diagram needs a global access, not {a.space}")
    cfg = sel.rec.config
    sb, lb = cfg.l1.sector_bytes, cfg.l1.line_bytes
    size = min(a.width, 16)
    addrs = a.addrs.astype(np.uint64)
    cost = global_sectors(addrs, size, a.active, sb, lb)
    secs, lines = global_sector_addresses(addrs, size, a.active, sb, lb)
    per_lane = []
    for t in range(32):
        if not a.active[t]:
            per_lane.append(())
            continue
        first, last = int(a.addrs[t]) // sb, (int(a.addrs[t]) + size - 1) // sb
        per_lane.append(tuple(s * sb for s in range(first, last + 1)))
    return SectorMap(tuple(per_lane), tuple(int(s) for s in secs), tuple(int(x) for x in lines),
                     int(cost.requests[0]), int(cost.lane_bytes[0]), sb, lb)


def issue_event(sel: Selected):
    """The :class:`gpusim.timing.sm.IssueEvent` of the selected step (same warp, same sequence number)."""
    n = -1
    for e in sel.rec.result.events:
        if e.cta == sel.step.cta and e.warp == sel.step.warp:
            n += 1
            if n == sel.step.seq:
                return e
    return None


def coalescing_figure(sel: Selected, title: str | None = None):
    """The coalescing diagram of one warp's global access.

    Returns:
        A matplotlib Figure. Raises :class:`gpusim.errors.GpusimError` as :func:`sector_map`.
    """
    m = sector_map(sel)
    a = sel.access
    cfg = sel.rec.config
    plt = pyplot()
    per_line = m.line_bytes // m.sector_bytes
    n_lines = len(m.lines)
    n_boxes = n_lines * per_line
    fig_w = max(12.0, min(26.0, 0.11 * n_boxes + 4))
    fig, ax = plt.subplots(figsize=(fig_w, 6.2))
    lane_x = np.linspace(0, 1, 32)
    box_w = 1.0 / max(n_boxes, 1)
    sec_x = {}
    used = {}
    size = min(a.width, 16)
    for t, secs in enumerate(m.lane_sectors):
        lo = int(a.addrs[t])
        for s in secs:
            used[s] = used.get(s, 0) + max(0, min(lo + size, s + m.sector_bytes) - max(lo, s))
    for i, line in enumerate(m.lines):
        for k in range(per_line):
            sec = line + k * m.sector_bytes
            x0 = (i * per_line + k) * box_w
            sec_x[sec] = x0 + box_w / 2
            ax.add_patch(plt.Rectangle((x0, 0.0), box_w, 0.12, facecolor="#f4b6b6" if sec in used else "#e8e8e8",
                                       edgecolor="#777777", lw=0.5))
        x0 = i * per_line * box_w
        ax.add_patch(plt.Rectangle((x0, -0.005), per_line * box_w, 0.13, fill=False, edgecolor="black", lw=1.4))
        every = max(1, -(-n_lines // 8))
        if i % every == 0:
            text = f"line {line:#x}" if i == 0 else f"+{line - m.lines[0]:#x}"
            ax.text(x0 + per_line * box_w / 2, -0.03, text, ha="center", va="top", fontsize=7)
    # the bytes each lane asked for, at their offsets inside the sectors
    for t, secs in enumerate(m.lane_sectors):
        lo = int(a.addrs[t])
        for sec in secs:
            b0, b1 = max(lo, sec), min(lo + size, sec + m.sector_bytes)
            i = m.lines.index(sec - sec % m.line_bytes)
            x0 = (i * per_line + (sec % m.line_bytes) // m.sector_bytes) * box_w
            ax.add_patch(plt.Rectangle((x0 + (b0 - sec) / m.sector_bytes * box_w, 0.0),
                                       (b1 - b0) / m.sector_bytes * box_w, 0.12, facecolor="#d62728", lw=0))
    for t in range(32):
        x = lane_x[t]
        act = bool(a.active[t])
        ax.add_patch(plt.Rectangle((x - 0.012, 0.80), 0.024, 0.07, facecolor="#4C72B0" if act else "#dddddd",
                                   edgecolor="#333333", lw=0.5))
        ax.text(x, 0.835, str(t), ha="center", va="center", fontsize=6.5, color="white" if act else "#888888")
        for s in m.lane_sectors[t]:
            ax.plot([x, sec_x[s]], [0.80, 0.125], color="#4C72B0", lw=0.7, alpha=0.7)
    ev = issue_event(sel)
    served = (ev.served or {}) if ev is not None else {}
    for sec, x in sec_x.items():
        level = served.get(sec // m.sector_bytes)
        if level is not None:
            ax.add_patch(plt.Rectangle((x - box_w / 2, -0.025), box_w, 0.02, facecolor=_LEVEL_COLOURS[level],
                                       edgecolor="none"))
    ax.text(-0.02, 0.835, "lanes", ha="right", va="center", fontsize=9)
    ax.text(-0.02, 0.06, f"{m.line_bytes} B lines\n({per_line} x {m.sector_bytes} B sectors)", ha="right",
            va="center", fontsize=8)
    ax.set_xlim(-0.12, 1.02)
    ax.set_ylim(-0.2, 1.0)
    ax.axis("off")
    moved = len(m.sectors) * m.sector_bytes
    eff = 100.0 * m.lane_bytes / moved if moved else 0.0
    counts = ", ".join(f"{sum(v == lv for v in served.values())} from {lv}" for lv in _LEVEL_COLOURS
                       if lv in served.values())
    lat = (f"in the timing run: sectors {counts}; data ready {ev.ready - ev.cycle} cycles after issue "
           f"(config latencies: L1 hit {cfg.l1.latency_cycles}, L2 {cfg.l2.latency_cycles}, "
           f"DRAM {cfg.dram.latency_cycles} cycles)") if ev is not None and served else (
        f"in the timing run its data was ready {ev.ready - ev.cycle} cycles after issue" if ev is not None else "")
    ax.set_title(f"{title or sel.rec.label}: {sel.describe()}\n{a.op}.{a.space}, {size} B per lane, "
                 f"{int(a.active.sum())} active lanes: {m.requests} request, {len(m.sectors)} sectors, "
                 f"{len(m.lines)} lines; {m.lane_bytes} B asked / {moved} B in sectors = {eff:.1f} % used",
                 fontsize=10)
    ax.text(0.45, -0.19, lat, ha="center", va="bottom", fontsize=8, color="#333333")
    handles = [plt.Rectangle((0, 0), 1, 1, color="#d62728", alpha=0.75),
               plt.Rectangle((0, 0), 1, 1, color="#f4b6b6"), plt.Rectangle((0, 0), 1, 1, color="#e8e8e8")]
    labels = ["bytes the lanes asked for", "rest of a touched sector (moved, unused)", "sector not touched"]
    for lv, colour in _LEVEL_COLOURS.items():
        if lv in served.values():
            handles.append(plt.Rectangle((0, 0), 1, 1, color=colour))
            labels.append(f"served from {lv}" + (" (hit)" if lv != "DRAM" else " (L2 miss)"))
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.45, 0.74), ncol=3, fontsize=8, frameon=False)
    fig.tight_layout()
    return fig
