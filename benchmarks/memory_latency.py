"""Memory latency under load and CTA turnover: the timing model against the H100's clock stamps.

``validation/probes/cta_timeline.py`` ran on an H100 under Nsight Compute (clean caches, clocks
untouched; raw data in ``validation/reports/h100/cta_timeline/``):

* copies, loads only and stores only of 2^24 floats (one float4 per thread, 256-thread CTAs)
  at 1, 2 and 8 CTAs per SM, with and without per-warp clock stamps;
* Little's law: every thread keeps 1, 2, 4 or 8 float4 loads in flight, grid-stride over 256 MiB,
  at 1, 2, 4 and 8 CTAs per SM (4 KiB to 256 KiB in flight per SM).

This script prints what the stamps say (load latency, a CTA's life, the gap from a CTA's end to
the next CTA's first instruction on the same SM), then simulates the unstamped launches (the same
CUDA source, compiled with ``nvcc -ptx``; sampled timing, H100 configuration) beside the
H100's ``sm__cycles_elapsed.avg``, and writes the table to
``benchmarks/results/memory_latency_h100.md``.

Usage::

    python benchmarks/memory_latency.py                              # about 4 minutes on one core
    python benchmarks/memory_latency.py --set sm.cta_launch_cycles=20 --out /tmp/x.md   # a what-if
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "validation" / "reports" / "h100" / "cta_timeline"
OUT = ROOT / "benchmarks" / "results" / "memory_latency_h100.md"
SMEM = {1: 174080, 2: 96256, 4: 51456, 8: 0}   #: 256-thread CTAs per H100 SM -> dynamic shared memory


def hardware() -> dict[str, float]:
    """``{"load_plain k1": sm__cycles_elapsed.avg, ...}`` from the probe's ncu run (launch order)."""
    from validation.ncu import metric_by_launch

    cycles = metric_by_launch((DATA / "ncu.csv").read_text(), "sm__cycles_elapsed.avg", ("copy", "load", "store"))
    labels = [x.split(":")[0].split(" {")[0][len("launch "):].strip()
              for x in (DATA / "once_log.txt").read_text().splitlines() if x.startswith("launch")]
    if len(labels) != len(cycles):
        raise SystemExit(f"{DATA}: {len(cycles)} ncu rows for {len(labels)} launches")
    return dict(zip(labels, cycles))


def stamps() -> list[str]:
    """Markdown rows: per variant, the medians the clock stamps give (cycles)."""
    z = np.load(DATA / "cta_timeline_once.npz")
    out = []
    for key in z.files:
        sm, cta, _, t0, t1, t2, _ = z[key].T
        lat = (t2 - t0) if key.startswith("store") else (t1 - t0)
        first = np.full(cta.max() + 1, np.iinfo(np.int64).max)
        last = np.zeros(cta.max() + 1, np.int64)
        where = np.zeros(cta.max() + 1, np.int64)
        np.minimum.at(first, cta, t0)
        np.maximum.at(last, cta, t2)
        where[cta] = sm
        gap = ""
        if key.endswith("k1"):  # one CTA per SM at a time: the gap is the turnover
            gaps = []
            for s in np.unique(sm):
                c = np.where(where == s)[0]
                c = c[np.argsort(first[c])]
                gaps.append(first[c[1:]] - last[c[:-1]])
            gap = f"{np.median(np.concatenate(gaps)):.0f}"
        what = "store issued" if key.startswith("store") else "load returned"
        out.append(f"| {key} | {what}: {np.percentile(lat, 10):.0f} / {np.median(lat):.0f} / "
                   f"{np.percentile(lat, 90):.0f} | {np.median(last - first):.0f} | {gap} |")
    return out


def simulate(overrides: dict) -> list[tuple[str, float, float, float]]:
    """``(launch, in flight per SM in bytes, simulated cycles, host seconds)`` for every unstamped launch."""
    import gpusim
    from gpusim import ptxas
    from validation.probes.cta_timeline import CODE, N

    nvcc = ptxas.find_tool("nvcc", "GPUSIM_NVCC")
    if nvcc is None:
        raise SystemExit("nvcc not found (pip install nvidia-cuda-nvcc, or set GPUSIM_NVCC)")
    tmp = pathlib.Path(tempfile.mkdtemp())
    (tmp / "k.cu").write_text(CODE)
    ptxas.run_tool([nvcc, "-std=c++17", "-ptx", "-arch=sm_90", str(tmp / "k.cu"), "-o", str(tmp / "k.ptx")],
                   "the probe's kernels")
    rows = []
    with gpusim.Device("h100", mode="timing", overrides=overrides):
        mod = gpusim.RawModule(path=str(tmp / "k.ptx"))
        a = gpusim.asarray(np.ones(N, np.float32))
        b = gpusim.zeros(N, np.float32)
        ts = gpusim.zeros(7 * N // 128, np.int64)
        big = gpusim.asarray(np.ones(4 * N, np.float32))
        for label in hardware():
            name, k = label.split()
            k = int(k[1:])
            if name.endswith("_ts"):
                continue
            f = mod.get_function(name)
            f.max_dynamic_shared_size_bytes = max(SMEM[k], 1)
            t = time.perf_counter()
            if name.startswith("load_x"):
                loads = int(name[len("load_x"):])
                r = f((4 * 132 * k,), (256,), (big, b, np.uint32(big.size // 4)), shared_mem=SMEM[k])
                flight = k * 256 * loads * 16
            else:
                r = f((N // 4 // 256,), (256,), (a, b, np.uint32(N // 4), ts), shared_mem=SMEM[k])
                flight = k * 256 * 16
            rows.append((label, flight, float(r.cycles), time.perf_counter() - t))
            print(f"{label}: {r.cycles} cycles", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help="configuration override")
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    args = ap.parse_args()
    overrides = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = json.loads(value)
    hw = hardware()
    rows = simulate(overrides)
    errs = [sim / hw[label] - 1 for label, _, sim, _ in rows]
    lines = [
        "# Memory latency under load and CTA turnover: gpusim against the H100",
        "",
        f"`python benchmarks/memory_latency.py{''.join(' --set ' + s for s in args.set)}`: the probe "
        "`validation/probes/cta_timeline.py` on an H100 under ncu (clean caches, clocks untouched), raw data in "
        "`validation/reports/h100/cta_timeline/`.",
        "",
        "What the per-warp clock stamps say (cycles; p10 / median / p90 of warps; the gap is from a CTA's last "
        "warp end to the next CTA's first instruction on the same SM, with one CTA per SM):",
        "",
        "| launch | warp: entry to | CTA life (median) | gap to next CTA (median) |",
        "|---|---|---:|---:|",
        *stamps(),
        "",
        f"The unstamped launches, simulated (sampled, h100{', overrides ' + json.dumps(overrides) if overrides else ''}):",
        "",
        "| launch | bytes in flight per SM | H100 cycles | gpusim cycles | gpusim / H100 |",
        "|---|---:|---:|---:|---:|",
        *[f"| {label} | {flight:,} | {hw[label]:,.0f} | {sim:,.0f} | {sim / hw[label]:.2f} |"
          for label, flight, sim, _ in rows],
        "",
        f"MAE {100 * np.mean(np.abs(errs)):.1f} % over {len(rows)} launches; host {sum(r[3] for r in rows):.0f} s.",
    ]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
