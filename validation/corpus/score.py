"""The corpus's score: gpusim against the H100, the fit and the test half apart (issue #28).

Joins the H100's side (``on_gpu.py``'s digests JSON and ncu's CSV) with gpusim's
(``simulate.py``'s JSON). Per case: the H100's and gpusim's ``sm__cycles_elapsed.avg``, the error
``100 (sim / hw - 1)``, whether every canonical output is bit for bit the H100's (digests), and the
L2 and DRAM counters side by side. Per half (``split.toml``: fit / test) and per size bucket of the
H100's cycles: cycles MAE, Pearson r, max |error|, the launches off by more than 50 %, and the best
constant beside them (:func:`validation.score.best_constant`: the one cycle count that minimises the
MAE on those launches, chosen after the fact: a model that does not beat it has learnt nothing about
those kernels). Issue #28's targets: test half MAE <= 10 %, r >= 0.98, no launch off by more than
50 %; fit half MAE <= 8 %; every output bit-exact.

Usage::

    python3 validation/corpus/score.py --csv corpus.csv --digests corpus_digests.json \\
        --sim corpus_sim.json [--out corpus_score.json] [--markdown corpus_score.md]

Imports numpy and validation.score; never gpusim or cupy.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.corpus import cases as C  # noqa: E402
from validation.corpus.on_gpu import gpu_rows  # noqa: E402
from validation.score import best_constant, error_stats  # noqa: E402

__all__ = ["BUCKETS", "COUNTERS", "join", "summarise", "score", "markdown", "main"]

#: size buckets by the H100's cycles: (name, lower bound inclusive, upper bound exclusive)
BUCKETS = (("< 50k cycles", 0, 50_000), ("50k-500k cycles", 50_000, 500_000), (">= 500k cycles", 500_000, math.inf))
#: counters shown beside cycles: (label, H100's ncu metric, gpusim's metric)
COUNTERS = (("L2 read sectors", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_read.sum"),
            ("L2 write sectors", "lts__t_sectors_op_write.sum", "lts__t_sectors_op_write.sum"),
            ("L2 atom sectors", "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_atom.sum"),
            ("L2 red sectors", "lts__t_sectors_op_red.sum", "lts__t_sectors_op_red.sum"),
            ("DRAM read bytes", "dram__bytes_read.sum", "dram__bytes_read.sum"),
            ("DRAM write bytes", "dram__bytes_write.sum", "dram__bytes_write.sum"),
            ("warp instructions", "smsp__inst_executed.sum", "smsp__inst_executed.sum"))
CYCLES = "sm__cycles_elapsed.avg"


def join(hw_rows: dict[str, dict], hw_digests: dict, sim: dict, halves: dict[str, str]) -> list[dict]:
    """One row per case present on both sides: case, family, half, hw and sim cycles, error_pct,
    bit_exact (None when a side has no digests), counters {label: [hw, sim]}, sampling."""
    rows = []
    for name, case in C.BY_NAME.items():
        hw, s = hw_rows.get(name), sim.get("cases", {}).get(name)
        if hw is None or s is None or s.get("error") or CYCLES not in hw:
            continue
        h, m = hw[CYCLES], s["metrics"][CYCLES]
        dg = hw_digests.get("cases", {}).get(name, {}).get("digests")
        rows.append({"case": name, "family": case.family, "half": halves.get(case.family, "?"), "hw_cycles": h,
                     "sim_cycles": m, "error_pct": 100 * (m / h - 1) if h else math.nan,
                     "bit_exact": None if dg is None or "digests" not in s else dg == s["digests"],
                     "counters": {lab: [hw.get(a), s["metrics"].get(b)] for lab, a, b in COUNTERS},
                     "sampling": s.get("sampling"), "host_seconds": s.get("host_seconds")})
    return rows


def _stats(rows: list[dict]) -> dict:
    if not rows:
        return {"n": 0}
    sim, hw = [r["sim_cycles"] for r in rows], [r["hw_cycles"] for r in rows]
    st = error_stats(sim, hw)
    c, c_mae = best_constant(hw)
    return {"n": len(rows), "mae_pct": st["mae_pct"], "pearson_r": st["pearson_r"],
            "max_abs_err_pct": st["max_abs_err_pct"], "over_50pct": sum(abs(r["error_pct"]) > 50 for r in rows),
            "best_constant_cycles": c, "best_constant_mae_pct": c_mae,
            "bit_exact": sum(r["bit_exact"] is True for r in rows), "bit_checked": sum(r["bit_exact"] is not None
                                                                                        for r in rows)}


def summarise(rows: list[dict]) -> dict:
    """{half: {"all": stats, bucket name: stats}} for the halves fit, test and all."""
    out = {}
    for half in ("fit", "test", "all"):
        hr = [r for r in rows if half == "all" or r["half"] == half]
        out[half] = {"all": _stats(hr)}
        for name, lo, hi in BUCKETS:
            out[half][name] = _stats([r for r in hr if lo <= r["hw_cycles"] < hi])
    return out


def _f(v, fmt: str = "{:.1f}") -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)


def markdown(rows: list[dict], summary: dict, missing: list[str]) -> str:
    """The per-case table and the per-half summary, as Markdown."""
    lines = ["| case | family | half | H100 cycles | gpusim cycles | error % | bit-exact | L2 read sectors H100 / gpusim |",
             "|---|---|---|---:|---:|---:|---|---:|"]
    for r in sorted(rows, key=lambda r: (r["half"], r["family"], r["case"])):
        l2 = r["counters"]["L2 read sectors"]
        lines.append(f"| {r['case']} | {r['family']} | {r['half']} | {r['hw_cycles']:,.0f} | {r['sim_cycles']:,.0f} | "
                     f"{r['error_pct']:+.1f} | {'-' if r['bit_exact'] is None else 'yes' if r['bit_exact'] else 'NO'} | "
                     f"{_f(l2[0], '{:,.0f}')} / {_f(l2[1], '{:,.0f}')} |")
    lines += ["", "| half | bucket | launches | cycles MAE % | Pearson r | max abs error % | over 50 % | "
              "best constant (cycles) | its MAE % | bit-exact |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for half, by in summary.items():
        for bucket, st in by.items():
            if not st["n"]:
                continue
            lines.append(f"| {half} | {bucket} | {st['n']} | {_f(st['mae_pct'])} | {_f(st['pearson_r'], '{:.3f}')} | "
                         f"{_f(st['max_abs_err_pct'])} | {st['over_50pct']} | {_f(st['best_constant_cycles'], '{:,.0f}')} | "
                         f"{_f(st['best_constant_mae_pct'])} | {st['bit_exact']}/{st['bit_checked']} |")
    if missing:
        lines += ["", f"Not scored (missing on a side or failed in gpusim): {', '.join(missing)}"]
    return "\n".join(lines)


def score(hw_rows: dict[str, dict], hw_digests: dict, sim: dict, halves: dict[str, str],
          names: list[str] | None = None) -> dict:
    """The whole score: ``{"rows": join(...), "summary": summarise(rows), "missing": [...]}``;
    ``missing``: the cases of ``names`` (default: every corpus case) that have no row (not measured,
    not simulated, or failed in gpusim)."""
    rows = join(hw_rows, hw_digests, sim, halves)
    scored = {r["case"] for r in rows}
    missing = [x for x in (names if names is not None else [c.name for c in C.CASES]) if x not in scored]
    return {"rows": rows, "summary": summarise(rows), "missing": missing}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="validation/corpus/score.py")
    p.add_argument("--csv", type=Path, required=True, help="ncu's CSV of on_gpu.py")
    p.add_argument("--digests", type=Path, required=True, help="on_gpu.py's JSON")
    p.add_argument("--sim", type=Path, required=True, help="simulate.py's JSON")
    p.add_argument("--split", type=Path, default=None, help="split.toml (default: the committed one)")
    p.add_argument("--out", type=Path, default=None, help="write the rows and the summary as JSON")
    p.add_argument("--markdown", type=Path, default=None, help="write the Markdown tables")
    a = p.parse_args(argv)
    digests = json.loads(a.digests.read_text())
    sim = json.loads(a.sim.read_text())
    doc = score(gpu_rows(a.csv, digests["order"]), digests, sim, C.split(a.split))
    md = markdown(doc["rows"], doc["summary"], doc["missing"])
    print(md)
    if a.markdown:
        a.markdown.write_text(md + "\n")
    if a.out:
        a.out.write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
