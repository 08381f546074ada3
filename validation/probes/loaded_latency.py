"""GPU probe: DRAM under load with reads *and* writes, for the loaded-latency curve.

The timing model's DRAM latency grows with its utilisation by reads and writes together
(``dram.queue_cycles``, fitted on loads alone: ``cta_timeline.py``'s ``load_x*`` launches). This
probe is the held-out check: copies where every thread keeps 1, 2, 4 or 8 float4 loads in
flight and then stores them (grid-stride over 256 MiB read and 256 MiB written), at 1, 2, 4 and
8 CTAs of 256 threads per SM (dynamic shared memory limits the CTAs, as in ``cta_timeline.py``),
a grid of 4 waves. ``benchmarks/memory_latency.py`` puts gpusim beside it.

Run it under Nsight Compute on a GPU machine (clocks untouched; ncu's default
``--cache-control all`` starts each launch with clean caches, as the timing model does)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,gpu__time_duration.sum,dram__bytes_read.sum,\\
        dram__bytes_write.sum --csv --page raw --print-units base --log-file $OUT/loaded_latency.csv \\
        python3 validation/probes/loaded_latency.py | tee $OUT/log.txt

The launches are listed in order on stdout (``launch copy_xN kK``); ncu's rows follow the same
order. Needs CuPy only (``CODE``, :func:`launches` and ``N`` import anywhere).
"""

from __future__ import annotations

CODE = r"""
template <int LOADS>
__device__ void copy_many(const float4* __restrict__ a, float4* __restrict__ b, unsigned n4)
{
    unsigned stride = gridDim.x * blockDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i + (LOADS - 1) * stride < n4; i += LOADS * stride) {
        float4 v[LOADS];
#pragma unroll
        for (int k = 0; k < LOADS; ++k) v[k] = a[i + k * stride];
#pragma unroll
        for (int k = 0; k < LOADS; ++k) b[i + k * stride] = v[k];
    }
}
#define C(n) extern "C" __global__ void copy_x##n(const float4* a, float4* b, unsigned n4) { copy_many<n>(a, b, n4); }
C(1) C(2) C(4) C(8)
"""

N = 1 << 26                  #: floats read (and written): 256 MiB each way
BLOCK = 256
#: 256-thread CTAs per H100 SM -> dynamic shared memory that allows exactly that many
SMEM = {1: 174080, 2: 96256, 4: 51456, 8: 0}


def launches() -> list[tuple[str, int, int]]:
    """``(label, loads in flight per thread, CTAs per SM)`` in launch order."""
    return [(f"copy_x{loads} k{k}", loads, k) for loads in (1, 2, 4, 8) for k in (1, 2, 4, 8)]


def main() -> None:
    import cupy
    import numpy as np

    mod = cupy.RawModule(code=CODE, options=("-std=c++17",))
    a = cupy.ones(N, cupy.float32)
    b = cupy.zeros(N, cupy.float32)
    sms = cupy.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    for label, loads, k in launches():
        f = mod.get_function(f"copy_x{loads}")
        if SMEM[k] > 48 * 1024:
            f.max_dynamic_shared_size_bytes = SMEM[k]
        f((4 * sms * k,), (BLOCK,), (a, b, np.uint32(N // 4)), shared_mem=SMEM[k])
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


if __name__ == "__main__":
    main()
