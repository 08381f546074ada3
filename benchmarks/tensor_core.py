"""Tensor pipe: the cycles of mma.sync and ldmatrix chains, gpusim against the H100.

``validation/probes/tensor_core.py timing`` ran the chains of ``validation/probes/tensor_core.ptx``
on an H100 (one CTA; k = 0, 64, 256 steps; raw data in ``validation/reports/h100/tensor_core/``:
``tensor_core_clock.json``, the clock64 cycles of each launch's k-step loop, and
``tensor_core_timing.csv``, ncu's ``sm__cycles_elapsed.avg``). This script simulates the same
launches (H100 configuration, timing mode) and prints, per chain, the cycles one step costs (slope
from k = 64 to k = 256) on the GPU (clock64 and ncu) and in gpusim (the launch's cycles), and
writes the table to ``benchmarks/results/tensor_core_h100.md``.

Usage::

    python benchmarks/tensor_core.py                     # a few seconds
    python benchmarks/tensor_core.py --set sm.units.tensor.issue_interval=8 --out /tmp/x.md
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "validation" / "probes"))
DATA = ROOT / "validation" / "reports" / "h100" / "tensor_core"
OUT = ROOT / "benchmarks" / "results" / "tensor_core_h100.md"

from tensor_core import PTX, launches  # noqa: E402

import gpusim  # noqa: E402
from validation.ncu import metric_by_launch  # noqa: E402


def hardware() -> tuple[dict[str, float], dict[str, float]]:
    """``({label: clock64 cycles}, {label: ncu sm__cycles_elapsed.avg})`` of the committed run."""
    rows = json.loads((DATA / "tensor_core_clock.json").read_text())
    labels = [r["label"] for r in rows]
    ncu = metric_by_launch((DATA / "tensor_core_timing.csv").read_text(), "sm__cycles_elapsed.avg")
    if len(ncu) != len(labels):
        raise SystemExit(f"{len(ncu)} ncu rows for {len(labels)} launches")
    return {r["label"]: float(r["clock64"]) for r in rows}, dict(zip(labels, ncu))


def simulate(overrides: dict) -> dict[str, float]:
    """``{label: simulated cycles}`` of every timing launch."""
    sim = {}
    with gpusim.Device("h100", mode="timing", overrides=overrides):
        mod = gpusim.RawModule(path=str(PTX))
        out = gpusim.zeros(1024, np.float32)
        cyc = gpusim.zeros(1, np.int64)
        for label, kern, block, k in launches():
            r = mod.get_function(kern)((1,), (block,), (np.int32(k), out, cyc))
            sim[label] = float(r.cycles)
    return sim


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    args = ap.parse_args()
    overrides = dict(s.split("=", 1) for s in args.set)
    overrides = {k: (int(v) if v.lstrip("-").isdigit() else v) for k, v in overrides.items()}
    clock, ncu = hardware()
    sim = simulate(overrides)
    chains = list(dict.fromkeys(lab.rsplit(" k", 1)[0] for lab in clock))
    lines = ["| chain | H100 clock64 cycles/step | H100 ncu cycles/step | gpusim cycles/step | gpusim / clock64 |",
             "|---|---:|---:|---:|---:|"]
    for ch in chains:
        c, n, s = ((d[f"{ch} k256"] - d[f"{ch} k64"]) / 192 for d in (clock, ncu, sim))
        lines.append(f"| {ch} | {c:.1f} | {n:.1f} | {s:.1f} | {s / c:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("Tensor pipe chains (`python benchmarks/tensor_core.py`" +
                        (f", overrides {overrides}" if overrides else "") + "): one step = one mma.sync "
                        "(ilp8: eight independent ones) or one ldmatrix.x4 and its address add.\n\n" + text)


if __name__ == "__main__":
    main()
