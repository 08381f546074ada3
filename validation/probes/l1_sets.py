"""GPU probe: the L1's capacity, replacement and sets, seen by one thread re-walking a set of lines.

``l1_reprobe.py`` found the H200's L1 losing a re-loaded sector gradually as more random lines are in
flight (90 % kept with 256 an SM, 8 % with 2,048), where gpusim's fully associative LRU L1 keeps all
until it is full and then none. Whether that is the L1's replacement, its sets, or the many misses in
flight, a single thread tells apart: one thread (one CTA of 32, lane 0 loading) walks ``n`` lines
``stride`` bytes apart, ``ROUNDS`` times, each load's address dependent on the last (one miss in
flight at a time), so the L1 hit rate of the rounds after the first is the fraction of the ``n`` lines
the L1 kept:

* ``seq n``: lines 128 B apart (``n`` from 256 to 2,560): a fully associative LRU keeps all up to its
  capacity (1,792 lines beside the 32 KB carveout) and none beyond (a cyclic walk), random
  replacement a falling share;
* ``strideS n``: lines ``S`` KiB apart (1, 4, 16, 64 KiB; ``n`` 4 to 256): lines that share a set
  conflict once more of them than its ways are walked.

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\\
        l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct,launch__shared_mem_config_size \\
        --csv --page raw --print-units base --log-file $OUT/l1_sets.csv \\
        python3 validation/probes/l1_sets.py | tee $OUT/l1_sets_log.txt

(each launch once: ncu flushes the caches before it). gpusim's side::

    python3 validation/probes/l1_sets.py sim l1_sets.csv OUT.json [--jobs N] [--set FIELD=VALUE ...]

Needs CuPy (the GPU side) or gpusim (``sim``); ``CODE`` and :data:`LAUNCHES` import anywhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

CODE = r"""
// Lane 0 of the one warp loads x[(i mod n) * stride], i < rounds * n, each address offset by the last
// value & zero (zero = 0 at run time: one load in flight at a time).
extern "C" __global__ void walk(const unsigned* __restrict__ x, unsigned n, unsigned stride, unsigned rounds,
                                unsigned zero, unsigned* __restrict__ out)
{
    if (threadIdx.x != 0)
        return;
    unsigned v = 0, s = 0;
    for (unsigned r = 0; r < rounds; ++r)
        for (unsigned i = 0; i < n; ++i) {
            v = x[(size_t)i * stride + (v & zero)];
            s += v;
        }
    out[0] = s;
}
"""

ROUNDS = 5
#: (label, lines, stride in 4-byte words)
LAUNCHES = ([(f"seq {n}", n, 32) for n in (256, 512, 1024, 1280, 1536, 1664, 1792, 1920, 2048, 2560)]
            + [(f"stride{s} {n}", n, s * 256) for s in (1, 4, 16, 64) for n in (4, 8, 16, 32, 64, 128, 256)])
WORDS = max(n * w for _, n, w in LAUNCHES)
COUNTERS = {"cycles": "sm__cycles_elapsed.avg", "l1_load_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "l1_load_hit_pct": "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct"}


def kept(hit_pct: float) -> float:
    """The share of the walked lines the L1 kept from one round to the next (0-1), from the launch's
    L1 hit rate in percent (the first of the :data:`ROUNDS` rounds misses every line)."""
    return hit_pct / 100 * ROUNDS / (ROUNDS - 1)


def _launch(xp, label: str, x, out):
    import numpy as np

    _, n, stride = next(r for r in LAUNCHES if r[0] == label)
    f = xp.RawModule(code=CODE).get_function("walk")
    return f((1,), (32,), (x, np.uint32(n), np.uint32(stride), np.uint32(ROUNDS), np.uint32(0), out))


def _buffers(xp):
    import numpy as np

    return xp.zeros(WORDS, np.uint32), xp.zeros(1, np.uint32)


def main() -> None:
    import cupy

    x, out = _buffers(cupy)
    for label, *_ in LAUNCHES:
        _launch(cupy, label, x, out)
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """The ncu CSV's rows, by label: :data:`COUNTERS`."""
    import csv

    with open(path) as f:
        rows = [r for r in csv.DictReader(line for line in f if line.startswith('"')) if r["Kernel Name"] == "walk"]
    labels = [lab for lab, *_ in LAUNCHES]

    def num(v: str) -> float:
        return float(v.replace(",", "")) if v else 0.0
    return {lab: {k: num(r[m]) for k, m in COUNTERS.items()} for lab, r in zip(labels, rows[-len(labels):])}


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch on gpusim in timing mode (caches cold, as ncu leaves them)."""
    from validation.probekit import simulate_launch

    return simulate_launch(lambda xp: _launch(xp, label, *_buffers(xp)), COUNTERS, gpu, overrides, jobs)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from validation.probekit import probe_main

    probe_main("l1_sets.py", sys.argv[1:], main, gpu_rows, simulate, ("l1_load_hit_pct", "L1 hit %"))
