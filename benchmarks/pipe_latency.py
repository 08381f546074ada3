"""Pipe latencies: the cycles one step of a dependent chain costs, gpusim against the H100.

``validation/probes/pipe_latency.py`` ran ``validation/probes/pipe_latency.ptx`` on an H100 under
ncu (clocks untouched; raw data in ``validation/reports/h100/pipe_latency/``): one CTA, each
kernel repeating one step k = 0, 64 and 256 times. This script simulates the very same launches
(H100 configuration, timing mode) and prints, per chain, the slope (cycles per step, from k = 0
to k = 256) on the GPU and in gpusim, plus both totals at k = 256; then the L1 hit cycles by lane
stride (``l1_stride.py``) and the cycles per instruction of straight-line code (``icache.py``:
the H100 with its code cached and flushed, gpusim, which fetches no code), and writes the tables
to ``benchmarks/results/pipe_latency_h100.md``.

Usage::

    python benchmarks/pipe_latency.py                               # about a minute on one core
    python benchmarks/pipe_latency.py --set sm.units.sync.latency=4 --out /tmp/x.md   # a what-if
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
DATA = ROOT / "validation" / "reports" / "h100" / "pipe_latency"
OUT = ROOT / "benchmarks" / "results" / "pipe_latency_h100.md"

import icache  # noqa: E402
import l1_stride  # noqa: E402
from pipe_latency import PTX, STEPS, launches  # noqa: E402

import gpusim  # noqa: E402
from validation.ncu import metric_by_launch  # noqa: E402


def hardware(path: pathlib.Path = DATA / "pipe_latency.csv", labels=None) -> dict[str, float] | None:
    """``{label: sm__cycles_elapsed.avg}`` from a probe's ncu run, or None before it ran."""
    if not path.exists():
        return None
    cycles = metric_by_launch(path.read_text(), "sm__cycles_elapsed.avg")
    labels = labels or [lab for lab, *_ in launches()]
    if len(cycles) != len(labels):
        raise SystemExit(f"{path}: {len(cycles)} ncu rows for {len(labels)} launches")
    return dict(zip(labels, cycles))


def simulate(overrides: dict) -> dict[str, float]:
    """``{label: simulated cycles}`` for every launch of the probe."""
    sim = {}
    with gpusim.Device("h100", mode="timing", overrides=overrides):
        mod = gpusim.RawModule(path=str(PTX))
        out = gpusim.zeros(1024, np.int32)
        for label, kern, block, k, extra in launches():
            r = mod.get_function(kern)((1,), (block,), (np.int32(k), *[np.int32(x) for x in extra], out))
            sim[label] = float(r.cycles)
        f = gpusim.RawModule(path=str(l1_stride.PTX)).get_function("l1_stride")
        a = gpusim.asarray(np.ones(32 * max(l1_stride.STRIDES) + 64, np.float32))
        out = gpusim.zeros(1024, np.float32)
        for label, stride, k in l1_stride.launches():
            sim[label] = float(f((1,), (1024,), (a, np.int32(k), np.int32(stride), out)).cycles)
        mod = gpusim.RawModule(path=str(icache.PTX))
        out = gpusim.zeros(32, np.uint32)
        for label, kern in icache.launches():
            sim[label] = float(mod.get_function(kern)((1,), (32,), (out,)).cycles)
    return sim


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help="configuration override")
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    args = ap.parse_args()
    overrides = {k: json.loads(v) for k, _, v in (s.partition("=") for s in args.set)}
    hw, sim = hardware(), simulate(overrides)
    k0, k1 = STEPS[0], STEPS[-1]
    lines = ["# Pipe latencies: gpusim against the H100", "",
             f"`python benchmarks/pipe_latency.py{''.join(' --set ' + s for s in args.set)}`. One CTA; "
             f"slope = (cycles at k = {k1} - cycles at k = {k0}) / {k1 - k0}, cycles per step "
             "(ncu `sm__cycles_elapsed.avg` on the H100, clocks untouched).", "",
             "| chain | H100 cycles/step | gpusim cycles/step | sim / H100 | H100 total k=256 | gpusim total |",
             "|---|---:|---:|---:|---:|---:|"]
    for lab in dict.fromkeys(lab.rsplit(" k", 1)[0] for lab, *_ in launches()):
        s = (sim[f"{lab} k{k1}"] - sim[f"{lab} k{k0}"]) / (k1 - k0)
        if hw:
            h = (hw[f"{lab} k{k1}"] - hw[f"{lab} k{k0}"]) / (k1 - k0)
            lines.append(f"| {lab} | {h:.1f} | {s:.1f} | {s / h:.2f} | {hw[f'{lab} k{k1}']:,.0f} | {sim[f'{lab} k{k1}']:,.0f} |")
        else:
            lines.append(f"| {lab} | - | {s:.1f} | - | - | {sim[f'{lab} k{k1}']:,.0f} |")
    hw1 = hardware(ROOT / "validation" / "reports" / "h100" / "l1_stride" / "l1_stride.csv",
                   [lab for lab, *_ in l1_stride.launches()])
    lines += ["", "L1 hits by lane stride (`validation/probes/l1_stride.py`): 32 warps of one CTA, cycles per "
              "warp-load = slope over k / 32.", "",
              "| stride (floats) | H100 cycles/warp-load | gpusim | sim / H100 |", "|---:|---:|---:|---:|"]
    for stride in l1_stride.STRIDES:
        a, b = f"l1_stride s{stride} k{k0}", f"l1_stride s{stride} k{k1}"
        s_ = (sim[b] - sim[a]) / (k1 - k0) / 32
        h_ = (hw1[b] - hw1[a]) / (k1 - k0) / 32 if hw1 else float("nan")
        lines.append(f"| {stride} | {h_:.1f} | {s_:.1f} | {s_ / h_:.2f} |")
    lines += ["", "Straight-line code (`validation/probes/icache.py`): one warp, four independent IMAD chains of "
              "n steps (4n + 15 SASS instructions), each kernel's second launch; cycles per IMAD = (cycles at n - "
              "cycles at 0) / 4n. `--cache-control none` keeps the code cached from the first launch; "
              "`all` flushes it.", "",
              "| n | H100, cache none | H100, cache all | gpusim | sim / H100 (none) |", "|---:|---:|---:|---:|---:|"]
    labels = [lab for lab, _ in icache.launches()]
    hw_ic = {c: hardware(ROOT / "validation" / "reports" / "h100" / "icache" / f"icache_{c}.csv", labels)
             for c in ("none", "all")}
    base = "straight_0 run2"
    for n in icache.STEPS[1:]:
        lab = f"straight_{n} run2"
        per = {c: (h[lab] - h[base]) / (4 * n) if h else float("nan") for c, h in hw_ic.items()}
        s_ = (sim[lab] - sim[base]) / (4 * n)
        lines.append(f"| {n} | {per['none']:.2f} | {per['all']:.2f} | {s_:.2f} | {s_ / per['none']:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if hw:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
