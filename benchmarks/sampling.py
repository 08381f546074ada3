"""Sampled against detailed timing: every suite case at its default size (2^20 elements,
matrices of 256, transposes of 1024), once with ``Device(sampling=True)`` and once with
``sampling=False``, each run in a fresh process.

Prints a Markdown table (cycles, DRAM bytes, L1 and L2 hit rates of both engines, the
sampled launch's method and simulated fraction, host seconds of both) and a summary
against the targets (cycles within 3 %, DRAM bytes within 5 %, hit rates within 5
percentage points), and keeps every run's numbers in a JSON file, so an interrupted run
resumes where it stopped.

Usage::

    python benchmarks/sampling.py --jobs 2                       # the whole suite (about an hour on 2 cores)
    python benchmarks/sampling.py --cases reduce_v0 matmul_tiled --out /tmp/s.json
    python benchmarks/sampling.py --table-only                   # print the table from the JSON
    python benchmarks/sampling.py --cases reduce_v3 copy_vec4 --n 4194304 --out benchmarks/results/sampling_waves_h100.json

Host seconds are wall-clock seconds of each process and depend on what else the machine
runs (``--jobs 2`` on 2 cores shares them with nothing else).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "sampling_h100.json"
KEYS = ("sm__cycles_elapsed.avg", "dram__bytes_read.sum", "dram__bytes_write.sum", "l1tex__t_sector_hit_rate.pct",
        "lts__t_sector_op_read_hit_rate.pct", "smsp__inst_executed.sum")


def one(case: str, sampling: bool, n: int | None = None) -> dict:
    """Run ``case`` at ``n`` (default: its default size) in timing mode; return its launches' numbers."""
    sys.path.insert(0, str(ROOT))
    import gpusim
    from gpusim.suite import CASES, check, run_case

    c = CASES[case]
    with gpusim.Device("h100", mode="timing", sampling=sampling):
        t0 = time.perf_counter()
        r = run_case(c, gpusim, n or c.default_n)
        seconds = time.perf_counter() - t0
    launches = []
    for x in r.launches:
        s = x.sampling
        launches.append({"grid": list(x.grid), "block": list(x.block), "cycles": x.cycles,
                         "metrics": {k: x.metrics[k] for k in KEYS},
                         "method": s.method, "reason": s.reason, "fraction": s.fraction, "spread_pct": s.spread_pct})
    return {"case": case, "n": n or c.default_n, "sampling": sampling, "seconds": seconds, "check": check(r)[0],
            "launches": launches}


def _err(a: float, b: float) -> float:
    return 100.0 * (a - b) / b if b else (0.0 if a == b else float("inf"))


def table(results: dict) -> tuple[str, list[str]]:
    """The Markdown table and the summary lines of the pairs in ``results``."""
    rows = ["| case | launch | CTAs | timed from (sampled) | cycles sampled | cycles detailed | err % | DRAM B err % "
            "| L1 hit pp | L2 hit pp | host s sampled | host s detailed |",
            "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    cyc, dram, hits, sampled_launches, speed = [], [], [], 0, []
    for case in sorted({k.split("|")[0] for k in results}):
        s, d = results.get(f"{case}|True"), results.get(f"{case}|False")
        if not (s and d):
            continue
        speed.append((s["seconds"], d["seconds"]))
        for i, (ls, ld) in enumerate(zip(s["launches"], d["launches"])):
            ms, md = ls["metrics"], ld["metrics"]
            dram_s = ms["dram__bytes_read.sum"] + ms["dram__bytes_write.sum"]
            dram_d = md["dram__bytes_read.sum"] + md["dram__bytes_write.sum"]
            e = _err(ls["cycles"], ld["cycles"])
            l1 = ms["l1tex__t_sector_hit_rate.pct"] - md["l1tex__t_sector_hit_rate.pct"]
            l2 = ms["lts__t_sector_op_read_hit_rate.pct"] - md["lts__t_sector_op_read_hit_rate.pct"]
            how = "detailed" if ls["method"] == "detailed" else f"{ls['method']} {100 * ls['fraction']:.1f} %"
            if ls["method"] != "detailed":
                sampled_launches += 1
                cyc.append(abs(e))
                dram.append(abs(_err(dram_s, dram_d)))
                hits.append(max(abs(l1), abs(l2)))
            ctas = ls["grid"][0] * ls["grid"][1] * ls["grid"][2]
            rows.append(f"| {case} | {i} | {ctas:,} | {how} | {ls['cycles']:,} | {ld['cycles']:,} | {e:+.1f} | "
                        f"{_err(dram_s, dram_d):+.1f} | {l1:+.1f} | {l2:+.1f} | "
                        f"{s['seconds'] if i == 0 else 0:.1f} | {d['seconds'] if i == 0 else 0:.1f} |")
    summary = [f"{sampled_launches} sampled launches: cycles within 3 % on {sum(x <= 3 for x in cyc)} "
               f"(max |err| {max(cyc, default=0):.1f} %), DRAM bytes within 5 % on {sum(x <= 5 for x in dram)}, "
               f"L1/L2 hit rates within 5 pp on {sum(x <= 5 for x in hits)}",
               f"host seconds, all cases: sampled {sum(a for a, _ in speed):.0f} s, "
               f"detailed {sum(b for _, b in speed):.0f} s"]
    return "\n".join(rows), summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="*", help="suite cases (default: all but the one-warp micro-kernels)")
    ap.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    ap.add_argument("--n", type=int, help="problem size for every case (default: each case's; use another --out)")
    ap.add_argument("--out", type=pathlib.Path, default=OUT, help=f"results JSON (default {OUT.relative_to(ROOT)})")
    ap.add_argument("--table-only", action="store_true", help="print the table of the JSON and exit")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from gpusim.suite import CASES

    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    if not args.table_only:
        cases = args.cases or [c for c, v in CASES.items() if v.n_means != "lanes (fixed: one warp)"]
        todo = [(c, s) for c in cases for s in (True, False) if f"{c}|{s}" not in results]
        # Slowest first (detailed runs), so that the pool ends together.
        todo.sort(key=lambda t: t[1])
        with concurrent.futures.ProcessPoolExecutor(args.jobs, max_tasks_per_child=1) as pool:
            futures = {pool.submit(one, c, s, args.n): (c, s) for c, s in todo}
            for f in concurrent.futures.as_completed(futures):
                c, s = futures[f]
                results[f"{c}|{s}"] = f.result()
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
                print(f"{c} sampling={s}: {results[f'{c}|{s}']['seconds']:.1f} s", flush=True)
    text, summary = table(results)
    print(text)
    print()
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
