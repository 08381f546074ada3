"""How widely a warp's DRAM load latency spreads under load: the timing model against the H100's stamps.

A CTA that waits at a barrier for all its warps' loads pays the slowest of them, so a model whose
latencies are right on average can still run a barrier-synchronised kernel fast if they spread too
little (the corpus's stencils, session 53: ``docs/validation/changes.md``). The copies' gpusim rows end
before the L2 fills with written lines, so they hold no DRAM write-backs; the H100's do. ``cta_timeline.py``'s
stamped kernels (``validation/probes/cta_timeline.py``; one float4 load a thread, 256-thread CTAs,
1, 2 or 8 CTAs an SM) record, per warp, the cycles from its entry to its load's return. This script
prints, per launch, the percentiles of those latencies over warps and the mean over CTAs of (the
slowest warp - the CTA's mean), for the H100 (``validation/reports/h100/cta_timeline/
cta_timeline_once.npz``: the whole 2^24-float launch, under ncu, clean caches, clocks untouched; CTAs
from the 1,000th, past the first waves) and for gpusim (timed in detail, as kernels that read
``%clock64`` are: the first ``--waves`` waves of CTAs, the H100 configuration).

Usage::

    python benchmarks/latency_spread.py                    # about 11 minutes on 2 cores
    python benchmarks/latency_spread.py --set dram.queue_cycles=50 --out /tmp/x.md
    python benchmarks/latency_spread.py --launches copy_k2 --waves 30 --first-cta 4500   # write-backs; 11 min
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
STAMPS = ROOT / "validation" / "reports" / "h100" / "cta_timeline" / "cta_timeline_once.npz"
OUT = ROOT / "benchmarks" / "results" / "latency_spread_h100.md"
LAUNCHES = ("load_k1", "load_k2", "load_k8", "copy_k1", "copy_k2")
PERCENTILES = (5, 25, 50, 75, 95, 99)


def spread(rows: np.ndarray, first_cta: int = 0) -> dict[str, object]:
    """Latency statistics of ``cta_timeline.py`` stamp rows (int64, shape (warps, 7): smid, CTA, warp,
    t_entry, t_loaded, t_end, globaltimer).

    Returns ``percentiles`` (cycles from entry to the load's return, at :data:`PERCENTILES` over
    warps), ``slowest_over_mean`` (the mean over CTAs of the CTA's slowest warp's latency minus its
    warps' mean, cycles), ``order_corr`` (Pearson r of a warp's index in its CTA with its latency
    minus the CTA's mean: near 1 where a CTA's loads are served in warp order, near 0 where the
    order is unrelated; NaN where no latency differs) and ``warps``. Only CTAs numbered
    ``first_cta`` or above count; a warp with no stamp (latency <= 0) is left out. Raises
    ValueError when no warp is left."""
    cta, warp, lat = rows[:, 1], rows[:, 2], (rows[:, 4] - rows[:, 3]).astype(float)
    keep = (cta >= first_cta) & (lat > 0)
    if not keep.any():
        raise ValueError(f"no stamped warp in CTAs >= {first_cta}")
    cta, warp, lat = cta[keep], warp[keep], lat[keep]
    order = np.argsort(cta, kind="stable")
    cta, warp, lat = cta[order], warp[order], lat[order]
    starts = np.flatnonzero(np.r_[True, cta[1:] != cta[:-1]])
    counts = np.diff(np.r_[starts, len(lat)])
    mean = np.add.reduceat(lat, starts) / counts
    slowest = np.maximum.reduceat(lat, starts) - mean
    dev = lat - np.repeat(mean, counts)
    corr = float(np.corrcoef(warp, dev)[0, 1]) if dev.std() > 0 and warp.std() > 0 else float("nan")
    return {"percentiles": np.percentile(lat, PERCENTILES), "slowest_over_mean": float(slowest.mean()),
            "order_corr": corr, "warps": int(len(lat))}


def simulate(label: str, waves: int, overrides: dict | None) -> tuple[np.ndarray, float]:
    """gpusim's stamp rows of ``label`` (``load_k1``...) over ``waves`` waves of CTAs (k CTAs an SM, every SM
    of the h100 config): int64 (warps, 7) as :func:`spread` takes them, and the host seconds."""
    import gpusim
    from validation.probes import cta_timeline

    kind, k = label.split("_k")
    ctas = gpusim.config.load("h100").sm_count * int(k) * waves
    t0 = time.perf_counter()
    with gpusim.Device("h100", mode="timing", overrides=overrides):
        f = gpusim.RawModule(code=cta_timeline.CODE, options=("-std=c++17",)).get_function(f"{kind}_ts")
        n4 = ctas * 256
        smem = cta_timeline.SMEM[int(k)]
        if smem > 48 * 1024:
            f.max_dynamic_shared_size_bytes = smem
        ts = gpusim.zeros(7 * (n4 // 32), np.int64)
        f((ctas,), (256,), (gpusim.asarray(np.arange(4 * n4, dtype=np.float32)), gpusim.zeros(4 * n4, np.float32),
                            np.uint32(n4), ts), shared_mem=smem)
        return ts.get().reshape(-1, 7), time.perf_counter() - t0


def _row(name: str, s: dict) -> str:
    p = " / ".join(f"{x:,.0f}" for x in s["percentiles"])
    return f"| {name} | {s['warps']:,} | {p} | {s['slowest_over_mean']:,.0f} | {s['order_corr']:.2f} |"


def main(argv: list[str] | None = None) -> None:
    from gpusim.config import parse_override

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="extend", nargs="+", default=[], metavar="FIELD=VALUE",
                    help="gpusim config overrides (repeatable)")
    ap.add_argument("--launches", nargs="+", choices=LAUNCHES, default=list(LAUNCHES), help="launches (default all)")
    ap.add_argument("--waves", type=int, default=6, help="waves of CTAs gpusim runs (default 6)")
    ap.add_argument("--jobs", type=int, default=2, help="launches simulated at once")
    ap.add_argument("--first-cta", type=int, default=None, metavar="N",
                    help="count CTAs from the N-th on both sides (default: the H100's from the 1,000th, all of "
                         "gpusim's); a copy's DRAM write-backs start near the 3,500th")
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    a = ap.parse_args(argv)
    overrides = dict(parse_override(s) for s in a.set) or None
    hw = np.load(STAMPS)
    with ProcessPoolExecutor(a.jobs) as pool:
        sims = list(pool.map(simulate, a.launches, [a.waves] * len(a.launches), [overrides] * len(a.launches)))
    lines = ["# A warp's load latency under load: its spread, gpusim against the H100", "",
             f"`python benchmarks/latency_spread.py{''.join(' --set ' + s for s in a.set)}` (see its docstring). "
             "Cycles from a warp's entry to its float4 load's return: percentiles "
             f"{' / '.join(f'p{p}' for p in PERCENTILES)} over warps, and the mean over CTAs of the CTA's slowest "
             "warp minus its mean (what a barrier after the load adds), and the correlation of a warp's index in its "
             "CTA with its latency's difference from the CTA's mean (1: served in warp order). "
             + (f"H100: CTAs from the 1,000th of the 2^24-float launch; gpusim: all CTAs of {a.waves} waves"
                if a.first_cta is None else f"CTAs from the {a.first_cta:,}th: the H100's of the 2^24-float launch, "
                f"gpusim's of {a.waves} waves") + ", timed in detail.", "",
             "| launch | warps | latency percentiles | slowest warp over the CTA's mean | warp order's r |",
             "|---|---:|---|---:|---:|"]
    for label, (rows, seconds) in zip(a.launches, sims):
        lines += [_row(f"{label} H100", spread(hw[label], first_cta=1000 if a.first_cta is None else a.first_cta)),
                  _row(f"{label} gpusim ({seconds:.0f} s)", spread(rows, first_cta=a.first_cta or 0))]
    text = "\n".join(lines) + "\n"
    a.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
