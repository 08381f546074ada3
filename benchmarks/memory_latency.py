"""Memory latency under load and CTA turnover: the timing model against the H100's clock stamps.

``validation/probes/cta_timeline.py`` ran on an H100 under Nsight Compute (clean caches, clocks
untouched; raw data in ``validation/reports/h100/cta_timeline/``):

* copies, loads only and stores only of 2^24 floats (one float4 per thread, 256-thread CTAs)
  at 1, 2 and 8 CTAs per SM, with and without per-warp clock stamps;
* Little's law: every thread keeps 1, 2, 4 or 8 float4 loads in flight, grid-stride over 256 MiB,
  at 1, 2, 4 and 8 CTAs per SM (4 KiB to 256 KiB in flight per SM);
* held out: the same with stores (``validation/probes/loaded_latency.py``, copies of 256 MiB);
* scattered stores (``validation/probes/store_scatter.py``): a warp's 4-byte stores over 1 to 32 lines.

This script prints what the stamps say (load latency, a CTA's life, the gap from a CTA's end to
the next CTA's first instruction on the same SM), then simulates the unstamped launches (the same
CUDA source, compiled with ``nvcc -ptx``; sampled timing, H100 configuration) beside the
H100's ``sm__cycles_elapsed.avg``, and writes the table to
``benchmarks/results/memory_latency_h100.md``.

Usage::

    python benchmarks/memory_latency.py                              # about 10 minutes on one core
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
COPIES = ROOT / "validation" / "reports" / "h100" / "loaded_latency"
STORES = ROOT / "validation" / "reports" / "h100" / "store_scatter"
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


def hardware_probe(data: pathlib.Path, stem: str, prefix: str) -> dict[str, float]:
    """``{label: sm__cycles_elapsed.avg}`` of probe ``validation/probes/<stem>.py``'s ncu run in ``data``
    (``<stem>.csv``; the kernels whose name starts with ``prefix``, in the order of its ``launches()``)."""
    from validation.ncu import metric_by_launch
    from validation.probekit import load_probe

    cycles = metric_by_launch((data / f"{stem}.csv").read_text(), "sm__cycles_elapsed.avg", (prefix,))
    labels = [row[0] for row in load_probe(stem).launches()]
    if len(labels) != len(cycles):
        raise SystemExit(f"{data}: {len(cycles)} ncu rows for {len(labels)} launches")
    return dict(zip(labels, cycles))


def _simulate(code: str, overrides: dict, jobs) -> list[tuple[str, float, float, float]]:
    """Run ``jobs(gpusim)``'s launches ``(label, kernel, grid, args, dynamic shared bytes, bytes in flight
    per SM)`` of ``code`` (256-thread CTAs) on the H100 configuration; returns ``(label, bytes in flight,
    simulated cycles, host seconds)`` rows."""
    import gpusim

    rows = []
    with gpusim.Device("h100", mode="timing", overrides=overrides):
        mod = gpusim.RawModule(path=str(_ptx(code)))
        for label, kernel, grid, args, smem, flight in jobs(gpusim):
            f = mod.get_function(kernel)
            f.max_dynamic_shared_size_bytes = max(smem, 1)
            t = time.perf_counter()
            r = f((grid,), (256,), args, shared_mem=smem)
            rows.append((label, flight, float(r.cycles), time.perf_counter() - t))
            print(f"{label}: {r.cycles} cycles", flush=True)
    return rows


def simulate(overrides: dict) -> list[tuple[str, float, float, float]]:
    """The unstamped launches of ``cta_timeline.py`` (:func:`_simulate`'s rows)."""
    from validation.probes.cta_timeline import CODE, N

    def jobs(gpusim):
        a, b = gpusim.asarray(np.ones(N, np.float32)), gpusim.zeros(N, np.float32)
        ts = gpusim.zeros(7 * N // 128, np.int64)
        big = gpusim.asarray(np.ones(4 * N, np.float32))
        for label in hardware():
            name, k = label.split()
            k = int(k[1:])
            if name.endswith("_ts"):
                continue
            if name.startswith("load_x"):
                yield (label, name, 4 * 132 * k, (big, b, np.uint32(big.size // 4)), SMEM[k],
                       k * 256 * int(name[len("load_x"):]) * 16)
            else:
                yield label, name, N // 4 // 256, (a, b, np.uint32(N // 4), ts), SMEM[k], k * 256 * 16
    return _simulate(CODE, overrides, jobs)


def simulate_copies(overrides: dict) -> list[tuple[str, float, float, float]]:
    """The held-out copies of ``loaded_latency.py`` (:func:`_simulate`'s rows)."""
    from validation.probes.loaded_latency import CODE, N, launches

    def jobs(gpusim):
        a, b = gpusim.asarray(np.ones(N, np.float32)), gpusim.zeros(N, np.float32)
        for label, loads, k in launches():
            yield label, f"copy_x{loads}", 4 * 132 * k, (a, b, np.uint32(N // 4)), SMEM[k], k * 256 * loads * 16
    return _simulate(CODE, overrides, jobs)


def simulate_stores(overrides: dict) -> list[tuple[str, float, float, float]]:
    """The scattered stores of ``store_scatter.py`` (:func:`_simulate`'s rows; "in flight": the lines a
    warp's store spreads over)."""
    from validation.probes.store_scatter import CODE, launches

    def jobs(gpusim):
        out = gpusim.zeros(1 << 24, np.float32)
        for label, w, n in launches():
            yield label, "scatter", n // 256, (out, np.uint32(n.bit_length() - 1), np.uint32(w.bit_length() - 1)), 0, w
    return _simulate(CODE, overrides, jobs)


def _ptx(code: str) -> pathlib.Path:
    """``code`` compiled with ``nvcc -ptx`` for sm_90 (a temporary file)."""
    from gpusim import ptxas

    nvcc = ptxas.find_tool("nvcc", "GPUSIM_NVCC")
    if nvcc is None:
        raise SystemExit("nvcc not found (pip install nvidia-cuda-nvcc, or set GPUSIM_NVCC)")
    tmp = pathlib.Path(tempfile.mkdtemp())
    (tmp / "k.cu").write_text(code)
    ptxas.run_tool([nvcc, "-std=c++17", "-ptx", "-arch=sm_90", str(tmp / "k.cu"), "-o", str(tmp / "k.ptx")],
                   "the probe's kernels")
    return tmp / "k.ptx"


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
    hw_c = hardware_probe(COPIES, "loaded_latency", "copy_x")
    rows_c = simulate_copies(overrides)
    errs_c = [sim / hw_c[label] - 1 for label, _, sim, _ in rows_c]
    hw_s = hardware_probe(STORES, "store_scatter", "scatter")
    rows_s = simulate_stores(overrides)
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
        "",
        "Held out (not used to fit `dram.queue_cycles`): copies with 1 to 8 float4 loads in flight per thread, "
        "then their stores, 256 MiB each way, 4 waves (`validation/probes/loaded_latency.py`, raw data in "
        "`validation/reports/h100/loaded_latency/`):",
        "",
        "| launch | bytes loaded in flight per SM | H100 cycles | gpusim cycles | gpusim / H100 |",
        "|---|---:|---:|---:|---:|",
        *[f"| {label} | {flight:,} | {hw_c[label]:,.0f} | {sim:,.0f} | {sim / hw_c[label]:.2f} |"
          for label, flight, sim, _ in rows_c],
        "",
        f"MAE {100 * np.mean(np.abs(errs_c)):.1f} % over {len(rows_c)} launches; host "
        f"{sum(r[3] for r in rows_c):.0f} s.",
        "",
        "Scattered stores (`validation/probes/store_scatter.py`, raw data in `validation/reports/h100/store_scatter/`): "
        "every word of 2^24 (or 2^20) floats stored once, a warp's 32 lanes spread over W lines:",
        "",
        "| launch | W (lines a warp store touches) | H100 cycles | gpusim cycles | gpusim / H100 |",
        "|---|---:|---:|---:|---:|",
        *[f"| {label} | {w} | {hw_s[label]:,.0f} | {sim:,.0f} | {sim / hw_s[label]:.2f} |"
          for label, w, sim, _ in rows_s],
    ]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
