"""The course notes' reduction tables reproduced in timing mode, as ratios to reduce0.

Seed 003 times the int32 reductions reduce0 .. reduce7_1024 on 2**29 ints on an A100 (1555 GB/s:
the 40 GB part, so the ``a100`` config runs with ``dram.bandwidth_bytes_per_s=1.555e12``); seed 000
times the float reduce_v0 .. reduce_v5 on 32 M floats on an RTX A5000 (``a5000`` config as shipped).
The rows and the seeds' figures are :data:`gpusim.suite.seeds.TABLES`.

Each row runs in a fresh process in sampled timing mode (every CTA runs functionally, so the
partial sums are checked bit for bit against the numpy oracle; the cycles come from a slice of
SMs and waves, see docs/model/sampling.md). Per row it records the simulated
time (``gpu__time_duration.sum``), cycles, how they were sampled, DRAM bytes, achieved occupancy,
the stall reasons, host seconds and peak memory. The table gives each row's simulated time and
ratio to the table's first row beside the seeds' figure and ratio, the error of the ratio, and how
many pairs of rows are in the seeds' order.

Usage::

    python benchmarks/seeds_tables.py --table a100 --n 16777216 --jobs 2 --out /tmp/a100.json
    python benchmarks/seeds_tables.py --table a100 --rows reduce0 reduce5 --out /tmp/part.json
    python benchmarks/seeds_tables.py --merge /tmp/a100.json /tmp/a5000.json   # -> results/seeds_tables.*
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
WITHIN = 0.20   #: issue #11's target: every row's ratio to reduce0 within 20 %
APART = 0.05   #: pairs of rows further apart than this in the reference count for the order (as the sweeps)


def one(table: str, row: str, n: int, extra: dict | None = None) -> dict:
    """Run one row of ``table`` at ``n`` in sampled timing mode in this process; its numbers.
    ``extra``: config overrides on top of the table's (what-if experiments, ``--set``)."""
    import collections
    import resource

    import gpusim
    from gpusim.suite import check, run_case
    from gpusim.suite.seeds import TABLES, all_cases

    spec = TABLES[table]
    r0 = next(r for r in spec["rows"] if r.row == row)
    with gpusim.Device(spec["gpu"], mode="timing", overrides={**spec["overrides"], **(extra or {})}) as dev:
        t0, cpu = time.perf_counter(), time.process_time()
        run = run_case(all_cases()[r0.case], gpusim, n)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu
        clock = dev.config.clock_hz
    ok, msg = check(run)
    x = run.launches[0]
    m = x.metrics
    stalls = collections.Counter({k.rsplit("_stalled_", 1)[1]: v for k, v in m.items()
                                  if "_issue_stalled_" in k and not k.endswith("_selected")})
    total = sum(stalls.values()) or 1
    return {
        "table": table, "row": row, "case": r0.case, "n": n, "gpu": spec["gpu"], "overrides": spec["overrides"],
        "extra_overrides": extra or {},
        "check": ok, "check_message": msg, "grid": list(run.grid), "block": list(run.block),
        "cycles": x.cycles, "time_ns": m["gpu__time_duration.sum"], "clock_hz": clock,
        "sampling": str(x.sampling), "costs": x.costs, "dram_bytes_read": m["dram__bytes_read.sum"],
        "warp_inst": m["smsp__inst_executed.sum"],
        "achieved_occupancy_pct": m["sm__warps_active.avg.pct_of_peak_sustained_active"],
        "stalls_pct": {k: round(100 * v / total, 1) for k, v in stalls.most_common(5)},
        "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def _run_rows(table: str, rows: list[str], n: int, jobs: int, out: pathlib.Path, sets: list[str]) -> int:
    """Each row in a fresh process, ``jobs`` at a time; ``out`` rewritten as each one finishes."""
    results = json.loads(out.read_text()) if out.exists() else {}
    tag = "".join(f"|{s}" for s in sets)
    todo = [r for r in rows if f"{table}|{r}|{n}{tag}" not in results]

    def work(row):
        p = subprocess.run([sys.executable, __file__, "--one", table, row, str(n),
                            *(a for s in sets for a in ("--set", s))], capture_output=True, text=True, cwd=ROOT)
        if p.returncode:
            return row, {"error": p.stderr[-2000:]}
        return row, json.loads(p.stdout.strip().splitlines()[-1])

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for row, res in pool.map(work, todo) if jobs == 1 else \
                (f.result() for f in concurrent.futures.as_completed([pool.submit(work, r) for r in todo])):
            if "error" in res:
                failed += 1
                print(f"{table} {row}: FAILED\n{res['error']}", file=sys.stderr, flush=True)
                continue
            results[f"{table}|{row}|{n}{tag}"] = res
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
            print(f"{table} {row} n={n}: {res['time_ns'] / 1e3:,.1f} us simulated, {res['check_message']}, "
                  f"{res['wall_s']:.0f} s, {res['peak_rss_mib']} MiB", flush=True)
    return failed


def table_rows(results: dict, table: str) -> list[dict]:
    """The rows of ``table`` (in the seeds' order) found in ``results``, with ratios and errors."""
    from gpusim.suite.seeds import TABLES

    spec = TABLES[table]
    found: dict[str, dict] = {}   # per row: the run at the table's n, else the largest n run
    for res in results.values():
        if res["table"] == table and not res.get("extra_overrides"):   # what-if runs stay out
            have = found.get(res["row"])
            if have is None or (have["n"] != spec["n"] and (res["n"] == spec["n"] or res["n"] > have["n"])):
                found[res["row"]] = res
    rows = []
    base = found.get(spec["rows"][0].row)
    seed_base = spec["rows"][0].seconds
    for r in spec["rows"]:
        res = found.get(r.row)
        if res is None:
            continue
        # a row run at a smaller n (reduce0 at 2**29 takes ~20 host minutes) is scaled linearly to the
        # table's n: many-wave grids are in their steady state, their time is linear in n (see docs/validation/seeds.md)
        scale = spec["n"] / res["n"]
        sim_us = res["time_ns"] / 1e3 * scale
        d = {"row": r.row, "case": r.case, "n": res["n"], "scaled": scale != 1, "sim_us": sim_us, "check": res["check"],
             "seeds_us": r.seconds * 1e6 if r.seconds else None, "quote": r.quote,
             "sampling": res["sampling"], "wall_s": res["wall_s"], "peak_rss_mib": res["peak_rss_mib"],
             "stalls_pct": res["stalls_pct"], "dram_bytes_read": res["dram_bytes_read"],
             "achieved_occupancy_pct": res["achieved_occupancy_pct"]}
        d["sim_ratio"] = sim_us / (base["time_ns"] / 1e3 * spec["n"] / base["n"]) if base else None
        d["seeds_ratio"] = r.seconds / seed_base if r.seconds else None
        d["ratio_err"] = d["sim_ratio"] / d["seeds_ratio"] - 1 if d["sim_ratio"] and d["seeds_ratio"] else None
        d["sim_over_seeds"] = sim_us / d["seeds_us"] if d["seeds_us"] else None
        rows.append(d)
    return rows


def order_pairs(rows: list[dict], apart: float = 0.0) -> tuple[int, int]:
    """(pairs of rows with seeds' figures that gpusim orders as the seeds do, all such pairs);
    ``apart``: only pairs whose seeds' times differ by more than that fraction of the smaller
    (0.05: the rule the validation report scores its sweeps by)."""
    have = [r for r in rows if r["seeds_us"]]
    good = total = 0
    for i in range(len(have)):
        for j in range(i + 1, len(have)):
            a, b = have[i], have[j]
            if abs(a["seeds_us"] - b["seeds_us"]) <= apart * min(a["seeds_us"], b["seeds_us"]):
                continue
            total += 1
            good += (a["seeds_us"] - b["seeds_us"]) * (a["sim_us"] - b["sim_us"]) > 0
    return good, total


def markdown(results: dict) -> str:
    """The tables in Markdown, one per table present in ``results``."""
    from gpusim.suite.seeds import TABLES

    out = []
    for table, spec in TABLES.items():
        rows = table_rows(results, table)
        if not rows:
            continue
        ov = ", ".join(f"{k}={v:g}" for k, v in spec["overrides"].items()) or "none"
        out.append(f"### {table}: {spec['setup']}\n\nconfig `{spec['gpu']}`, overrides: {ov}; n = {spec['n']:,} "
                   f"(a row run at a smaller n has its time scaled linearly to it, marked in the n column)\n")
        ref = spec.get("reference", "seeds")
        whose = ref + ("'" if ref.endswith("s") else "'s")
        out.append(f"| row | n run | {ref} us | gpusim us | {ref} ratio | gpusim ratio | ratio error | within 20 % "
                   f"| gpusim / {ref} | checked | timed from | host s | peak MiB |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---|---:|---|---|---:|---:|")
        for r in rows:
            f = (lambda v, fmt: "-" if v is None else format(v, fmt))
            within = "-" if r["ratio_err"] is None else ("yes" if abs(r["ratio_err"]) <= WITHIN else "no")
            nrun = f"2^{r['n'].bit_length() - 1}" if r["n"] & (r["n"] - 1) == 0 else f"{r['n']:,}"
            out.append(f"| {r['row']} | {nrun}{' (scaled)' if r['scaled'] else ''} | {f(r['seeds_us'], ',.0f')} "
                       f"| {r['sim_us']:,.0f} | {f(r['seeds_ratio'], '.3f')} "
                       f"| {f(r['sim_ratio'], '.3f')} | {f(r['ratio_err'] and 100 * r['ratio_err'], '+.0f')}"
                       f"{'' if r['ratio_err'] is None else ' %'} | {within} | {f(r['sim_over_seeds'], '.2f')} "
                       f"| {'bit-exact' if r['check'] else 'MISMATCH'} | {r['sampling']} | {r['wall_s']:.0f} "
                       f"| {r['peak_rss_mib']} |")
        graded = [r for r in rows[1:] if r["ratio_err"] is not None]
        good, total = order_pairs(rows)
        good5, total5 = order_pairs(rows, APART)
        ranked_same = [r["row"] for r in sorted((r for r in rows if r["seeds_us"]), key=lambda r: r["seeds_us"])] == \
            [r["row"] for r in sorted((r for r in rows if r["seeds_us"]), key=lambda r: r["sim_us"])]
        out.append(f"\n{sum(abs(r['ratio_err']) <= WITHIN for r in graded)} of {len(graded)} rows within 20 % "
                   f"of the {whose} ratio to {rows[0]['row']}; {good} of {total} pairs of rows in the {whose} "
                   f"order ({good5} of {total5} pairs more than {100 * APART:.0f} % apart there); "
                   f"same order of all rows: {'yes' if ranked_same else 'no'}; "
                   f"{sum(r['check'] for r in rows)} of {len(rows)} rows bit-exact against the oracle.\n")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", choices=("a100", "h100", "a5000"))
    ap.add_argument("--n", type=int, help="problem size (default: the seeds' size of the table)")
    ap.add_argument("--rows", nargs="*", help="rows to run (default: all of the table)")
    ap.add_argument("--jobs", type=int, default=1, help="rows run in parallel, each in its own process")
    ap.add_argument("--out", type=pathlib.Path, help="JSON file of results (resumed if it exists)")
    ap.add_argument("--merge", nargs="*", type=pathlib.Path,
                    help="merge these result files into benchmarks/results/seeds_tables.{json,md}")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="what-if: a config override on top of the table's (kept out of the tables)")
    ap.add_argument("--one", nargs=3, metavar=("TABLE", "ROW", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from gpusim.suite.seeds import TABLES

    if args.one:
        from gpusim.config import parse_override
        print(json.dumps(one(args.one[0], args.one[1], int(args.one[2]), dict(parse_override(s) for s in args.set))))
        return 0
    if args.merge is not None:
        merged: dict = {}
        for path in args.merge:
            merged.update(json.loads(path.read_text()))
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "seeds_tables.json").write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n")
        text = markdown(merged)
        (RESULTS / "seeds_tables.md").write_text(
            "# The course notes' reduction tables in gpusim\n\n"
            "Made by `python benchmarks/seeds_tables.py --merge ...`; see docs/validation/seeds.md, "
            "\"The course notes' reduction tables\". host s: wall seconds of the row's process on the "
            "machine that ran it, often beside other rows (see the JSON's cpu_s where recorded).\n\n" + text)
        print(text)
        return 0
    if not args.table or not args.out:
        ap.error("--table and --out are required (or --merge FILES)")
    spec = TABLES[args.table]
    rows = args.rows or [r.row for r in spec["rows"]]
    unknown = set(rows) - {r.row for r in spec["rows"]}
    if unknown:
        ap.error(f"--rows: {sorted(unknown)} not in table {args.table}")
    failed = _run_rows(args.table, rows, args.n or spec["n"], max(1, args.jobs), args.out, args.set)
    print(markdown(json.loads(args.out.read_text())) if args.out.exists() else "")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
