"""Shipped h100 config against the H200's calibrate output, on the H200's launches: the table of docs/validation/calibrate.md.

Reads scored_{shipped,calibrated,calibrated_rederived,calibrated_3,calibrated_3_bytes,calibrated_4}/
(score_on_device.sh; validation_h200*.json gzipped) and prints, per tier, the launches, MAE, Pearson r,
the share within 10 %, under/over counts and the best constant's MAE (validation.score); a third row per
config joins the launches of both tiers over 20,000 cycles on the H200 (issue #28's target for them).
Run from the repository root: PYTHONPATH=. python validation/reports/h200/scores.py
"""

import gzip
import json
import pathlib

from validation import score

HERE = pathlib.Path(__file__).parent


def rows(label: str) -> list[dict]:
    out = []
    for f in ("validation_h200.json.gz", "validation_h200_regtile_small.json.gz"):
        d = json.loads(gzip.decompress((HERE / f"scored_{label}" / f).read_bytes()))
        out += [r for r in d["rows"] if r["sim_cycles"] is not None and r["hw_cycles"]]
    return out


print("| config | tier | launches | MAE | r | within 10 % | under / over | best constant's MAE |")
print("|---|---|---|---|---|---|---|---|")
for label in ("shipped", "calibrated", "calibrated_rederived", "calibrated_3", "calibrated_3_bytes", "calibrated_4"):
    rs = rows(label)
    for tier in ("small", "scale", "over 20,000 cycles"):
        t = [r for r in rs if r["tier"] == tier or (tier.startswith("over") and r["hw_cycles"] > 20_000)]
        st = score.tier_stats([r["sim_cycles"] for r in t], [r["hw_cycles"] for r in t], 0.0)
        print(f"| {label} | {tier} | {st['n']} | {st['mae_pct']:.1f} % | {st['pearson_r']:.3f} | "
              f"{100 * st['within_10pct']:.0f} % | {st['under']} / {st['over']} | {st['best_constant_mae_pct']:.1f} % |")
