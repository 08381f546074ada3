"""Loop-iteration sampling against detailed timing (issue #30, item 3): suite launches too small
for wave sampling whose main loop is long, each run once with ``Device(sampling=True)`` (the
default :class:`gpusim.timing.Policy`, loop sampling on) and once with ``sampling=False`` (every
instruction of every warp simulated), each in a fresh process.

Prints a Markdown table per launch: cycles of both, the error, the launch's sampling (loop, share
of its warp-iterations simulated, period), host seconds of both and the speed-up; outputs are
checked against the case's numpy oracle in both runs. Every run's numbers are kept in a JSON
file, so an interrupted run resumes where it stopped.

Usage::

    python benchmarks/iteration_sampling.py                     # the default cases (about 10 min on 2 cores)
    python benchmarks/iteration_sampling.py --table-only        # print the table from the JSON
    python benchmarks/iteration_sampling.py --cases matmul_regtile:256 --out /tmp/it.json

Host seconds are wall-clock seconds of each process (both of a case run one after the other,
never at once) and depend on what else the machine runs.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

from resumable import resume_runs

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "iteration_sampling_h100.json"
#: case:n of the default table: register-tiled and naive matmuls (one k loop per thread), the
#: grid-stride reduction at 32 and 128 iterations per thread, and two that do not engage.
CASES = ("matmul_regtile:256", "matmul_regtile:512", "reduce_v6:1048576", "reduce_v6:4194304", "matmul_naive:128",
         "matmul_smem_regtile:256", "hgemm_mma:512")


def one(case: str, n: int, sampling: bool) -> dict:
    """Run ``case`` at ``n`` in timing mode; return its launches' numbers."""
    sys.path.insert(0, str(ROOT))
    import gpusim
    from gpusim.suite import CASES as SUITE
    from gpusim.suite import check, run_case

    with gpusim.Device("h100", mode="timing", sampling=sampling):
        t0 = time.perf_counter()
        r = run_case(SUITE[case], gpusim, n)
        seconds = time.perf_counter() - t0
    launches = [{"grid": list(x.grid), "block": list(x.block), "cycles": x.cycles, "sampling": str(x.sampling),
                 "method": x.sampling.method, "fraction": x.sampling.fraction, "spread_pct": x.sampling.spread_pct,
                 "period": x.sampling.period_cycles,
                 "host_seconds": x.host_seconds} for x in r.launches]
    return {"case": case, "n": n, "sampling": sampling, "seconds": seconds, "check": check(r)[0], "launches": launches}


def table(runs: dict) -> str:
    """The Markdown table of the runs (keys ``case:n:sampling``)."""
    rows = ["| case | n | launch | detailed cycles | sampled cycles | error | timed from | detailed s | sampled s "
            "| speed-up | outputs |",
            "|---|---:|---|---:|---:|---:|---|---:|---:|---:|---|"]
    errs = []
    for key in dict.fromkeys(k.rsplit(":", 1)[0] for k in runs):
        d, s = runs.get(f"{key}:False"), runs.get(f"{key}:True")
        if d is None or s is None:
            continue
        case, n = key.split(":")
        for a, b in zip(d["launches"], s["launches"]):
            err = 100.0 * (b["cycles"] - a["cycles"]) / a["cycles"]
            how = (f"loop, {100 * b['fraction']:.1f} % of its warp-iterations, {b['period']:,.0f} cycles/iteration, "
                   f"+/-{b['spread_pct']:.1f} %" if b["method"] == "loop" else b["method"])
            if b["method"] == "loop":
                errs.append(abs(err))
            ok = "bit-exact" if d["check"] and s["check"] else "MISMATCH"
            rows.append(f"| {case} | {int(n):,} | {tuple(b['grid'])}x{tuple(b['block'])} | {a['cycles']:,} | "
                        f"{b['cycles']:,} | {err:+.2f} % | {how} | {a['host_seconds']:.1f} | {b['host_seconds']:.1f} | "
                        f"{a['host_seconds'] / b['host_seconds']:.1f}x | {ok} |")
    if errs:
        rows.append(f"\nLoop-sampled launches: {len(errs)}, largest |error| {max(errs):.2f} %, "
                    f"mean |error| {sum(errs) / len(errs):.2f} %.")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="*", default=list(CASES), help="case:n pairs (default: %(default)s)")
    ap.add_argument("--out", type=pathlib.Path, default=OUT, help="JSON file of the runs (default: %(default)s)")
    ap.add_argument("--table-only", action="store_true", help="print the table from --out and exit")
    args = ap.parse_args(argv)
    todo = [] if args.table_only else [
        (f"{case}:{n}:{sampling}", (case, int(n), sampling))
        for case, n in (spec.split(":") for spec in args.cases) for sampling in (False, True)]
    runs = resume_runs(args.out, todo, one)
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
