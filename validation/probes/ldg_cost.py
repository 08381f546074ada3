"""GPU probe: what does a load instruction cost the sub-partition that issues it, by the work around it?

``load_exposure.py`` found that at 8 CTAs an SM the H100 pays for each ``LDG`` amid an integer hash
even when every load hits L1 (``late k8 L1`` 76.2k cycles, gpusim 63.9k), with ncu's ``dispatch``
stalls at 1.4 an issue; yet a cost on every ``LDG`` (4 issue cycles, or 4 ALU-pipe cycles) slowed
``conv2d_const``, whose loads are FFMA-bound and at immediate offsets of one base. Every warp here
runs ``ITERS`` iterations of 16 steps, at 4 and 8 CTAs of 256 threads an SM (the grid that many CTAs
an SM; the lines among ``LINES``, 32 KiB: L1 hits after the first touch), and each launch changes one
thing:

* the work around the loads: ``hash_*``, the integer hash of ``load_exposure.py`` (12 ALU and IMAD
  instructions a step: the ALU pipe bounds it); ``fma_*``, 8 independent ``FFMA`` a step (issue-bound);
* the address: ``*_ldg``, each load its own 64-bit address (an ``IMAD.WIDE`` of a 32-bit index, as
  ``x[k]`` compiles); ``*_ldg_imm``, 16 loads at immediate offsets of one base register;
* the width: ``fma_ldg128_imm``, ``LDG.E.128`` (four registers a lane come back, not one);
* the space: ``fma_lds``, 16 conflict-free shared-memory loads;
* ``*_only``: the same work without loads;

and, at 8 CTAs an SM only (:data:`MORE`): ``*_wide``, each step's ``IMAD.WIDE`` address folded into
the sum without a load; ``fma_ldg_ptr``, ``fma_ldg``'s words through a pointer bumped by a 64-bit
``IADD3`` + ``IADD3.X``; ``fma_ldg_imm_q0``, ``fma_ldg_imm``'s loads in one sub-partition's warps only
(ptxas gives it 40 registers: 6 CTAs an SM). Committed run: ``validation/reports/h100/ldg_cost/``
(the ``IMAD.WIDE`` is the cost: ``sm.sass_pipes``).

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,smsp__inst_executed.sum,\\
        l1tex__t_sector_hit_rate.pct \\
        --csv --page raw --print-units base --log-file $OUT/ldg_cost.csv python3 validation/probes/ldg_cost.py

Each launch runs twice (warm-up, then measured; ncu's rows follow :data:`PATTERNS`' order).
gpusim's side: ``python3 validation/probes/ldg_cost.py sim ldg_cost.csv OUT.json [--jobs N]``.
Needs CuPy only on the GPU.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))

from validation.probekit import MIX_CU  # noqa: E402

CODE = MIX_CU + r"""
// WORK 0: the integer hash of 16 indices an iteration (ALU- and IMAD-bound);
//      1: 8 FFMA per index on 8 accumulators (issue-bound, the FMA pipes).
// LOAD 0: none; 1: each index's own word (x[k]: an IMAD.WIDE each, k the hash under WORK 0,
//      base + r * stride under WORK 1); 2: 16 words at one base (p[32 r]: immediate offsets);
//      3: 16 uint4 at one base (LDG.128, four registers a lane); 4: 16 shared-memory words (LDS, one
//      wavefront each); 5: no load, each index's 64-bit address (the IMAD.WIDE of LOAD 1) folded into s;
//      6: LOAD 1's words through a pointer bumped by a 64-bit step (a fresh address each, no IMAD.WIDE);
//      7: LOAD 2's loads in the warps of one sub-partition only (warp % 4 == 0), the others' skipped.
template <int WORK, int LOAD>
__device__ void body(const unsigned* x, unsigned line_mask, unsigned iters, unsigned stride, unsigned* out)
{
    constexpr unsigned READS = 16;
    __shared__ unsigned sh[READS * 32 * 4];
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, w = t >> 5, lane = t & 31, s = 0;
    if (LOAD == 4) {
        for (unsigned j = threadIdx.x; j < READS * 32 * 4; j += blockDim.x) sh[j] = j;
        __syncthreads();
    }
    // a 64-bit step the compiler cannot prove fits 32 bits (iters >> 31 is 0): a 64-bit add a bump
    const unsigned long long step = (unsigned long long)stride * 4 | (unsigned long long)(iters >> 31) << 40;
    float f[8];
#pragma unroll
    for (int a = 0; a < 8; ++a) f[a] = (float)(t + a) * 1e-3f;
    for (unsigned i = 0; i < iters; ++i) {
        unsigned v[READS];
        unsigned base = (mix(w * iters + i) & line_mask) * 32 + lane % 8;
        const unsigned* p = x + base;
        const unsigned* pp = p;
        const uint4* q = reinterpret_cast<const uint4*>(x) + (base / 32) * 8 + lane % 8;
#pragma unroll
        for (unsigned r = 0; r < READS; ++r) {
            unsigned k = 0;
            if (WORK == 0) {
                k = (mix((w * iters + i) * READS + r) & line_mask) * 32 + lane % 8;
                if (LOAD != 1 && LOAD != 5) s += k;
            } else {
                k = base + r * stride;
#pragma unroll
                for (int a = 0; a < 8; ++a) f[a] = fmaf(f[a], 0.999f, 1e-4f);
            }
            if (LOAD == 1) v[r] = x[k];
            else if (LOAD == 2 || (LOAD == 7 && (threadIdx.x >> 5) % 4 == 0)) v[r] = p[32 * r];
            else if (LOAD == 5) { unsigned long long a = (unsigned long long)(x + k); v[r] = (unsigned)a ^ (unsigned)(a >> 32); }
            else if (LOAD == 6) { v[r] = *pp; pp = reinterpret_cast<const unsigned*>(reinterpret_cast<const char*>(pp) + step); }
            else if (LOAD == 3) { uint4 u = q[8 * r]; v[r] = u.x + u.y + u.z + u.w; }
            else if (LOAD == 4) v[r] = sh[((i & 3) * READS + r) * 32 + lane];
        }
        if (LOAD == 7 && (threadIdx.x >> 5) % 4 != 0) continue;
        if (LOAD != 0) {
#pragma unroll
            for (unsigned r = 0; r < READS; ++r) s += v[r];
        }
    }
    float g = 0.f;
#pragma unroll
    for (int a = 0; a < 8; ++a) g += f[a];
    out[t] = s + __float_as_uint(g);
}
#define K(name, W, L) \
    extern "C" __global__ void name(const unsigned* x, unsigned m, unsigned it, unsigned st, unsigned* o) { body<W, L>(x, m, it, st, o); }
K(hash_only, 0, 0)
K(hash_ldg, 0, 1) K(hash_ldg_imm, 0, 2)

K(fma_only, 1, 0) K(fma_ldg, 1, 1) K(fma_ldg_imm, 1, 2)
K(fma_ldg128_imm, 1, 3) K(fma_lds, 1, 4)
K(hash_wide, 0, 5) K(fma_wide, 1, 5) K(fma_ldg_ptr, 1, 6) K(fma_ldg_imm_q0, 1, 7)
"""

#: threads a CTA
BLOCK = 256
#: iterations of 16 steps a warp
ITERS = 16
#: lines the loads' bases are picked from (32 KiB: the L1 holds them); the array has 16 more
LINES = 1 << 8
#: a step's index stride under ``fma_ldg`` (words: the next line, as ``*_imm``'s offsets)
STRIDE = 32
KERNELS = ("hash_only", "hash_ldg", "hash_ldg_imm",
           "fma_only", "fma_ldg", "fma_ldg_imm", "fma_ldg128_imm", "fma_lds")
#: the second run's kernels (8 CTAs an SM only)
MORE = ("hash_wide", "fma_wide", "fma_ldg_ptr", "fma_ldg_imm_q0")
#: (label, kernel, CTAs of BLOCK threads an SM)
PATTERNS = (tuple((f"{kernel} k{ctas}", kernel, ctas) for ctas in (4, 8) for kernel in KERNELS)
            + tuple((f"{kernel} k8", kernel, 8) for kernel in MORE))
COUNTERS = {"cycles": ("sm__cycles_elapsed.avg",), "instructions": ("smsp__inst_executed.sum",)}


def _args(xp, np, ctas: int, x):
    return (x, np.uint32(LINES - 1), np.uint32(ITERS), np.uint32(STRIDE), xp.zeros(ctas * BLOCK, np.uint32))


def _words(np):
    return np.arange((LINES + 16) * 32, dtype=np.uint32)


def main() -> None:
    import cupy
    import numpy as np

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    mod = cupy.RawModule(code=CODE)
    x = cupy.asarray(_words(np))
    for label, kernel, ctas in PATTERNS:
        f = mod.get_function(kernel)
        for _ in range(2):
            f((sms * ctas,), (BLOCK,), _args(cupy, np, sms * ctas, x))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """label -> :data:`COUNTERS` from ncu's CSV (the second row of each launch)."""
    from validation import probekit

    return probekit.counter_rows(path, set(KERNELS + MORE), [p[0] for p in PATTERNS], COUNTERS)


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch of :data:`PATTERNS` on gpusim in timing mode (sampled as any launch is), its
    grid that many CTAs on each of ``gpu``'s SMs."""
    import time

    import numpy as np

    import gpusim
    from validation.probekit import counter_values

    t0 = time.perf_counter()
    kernel, ctas_per_sm = next(p[1:] for p in PATTERNS if p[0] == label)
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs) as dev:
        ctas = dev.config.sm_count * ctas_per_sm
        x = gpusim.asarray(_words(np))
        res = gpusim.RawModule(code=CODE).get_function(kernel)((ctas,), (BLOCK,), _args(gpusim, np, ctas, x))
    return counter_values(res.metrics, COUNTERS) | {"timed": str(res.sampling),
                                                    "host_seconds": round(time.perf_counter() - t0, 1)}


if __name__ == "__main__":
    from validation.probekit import probe_main
    probe_main("ldg_cost.py", sys.argv[1:], main, gpu_rows, simulate, ("instructions", "instructions"))
