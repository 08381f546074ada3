"""Timing mode at the course notes' sizes: the reductions v0-v7 at 2^24 and 2^25 floats and the
matmuls at 1024 x 1024, sampled (the default), each case in a fresh process, beside the H100.

For every launch it prints the host wall time, the simulated cycles and microseconds, how the
timing was sampled, the peak resident memory of the process, and the H100's
``sm__cycles_elapsed.avg`` and ``gpu__time_duration.sum`` for the same launch
(``validation/reports/h100/scale/hardware_h100.json``, collected with ``gpusim validate
--hardware-only --extra ...``, ncu with clocks untouched) with the simulated/H100 ratio.
Results are kept in a JSON file; an interrupted run resumes.

Usage::

    python benchmarks/scale.py                       # everything (about half an hour on one core)
    python benchmarks/scale.py --cases reduce_v0 reduce_v5 --sizes 16777216
    python benchmarks/scale.py --table-only
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "scale_h100.json"
HW = ROOT / "validation" / "reports" / "h100" / "scale" / "hardware_h100.json"
REDUCTIONS = [f"reduce_v{i}" for i in range(8)]
MATMULS = ["matmul_naive", "matmul_tiled", "matmul_regtile"]


def one(case: str, n: int) -> dict:
    """Run ``case`` at ``n`` in sampled timing mode in this process; return its numbers."""
    import resource

    import gpusim
    from gpusim.suite import CASES, check, run_case

    with gpusim.Device("h100", mode="timing"):
        t0, cpu = time.perf_counter(), time.process_time()
        r = run_case(CASES[case], gpusim, n)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu
    launches = [{"cycles": x.cycles, "time_ns": x.metrics["gpu__time_duration.sum"], "sampling": str(x.sampling),
                 "fraction": x.sampling.fraction, "spread_pct": x.sampling.spread_pct,
                 "dram_bytes_read": x.metrics["dram__bytes_read.sum"],
                 "warp_inst": x.metrics["smsp__inst_executed.sum"]} for x in r.launches]
    return {"case": case, "n": n, "wall_s": wall, "cpu_s": cpu, "check": check(r)[0],
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "launches": launches}


def hardware() -> dict:
    """``{(case, n, launch): H100 metrics}`` from the committed scale bundle."""
    if not HW.exists():
        return {}
    data = json.loads(HW.read_text())
    return {(r["case"], r["n"], r["launch"]): r["metrics"] for r in data["launches"] if r.get("metrics")}


def table(results: dict) -> str:
    hw = hardware()
    rows = ["| case | n | launch | host s | peak MiB | warp inst | sim cycles | sim us | H100 cycles | H100 us "
            "| sim / H100 | timed from |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for key in sorted(results, key=lambda k: (results[k]["n"], results[k]["case"])):
        r = results[key]
        for i, x in enumerate(r["launches"]):
            h = hw.get((r["case"], r["n"], i), {})
            hc, ht = h.get("sm__cycles_elapsed.avg"), h.get("gpu__time_duration.sum")
            ratio = f"{x['cycles'] / hc:.2f}" if hc else "-"
            rows.append(f"| {r['case']} | {r['n']:,} | {i} | {r['wall_s'] if i == 0 else 0:.0f} | "
                        f"{r['peak_rss_mib']:.0f} | {x['warp_inst']:,} | {x['cycles']:,} | {x['time_ns'] / 1e3:.1f} | "
                        f"{f'{hc:,.0f}' if hc else '-'} | {f'{ht / 1e3:.1f}' if ht else '-'} | {ratio} | "
                        f"{x['sampling']} |")
    return "\n".join(rows)


def score(results: dict) -> str:
    """MAE of the simulated cycles against the H100's over the launches with hardware data, beside
    what the best constant (one cycle count for every launch) would score, split by size."""
    hw = hardware()
    sim, real = [], []
    for r in results.values():
        for i, x in enumerate(r["launches"]):
            h = hw.get((r["case"], r["n"], i))
            if h:
                sim.append(x["cycles"])
                real.append(h["sm__cycles_elapsed.avg"])

    def mae(pred, y):
        return 100 * sum(abs(p / v - 1) for p, v in zip(pred, y)) / len(y)
    lines = []
    for name, keep in (("all", lambda v: True), ("over 44,000 cycles (10x launch overhead)", lambda v: v > 44_000)):
        y = [v for v in real if keep(v)]
        s = [a for a, v in zip(sim, real) if keep(v)]
        best = min(mae([c] * len(y), y) for c in y)  # the optimum of a sum of |c/y - 1| is at some y
        lines.append(f"{name}: {len(y)} launches, model MAE {mae(s, y):.1f} %, best constant {best:.1f} %")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="*", help="cases (default: reductions v0-v7 and the three matmuls)")
    ap.add_argument("--sizes", nargs="*", type=int, help="sizes for the reductions (default 2^24 and 2^25)")
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    ap.add_argument("--table-only", action="store_true")
    ap.add_argument("--one", nargs=2, metavar=("CASE", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]))))
        return 0
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    if not args.table_only:
        cases = args.cases or REDUCTIONS + MATMULS
        todo = [(c, n) for c in cases for n in ((1024,) if c.startswith("matmul") else
                                                 (args.sizes or (1 << 24, 1 << 25)))]
        for c, n in todo:
            if f"{c}|{n}" in results:
                continue
            p = subprocess.run([sys.executable, __file__, "--one", c, str(n)], capture_output=True, text=True,
                               cwd=ROOT)
            if p.returncode:
                print(p.stderr, file=sys.stderr)
                return p.returncode
            results[f"{c}|{n}"] = json.loads(p.stdout.strip().splitlines()[-1])
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
            print(f"{c} n={n}: {results[f'{c}|{n}']['wall_s']:.0f} s", flush=True)
    print(table(results))
    print()
    print(score(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
