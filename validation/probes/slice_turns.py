"""GPU probe: do reads take turns with a hot address at its L2 slice by request or by sector?

``hot_atomic.py`` showed random 4-byte reads (one sector a request) slowing one hot address by
about a cycle a request homed in its slice (``l2.slice_read_cycles``). This probe tells requests
from sectors: every warp reads ``READS`` random lines an iteration (over 4 MiB: L2 hits, the L1
misses nearly always), one request each, of 1 sector (lanes on the line's first 8 words) or of
4 sectors (lanes on its 32 words), alone and beside lane 0 adding 1 to one word every iteration
(``red``; the same GPU-filling grid as ``hot_atomic.py``: 8 CTAs of 256 threads an SM, ``ITERS``
iterations). If the slice counts requests, both read widths add the same time to the hot
address's; if sectors, the 4-sector reads add four times as much.

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,lts__t_requests_srcunit_tex_op_red.sum,\\
        lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum \\
        --csv --page raw --print-units base --log-file $OUT/slice_turns.csv python3 validation/probes/slice_turns.py

Each launch runs twice (warm-up, then measured; ncu's rows follow :data:`PATTERNS`' order).
gpusim's side: ``python3 validation/probes/slice_turns.py sim slice_turns.csv OUT.json [--jobs N]``.
Needs CuPy only on the GPU (``CODE`` and :data:`PATTERNS` import anywhere).
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))

from validation.probekit import MIX_CU  # noqa: E402

CODE = MIX_CU + r"""
// Each iteration the warp reads `reads` random lines of x (one request each: lanes on the line's
// first 8 * sectors words), then lane 0 adds 1 to *hot (if red).
extern "C" __global__ void line_reads(unsigned* hot, unsigned red, unsigned iters, const unsigned* x,
                                      unsigned line_mask, unsigned reads, unsigned sectors, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, w = t >> 5, lane = t & 31, s = 0;
    unsigned word = lane % (8 * sectors);
    for (unsigned i = 0; i < iters; ++i) {
        for (unsigned r = 0; r < reads; ++r)
            s += x[(mix((w * iters + i) * reads + r) & line_mask) * 32 + word];
        if (red && lane == 0)
            atomicAdd(hot, 1u);
    }
    out[t] = s;
}
"""

BLOCK = 256
CTAS_PER_SM = 8
ITERS = 16
#: random lines a warp reads an iteration
READS = 16
#: lines the reads pick from (4 MiB: L2 hits)
LINES = 1 << 15
#: (label, red on the hot word, sectors a read request)
PATTERNS = (("red A1", 1, 0), ("sector reads", 0, 1), ("line reads", 0, 4),
            ("red A1 + sector reads", 1, 1), ("red A1 + line reads", 1, 4))
COUNTERS = {"cycles": ("sm__cycles_elapsed.avg",),
            "atomic_requests": ("lts__t_requests_srcunit_tex_op_red.sum",),
            "read_requests": ("lts__t_requests_srcunit_tex_op_read.sum",),
            "read_sectors": ("lts__t_sectors_srcunit_tex_op_read.sum",)}


def _args(xp, np, red: int, sectors: int, ctas: int, hot, x):
    out = xp.zeros(ctas * BLOCK, np.uint32)
    return (hot, np.uint32(red), np.uint32(ITERS), x, np.uint32(LINES - 1), np.uint32(READS if sectors else 0),
            np.uint32(max(sectors, 1)), out)


def main() -> None:
    import cupy
    import numpy as np

    ctas = cupy.cuda.Device().attributes["MultiProcessorCount"] * CTAS_PER_SM
    f = cupy.RawModule(code=CODE).get_function("line_reads")
    hot = cupy.zeros(32, cupy.uint32)
    x = cupy.arange(LINES * 32, dtype=cupy.uint32)
    for label, red, sectors in PATTERNS:
        for _ in range(2):
            f((ctas,), (BLOCK,), _args(cupy, np, red, sectors, ctas, hot, x))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """label -> :data:`COUNTERS` from ncu's CSV (the second row of each launch)."""
    from validation import probekit

    return probekit.counter_rows(path, {"line_reads"}, [p[0] for p in PATTERNS], COUNTERS)


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch of :data:`PATTERNS` on gpusim in timing mode (sampled as any launch is), on a
    GPU-filling grid of ``gpu``."""
    import time

    import numpy as np

    import gpusim
    from validation.probekit import counter_values

    t0 = time.perf_counter()
    red, sectors = next(p[1:] for p in PATTERNS if p[0] == label)
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs) as dev:
        ctas = dev.config.sm_count * CTAS_PER_SM
        hot = gpusim.zeros(32, np.uint32)
        x = gpusim.asarray(np.arange(LINES * 32, dtype=np.uint32))
        res = gpusim.RawModule(code=CODE).get_function("line_reads")((ctas,), (BLOCK,),
                                                                      _args(gpusim, np, red, sectors, ctas, hot, x))
    got = counter_values(res.metrics, COUNTERS)
    return got | {"timed": str(res.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}


if __name__ == "__main__":
    from validation.probekit import probe_main
    probe_main("slice_turns.py", sys.argv[1:], main, gpu_rows, simulate, ("read_requests", "L2 read requests"))
