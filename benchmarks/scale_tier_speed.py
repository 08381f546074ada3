"""Host time of every run of the validation scale tier in the default timing mode (issue #30).

Runs each (case, n) of ``validation/reports/h100/scale_tier/hardware_h100.json`` with
``gpusim.Device("h100", mode="timing", jobs=J)`` (``--launch-jobs J``, default 1), ``--procs P``
runs at a time in separate processes (default: the cores there are), and records per run the
wall-clock and CPU seconds of ``run_case`` and the launches' cycles, then the whole tier's
wall-clock seconds. The targets: every launch within 60 s and the whole tier within 10 minutes on
the 16-core GPU machine. A run's seconds cover all its launches (most runs are one launch).

Usage::

    python benchmarks/scale_tier_speed.py --out benchmarks/results/scale_tier_speed_16cores
    python benchmarks/scale_tier_speed.py --cases reduce_v2 copy_offset --procs 2 --out /tmp/s

Writes ``OUT/scale_tier_speed.json`` and ``OUT/scale_tier_speed.md`` (the slowest runs first).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import pathlib
import platform
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
HW = ROOT / "validation" / "reports" / "h100" / "scale_tier" / "hardware_h100.json"


def _one(case: str, n: int, launch_jobs: int) -> dict:
    sys.path.insert(0, str(ROOT))
    import gpusim
    from gpusim.suite import CASES, run_case

    t0, c0 = time.perf_counter(), time.process_time()
    with gpusim.Device("h100", mode="timing", jobs=launch_jobs):
        run = run_case(CASES[case], gpusim, n)
    return {"case": case, "n": n, "seconds": round(time.perf_counter() - t0, 2),
            "cpu_seconds": round(time.process_time() - c0, 2),
            "cycles": [int(r.cycles) for r in run.launches],
            "sampling": [str(r.sampling) for r in run.launches]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks/scale_tier_speed.py")
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--cases", nargs="*", help="only these cases (default: every run of the tier)")
    ap.add_argument("--procs", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--launch-jobs", type=int, default=1, help="Device(jobs=...) of each run")
    a = ap.parse_args(argv)
    hw = json.loads(HW.read_text())
    runs = sorted({(x["case"], x["n"]) for x in hw["launches"] if not a.cases or x["case"] in a.cases})
    t0 = time.perf_counter()
    rows = []
    with cf.ProcessPoolExecutor(a.procs) as pool:
        futs = [pool.submit(_one, c, n, a.launch_jobs) for c, n in runs]
        for f in cf.as_completed(futs):
            rows.append(f.result())
            print(f"{rows[-1]['case']:24s} {rows[-1]['n']:>12,d} {rows[-1]['seconds']:8.1f} s", flush=True)
    total = time.perf_counter() - t0
    rows.sort(key=lambda r: -r["seconds"])
    doc = {"machine": {"cores": len(os.sched_getaffinity(0)), "cpu": platform.processor() or platform.machine(),
                       "load_at_start": os.getloadavg()[0]},
           "procs": a.procs, "launch_jobs": a.launch_jobs, "runs": len(rows), "total_seconds": round(total, 1),
           "rows": rows}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "scale_tier_speed.json").write_text(json.dumps(doc, indent=1))
    lines = [f"# Scale tier host time: {len(rows)} runs, {a.procs} at a time, Device(jobs={a.launch_jobs}), "
             f"{doc['machine']['cores']} cores", "",
             f"Whole tier: {total:.0f} s wall-clock; slowest run {rows[0]['seconds']:.1f} s; "
             f"runs over 60 s: {sum(r['seconds'] > 60 for r in rows)}.", "",
             "| case | n | seconds | CPU seconds | cycles | timing |", "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['n']:,} | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | "
                     f"{', '.join(f'{c:,}' for c in r['cycles'])} | {'; '.join(sorted(set(r['sampling'])))} |")
    (a.out / "scale_tier_speed.md").write_text("\n".join(lines) + "\n")
    print(lines[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
