"""Loop-iteration sampling inside a wave-sampled slice (issue #30): GPU-filling suite launches
timed three ways, each in a fresh process: ``new`` (the default :class:`gpusim.timing.Policy`:
SM slice, waves, and the slice CTAs' main loop sampled), ``wave`` (``Policy(iterations=False)``:
the slice and its waves only, every instruction of the slice's CTAs simulated: the default before)
and, where affordable, ``detailed`` (``Device(sampling=False)``).

Prints a Markdown table per launch: cycles of each, the errors of ``new`` against ``wave`` and
``detailed``, DRAM bytes, L1 and L2 hit rates, how it was timed and host seconds; outputs are
checked against the case's numpy oracle in every run. Runs are kept in a JSON file, so an
interrupted run resumes where it stopped.

Usage::

    python benchmarks/slice_loop_sampling.py                            # the default cases (~15 min on 2 cores)
    python benchmarks/slice_loop_sampling.py --table-only
    python benchmarks/slice_loop_sampling.py --cases matmul_tiled:512:new,wave --out /tmp/s.json

Host seconds are wall-clock seconds of each process, one after the other, and depend on what else
the machine runs.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

from resumable import resume_runs

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "slice_loop_sampling_h100.json"
#: case:n:modes of the default table
CASES = ("matmul_tiled:256:new,wave,detailed", "matmul_tiled:512:new,wave", "matmul_regtile:1024:new,wave",
         "matmul_smem_regtile:512:new,wave", "reduce_v0:16777216:new,wave", "reduce_v1:16777216:new,wave")


def one(case: str, n: int, mode: str) -> dict:
    """Run ``case`` at ``n`` in timing mode under ``mode``; return its launches' numbers."""
    sys.path.insert(0, str(ROOT))
    import gpusim
    from gpusim.suite import CASES as SUITE
    from gpusim.suite import check, run_case
    from gpusim.timing import Policy

    sampling = {"new": True, "wave": Policy(iterations=False), "detailed": False}[mode]
    with gpusim.Device("h100", mode="timing", sampling=sampling):
        t0 = time.perf_counter()
        r = run_case(SUITE[case], gpusim, n)
        seconds = time.perf_counter() - t0
    launches = []
    for x in r.launches:
        m, s = x.metrics, x.sampling
        launches.append({"grid": list(x.grid), "block": list(x.block), "cycles": x.cycles, "sampling": str(s),
                         "method": s.method, "reason": s.reason, "iterations_simulated": s.iterations_simulated,
                         "iterations_skipped": s.iterations_skipped, "period": s.period_cycles,
                         "spread_pct": s.spread_pct, "waves": s.waves_simulated,
                         "inst": m["smsp__inst_executed.sum"],
                         "dram_bytes": m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"],
                         "l1_hit": m["l1tex__t_sector_hit_rate.pct"], "l2_hit": m["lts__t_sector_op_read_hit_rate.pct"],
                         "host_seconds": x.host_seconds})
    return {"case": case, "n": n, "mode": mode, "seconds": seconds, "check": check(r)[0], "launches": launches}


def _how(b: dict) -> str:
    if b["method"].endswith("+loop"):
        total = b["iterations_simulated"] + b["iterations_skipped"]
        return (f"{b['method']}, {b['waves']:.1f} waves, loop {100 * b['iterations_simulated'] / total:.1f} % of "
                f"{total:,} warp-iterations, {b['period']:,.0f} cycles/it., +/-{b['spread_pct']:.1f} %")
    return f"{b['method']} ({b['reason']})" if b["reason"] else b["method"]


def table(runs: dict) -> str:
    """The Markdown table of the runs (keys ``case:n:mode``)."""
    rows = ["| case | n | launch | wave-only cycles | new cycles | vs wave-only | detailed cycles | vs detailed "
            "| DRAM bytes wave / new | L1 hit % wave / new | L2 hit % wave / new | new timed from | wave s | new s "
            "| outputs, inst. |",
            "|---|---:|---|---:|---:|---:|---:|---:|---|---|---|---|---:|---:|---|"]
    for key in dict.fromkeys(k.rsplit(":", 1)[0] for k in runs):
        w, s, d = (runs.get(f"{key}:{m}") for m in ("wave", "new", "detailed"))
        if w is None or s is None:
            continue
        case, n = key.split(":")
        for i, (a, b) in enumerate(zip(w["launches"], s["launches"])):
            c = d["launches"][i] if d is not None else None
            err = 100.0 * (b["cycles"] - a["cycles"]) / a["cycles"]
            vs_d, dc = "-", f"{c['cycles']:,}" if c else "-"
            if c is not None:
                e_new, e_wave = (100.0 * (x["cycles"] - c["cycles"]) / c["cycles"] for x in (b, a))
                vs_d = f"{e_new:+.2f} % (wave-only {e_wave:+.2f} %)"
            same = all(r["check"] for r in (w, s, d) if r is not None) and a["inst"] == b["inst"] and (
                c is None or c["inst"] == b["inst"])
            rows.append(f"| {case} | {int(n):,} | {tuple(b['grid'])}x{tuple(b['block'])} | {a['cycles']:,} | "
                        f"{b['cycles']:,} | {err:+.2f} % | {dc} | {vs_d} | "
                        f"{a['dram_bytes']:,.0f} / {b['dram_bytes']:,.0f} | {a['l1_hit']:.1f} / {b['l1_hit']:.1f} | "
                        f"{a['l2_hit']:.1f} / {b['l2_hit']:.1f} | {_how(b)} | {a['host_seconds']:.1f} | "
                        f"{b['host_seconds']:.1f} | {'bit-exact, equal' if same else 'MISMATCH'} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="*", default=list(CASES), help="case:n:modes (default: %(default)s)")
    ap.add_argument("--out", type=pathlib.Path, default=OUT, help="JSON file of the runs (default: %(default)s)")
    ap.add_argument("--table-only", action="store_true", help="print the table from --out and exit")
    args = ap.parse_args(argv)
    todo = [] if args.table_only else [
        (f"{case}:{n}:{mode}", (case, int(n), mode))
        for case, n, modes in (spec.split(":") for spec in args.cases) for mode in modes.split(",")]
    runs = resume_runs(args.out, todo, one)
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
