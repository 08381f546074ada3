"""Shared look of the gpusim pictures: matplotlib set-up, colours, PNG encoding.

Owns: :func:`pyplot` (matplotlib with the headless Agg backend), the colour of every warp
state / stall reason (:data:`STATE_COLORS`, in Nsight Compute's names of
:data:`gpusim.timing.sm.REASONS`), and :func:`png_bytes` / :func:`save_png`.

Must not import: simpy, cupy, or any gpusim module (the reason names are repeated here so
that drawing never imports the timing engine).
"""

from __future__ import annotations

import io
from pathlib import Path

__all__ = ["pyplot", "STATE_COLORS", "STATE_LABELS", "REASONS", "png_bytes", "save_png"]

#: Warp states in Nsight Compute's stall-reason names (same order as gpusim.timing.sm.REASONS).
REASONS = ("selected", "not_selected", "wait", "short_scoreboard", "long_scoreboard", "barrier",
           "math_pipe_throttle", "mio_throttle", "lg_throttle", "branch_resolving", "dispatch_stall")

#: One colour per warp state: issued is green, eligible-but-not-chosen light green, and the
#: stalls in colours grouped by cause (memory: reds/oranges, pipes: purples, sync: blue).
STATE_COLORS = {
    "selected": "#2ca02c",
    "not_selected": "#b5e3a8",
    "wait": "#c7c7c7",
    "short_scoreboard": "#ff9f4a",
    "long_scoreboard": "#d62728",
    "barrier": "#1f77b4",
    "math_pipe_throttle": "#9467bd",
    "mio_throttle": "#e377c2",
    "lg_throttle": "#8c564b",
    "branch_resolving": "#bcbd22",
    "dispatch_stall": "#c5b0d5",
}

#: Legend text of each state (what the seeds' scheduler diagrams call them).
STATE_LABELS = {
    "selected": "selected (issued)",
    "not_selected": "not_selected (eligible, another warp issued)",
    "wait": "wait (fixed-latency dependency)",
    "short_scoreboard": "short_scoreboard (shared memory)",
    "long_scoreboard": "long_scoreboard (global/local memory)",
    "barrier": "barrier (bar.sync)",
    "math_pipe_throttle": "math_pipe_throttle (pipe busy)",
    "mio_throttle": "mio_throttle (shared-memory queue full)",
    "lg_throttle": "lg_throttle (L1 queue full)",
    "branch_resolving": "branch_resolving",
    "dispatch_stall": "dispatch_stall (a pipe another instruction holds: the H100's IMAD.WIDE)",
}


def pyplot():
    """``matplotlib.pyplot`` with the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def png_bytes(fig, dpi: int = 110) -> bytes:
    """The figure as PNG bytes (the figure is closed)."""
    plt = pyplot()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def save_png(fig, path: str | Path, dpi: int = 110) -> Path:
    """Write the figure to ``path`` as PNG (parent folders created; the figure is closed)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(png_bytes(fig, dpi))
    return p
