"""Warp-state picture: per warp slot of one SM, what each warp did in each cycle of a window.

Owns: :func:`warp_state_figure` (a matplotlib figure like the scheduler diagrams of the course
notes: x = SM cycle, y = warp slot, one coloured bar per cycle range in which the warp was
issued (``selected``), eligible but not chosen (``not_selected``) or stalled, by Nsight
Compute reason) and :func:`warp_states` (the same data as rows, for tests and text output).

Data: the ``stalls`` segments and issue cycle of every
:class:`gpusim.timing.sm.IssueEvent` of the SM; the segments tile each warp's cycles between
issues, so every cycle of a resident warp has exactly one state. Cycles after a warp's last
issue (it exited) are left blank.

Must not import: simpy, cupy.
"""

from __future__ import annotations

import collections

from gpusim.errors import GpusimError
from gpusim.viz.capture import Recording
from gpusim.viz.style import REASONS, STATE_COLORS, STATE_LABELS, pyplot

__all__ = ["warp_states", "warp_state_figure", "default_window"]

#: Default width of the cycle window (cycles).
DEFAULT_WIDTH = 240


def _sm_events(rec: Recording, sm: int) -> list:
    events = rec.result.events or []
    sms = sorted({e.sm for e in events})
    if sm not in sms:
        shown = ", ".join(map(str, sms[:20])) + (" ..." if len(sms) > 20 else "")
        raise GpusimError(f"SM {sm} ran no warp of {rec.label}; SMs that ran warps: {shown or 'none'}")
    return [e for e in events if e.sm == sm]


def default_window(rec: Recording, sm: int, width: int = DEFAULT_WIDTH) -> tuple[int, int]:
    """``(first, end)``: ``width`` cycles from the SM's first issue (end exclusive)."""
    ev = _sm_events(rec, sm)
    first = min(min((a for a, _, _ in e.stalls), default=e.cycle) for e in ev)
    return first, first + width


def warp_states(rec: Recording, sm: int, start: int, end: int) -> dict[int, list[tuple[int, int, str]]]:
    """Per warp slot of SM ``sm``: ``(first cycle, end cycle exclusive, state)`` runs clipped
    to ``[start, end)``, states from :data:`gpusim.viz.style.REASONS` (``selected`` = issued).

    Raises:
        gpusim.errors.GpusimError: the SM ran no warp (lists those that did), the window is
            empty (``end <= start``), or no warp of the SM was resident in it (gives the
            SM's active cycle range).
    """
    if end <= start:
        raise GpusimError(f"empty cycle window {start}:{end}; give FIRST:END with END > FIRST")
    ev = _sm_events(rec, sm)
    out: dict[int, list[tuple[int, int, str]]] = collections.defaultdict(list)
    lo, hi = None, None
    for e in ev:
        for a, b, r in list(e.stalls) + [(e.cycle, e.cycle + e.slots, "selected")]:
            lo = a if lo is None else min(lo, a)
            hi = b if hi is None else max(hi, b)
            a2, b2 = max(a, start), min(b, end)
            if a2 < b2:
                out[e.slot].append((a2, b2, r))
    if not out:
        raise GpusimError(f"no warp of SM {sm} was resident in cycles {start}:{end}; "
                          f"SM {sm} was active in cycles {lo}:{hi}")
    return {k: sorted(v) for k, v in sorted(out.items())}


def warp_state_figure(rec: Recording, sm: int = 0, start: int | None = None, end: int | None = None):
    """The warp-state picture of SM ``sm`` over cycles ``[start, end)``.

    Args:
        rec: a recording with events.
        sm: SM index.
        start, end: cycle window (end exclusive); default :func:`default_window`.

    Returns:
        A matplotlib Figure (rows: warp slots, labelled with scheduler = slot mod
        ``sm.scheduler.count``; legend: the states present).

    Raises:
        gpusim.errors.GpusimError: as :func:`warp_states`.
    """
    if start is None or end is None:
        d0, d1 = default_window(rec, sm)
        start = d0 if start is None else start
        end = (start + DEFAULT_WIDTH) if end is None else end
    rows = warp_states(rec, sm, start, end)
    plt = pyplot()
    slots = list(rows)
    n_sched = rec.config.sm.scheduler.count
    height = max(2.6, 0.28 * len(slots) + 1.6)
    fig, ax = plt.subplots(figsize=(13, height))
    present = set()
    for y, slot in enumerate(slots):
        by_state = collections.defaultdict(list)
        for a, b, r in rows[slot]:
            by_state[r].append((a, b - a))
        for r, spans in by_state.items():
            present.add(r)
            ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=STATE_COLORS[r], edgecolor="none")
    # CTA / warp labels at each warp's first cycle in the window
    seen = set()
    for e in _sm_events(rec, sm):
        if start <= e.cycle < end and (e.cta, e.warp) not in seen and e.slot in rows:
            seen.add((e.cta, e.warp))
    ax.set_yticks(range(len(slots)))
    warps_of = collections.defaultdict(set)
    for e in _sm_events(rec, sm):
        if start <= e.cycle < end:
            warps_of[e.slot].add((e.cta, e.warp))
    labels = []
    for s in slots:
        who = sorted(warps_of.get(s, ()))
        tag = ", ".join(f"CTA {c} w{w}" for c, w in who[:2]) + (" ..." if len(who) > 2 else "")
        labels.append(f"slot {s} (sched {s % n_sched})" + (f": {tag}" if tag else ""))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_ylim(len(slots) - 0.5, -0.5)
    ax.set_xlim(start, end)
    ax.set_xlabel("SM cycle")
    ax.set_ylabel("warp slot")
    issued = sum(b - a for v in rows.values() for a, b, r in v if r == "selected")
    ax.set_title(f"{rec.label} on {rec.config.name}: warp states of SM {sm}, cycles {start}-{end - 1} "
                 f"({issued} warp instructions issued by {n_sched} schedulers)", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    handles = [plt.Rectangle((0, 0), 1, 1, color=STATE_COLORS[r]) for r in REASONS if r in present]
    ax.legend(handles, [STATE_LABELS[r] for r in REASONS if r in present], loc="upper left",
              bbox_to_anchor=(1.005, 1.0), fontsize=8, title="warp state", title_fontsize=9, frameon=False)
    fig.tight_layout()
    return fig
