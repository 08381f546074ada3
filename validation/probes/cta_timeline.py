"""GPU probe: where the time of a memory-bound CTA goes, from per-warp clock stamps.

``copy_occupancy`` at 1 block of 256 threads per SM runs 1,630 H100 cycles per CTA while the
timing model runs ~870: this probe times the pieces. Every warp's lane 0 records its SM
(``%smid``), ``clock64`` at entry, after its global load has returned (the value is used),
and at its end (after the store has issued), plus ``%globaltimer`` at entry. From these:

* load latency = t_loaded - t_entry (the load is the warp's first memory instruction);
* CTA turnover = next CTA's first entry on the SM - this CTA's last warp end (retirement,
  store drain, dispatch);

for copies, loads only and stores only, at 1, 2 and 8 blocks per SM (dynamic shared memory
limits the blocks, as ``gpusim.suite.COPY_OCCUPANCY_SMEM``), 2^24 floats as the scale tier.
Each variant also runs without stamps, timed by CUDA events (median of 10), to show the
stamps do not change its time.

Run on a GPU machine (clocks untouched): ``python3 validation/probes/cta_timeline.py OUTDIR``.
With ``--once`` every variant is launched once, with no warm-up and no event timing, for
Nsight Compute (whose default ``--cache-control all`` starts each launch with clean caches, as
the timing model does); the stamps are then those of that launch::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,gpu__time_duration.sum,dram__bytes_read.sum,\
        dram__bytes_write.sum --csv --page raw --print-units base --log-file OUT/ncu.csv \
        python3 validation/probes/cta_timeline.py OUT --once

Writes ``OUTDIR/cta_timeline.npz`` (one array of int64 rows per variant: smid, cta, warp,
t_entry, t_loaded, t_end, globaltimer_ns) and ``OUTDIR/cta_timeline.json`` (event times).
Needs CuPy only (imported by ``main``: ``CODE`` and ``SMEM`` import anywhere, for the simulator's
side in ``benchmarks/memory_latency.py``).
"""

from __future__ import annotations

import json
import pathlib
import statistics
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:          # run as a script: make the validation package importable
    sys.path.insert(0, str(ROOT))

from validation import probekit

CODE = r"""
__device__ __forceinline__ long long clk() { long long t; asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) :: "memory"); return t; }
__device__ __forceinline__ long long gtime() { long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory"); return t; }
__device__ __forceinline__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }

// kind 0: copy, 1: loads only (the value feeds a never-taken store), 2: stores only
template <int KIND, bool STAMP>
__device__ void body(const float4* __restrict__ a, float4* __restrict__ b, unsigned n4, long long* ts)
{
    long long g0 = 0, t0 = 0, t1 = 0, t2 = 0;
    if (STAMP) { g0 = gtime(); t0 = clk(); }
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        if (KIND == 2) {
            b[i] = make_float4(i, i, i, i);
        } else {
            float4 v = a[i];
            if (KIND == 0) {
                b[i] = v;
            } else if (v.x == -12345.0f) {
                b[i] = v;
            }
            if (STAMP) t1 = clk();
        }
    }
    if (STAMP) {
        t2 = clk();
        if ((threadIdx.x & 31) == 0) {
            unsigned w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
            long long* r = ts + 7 * (long long)w;
            r[0] = smid(); r[1] = blockIdx.x; r[2] = threadIdx.x >> 5;
            r[3] = t0; r[4] = t1; r[5] = t2; r[6] = g0;
        }
    }
}
#define K(name, kind, stamp) extern "C" __global__ void name(const float4* a, float4* b, unsigned n4, long long* ts) { body<kind, stamp>(a, b, n4, ts); }
K(copy_ts, 0, true) K(load_ts, 1, true) K(store_ts, 2, true)
K(copy_plain, 0, false) K(load_plain, 1, false) K(store_plain, 2, false)

// Little's law: every thread loads LOADS float4 in flight at once (grid-stride apart), sums them
template <int LOADS>
__device__ void load_many(const float4* __restrict__ a, float4* __restrict__ b, unsigned n4)
{
    unsigned stride = gridDim.x * blockDim.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (; i + (LOADS - 1) * stride < n4; i += LOADS * stride) {
        float4 v[LOADS];
#pragma unroll
        for (int k = 0; k < LOADS; ++k) v[k] = a[i + k * stride];
#pragma unroll
        for (int k = 0; k < LOADS; ++k) s += v[k].x + v[k].y + v[k].z + v[k].w;
    }
    if (s == -12345.0f) b[0].x = s;
}
#define L(n) extern "C" __global__ void load_x##n(const float4* a, float4* b, unsigned n4) { load_many<n>(a, b, n4); }
L(1) L(2) L(4) L(8)
"""

N = 1 << 24                 #: floats, as the scale tier's copy_occupancy
BLOCK = 256
#: blocks of 256 threads per H100 SM -> dynamic shared memory (gpusim.suite.COPY_OCCUPANCY_SMEM)
SMEM = {1: 174080, 2: 96256, 8: 0}


def _time(f, grid, args, smem, start, end, once: bool) -> float:
    import cupy as cp
    """Median CUDA-event time of 10 launches after 3 warm-ups (ms); one bare launch if ``once``."""
    if once:
        f((grid,), (BLOCK,), args, shared_mem=smem)
        cp.cuda.runtime.deviceSynchronize()
        return float("nan")
    for _ in range(3):
        f((grid,), (BLOCK,), args, shared_mem=smem)
    ms = []
    for _ in range(10):
        start.record()
        f((grid,), (BLOCK,), args, shared_mem=smem)
        end.record()
        end.synchronize()
        ms.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(ms)


def main(out: pathlib.Path, once: bool = False) -> None:
    import cupy as cp
    out.mkdir(parents=True, exist_ok=True)
    mod = cp.RawModule(code=CODE, options=("-std=c++17",))
    n4 = N // 4
    grid = n4 // BLOCK
    a = cp.arange(N, dtype=cp.float32).view(cp.float32)
    b = cp.zeros(N, cp.float32)
    ts = cp.zeros(7 * (n4 // 32), cp.int64)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    arrays, times = {}, {}
    for kind in ("copy", "load", "store"):
        for k, smem in SMEM.items():
            for stamp in ("ts", "plain"):
                f = mod.get_function(f"{kind}_{stamp}")
                if smem > 48 * 1024:
                    f.max_dynamic_shared_size_bytes = smem
                times[f"{kind}_k{k}_{stamp}"] = _time(f, grid, (a, b, np.uint32(n4), ts), smem, start, end, once)
                if stamp == "ts":
                    arrays[f"{kind}_k{k}"] = ts.get().reshape(-1, 7)
                print(f"launch {kind}_{stamp} k{k}: {times[f'{kind}_k{k}_{stamp}'] * 1e3:.1f} us", flush=True)
    # Little's law: bytes in flight (blocks/SM x 256 threads x LOADS x 16 B) against bandwidth,
    # a grid of 4 waves reading 2^26 floats (256 MiB) grid-stride
    big = cp.ones(4 * N, cp.float32)
    sms = probekit.device_info(cp)["sm_count"]
    little = []
    for loads in (1, 2, 4, 8):
        f = mod.get_function(f"load_x{loads}")
        for k, smem in {1: 174080, 2: 96256, 4: 51456, 8: 0}.items():
            if smem > 48 * 1024:
                f.max_dynamic_shared_size_bytes = smem
            g = 4 * sms * k
            t = _time(f, g, (big, b, np.uint32(big.size // 4)), smem, start, end, once) / 1e3
            row = {"loads": loads, "blocks_per_sm": k, "grid": g, "bytes_in_flight_per_sm": k * BLOCK * loads * 16,
                   "seconds": t, "bytes_per_s": big.nbytes / t}
            little.append(row)
            print(f"launch load_x{loads} k{k}", row, flush=True)
    name = "cta_timeline_once" if once else "cta_timeline"
    np.savez_compressed(out / f"{name}.npz", **arrays)
    dev = probekit.device_info(cp, cp.cuda.Device().id)
    info = {"device": dev["name"], "clock_khz": dev["sm_clock_khz"],
            "n_floats": N, "block": BLOCK, "smem": SMEM, "event_ms_median": times,
            "little": little}
    (out / f"{name}.json").write_text(json.dumps(info, indent=1))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--once"]
    main(pathlib.Path(args[0] if args else "."), once="--once" in sys.argv[1:])
