"""The occupancy calculator's three charts, drawn with matplotlib (Agg, PNG files).

Owns: turning :func:`gpusim.occupancy.curves` into the charts of Nsight Compute's Occupancy
section (design-anchors B.3): occupancy against block size, against registers per thread and
against shared memory per block, with the current launch marked and the binding limiter shown
as coloured bands.

Must not import: simpy, cupy, or gpusim modules other than :mod:`gpusim.occupancy` and
:mod:`gpusim.config`. matplotlib is imported lazily, inside :func:`write_charts`, so that
importing this module stays cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from gpusim.config import GPUConfig
from gpusim.occupancy import OccupancyResult

__all__ = ["CHART_FILES", "write_charts"]

#: File name of each chart, by curve key of :func:`gpusim.occupancy.curves`.
CHART_FILES = {
    "block_size": "occupancy_block_size.png",
    "registers": "occupancy_registers.png",
    "shared_mem": "occupancy_shared_mem.png",
}

_LABELS = {
    "warps": "warps",
    "registers": "registers",
    "shared_mem": "shared memory",
    "blocks": "blocks/SM",
    "barriers": "barriers",
}
#: One colour per resource; a band where several limits bind is filled with the first
#: one's colour and hatched with the second's.
_COLORS = {
    "warps": "#4C72B0",
    "registers": "#DD8452",
    "shared_mem": "#55A868",
    "blocks": "#8172B3",
    "barriers": "#937860",
}


def _limiter_label(result: OccupancyResult) -> str:
    return " + ".join(_LABELS[n] for n in result.limiters) if result.limiters else "none"


def _fmt_bytes(n: int) -> str:
    return f"{n} B" if n < 1024 or n % 1024 else f"{n // 1024} KiB"


def _launch_text(launch: OccupancyResult) -> str:
    return (
        f"{launch.block_size} threads/block, {launch.regs_per_thread} registers/thread, "
        f"shared memory {_fmt_bytes(launch.static_smem)} static + {_fmt_bytes(launch.dynamic_smem)} dynamic"
    )


def _draw(
    ax,
    xs: Sequence[float],
    results: Sequence[OccupancyResult],
    launch_x: float,
    launch: OccupancyResult,
    step: bool,
) -> None:
    ys = [r.occupancy_pct for r in results]
    labels = [_limiter_label(r) for r in results]
    # Coloured bands: one span per run of x values with the same binding limiters.
    run_start = 0
    seen: set[str] = set()
    for i in range(1, len(xs) + 1):
        if i == len(xs) or labels[i] != labels[run_start]:
            left = xs[run_start] - (xs[run_start] - xs[run_start - 1]) / 2 if run_start else xs[0]
            right = xs[i - 1] + (xs[i] - xs[i - 1]) / 2 if i < len(xs) else xs[-1]
            label = labels[run_start]
            names = results[run_start].limiters or ("blocks",)
            ax.axvspan(
                left,
                right,
                facecolor=_COLORS[names[0]],
                edgecolor=_COLORS[names[1]] if len(names) > 1 else "none",
                hatch="///" if len(names) > 1 else None,
                alpha=0.3,
                lw=0,
                label=None if label in seen else f"limited by {label}",
            )
            seen.add(label)
            run_start = i
    if step:
        ax.plot(xs, ys, drawstyle="steps-mid", color="#1f1f1f", lw=1.6, label="theoretical occupancy")
    else:
        ax.plot(xs, ys, color="#1f1f1f", lw=1.4, marker="o", ms=3.5, label="theoretical occupancy")
    ax.plot(
        [launch_x],
        [launch.occupancy_pct],
        marker="*",
        ms=17,
        color="#D62728",
        mec="white",
        mew=0.8,
        ls="none",
        zorder=5,
        label=(
            f"this launch: {launch.blocks_per_sm} blocks/SM, {launch.active_warps} warps, "
            f"{launch.occupancy_pct:.1f} % (limited by {_limiter_label(launch)})"
        ),
    )


def write_charts(
    cfg: GPUConfig,
    launch: OccupancyResult,
    curves: dict[str, list[tuple[int, OccupancyResult]]],
    out_dir: str | Path,
    *,
    dpi: int = 120,
) -> list[Path]:
    """Write the three charts for ``launch`` into ``out_dir`` (created); return their paths."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    specs = {
        "block_size": (
            "Impact of varying block size",
            "Threads per block",
            [float(x) for x, _ in curves["block_size"]],
            float(launch.block_size),
            False,
        ),
        "registers": (
            "Impact of varying register count per thread",
            "Registers per thread",
            [float(x) for x, _ in curves["registers"]],
            float(launch.regs_per_thread),
            True,
        ),
        "shared_mem": (
            "Impact of varying shared memory usage per block",
            "Shared memory per block, static + dynamic (KiB)",
            [x / 1024 for x, _ in curves["shared_mem"]],
            (launch.static_smem + launch.dynamic_smem) / 1024,
            True,
        ),
    }
    paths = []
    for key, (title, xlabel, xs, launch_x, step) in specs.items():
        results = [r for _, r in curves[key]]
        fig, ax = plt.subplots(figsize=(10, 6))
        _draw(ax, xs, results, launch_x, launch, step)
        if key == "shared_mem":
            static_limit = cfg.sm.shared_per_block_bytes / 1024
            ax.axvline(static_limit, color="#555555", ls=":", lw=1)
            ax.text(
                static_limit,
                103,
                f" {static_limit:g} KiB: larger needs the\n max_dynamic_smem opt-in",
                fontsize=8,
                va="top",
                color="#444444",
            )
        ax.set_xlim(min(xs[0], launch_x) - (xs[1] - xs[0]) / 2 if len(xs) > 1 else xs[0] - 1,
                    max(xs[-1], launch_x) + (xs[-1] - xs[-2]) / 2 if len(xs) > 1 else xs[-1] + 1)
        ax.set_ylim(0, 125)
        ax.set_yticks(range(0, 101, 20))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"Theoretical occupancy (% of {cfg.sm.max_warps} warps/SM)")
        secondary = ax.secondary_yaxis(
            "right",
            functions=(lambda p, m=cfg.sm.max_warps: p * m / 100, lambda w, m=cfg.sm.max_warps: w * 100 / m),
        )
        secondary.set_ylabel("Active warps per SM")
        secondary.set_yticks([cfg.sm.max_warps * q // 4 for q in range(5)])
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_title(f"{title}: {cfg.name} ({cfg.arch}, {cfg.description})\n{_launch_text(launch)}", fontsize=11)
        ax.legend(loc="upper right", fontsize=8, framealpha=0.92, ncol=1)
        fig.tight_layout()
        path = out / CHART_FILES[key]
        fig.savefig(path, dpi=dpi)
        plt.close(fig)
        paths.append(path)
    return paths
