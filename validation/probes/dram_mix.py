"""GPU probe: the DRAM bandwidth a read-only, a write-only and a copy stream sustain.

Three grid-stride kernels over 1 GiB arrays, 16-byte accesses, 132 x 16 CTAs of 256 threads:
``read`` (loads every ``int4`` once and keeps a per-thread XOR; nothing is stored unless it hits
a sentinel), ``write`` (stores every ``int4`` once) and ``copy`` (loads one array, stores the
other). Each is timed with CUDA events, median of 10 after 3 warm-ups, at 2**26 and 2**28
``int4`` (1 and 4 GiB); the difference of the two times is the stream's rate without the launch
and ramp. Reported as bytes moved (read + written) per second and as a share of the peak
``2 x memory clock x bus width / 8``. The L2 (50 MB on the H100) holds under 5 % of an array.

Run on a GPU machine: ``python3 validation/probes/dram_mix.py > $OUT/dram_mix.json``. Needs CuPy only.
"""

from __future__ import annotations

import functools
import json
import statistics
import sys

CODE = r"""
extern "C" __global__ void read(const int4* x, unsigned long long n, int* out) {
    int acc = 0;
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int4 v = x[i]; acc ^= v.x ^ v.y ^ v.z ^ v.w; }
    if (acc == 0x7fedcba9) out[0] = acc; }
extern "C" __global__ void write(int4* y, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = make_int4((int)i, 1, 2, 3); }
extern "C" __global__ void copy(const int4* x, int4* y, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = x[i]; }
"""
SIZES = (1 << 26, 1 << 28)   #: int4 elements: 1 GiB and 4 GiB per array


def _time(fn, repeat: int = 10, warmup: int = 3) -> float:
    import cupy

    for _ in range(warmup):
        fn()
    cupy.cuda.Device().synchronize()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    samples = []
    for _ in range(repeat):
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return statistics.median(samples)


def main() -> None:
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(0)
    peak = 2 * props["memoryClockRate"] * 1e3 * props["memoryBusWidth"] / 8
    mod = cupy.RawModule(code=CODE)
    grid, block = (props["multiProcessorCount"] * 16,), (256,)
    res = {"gpu": props["name"].decode(), "peak_bytes_per_s": peak, "grid": grid[0], "block": block[0]}
    out = cupy.zeros(1, cupy.int32)
    times: dict[str, list[float]] = {}
    for n in SIZES:
        x = cupy.ones((n, 4), cupy.int32)
        y = cupy.empty_like(x)
        nn = cupy.uint64(n)
        for name, args in (("read", (x, nn, out)), ("write", (y, nn)), ("copy", (x, y, nn))):
            times.setdefault(name, []).append(_time(functools.partial(mod.get_function(name), grid, block, args)))
        x = y = None
        cupy.get_default_memory_pool().free_all_blocks()
    for name, (t0, t1) in times.items():
        moved = (2 if name == "copy" else 1) * 16
        rate = moved * (SIZES[1] - SIZES[0]) / (t1 - t0)
        res[name] = {"seconds_median": dict(zip(map(str, SIZES), (t0, t1))),
                     "bytes_per_s_at_4gib": moved * SIZES[1] / t1, "bytes_per_s_difference": rate,
                     "share_of_peak_difference": rate / peak}
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
