"""GPU probe: do a warp's stores to the same sectors merge before the L2, and when?

The corpus's ``fft_stage_first`` (fit half) stores each output sector in two halves, by two
back-to-back ``STG.E.64`` of one warp (``out[2j]``, ``out[2j + 1]``): the H100 counts 1.59M L2 write
sectors for its 32 MiB (1.05M sectors, x 1.5 for the lines homed in the far partition: as if each
sector were written once), gpusim 2.86M, and gpusim runs +12.7 %. ``scan_lookback``'s four 4-byte
stores a thread (each a quarter of a sector) count 1.93M on the H100 for 16 MiB: between once (0.79M)
and four times (3.1M). This probe stores float2 pairs from every thread of ``T`` (CTAs of 256):

* ``pair``: ``out[2t]``, ``out[2t + 1]`` (the FFT stage's pattern: each store half of every sector);
* ``split``: ``out[t]``, ``out[t + T]`` (each store whole sectors of its own: the baseline count);
* ``single``: ``out[2t]`` only (half sectors, once);
* ``pair gap G``: ``pair`` with a chain of G dependent FMAs between the two stores (the second
  store's value waits for it);
* ``quad``: four 4-byte stores ``out[4t + k]`` (``scan_lookback``'s pattern);
* ``pair few``: ``pair`` with one warp an SM (the stores never queue);
* ``kK wW``: K stores of W bytes a thread at ``out[K t + k]`` (the same 16 MiB whatever K and W;
  ``k1``: each sector written once, in part for W = 4);
* ``k2 w4 gap G``: ``k2 w4`` with a chain of G dependent FMAs between a thread's two stores;
* ``quad few``: ``quad`` with one warp an SM; ``quad late G``: ``quad`` after a chain of G dependent FMAs
  (stores that trickle rather than queue).

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,lts__t_sectors_op_write.sum,\\
        lts__t_requests_srcunit_tex_op_write.sum,dram__bytes_write.sum,\\
        l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,\\
        l1tex__m_l1tex2xbar_write_bytes_mem_lg_op_st.sum \\
        --csv --page raw --print-units base --log-file $OUT/store_merge.csv \\
        python3 validation/probes/store_merge.py | tee $OUT/store_merge_log.txt

(each launch twice, the second measured). gpusim's side::

    python3 validation/probes/store_merge.py sim store_merge.csv OUT.json [--jobs N] [--set FIELD=VALUE ...]

Needs CuPy (the GPU side) or gpusim (``sim``); ``CODE`` and :data:`LAUNCHES` import anywhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

CODE = r"""
// mode 0 pair (out[2t], out[2t+1]), 1 split (out[t], out[t+T]), 2 single (out[2t]); gap dependent
// FMAs between the two stores.
extern "C" __global__ void st_pair(float2* __restrict__ out, int mode, int gap)
{
    unsigned T = gridDim.x * blockDim.x, t = blockIdx.x * blockDim.x + threadIdx.x;
    size_t i0 = mode == 1 ? t : 2 * (size_t)t, i1 = mode == 1 ? (size_t)t + T : 2 * (size_t)t + 1;
    out[i0] = make_float2((float)t, 1.0f);
    if (mode == 2)
        return;
    float x = (float)t;
    for (int k = 0; k < gap; ++k)
        x = fmaf(x, 1.0001f, 0.5f);
    out[i1] = make_float2(x, 2.0f);
}

// Four 4-byte stores a thread, out[4t + k].
extern "C" __global__ void st_quad(float* __restrict__ out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < 4; ++k)
        out[4 * (size_t)t + k] = (float)(t + k);
}

// st_quad after a chain of gap dependent FMAs (the stores' values wait for it): stores that trickle.
extern "C" __global__ void st_quad_late(float* __restrict__ out, int gap)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    float x = (float)t;
    for (int k = 0; k < gap; ++k)
        x = fmaf(x, 1.0001f, 0.5f);
#pragma unroll
    for (int k = 0; k < 4; ++k)
        out[4 * (size_t)t + k] = x + (float)k;
}

// K stores of W bytes a thread (W = 4, 8, 16: st_k4, st_k8, st_k16), out[K t + k], k < K.
#define ST_K(name, T, make)                                                              \
extern "C" __global__ void name(T* __restrict__ out, int K)                              \
{                                                                                        \
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;                                  \
    for (int k = 0; k < K; ++k)                                                          \
        out[(size_t)K * t + k] = make;                                                   \
}
ST_K(st_k4, float, (float)(t + k))

// out[2t] and out[2t + 1], 4 bytes each, with a chain of gap dependent FMAs between them.
extern "C" __global__ void st_gap4(float* __restrict__ out, int gap)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    out[2 * (size_t)t] = (float)t;
    float x = (float)t;
    for (int k = 0; k < gap; ++k)
        x = fmaf(x, 1.0001f, 0.5f);
    out[2 * (size_t)t + 1] = x;
}
ST_K(st_k8, float2, make_float2((float)t, (float)k))
ST_K(st_k16, float4, make_float4((float)t, (float)k, 1.0f, 2.0f))
"""

BLOCK = 256
THREADS = 1 << 21          #: the FFT stage's threads (2 x 2^21 float2: 32 MiB)
#: (label, kernel, mode, gap, CTAs, threads a CTA)
LAUNCHES = [("pair", "st_pair", 0, 0, THREADS // BLOCK, BLOCK),
            ("split", "st_pair", 1, 0, THREADS // BLOCK, BLOCK),
            ("single", "st_pair", 2, 0, THREADS // BLOCK, BLOCK),
            ("pair gap 16", "st_pair", 0, 16, THREADS // BLOCK, BLOCK),
            ("pair gap 128", "st_pair", 0, 128, THREADS // BLOCK, BLOCK),
            ("quad", "st_quad", 0, 0, THREADS // BLOCK, BLOCK),
            ("pair few", "st_pair", 0, 0, 132, 32)] + [
    (f"k{k} w{w}", f"st_k{w}", k, 0, (THREADS * 8 // (k * w)) // BLOCK, BLOCK)
    for w, k in ((4, 2), (4, 4), (4, 8), (8, 2), (8, 4), (16, 2), (4, 1), (16, 1))] + [
    (f"k2 w4 gap {g}", "st_gap4", g, 0, (THREADS // 2) // BLOCK, BLOCK) for g in (0, 8, 32, 128, 512)] + [
    ("quad few", "st_quad", 0, 0, 132, 32), ("quad late 256", "st_quad_late", 256, 0, THREADS // BLOCK, BLOCK),
    ("quad late 1024", "st_quad_late", 1024, 0, THREADS // BLOCK, BLOCK)]
COUNTERS = {"cycles": "sm__cycles_elapsed.avg", "l2_write_sectors": "lts__t_sectors_op_write.sum",
            "l2_write_requests": "lts__t_requests_srcunit_tex_op_write.sum", "dram_write_bytes": "dram__bytes_write.sum",
            "l1_store_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
            "l1_store_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
            "xbar_write_bytes": "l1tex__m_l1tex2xbar_write_bytes_mem_lg_op_st.sum"}


def _launch(xp, label: str, out):
    import numpy as np

    _, kernel, mode, gap, ctas, block = next(x for x in LAUNCHES if x[0] == label)
    f = xp.RawModule(code=CODE).get_function(kernel)
    args = ((out,) if kernel == "st_quad" else (out, np.int32(mode)) if kernel.startswith(("st_k", "st_gap", "st_quad_"))
            else (out, np.int32(mode), np.int32(gap)))
    return f((ctas,), (block,), args)


def _out(xp):
    import numpy as np

    return xp.zeros(4 * THREADS, np.float32)


def main() -> None:
    import cupy

    out = _out(cupy)
    for label, *_ in LAUNCHES:
        for _ in range(2):
            _launch(cupy, label, out)
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """The ncu CSV's measured rows (the second of each launch), by label: :data:`COUNTERS`."""
    from validation.probekit import counter_rows

    return counter_rows(path, ("st_pair", "st_quad", "st_quad_late", "st_k4", "st_k8", "st_k16", "st_gap4"), [lab for lab, *_ in LAUNCHES],
                        {k: (m,) for k, m in COUNTERS.items()})


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch on gpusim in timing mode, the GPU's launch shape."""
    from validation.probekit import simulate_launch

    return simulate_launch(lambda xp: _launch(xp, label, _out(xp)), COUNTERS, gpu, overrides, jobs)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from validation.probekit import probe_main

    probe_main("store_merge.py", sys.argv[1:], main, gpu_rows, simulate, ("l2_write_sectors", "L2 write sectors"))
