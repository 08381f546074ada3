"""Speed-up of ``gpusim sweep`` on 2 workers against 1, measured in one run.

Runs the 32-point timing sweep of ``benchmarks/sweep_speedup.toml`` three times, one after the
other, each into a fresh results folder: in this process (1 worker), on 2 local processes
(``--jobs 2``), and on a Dask ``LocalCluster`` of 2 worker processes (``--workers 2``; skipped
without the ``dist`` extra). It checks that the three tables are equal (every column but
run_id, worker and host_seconds), then writes a Markdown table and JSON to
``benchmarks/results/sweep_speedup.{md,json}`` and a bar chart to ``docs/sweep/sweep_speedup.png``.

Usage::

    python benchmarks/sweep_speedup.py                  # about 2 minutes on 2 idle cores
    python benchmarks/sweep_speedup.py --no-dask --md /tmp/s.md --json /tmp/s.json --figure /tmp/s.png

Wall-clock seconds depend on what else the machine runs: the load average at the start is
recorded beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiment", default=str(ROOT / "benchmarks" / "sweep_speedup.toml"))
    ap.add_argument("--md", default=str(ROOT / "benchmarks" / "results" / "sweep_speedup.md"))
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "sweep_speedup.json"))
    ap.add_argument("--figure", default=str(ROOT / "docs" / "sweep" / "sweep_speedup.png"))
    ap.add_argument("--no-dask", action="store_true", help="skip the Dask LocalCluster run")
    a = ap.parse_args(argv)

    import gpusim
    import gpusim.sweep as sweep

    load0 = os.getloadavg()
    runs = [("1 worker (this process)", {"jobs": 1}), ("2 local processes (--jobs 2)", {"jobs": 2})]
    if not a.no_dask:
        try:
            import distributed  # noqa: F401

            runs.append(("Dask LocalCluster, 2 workers (--workers 2)", {"workers": 2}))
        except ImportError:
            print("dask.distributed is not installed: the Dask run is skipped", file=sys.stderr)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        tables = []
        for label, kw in runs:
            t0 = time.perf_counter()
            res = sweep.run(a.experiment, pathlib.Path(tmp) / str(len(tables)), progress=False, **kw)
            wall = time.perf_counter() - t0
            if res.failures():
                print(f"{label}: {len(res.failures())} point(s) failed", file=sys.stderr)
                return 1
            tables.append(res.stable_rows())
            results.append({"back end": label, "points": len(res), "wall_s": round(wall, 2),
                            "point_s_sum": round(sum(r["host_seconds"] for r in res.rows), 2)})
            print(f"{label}: {wall:.1f} s", file=sys.stderr)
    same = all(t == tables[0] for t in tables)
    for r in results:
        r["speedup"] = round(results[0]["wall_s"] / r["wall_s"], 2)
    meta = {"gpusim_version": gpusim.__version__, "cpus": os.cpu_count(), "python": platform.python_version(),
            "loadavg_at_start": [round(x, 2) for x in load0], "tables_equal": same,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    lines = [f"# gpusim sweep: 32-point timing sweep, 2 workers against 1 ({meta['date']})", "",
             f"`python benchmarks/sweep_speedup.py`; {meta['cpus']} CPUs, load average at the start "
             f"{', '.join(map(str, meta['loadavg_at_start']))}; the three tables equal: {'yes' if same else 'NO'}.",
             "", "| back end | points | wall s | sum of point s | speed-up |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {r['back end']} | {r['points']} | {r['wall_s']:.1f} | {r['point_s_sum']:.1f} | {r['speedup']:.2f}x |"
              for r in results]
    pathlib.Path(a.md).write_text("\n".join(lines) + "\n")
    pathlib.Path(a.json).write_text(json.dumps({"meta": meta, "runs": results}, indent=1) + "\n")
    print("\n".join(lines))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 2.6))
    labels = [r["back end"] for r in results][::-1]
    walls = [r["wall_s"] for r in results][::-1]
    ax.barh(labels, walls, color=["#888"] * (len(walls) - 1) + ["#444"])
    for y, r in enumerate(results[::-1]):
        ax.text(r["wall_s"], y, f"  {r['wall_s']:.0f} s ({r['speedup']:.2f}x)", va="center", fontsize=8)
    ax.set_xlabel("wall-clock seconds, 32 timing-mode points")
    ax.set_xlim(0, max(walls) * 1.35)
    ax.tick_params(axis="y", labelsize=8)
    fig.tight_layout()
    fig.savefig(a.figure, dpi=110)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
