"""GPU probe: how much of an L2 hit's latency do warps busy with integer work expose, by occupancy?

``hash_issue.py`` found loads amid an integer hash costing the H100 47.2k cycles and gpusim
29.1k: a cost per load instruction. This probe tells a per-instruction cost from an exposed
latency. Every warp runs ``ITERS`` iterations of 16 hashed indices (``MIX_CU``'s ``mix``, as in
``slice_turns.py``: a random line of 4 MiB, L2 hits, lanes on its first 8 words, one request):

* ``hash``: the indices summed, no load;
* ``late``: the 16 loads of an iteration all issued before any is summed (one latency an iteration);
* ``chain``: each load's address also depends on the sum so far (``k ^ (s & zero)``, ``zero`` a
  parameter 0): 16 latencies an iteration, none overlapped within a warp.

each at 1, 2, 4 and 8 CTAs of 256 threads an SM (the grid is that many CTAs an SM, so every warp
does the same work whatever the occupancy). At 1 CTA (2 warps a scheduler) ``chain`` times the
loaded latency itself; the ladder shows from what occupancy the H100 hides it. The ``L1`` launches
(``late`` and ``chain`` at 4 and 8 CTAs) pick their lines from ``L1_LINES`` (32 KiB, L1 hits after the
first touch): what is left of a cost there is the SM's, not the L2's; the ``1 line`` launches (8 CTAs)
load one line only (every warp's lanes on its first 8 words).

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,smsp__inst_executed.sum,\\
        lts__t_requests_srcunit_tex_op_read.sum \\
        --csv --page raw --print-units base --log-file $OUT/load_exposure.csv python3 validation/probes/load_exposure.py

(the committed run, ``validation/reports/h100/load_exposure/``, also asked for ``gpu__time_duration.sum``,
``l1tex__t_sector_hit_rate.pct`` and ncu's stall ratios per issue). Each launch runs twice (warm-up,
then measured; ncu's rows follow :data:`PATTERNS`' order).
gpusim's side: ``python3 validation/probes/load_exposure.py sim load_exposure.csv OUT.json [--jobs N]``.
Needs CuPy only on the GPU.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))

from validation.probekit import MIX_CU  # noqa: E402
from validation.probes.slice_turns import BLOCK, LINES  # noqa: E402

CODE = MIX_CU + r"""
// MODE 0: the hashed indices summed; 1: an iteration's 16 loads issued, then summed;
// 2: each load's address also depends on the sum so far (zero is 0: the same words as MODE 1)
template <int MODE>
__device__ void body(const unsigned* x, unsigned line_mask, unsigned iters, unsigned zero, unsigned* out)
{
    constexpr unsigned READS = 16;
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, w = t >> 5, lane = t & 31, s = 0;
    for (unsigned i = 0; i < iters; ++i) {
        unsigned v[READS];
#pragma unroll
        for (unsigned r = 0; r < READS; ++r) {
            unsigned k = (mix((w * iters + i) * READS + r) & line_mask) * 32 + lane % 8;
            if (MODE == 0) s += k;
            else if (MODE == 1) v[r] = x[k];
            else s += x[k ^ (s & zero)];
        }
        if (MODE == 1) {
#pragma unroll
            for (unsigned r = 0; r < READS; ++r) s += v[r];
        }
    }
    out[t] = s;
}
extern "C" __global__ void hash(const unsigned* x, unsigned m, unsigned it, unsigned z, unsigned* o) { body<0>(x, m, it, z, o); }
extern "C" __global__ void late(const unsigned* x, unsigned m, unsigned it, unsigned z, unsigned* o) { body<1>(x, m, it, z, o); }
extern "C" __global__ void chain(const unsigned* x, unsigned m, unsigned it, unsigned z, unsigned* o) { body<2>(x, m, it, z, o); }
"""

#: iterations of 16 loads a warp
ITERS = 16
#: lines the ``L1`` launches pick from (32 KiB: the L1 holds them)
L1_LINES = 1 << 8
KERNELS = ("hash", "late", "chain")
#: (label, kernel, CTAs of BLOCK threads an SM, lines picked from)
PATTERNS = (tuple((f"{kernel} k{ctas}", kernel, ctas, LINES) for kernel in KERNELS for ctas in (1, 2, 4, 8))
            + tuple((f"{kernel} k{ctas} L1", kernel, ctas, L1_LINES) for kernel in KERNELS[1:] for ctas in (4, 8))
            + tuple((f"{kernel} k8 1 line", kernel, 8, 1) for kernel in KERNELS[1:]))
COUNTERS = {"cycles": ("sm__cycles_elapsed.avg",), "instructions": ("smsp__inst_executed.sum",),
            "read_requests": ("lts__t_requests_srcunit_tex_op_read.sum",)}


def _args(xp, np, ctas: int, x, lines: int = LINES):
    return (x, np.uint32(lines - 1), np.uint32(ITERS), np.uint32(0), xp.zeros(ctas * BLOCK, np.uint32))


def main() -> None:
    import cupy
    import numpy as np

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    mod = cupy.RawModule(code=CODE)
    x = cupy.arange(LINES * 32, dtype=cupy.uint32)
    for label, kernel, ctas, lines in PATTERNS:
        f = mod.get_function(kernel)
        for _ in range(2):
            f((sms * ctas,), (BLOCK,), _args(cupy, np, sms * ctas, x, lines))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """label -> :data:`COUNTERS` from ncu's CSV (the second row of each launch)."""
    from validation import probekit

    return probekit.counter_rows(path, set(KERNELS), [p[0] for p in PATTERNS], COUNTERS)


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch of :data:`PATTERNS` on gpusim in timing mode (sampled as any launch is), its
    grid that many CTAs on each of ``gpu``'s SMs."""
    import time

    import numpy as np

    import gpusim
    from validation.probekit import counter_values

    t0 = time.perf_counter()
    kernel, ctas_per_sm, lines = next(p[1:] for p in PATTERNS if p[0] == label)
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs) as dev:
        ctas = dev.config.sm_count * ctas_per_sm
        x = gpusim.asarray(np.arange(LINES * 32, dtype=np.uint32))
        res = gpusim.RawModule(code=CODE).get_function(kernel)((ctas,), (BLOCK,), _args(gpusim, np, ctas, x, lines))
    return counter_values(res.metrics, COUNTERS) | {"timed": str(res.sampling),
                                                    "host_seconds": round(time.perf_counter() - t0, 1)}


if __name__ == "__main__":
    from validation.probekit import probe_main
    probe_main("load_exposure.py", sys.argv[1:], main, gpu_rows, simulate, ("instructions", "instructions"))
