"""Simulated cycles and counters next to the H100's, launch by launch.

Reads the hardware side from ``validation/reports/h100/timing_h100.json``
(written by ``validation/probes/timing_on_gpu.py`` under Nsight Compute),
re-runs the same suite cases at the same sizes with gpusim's timing mode on
the ``h100`` configuration, joins the launches by (case, n, launch index) and
reports, Accel-Sim style: Pearson r and Spearman rank correlation of
simulated cycles against ``sm__cycles_elapsed.avg``, the mean absolute error
in percent, and the share of launches within 10 %. Needs no GPU.

Usage (repository root)::

    python3 validation/compare_timing.py                 # launches of up to 2**16 threads
    python3 validation/compare_timing.py --max-threads 1048576 --json out.json

Writes a Markdown table to stdout and, with ``--json``, every joined row.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:          # run as a script: make the validation package importable
    sys.path.insert(0, str(ROOT))
from validation.score import pearson, spearman  # noqa: E402 - the one definition of both scores

HW = ROOT / "validation" / "reports" / "h100" / "timing_h100.json"
#: Counters compared besides cycles (ratios are compared as values, counts as relative errors).
COUNTERS = ("smsp__inst_executed.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "lts__t_sectors_op_read.sum",
            "dram__bytes_read.sum", "sm__warps_active.avg.pct_of_peak_sustained_active")


def hardware_runs(max_threads: int) -> dict[tuple[str, int], list[dict]]:
    """(case, n) -> the H100 launch records in launch order, for runs whose every launch has
    at most ``max_threads`` threads."""
    recs = json.loads(HW.read_text())["launches"]
    runs: dict[tuple[str, int], list[dict]] = {}
    for r in recs:
        runs.setdefault((r["case"], r["n"]), []).append(r)
    return {k: sorted(v, key=lambda r: r["launch"]) for k, v in runs.items()
            if all(math.prod(r["grid"]) * math.prod(r["block"]) <= max_threads for r in v)}


def simulate(case: str, n: int) -> list:
    import gpusim
    from gpusim.suite import CASES, run_case

    with gpusim.Device("h100", mode="timing", sampling=False):
        return run_case(CASES[case], gpusim, n).launches


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-threads", type=int, default=1 << 16, help="skip runs with larger launches (default 2**16)")
    ap.add_argument("--json", help="write the joined rows and the summary to this file")
    a = ap.parse_args(argv)
    rows = []
    for (case, n), hw in hardware_runs(a.max_threads).items():
        t0 = time.perf_counter()
        sim = simulate(case, n)
        for h, s in zip(hw, sim):
            rows.append({"case": case, "n": n, "launch": h["launch"], "grid": h["grid"], "block": h["block"],
                         "shared_mem": h["shared_mem"], "hw_cycles": h["metrics"]["sm__cycles_elapsed.avg"],
                         "sim_cycles": s.cycles, "host_seconds": round(time.perf_counter() - t0, 2),
                         "hw": {k: h["metrics"].get(k) for k in COUNTERS},
                         "sim": {k: s.metrics.get(k) for k in COUNTERS}})
        print(f"{case} n={n}: {[r['sim_cycles'] for r in rows[-len(hw):]]} vs "
              f"{[round(r['hw_cycles']) for r in rows[-len(hw):]]}", file=sys.stderr, flush=True)
    hw_c = np.array([r["hw_cycles"] for r in rows], float)
    sim_c = np.array([r["sim_cycles"] for r in rows], float)
    err = np.abs(sim_c - hw_c) / hw_c
    summary = {"launches": len(rows), "pearson_r": pearson(sim_c, hw_c), "spearman_rho": spearman(sim_c, hw_c),
               "mae_pct": float(100 * err.mean()), "within_10pct": float((err <= 0.10).mean()),
               "hardware": str(HW.relative_to(ROOT)), "max_threads": a.max_threads}
    print("| case | n | launch | grid x block | H100 cycles | sim cycles | error |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['case']} | {r['n']:,} | {r['launch']} | {r['grid'][0]}x{r['block'][0]} | {r['hw_cycles']:,.0f} | "
              f"{r['sim_cycles']:,} | {100 * (r['sim_cycles'] - r['hw_cycles']) / r['hw_cycles']:+.0f} % |")
    print(f"\n{summary['launches']} launches: Pearson r = {summary['pearson_r']:.3f}, Spearman rho = "
          f"{summary['spearman_rho']:.3f}, MAE = {summary['mae_pct']:.1f} %, within 10 %: "
          f"{100 * summary['within_10pct']:.0f} %")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
