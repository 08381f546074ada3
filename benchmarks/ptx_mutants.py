"""gpusim's PTX loader against ptxas on single-token mutants of the project's PTX (issue #29).

Draws ``--n`` mutants with ``--seed`` from the project's PTX files (``validation/mutants.py``:
the generator, its operators in its docstring, and the two judges), compiles each with ptxas
(``-arch`` from the mutant's ``.target``) and loads it with gpusim (:func:`isa.parse`: the
grammar, the opcode table and the verifier :mod:`isa.verify`, what ``gpusim.RawModule(path=...)``
applies before a launch; nothing is launched), and counts agreement on accept/reject.

Disagreements fall into: ``gpusim accepts, ptxas rejects`` (a rule gpusim lacks), ``gpusim
rejects, ptxas accepts`` (split into ``unsupported by gpusim``, a construct outside gpusim's
subset, and the rest, a wrong rule), and ``gpusim crash`` (an exception other than PTXError).
The target of issue #29 counts raw agreement (every disagreement against it).

Writes a JSON summary (counts, agreement, per operator, up to ``--keep`` disagreements with both
messages) to ``--out`` (default ``benchmarks/results/ptx_mutants.json``; ``ptx_mutants_seedN.json``
for another seed) and prints a table.

Usage::

    python benchmarks/ptx_mutants.py --n 1000 --seed 0 --jobs 2     # ~3 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from validation.mutants import WEIGHTS, generate, is_unsupported, judge  # noqa: E402


def _category(r: dict) -> str:
    if r["gpusim"] is None:
        return "gpusim crash"
    if r["agree"]:
        return "accept/accept" if r["ptxas"] else "reject/reject"
    if r["gpusim"]:
        return "gpusim accepts, ptxas rejects"
    return "unsupported by gpusim" if is_unsupported(r["gpusim_msg"]) else "gpusim rejects, ptxas accepts"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="number of mutants (default 1000)")
    ap.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--keep", type=int, default=50, help="disagreements kept in the JSON (default 50)")
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or "ptxas", help="the ptxas to compare with")
    ap.add_argument("--out", type=pathlib.Path, default=None, help="JSON output path")
    args = ap.parse_args(argv)
    if args.n < 1 or args.jobs < 1:
        ap.error("--n and --jobs must be >= 1")
    out = args.out or ROOT / "benchmarks" / "results" / (
        "ptx_mutants.json" if args.seed == 0 else f"ptx_mutants_seed{args.seed}.json")

    t0 = time.time()
    mutants = generate(args.n, args.seed)
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(judge, mutants, [args.ptxas] * len(mutants), chunksize=4))
    wall = time.time() - t0

    cats = Counter(_category(r) for r in results)
    agree = cats["accept/accept"] + cats["reject/reject"]
    by_op: dict[str, dict[str, int]] = {}
    for r in results:
        d = by_op.setdefault(r["op"], {"n": 0, "agree": 0})
        d["n"] += 1
        d["agree"] += r["agree"]
    dis = [dict(r, category=_category(r)) for r in results if not r["agree"]]
    for d in dis:
        del d["agree"]
    summary = {
        "n": len(results), "seed": args.seed, "ptxas": args.ptxas, "wall_s": round(wall, 1),
        "agreement": round(agree / len(results), 4),
        "agreement_without_unsupported": round(agree / max(1, len(results) - cats["unsupported by gpusim"]), 4),
        "counts": dict(sorted(cats.items())),
        "by_operator": dict(sorted(by_op.items())),
        "operators": WEIGHTS,
        "disagreements_total": len(dis),
        "disagreements": dis[:args.keep],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")

    print(f"{len(results)} mutants, seed {args.seed}, {wall:.0f} s with {args.jobs} jobs -> {out}")
    print(f"{'category':34s} {'count':>6s}")
    for k in ("accept/accept", "reject/reject", "gpusim accepts, ptxas rejects", "gpusim rejects, ptxas accepts",
              "unsupported by gpusim", "gpusim crash"):
        print(f"{k:34s} {cats[k]:6d}")
    print(f"{'agreement':34s} {100 * agree / len(results):5.1f} %")
    print(f"\n{'operator':12s} {'n':>5s} {'agree':>6s}")
    for op, d in sorted(by_op.items()):
        print(f"{op:12s} {d['n']:5d} {100 * d['agree'] / d['n']:5.1f}%")
    if dis:
        print("\nfirst disagreements:")
        for d in dis[:15]:
            print(f"  [{d['category']}] {d['file']}:{d['line']} ({d['op']}) {d['after']}\n"
                  f"      ptxas: {d['ptxas_msg'] or 'ok'}\n      gpusim: {d['gpusim_msg'] or 'ok'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
