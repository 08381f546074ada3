"""Calibration: CuPy micro-benchmarks that fit a gpusim config override file to the GPU at hand.

Owns: the micro-benchmark kernels (CUDA C compiled by CuPy's NVRTC on the GPU machine;
they run on the hardware only, never in the simulator, so they are not suite PTX), their
measurement (:func:`measure`), the mapping from measurements to configuration fields
(:data:`FIELDS`) and the override file (:func:`write_overrides`, :func:`read_overrides`).

Measurements (one thread, ``clock64()`` cycles, median of ``repeat`` runs):

* pointer chase ``p = *p`` through a ring (each step one load, no address arithmetic):
  shared memory (4 KiB), global through L1
  (``__ldca``, 16 KiB, after a warm pass), global through L2 only (``__ldcg``, 4 MiB, after
  a warm pass) and DRAM (``__ldcg``, a random ring of 128-byte lines over 1 GiB, after
  writing 2x the L2 size elsewhere; TLB misses included) -- cycles per load;
* a chain of 4096 dependent ``fmaf`` -- cycles per FMA;
* DRAM's peak bandwidth from the device attributes: 2 (double data rate) x the memory clock x
  the bus width / 8 (H100 SXM: 2,619 MHz x 5,120 bits = 3.35 TB/s; H200: 3,201 MHz x 6,016 bits
  = 4.81 TB/s, as its attributes give them), with the bus width; the efficiencies and the
  loaded-latency curve are shares of it;
* copy bandwidth: a 1 GiB device-to-device ``cupy`` copy, CUDA events, median of 10:
  (bytes read + bytes written) / seconds;
* read bandwidth: a kernel that reads 1 GiB with coalesced ``float4`` loads (grid-stride, 8 CTAs
  of 256 threads per SM) and writes one word, CUDA events, median of 10: bytes read / seconds;
* DRAM's loaded latency (Little's law): every warp keeps one coalesced 128-byte ``__ldcg`` in
  flight (``i = next[i]`` over a 1 GiB ring, each word read once), 1, 2, 4 and 8 CTAs of 256
  threads per SM; from the CUDA-event time, the rate ``r`` (bytes / s) and the round trip
  ``warps x 128 B / r`` (cycles). ``dram.queue_cycles`` is the slope of the round trip over
  ``u / (1 - u)``, ``u = r /`` the measured peak bandwidth: the timing model's
  curve (:class:`gpusim.timing.memsys.DRAM`), least squares with an intercept;
* the launch overhead, where Nsight Compute's ``ncu`` is found: ``sm__cycles_elapsed.avg`` of an
  empty 1-CTA kernel (median of 5 launches, clocks untouched), as the H100's
  ``launch_overhead_cycles`` (4,400) plus this GPU's difference from the H100's empty kernel
  (:data:`H100_EMPTY_KERNEL_CYCLES`). CUDA events cannot measure it: on one H100 an empty
  kernel timed 8.9 and 10.2 us in two runs, against ncu's 2.1 us;
* the block scheduler's dispatch rate: empty kernels of 16,896 and 135,168 CTAs of 32
  threads, CUDA events, median of 10 each: the difference in seconds times the SM clock over
  the difference in CTAs (on the H100 1.19 cycles per CTA, as ``ncu``'s
  ``sm__cycles_elapsed.avg`` of the same grids gives: ``validation/reports/h100/launch_overhead``).
  The launch overhead itself is shorter than the events' resolution and needs ``ncu``
  (``validation/probes/launch_overhead.py``);
* the L2's throughputs, where ``ncu`` is found: ``sm__cycles_elapsed.avg`` of the probes' launches
  that measured them on the H100 (:data:`L2_RATE_LAUNCHES`), the second of two launches each, as the
  probes ran them (ncu flushes the caches before each launch it profiles, here as on the H100):
  ``validation/probes/random_access.py``'s L2-resident ones at 4 MiB (8 CTAs of 256 threads per SM,
  16 independent 4-byte accesses a thread at hashed words, one request each: loads, stores,
  ``red.add``, ``atom.cas``) for the request rates, and ``validation/probes/l2_bandwidth.py``'s at
  8 MiB (16-byte ``cp.async.cg`` reads, ``st.global.cg`` stores, a copy of both) for the byte rates.
  Each becomes the H100's value times the H100's cycles over this GPU's, both less their empty kernel's.

The override file is TOML::

    base = "h100"                      # the shipped config it modifies
    [overrides]                        # dotted field paths -> measured values
    "shared.latency_cycles" = 23
    [sources]                          # how each value was measured
    "shared.latency_cycles" = "..."
    [measurements]                     # the raw numbers

and is used as ``gpusim.Device(base, overrides=read_overrides(path)[1])`` or
``gpusim validate --config-overrides path``.

Imports cupy only inside :func:`measure`; must not import gpusim's engines or simpy.
"""

from __future__ import annotations

import json
import operator
import os
import pathlib
import statistics
import tomllib
from typing import Callable

from gpusim.errors import GpusimError
from validation import gpu as gpu_mod

__all__ = ["KERNELS", "FIELDS", "measure", "overrides_from", "write_overrides", "read_overrides"]

KERNELS = r"""
// pointer chases: each element holds the address of the next, so a step is one load and no
// arithmetic (ld.global.ca.u64 / ld.global.cg.u64 / ld.shared.u32 [r] -> r)
extern "C" __global__ void chase_ca(const unsigned long long* start, int steps, int warm,
                                    long long* cycles, unsigned long long* sink) {
    const unsigned long long* p = start;
    for (int i = 0; i < warm; ++i) p = (const unsigned long long*)__ldca(p);
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) p = (const unsigned long long*)__ldca(p);
    long long t1 = clock64();
    cycles[0] = t1 - t0; sink[0] = (unsigned long long)p;
}
extern "C" __global__ void chase_cg(const unsigned long long* start, int steps, int warm,
                                    long long* cycles, unsigned long long* sink) {
    const unsigned long long* p = start;
    for (int i = 0; i < warm; ++i) p = (const unsigned long long*)__ldcg(p);
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) p = (const unsigned long long*)__ldcg(p);
    long long t1 = clock64();
    cycles[0] = t1 - t0; sink[0] = (unsigned long long)p;
}
extern "C" __global__ void chase_shared(const unsigned int* __restrict__ next, int n, int steps,
                                        long long* cycles, unsigned long long* sink) {
    extern __shared__ unsigned int s[];
    for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = (unsigned int)__cvta_generic_to_shared(&s[next[i]]);
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned int a = (unsigned int)__cvta_generic_to_shared(&s[0]);
        long long t0 = clock64();
        for (int i = 0; i < steps; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a));
        long long t1 = clock64();
        cycles[0] = t1 - t0; sink[0] = a;
    }
}
extern "C" __global__ void fma_chain(float* x, int steps, long long* cycles) {
    float a = x[0], b = x[1], c = x[2];
    long long t0 = clock64();
    #pragma unroll 32
    for (int i = 0; i < steps; ++i) a = fmaf(a, b, c);
    long long t1 = clock64();
    x[3] = a; cycles[0] = t1 - t0;
}
// Little's law: each warp keeps one coalesced 128-byte load in flight (the next index is the load)
extern "C" __global__ void stream_chase(const int* __restrict__ next, int steps, int* sink) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int s = 0; s < steps; ++s) i = __ldcg(next + i);
    if (i < 0) sink[0] = i;
}
// read bandwidth: coalesced float4 loads, grid-stride; one word written (never, in practice)
extern "C" __global__ void read_stream(const float4* __restrict__ a, long long n4, float* sink) {
    float acc = 0.f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
        float4 v = __ldcg(a + i);
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == -1.f) sink[0] = acc;
}
// nothing: a grid of these measures the block scheduler's dispatch rate
extern "C" __global__ void empty() {}
"""

#: ``sm__cycles_elapsed.avg`` of an empty kernel of one 32-thread CTA on the H100
#: (validation/reports/h100/launch_overhead/empty_ncu.csv), where the shipped
#: ``launch_overhead_cycles`` (4,400) was fitted; calibrate moves the overhead by the difference.
H100_EMPTY_KERNEL_CYCLES = 4201.65
H100_LAUNCH_OVERHEAD_CYCLES = 4400
#: ``dram_chase_cycles`` measured on the H100 (validation/reports/h100/calibrate_h100.json), where the
#: shipped ``dram.latency_cycles`` (570: a miss of a line homed near, validation/probes/far_hit.py) was
#: measured; the chase also holds far homes and TLB misses, so calibrate moves the latency by the difference.
H100_DRAM_CHASE_CYCLES = 698.07
H100_DRAM_LATENCY_CYCLES = 570
#: (probe, launch label) -> (the L2 throughput it decides, the H100's ``sm__cycles_elapsed.avg`` of it:
#: validation/reports/h100/random_access/random_access.csv, l2_bandwidth/l2_bandwidth.csv, l2_writes.csv).
#: Each launch holds that throughput's limit on the H100 (configs/h100.toml's sources).
L2_RATE_LAUNCHES = {("random_access", "rd_rand 4 MiB"): ("l2.read_requests_per_cycle", 69378.02),
                    ("random_access", "wr_rand 4 MiB"): ("l2.write_requests_per_cycle", 136275.2),
                    ("random_access", "red_rand 4 MiB"): ("l2.atomic_requests_per_cycle", 101836.05),
                    ("random_access", "cas_rand 4 MiB"): ("l2.atomic_return_requests_per_cycle", 134673.83),
                    ("l2_bandwidth", "cpasync S8MiB"): ("l2.bandwidth_bytes_per_s", 78440.33),
                    ("l2_bandwidth", "stcg S8MiB"): ("l2.write_data_bytes_per_s", 137534.32),
                    ("l2_bandwidth", "copycg S8MiB"): ("l2.write_bandwidth_bytes_per_s", 177884.5)}
#: CTAs of 256 threads per SM of the loaded-latency runs.
LOADED_CTAS_PER_SM = (1, 2, 4, 8)


def _l2_key(label: str) -> str:
    """The measurement key of an :data:`L2_RATE_LAUNCHES` launch: ``rd_rand 4 MiB`` -> ``rd_rand_4_mib_cycles``."""
    return label.lower().replace(" ", "_") + "_cycles"


#: configuration field -> (measurement key, how the value is derived)
FIELDS = {
    "shared.latency_cycles": ("shared_chase_cycles", "ld.shared pointer chase, 4 KiB ring"),
    "l1.latency_cycles": ("l1_chase_cycles", "__ldca pointer chase, 16 KiB ring after a warm pass (L1 hits)"),
    "l2.latency_cycles": ("l2_chase_cycles", "__ldcg pointer chase, 4 MiB ring after a warm pass (L2 hits)"),
    "dram.latency_cycles": ("dram_chase_cycles", "__ldcg chase of a random ring of 128 B lines over 1 GiB, L2 "
                                                 "flushed by writing 2x its size first (TLB misses and far homes "
                                                 "included): the H100's 570 plus the difference from its chase's 698"),
    "sm.units.fma.latency": ("fma_chain_cycles", "chain of 4096 dependent fmaf"),
    "dram.bandwidth_bytes_per_s": ("dram_peak_bytes_per_s", "2 x memoryClockRate x memoryBusWidth / 8 (device "
                                                            "attributes)"),
    "dram.bus_width_bits": ("memory_bus_width_bits", "memoryBusWidth"),
    "dram.efficiency": ("copy_bytes_per_s", "1 GiB device-to-device copy, (read + written bytes) / median "
                                            "CUDA-event time of 10, over the peak bandwidth"),
    "dram.read_efficiency": ("read_bytes_per_s", "1 GiB read by coalesced float4 __ldcg loads, 8 CTAs of 256 threads "
                                                 "per SM, bytes / median CUDA-event time of 10, over the peak bandwidth"),
    "clock_hz": ("clock_hz", "cudaDevAttrClockRate (maximum SM clock)"),
    "dram.latency_clock_hz": ("clock_hz", "the SM clock the DRAM chase's and loaded-latency cycles were counted at "
                                          "(cudaDevAttrClockRate): a clock what-if keeps DRAM's latency in ns"),
    "sm_count": ("sm_count", "multiProcessorCount"),
    "l2.size_bytes": ("l2_bytes", "l2CacheSize"),
    "cta_dispatch_cycles": ("cta_dispatch_cycles", "empty kernels of 16,896 and 135,168 32-thread CTAs: "
                                                   "difference of median CUDA-event times x SM clock / 118,272 CTAs"),
    "dram.queue_cycles": ("loaded_latency", "Little's law, one 128 B __ldcg in flight a warp at 1-8 CTAs of 256 "
                                            "threads per SM: slope of the round trip over u/(1-u), u of the peak"),
    "launch_overhead_cycles": ("empty_kernel_cycles", "ncu sm__cycles_elapsed.avg of an empty 1-CTA kernel: the "
                                                      "H100's 4,400 cycles plus the difference from the H100's 4,202"),
    **{field: (_l2_key(label), f"ncu sm__cycles_elapsed.avg of {probe}.py's '{label}' (L2 hits, 8 CTAs of 256 a "
                               f"SM): the H100's value x its {h100:,.0f} cycles over this GPU's, both less their "
                               "empty kernel's")
       for (probe, label), (field, h100) in L2_RATE_LAUNCHES.items()},
}

_ROUND = {**{field: (lambda v: round(v, 1)) if "requests" in field else (lambda v: float(f"{v:.4g}"))
             for field, _ in L2_RATE_LAUNCHES.values()},
          "clock_hz": int, "dram.latency_clock_hz": float, "sm_count": int, "l2.size_bytes": int,
          "dram.bandwidth_bytes_per_s": lambda v: float(f"{v:.4g}"),
          "dram.efficiency": lambda v: round(v, 3), "dram.read_efficiency": lambda v: round(v, 3),
          "cta_dispatch_cycles": lambda v: round(v, 2)}


def measure(repeat: int = 5, progress: Callable[[str], None] = print) -> dict:
    """Run the micro-benchmarks on GPU 0; return {measurement key: value, "provenance": {...}}.

    Raises :class:`validation.gpu.GpuUnavailable` without CuPy or a GPU. Chase results are
    cycles per dependent load (``clock64`` of one thread; the loop counter runs beside the
    chain, so a step costs one load's latency); ``copy_bytes_per_s`` is bytes read + written per second.
    """
    cp = gpu_mod.require_cupy("calibration measures the GPU it runs on, so it needs one (and CuPy: pip install "
                              "'gpusim[gpu]'); the H100's result is validation/reports/h100/calibrate_h100.toml")
    mod = cp.RawModule(code=KERNELS)
    cycles = cp.zeros(1, cp.int64)
    res: dict = {"provenance": gpu_mod.provenance(cp, None), "repeat": repeat}
    props = cp.cuda.runtime.getDeviceProperties(0)
    res["clock_hz"] = int(props["clockRate"]) * 1000
    res["sm_count"] = int(props["multiProcessorCount"])
    res["l2_bytes"] = int(props["l2CacheSize"])
    res["memory_clock_khz"] = int(props["memoryClockRate"])
    res["memory_bus_width_bits"] = int(props["memoryBusWidth"])
    res["dram_peak_bytes_per_s"] = 2 * res["memory_clock_khz"] * 1e3 * res["memory_bus_width_bits"] / 8

    def med(run) -> float:
        vals = []
        for _ in range(repeat):
            run()
            cp.cuda.Device().synchronize()
            vals.append(int(cycles.get()[0]))
        return float(statistics.median(vals))

    def ring(words: int, stride_words: int):
        idx = cp.arange(words, dtype=cp.uint32)
        return ((idx + stride_words) % words).astype(cp.uint32)

    def pointer_ring(nxt):
        """uint64 array whose element i holds the address of element nxt[i]."""
        arr = cp.empty(nxt.size, cp.uint64)
        arr[...] = cp.uint64(arr.data.ptr) + nxt.astype(cp.uint64) * cp.uint64(8)
        return arr

    sink64 = cp.zeros(1, cp.uint64)
    steps = 4096
    # shared memory: 4 KiB ring, stride 33 words (every bank, no pattern the compiler can use)
    n_sh = 1024
    f = mod.get_function("chase_shared")
    res["shared_chase_cycles"] = med(lambda: f((1,), (32,), (ring(n_sh, 33), cp.int32(n_sh), cp.int32(steps), cycles,
                                                             sink64), shared_mem=n_sh * 4)) / steps
    progress(f"shared chase: {res['shared_chase_cycles']:.1f} cycles/load")
    # L1: 16 KiB ring of 8-byte pointers, 128-byte stride (128 lines), warm pass first
    l1 = pointer_ring(ring(2048, 16))
    f = mod.get_function("chase_ca")
    res["l1_chase_cycles"] = med(lambda: f((1,), (1,), (l1, cp.int32(steps), cp.int32(steps), cycles, sink64))) / steps
    progress(f"L1 chase: {res['l1_chase_cycles']:.1f} cycles/load")
    # L2: 4 MiB ring, 128-byte stride (32768 lines); a warm pass over the whole ring
    l2 = pointer_ring(ring(1 << 19, 16))
    f = mod.get_function("chase_cg")
    warm = (1 << 19) // 16
    res["l2_chase_cycles"] = med(lambda: f((1,), (1,), (l2, cp.int32(steps), cp.int32(warm), cycles, sink64))) / steps
    progress(f"L2 chase: {res['l2_chase_cycles']:.1f} cycles/load")
    # DRAM: random ring of 128-byte lines over 1 GiB
    lines = (1 << 30) // 128
    perm = cp.random.RandomState(0).permutation(lines).astype(cp.uint64)
    nxt = cp.zeros(lines * 16, cp.uint64)
    nxt[perm * 16] = cp.uint64(nxt.data.ptr) + cp.roll(perm, -1) * cp.uint64(128)
    start_ptr = int(perm[0]) * 128
    del perm
    flush = cp.empty(max(2 * res["l2_bytes"], 1 << 26) // 4, cp.float32)
    dram_steps = 2048
    start = nxt[start_ptr // 8:]

    def dram():
        flush.fill(1.0)
        f((1,), (1,), (start, cp.int32(dram_steps), cp.int32(0), cycles, sink64))

    res["dram_chase_cycles"] = med(dram) / dram_steps
    progress(f"DRAM chase: {res['dram_chase_cycles']:.1f} cycles/load")
    # dependent FMA chain
    x = cp.asarray([1.0, 0.999999, 1e-7, 0.0], cp.float32)
    fma_steps = 4096
    f = mod.get_function("fma_chain")
    res["fma_chain_cycles"] = med(lambda: f((1,), (1,), (x, cp.int32(fma_steps), cycles))) / fma_steps
    progress(f"dependent FMA: {res['fma_chain_cycles']:.2f} cycles")
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def event_seconds(run) -> float:
        """Median CUDA-event time of 10 runs of ``run`` after 3 warm-ups, seconds."""
        for _ in range(3):
            run()
        times = []
        for _ in range(10):
            start.record()
            run()
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
        return statistics.median(times)

    # copy bandwidth
    nbytes = 1 << 30
    a = cp.ones(nbytes // 4, cp.float32)
    b = cp.empty_like(a)
    res["copy_seconds_median"] = event_seconds(lambda: b.__setitem__(Ellipsis, a))
    res["copy_bytes_per_s"] = 2 * nbytes / res["copy_seconds_median"]
    progress(f"copy: {res['copy_bytes_per_s'] / 1e12:.3f} TB/s (read + write), peak "
             f"{res['dram_peak_bytes_per_s'] / 1e12:.3f} TB/s")
    f = mod.get_function("read_stream")
    sink_f = cp.zeros(1, cp.float32)
    read_grid = res["sm_count"] * 8
    secs = event_seconds(lambda: f((read_grid,), (256,), (a, cp.int64(a.size // 4), sink_f)))
    res["read_bytes_per_s"] = nbytes / secs
    progress(f"read: {res['read_bytes_per_s'] / 1e12:.3f} TB/s")
    # DRAM's loaded latency: 1 GiB ring, each warp one 128-byte load in flight
    f = mod.get_function("stream_chase")
    words = 1 << 28
    sink32 = cp.zeros(1, cp.int32)
    res["loaded_latency"] = []
    for b in LOADED_CTAS_PER_SM:
        threads = res["sm_count"] * b * 256
        nxt = ((cp.arange(words, dtype=cp.int64) + threads) % words).astype(cp.int32)
        steps = words // threads
        grid = res["sm_count"] * b
        secs = event_seconds(lambda g=grid, a=nxt, k=steps: f((g,), (256,), (a, cp.int32(k), sink32)))
        rate = threads * steps * 4 / secs
        point = {"ctas_per_sm": b, "seconds": secs, "bytes_per_s": rate,
                 "latency_cycles": threads // 32 * 128 / rate * res["clock_hz"]}
        res["loaded_latency"].append(point)
        progress(f"loaded latency, {b} CTAs/SM: {rate / 1e12:.3f} TB/s, {point['latency_cycles']:.0f} cycles a round trip")
    # the launch overhead and the block scheduler: empty grids of 1 CTA, and of 128 and 1,024
    # 32-thread CTAs per SM of the H100
    f = mod.get_function("empty")
    res["empty_kernel_cycles"] = _empty_kernel_cycles(progress)
    res.update(_l2_rate_cycles(progress))
    grids = (16_896, 135_168)
    secs = [event_seconds(lambda g=g: f((g,), (32,), ())) for g in grids]
    res["empty_grid_seconds"] = dict(zip(map(str, grids), secs))
    res["cta_dispatch_cycles"] = (secs[1] - secs[0]) * res["clock_hz"] / (grids[1] - grids[0])
    progress(f"block scheduler: {res['cta_dispatch_cycles']:.2f} cycles per CTA")
    return res


_EMPTY_LAUNCHES = """
import cupy
f = cupy.RawModule(code='extern "C" __global__ void empty() {}').get_function("empty")
for _ in range(5):
    f((1,), (32,), ())
cupy.cuda.Device().synchronize()
"""


def _empty_kernel_cycles(progress: Callable[[str], None]) -> float | None:
    """Median ``sm__cycles_elapsed.avg`` of 5 empty 1-CTA kernels under ``ncu`` (clocks untouched),
    or ``None`` (with a message) where ncu is missing or fails."""
    got = _ncu_cycles(_EMPTY_LAUNCHES, ("empty",), progress, "launch overhead")
    if got is None:
        return None
    value = statistics.median(got["empty"])
    progress(f"empty kernel under ncu: {value:.0f} cycles")
    return value


_L2_RATE_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
import cupy, numpy as np
from validation.probekit import load_probe
ra, lb = load_probe("random_access"), load_probe("l2_bandwidth")
sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
mra, mlb = cupy.RawModule(code=ra.CODE), cupy.RawModule(code=lb.CODE, options=("-std=c++17",))
src, dst = cupy.zeros(max(lb.WRITE_SIZES) // 4, cupy.uint32), cupy.zeros(max(lb.WRITE_SIZES) // 4, cupy.uint32)
out = cupy.zeros(sms * ra.CTAS_PER_SM * ra.BLOCK, cupy.uint32)
want = {labels!r}
for label, k, fp, mask, iters, ctas in ra.launches(sms):
    if label in want:
        for _ in range(2):
            mra.get_function(k)((ctas,), (ra.BLOCK,), (src, np.uint32(mask), np.uint32(iters), out))
for label, k, size, ctas in lb.launches(sms, writes=True):
    if label in want:
        for _ in range(2):
            mlb.get_function(k)((ctas,), (lb.BLOCK,), (src, out if k == "cpasync" else dst,
                                                      np.uint32(size // 16 - 1), np.uint32(lb.STEPS)))
cupy.cuda.Device().synchronize()
"""


def _ncu_cycles(script: str, kernels: tuple[str, ...], progress: Callable[[str], None], what: str) -> dict | None:
    """{kernel: ``sm__cycles_elapsed.avg`` of each launch} of ``script`` (Python) run under ``ncu``
    (clocks untouched), or ``None`` (with a message) where ncu is missing or fails."""
    import subprocess
    import sys

    from validation.ncu import find_ncu, metric_by_launch

    ncu = find_ncu()
    if ncu is None:
        progress(f"{what}: not measured (needs Nsight Compute's ncu on PATH)")
        return None
    cmd = [ncu, "--clock-control", "none", "--metrics", "sm__cycles_elapsed.avg", "--csv", "--page", "raw",
           "--print-units", "base", sys.executable, "-c", script]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    out = {k: metric_by_launch(done.stdout, "sm__cycles_elapsed.avg", k) if done.returncode == 0 else []
           for k in kernels}
    if not all(out.values()):
        progress(f"{what}: not measured (ncu failed: {done.stderr.strip()[-300:]})")
        return None
    return out


def _l2_rate_cycles(progress: Callable[[str], None]) -> dict:
    """{measurement key: ncu cycles of the second of two launches} for :data:`L2_RATE_LAUNCHES`
    (as the probes' H100 rows were taken), or {} where ncu is missing or fails."""
    labels = [label for _, label in L2_RATE_LAUNCHES]
    kernels = tuple(label.split()[0] for label in labels)
    root = str(pathlib.Path(__file__).resolve().parents[1])
    got = _ncu_cycles(_L2_RATE_SCRIPT.format(root=root, labels=set(labels)), kernels, progress, "L2 throughputs")
    if got is None:
        return {}
    res = {_l2_key(label): got[k][-1] for label, k in zip(labels, kernels)}
    progress("L2 throughputs: " + ", ".join(f"{label} {res[_l2_key(label)]:,.0f}" for label in labels) + " cycles")
    return res


def overrides_from(measured: dict, base: str = "h100") -> dict:
    """{dotted config path: value} from :func:`measure`'s result (latencies rounded to cycles; the
    copy and read rates as fractions of the measured peak DRAM bandwidth, or of ``base``'s where
    the result has none (files from before the peak was measured), at most 1; the L2's request rates
    and throughputs as the H100's scaled by :data:`L2_RATE_LAUNCHES`' cycles, only where the empty kernel
    was measured)."""
    from gpusim import config as gpu_config

    peak = measured.get("dram_peak_bytes_per_s") or gpu_config.load(base).dram.bandwidth_bytes_per_s
    derived = {"dram.efficiency": lambda v: min(1.0, v / peak),
               "dram.read_efficiency": lambda v: min(1.0, v / peak),
               "dram.queue_cycles": lambda v: fit_queue_cycles(v, peak)[1],
               "launch_overhead_cycles": lambda v: H100_LAUNCH_OVERHEAD_CYCLES + v - H100_EMPTY_KERNEL_CYCLES,
               "dram.latency_cycles": lambda v: H100_DRAM_LATENCY_CYCLES + v - H100_DRAM_CHASE_CYCLES}
    empty, h100_cfg = measured.get("empty_kernel_cycles"), gpu_config.load("h100")
    for field, h100 in L2_RATE_LAUNCHES.values():   # a rate needs this GPU's empty kernel too
        rate = operator.attrgetter(field)(h100_cfg)
        derived[field] = lambda v, r=rate, c=h100: (
            r * (c - H100_EMPTY_KERNEL_CYCLES) / (v - empty) if empty else None)
    out = {}
    for path, (key, _) in FIELDS.items():
        if key in measured and measured[key] is not None:
            value = derived[path](measured[key]) if path in derived else measured[key]
            if value is not None:
                out[path] = _ROUND.get(path, lambda v: int(round(v)))(value)
    if not {"dram.latency_cycles", "dram.queue_cycles"} & out.keys():
        out.pop("dram.latency_clock_hz", None)  # the base's latencies keep the base's clock
    return out


def fit_queue_cycles(points: list[dict], peak: float) -> tuple[float, float]:
    """(intercept, slope) in cycles of the least-squares line ``latency = a + q x u / (1 - u)``
    through the loaded-latency points (``bytes_per_s``, ``latency_cycles``), ``u`` the share of
    ``peak`` (bytes / s) used, capped at 0.95 as in the timing model; ``q >= 0``."""
    xs = [min(p["bytes_per_s"] / peak, 0.95) for p in points]
    xs = [u / (1 - u) for u in xs]
    ys = [p["latency_cycles"] for p in points]
    q, a = statistics.linear_regression(xs, ys)
    return a, max(0.0, q)


def _toml_value(v) -> str:
    return json.dumps(v) if isinstance(v, str) else repr(v) if isinstance(v, float) else str(v)


def write_overrides(path: str | os.PathLike, measured: dict, base: str = "h100", *, force: bool = False) -> pathlib.Path:
    """Write the override TOML for ``measured`` (see the module doc); return its path.

    Refuses (:class:`GpusimError`) to replace an existing file unless ``force``. The values
    are checked against the config schema by applying them to ``base`` first.
    """
    from gpusim import config as gpu_config

    p = pathlib.Path(path)
    if p.exists() and not force:
        raise GpusimError(f"--out {p}: the file exists; pass --force to replace it")
    ov = overrides_from(measured, base)
    gpu_config.load(base).with_overrides(ov)  # raises ConfigError naming the field if one is off
    prov = measured.get("provenance", {})
    lines = [f"# gpusim calibrate: config overrides measured on {prov.get('gpu_name')} "
             f"({prov.get('time_utc')}), driver {prov.get('driver_version')}, CUDA runtime "
             f"{prov.get('cuda_runtime_version')}, CuPy {prov.get('cupy_version')}, gpusim "
             f"{prov.get('gpusim_version')} {prov.get('gpusim_commit')}.",
             "# Use: gpusim.Device(base, overrides=validation.calibrate.read_overrides(this_file)[1])",
             f"base = {json.dumps(base)}", "", "[overrides]"]
    lines += [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in ov.items()]
    lines += ["", "[sources]"]
    lines += [f"{json.dumps(k)} = {json.dumps('MEAS ' + FIELDS[k][1])}" for k in ov]
    lines += ["", "[measurements]"]
    lines += [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in measured.items()
              if isinstance(v, (int, float)) and not isinstance(v, bool)]
    lines += ["", "[provenance]"]
    lines += [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in prov.items() if isinstance(v, (str, int, float))]
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n")
    tomllib.loads(p.read_text())  # what we wrote must read back
    return p


def read_overrides(path: str | os.PathLike) -> tuple[str, dict]:
    """(base config name, {dotted path: value}) of an override file written by :func:`write_overrides`.

    Raises :class:`GpusimError` naming the file when it is missing, not TOML, or lacks
    ``base``/``[overrides]``.
    """
    p = pathlib.Path(path)
    try:
        data = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise GpusimError(f"{p}: no such override file") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise GpusimError(f"{p}: not a readable TOML override file ({exc})") from None
    if not isinstance(data.get("base"), str) or not isinstance(data.get("overrides"), dict):
        raise GpusimError(f"{p}: an override file needs base = \"<config>\" and an [overrides] table "
                          "(written by 'gpusim calibrate')")
    return data["base"], dict(data["overrides"])
