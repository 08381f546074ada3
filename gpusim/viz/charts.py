"""Charts of one or more recorded launches: roofline, stall breakdown, occupancy.

Owns:

* :func:`kernel_work` -- FP32/FP64 floating-point operations (from the per-PC
  ``thread_inst_executed`` of ``add/sub/mul`` = 1 and ``fma/mad`` = 2 operations per thread),
  DRAM bytes (``dram__bytes_read.sum + dram__bytes_write.sum``) and time;
* :func:`peaks` -- peak FP32/FP64 rate and DRAM/L2 bandwidth of a configuration, each with
  the configuration fields it is computed from;
* :func:`roofline_figure` -- the roofline with each kernel placed by its arithmetic
  intensity (FLOP per DRAM byte) and achieved FLOP/s;
* :func:`stall_figure` -- per kernel, the share of warp-cycles in each warp state
  (``smsp__pcsamp_warps_issue_stalled_<reason>``), as stacked horizontal bars;
* :func:`occupancy_pngs` -- the occupancy calculator's three charts for the launch,
  drawn by :func:`gpusim.occupancy_charts.write_charts` (reused, not redrawn).

Caveats: the counted operations are PTX instructions (guard-false threads included, as
``smsp__thread_inst_executed`` counts them); achieved rates divide by the launch's
simulated time, which includes the configuration's ``launch_overhead_cycles``, so tiny
launches sit far below the roofs.

Must not import: simpy, cupy.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from gpusim.errors import GpusimError
from gpusim.viz.capture import Recording
from gpusim.viz.style import REASONS, STATE_COLORS, pyplot

__all__ = ["KernelWork", "kernel_work", "Peaks", "peaks", "roofline_figure", "stall_figure", "occupancy_pngs",
           "FLOPS_PER_INSTR"]

#: Floating-point operations per thread of each opcode (Nsight Compute counts FFMA as 2).
FLOPS_PER_INSTR = {"add": 1, "sub": 1, "mul": 1, "fma": 2, "mad": 2}


@dataclass(frozen=True)
class KernelWork:
    """Work and time of one launch.

    Attributes:
        flops_f32, flops_f64: floating-point operations (thread level).
        dram_bytes: bytes read and written in DRAM (timing model).
        seconds: simulated duration (``gpu__time_duration.sum`` / 1e9).
        cycles: ``sm__cycles_elapsed.avg``.
    """

    flops_f32: int
    flops_f64: int
    dram_bytes: int
    seconds: float
    cycles: int

    @property
    def intensity(self) -> float | None:
        """FLOP (FP32 + FP64) per DRAM byte; ``None`` without DRAM traffic."""
        return (self.flops_f32 + self.flops_f64) / self.dram_bytes if self.dram_bytes else None

    @property
    def flops_per_s(self) -> float:
        return (self.flops_f32 + self.flops_f64) / self.seconds if self.seconds else 0.0


def kernel_work(rec: Recording) -> KernelWork:
    """Floating-point operations, DRAM bytes and time of ``rec`` (see the module docstring)."""
    res = rec.result
    f32 = f64 = 0
    for ins in rec.kernel.instrs:
        n = FLOPS_PER_INSTR.get(ins.op)
        if not n:
            continue
        if ins.ty == "f32":
            f32 += n * int(res.thread_inst_executed[ins.index])
        elif ins.ty == "f64":
            f64 += n * int(res.thread_inst_executed[ins.index])
    m = res.metrics
    dram = int(m.get("dram__bytes_read.sum", 0) + m.get("dram__bytes_write.sum", 0))
    return KernelWork(f32, f64, dram, float(m.get("gpu__time_duration.sum", 0.0)) / 1e9, int(res.cycles or 0))


@dataclass(frozen=True)
class Peaks:
    """Peak rates of a configuration (FLOP/s, bytes/s) and where each comes from."""

    fp32: float
    fp64: float
    dram: float
    l2: float
    sources: dict[str, str]


def peaks(cfg) -> Peaks:
    """Peak FP32/FP64 FLOP/s and DRAM/L2 bytes/s of a :class:`gpusim.config.GPUConfig`.

    FP32: ``sm_count x sm.scheduler.count x sm.units.fma.count x (warp_size /
    sm.units.fma.issue_interval) x 2 (FMA) x clock_hz``; FP64 the same with ``units.fp64``;
    DRAM ``dram.bandwidth_bytes_per_s``; L2 ``l2.bandwidth_bytes_per_s`` (their sources are in
    the configuration TOML, e.g. configs/h100.toml).
    """
    sm = cfg.sm

    def rate(unit: str) -> tuple[float, str]:
        u = sm.units[unit]
        lanes = cfg.warp_size / u.issue_interval
        v = cfg.sm_count * sm.scheduler.count * u.count * lanes * 2 * cfg.clock_hz
        return v, (f"{cfg.sm_count} SMs x {sm.scheduler.count} schedulers x {u.count} {unit} pipe x "
                   f"{lanes:g} lanes/cycle (sm.units.{unit}.issue_interval = {u.issue_interval}) x 2 FLOP (FMA) x "
                   f"{cfg.clock_hz / 1e9:g} GHz")

    f32, s32 = rate("fma")
    f64, s64 = rate("fp64")
    return Peaks(f32, f64, float(cfg.dram.bandwidth_bytes_per_s), float(cfg.l2.bandwidth_bytes_per_s), {
        "fp32": s32, "fp64": s64,
        "dram": f"dram.bandwidth_bytes_per_s = {cfg.dram.bandwidth_bytes_per_s:.3g} B/s (configs/{cfg.name}.toml)",
        "l2": f"l2.bandwidth_bytes_per_s = {cfg.l2.bandwidth_bytes_per_s:.3g} B/s (configs/{cfg.name}.toml)",
    })


def roofline_figure(recs: list[Recording]):
    """The roofline of the first recording's configuration with every recording placed on it.

    x: arithmetic intensity (FLOP per DRAM byte), y: achieved FLOP/s, both log scale; roofs:
    DRAM and L2 bandwidth, FP32 and FP64 peaks (:func:`peaks`). Launches without DRAM traffic
    or without floating-point work are listed in the caption instead of plotted.

    Raises:
        gpusim.errors.GpusimError: no recording.
    """
    if not recs:
        raise GpusimError("the roofline needs at least one recorded launch")
    cfg = recs[0].config
    pk = peaks(cfg)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 6.2))
    import numpy as np

    xs = np.logspace(-3, 4, 400)
    for bw, name, ls in ((pk.dram, "DRAM", "-"), (pk.l2, "L2", "--")):
        ax.plot(xs, np.minimum(xs * bw, pk.fp32), color="#333333", ls=ls, lw=1.6,
                label=f"{name} roof {bw / 1e12:.2f} TB/s")
    ax.axhline(pk.fp32, color="#1f77b4", lw=1.2, ls=":", label=f"FP32 peak {pk.fp32 / 1e12:.1f} TFLOP/s")
    ax.axhline(pk.fp64, color="#9467bd", lw=1.2, ls=":", label=f"FP64 peak {pk.fp64 / 1e12:.1f} TFLOP/s")
    skipped = []
    markers = "os^Dv<>pPX*h"
    for i, r in enumerate(recs):
        w = kernel_work(r)
        if w.intensity is None or w.flops_per_s <= 0:
            skipped.append(f"{r.label} ({'no DRAM bytes' if w.intensity is None else 'no FP operations'})")
            continue
        ax.plot([w.intensity], [w.flops_per_s], marker=markers[i % len(markers)], ms=9, ls="none",
                label=f"{r.label}: {w.intensity:.3g} FLOP/B, {w.flops_per_s / 1e9:.3g} GFLOP/s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(1e-3, 1e4)
    ax.set_ylim(1e6, pk.fp32 * 3)
    ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(f"Roofline: {cfg.name} ({cfg.description})", fontsize=11)
    ax.legend(loc="upper left", fontsize=8, framealpha=0.92)
    note = ("Peaks from the configuration: FP32 = " + pk.sources["fp32"] + "; DRAM = " + pk.sources["dram"]
            + ".\nFLOP = thread-level add/sub/mul (1) and fma/mad (2) of .f32/.f64 PTX instructions; time includes "
            f"the {cfg.launch_overhead_cycles}-cycle launch overhead.")
    if skipped:
        note += "\nNot placed: " + "; ".join(skipped)
    fig.text(0.01, 0.005, note, fontsize=7, color="#333333", va="bottom")
    fig.tight_layout(rect=(0, 0.06 + 0.02 * bool(skipped), 1, 1))
    return fig


def stall_figure(recs: list[Recording]):
    """Per recording, warp-cycles by warp state as a 100 % stacked horizontal bar.

    Source: ``result.metrics["smsp__pcsamp_warps_issue_stalled_<reason>"]`` (every cycle of
    every resident warp counted once). Raises GpusimError for an empty list.
    """
    if not recs:
        raise GpusimError("the stall breakdown needs at least one recorded launch")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.55 * len(recs)))
    labels = []
    for y, r in enumerate(recs):
        m = r.result.metrics
        vals = [float(m.get(f"smsp__pcsamp_warps_issue_stalled_{k}", 0)) for k in REASONS]
        tot = sum(vals) or 1.0
        left = 0.0
        for k, v in zip(REASONS, vals):
            pct = 100 * v / tot
            ax.barh(y, pct, left=left, color=STATE_COLORS[k], edgecolor="white", lw=0.5,
                    label=k if y == 0 else None)
            if pct >= 6:
                ax.text(left + pct / 2, y, f"{pct:.0f}%", ha="center", va="center", fontsize=7.5)
            left += pct
        labels.append(f"{r.label}\n{int(tot):,} warp-cycles")
    ax.set_yticks(range(len(recs)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_ylim(len(recs) - 0.5, -0.5)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of warp-cycles (smsp__pcsamp_warps_issue_stalled_<reason>, every cycle sampled)")
    ax.set_title("Warp states: where the warps' cycles went", fontsize=11)
    handles, names = ax.get_legend_handles_labels()
    ax.legend(handles, names, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def occupancy_pngs(rec: Recording) -> dict[str, bytes]:
    """The three occupancy-calculator charts of ``rec``'s launch as PNG bytes, keyed
    ``block_size`` / ``registers`` / ``shared_mem`` (drawn by :mod:`gpusim.occupancy_charts`).

    Raises:
        gpusim.errors.GpusimError: the launch has no occupancy result (not timing mode).
    """
    from gpusim.occupancy import curves
    from gpusim.occupancy_charts import CHART_FILES, write_charts

    occ = rec.result.occupancy
    if occ is None:
        raise GpusimError(f"{rec.label}: no occupancy result (record a timing-mode launch)")
    cv = curves(rec.config, occ.block_size, occ.regs_per_thread, occ.static_smem, occ.dynamic_smem,
                occ.max_dynamic_smem, occ.carveout, occ.barriers)
    with tempfile.TemporaryDirectory() as d:
        write_charts(rec.config, occ, cv, d, dpi=90)
        return {k: (Path(d) / f).read_bytes() for k, f in CHART_FILES.items()}
