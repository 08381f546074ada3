"""GPU probe: do a stream's DRAM bytes add to random reads' time, or pass beside their row activations?

The corpus's ``gather`` (fit half, ``out[i] = x[idx[i]]`` over 64 MiB) takes the H100 757k cycles: its
11.9M random 64-byte DRAM reads at ``random_access.py``'s rate (32.4 ps each, ``rd_rand`` at 1 GiB),
as if its 64 MiB read of ``idx`` and 64 MiB write of ``out`` cost nothing; gpusim, whose DRAM server
adds each read's row activation to the bytes it moves, gives +19.7 %. This probe mixes the two:
every thread of a GPU-filling grid (8 CTAs of 256 threads an SM) makes ``ITERS`` random 4-byte loads
over ``F`` bytes (``random_access.py``'s ``rd_rand``, the same hash), each followed by ``sw`` 16-byte
accesses of a coalesced stream (element ``(i sw + j) T + t`` of thread ``t`` of ``T``): 16 ``sw`` stream
bytes a random read, read (``rs_read``) or written (``rs_write``, values that do not depend on the
random loads).

* ``rand`` (F = 1 GiB, no stream): the random reads alone;
* ``rand + read B`` / ``rand + write B``: B stream bytes a random read (16-128);
* ``hit + read B`` / ``hit + write B``: the same streams with F = 4 MiB (the random loads hit the L2):
  the stream alone.

If the stream's bytes pass beside the activations, ``rand + read B`` takes about the longer of
``rand`` and ``hit + read B``; if they add, about the sum of their DRAM parts.

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,gpu__time_duration.sum,dram__bytes_read.sum,\\
        dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum \\
        --csv --page raw --print-units base --log-file $OUT/random_stream.csv \\
        python3 validation/probes/random_stream.py | tee $OUT/random_stream_log.txt

(each launch twice: the warm-up rows come first). gpusim's side, sampled as the corpus is::

    python3 validation/probes/random_stream.py sim random_stream.csv OUT.json [--jobs N] [--set FIELD=VALUE ...]

Needs CuPy (the GPU side) or gpusim (``sim``); ``CODE`` and :func:`launches` import anywhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.probekit import MIX_CU  # noqa: E402

CODE = MIX_CU + r"""
// Thread t of T: iters random loads x[mix(t iters + i) & mask], each followed by sw coalesced
// 16-byte loads of s (element (i sw + j) T + t); the sum is stored once.
extern "C" __global__ void rs_read(const unsigned* __restrict__ x, unsigned mask, const uint4* __restrict__ s,
                                   unsigned sw, unsigned iters, unsigned* __restrict__ out)
{
    unsigned T = gridDim.x * blockDim.x, t = blockIdx.x * blockDim.x + threadIdx.x, a = 0;
    for (unsigned i = 0; i < iters; ++i) {
        a += x[mix(t * iters + i) & mask];
        for (unsigned j = 0; j < sw; ++j) {
            uint4 v = s[(size_t)(i * sw + j) * T + t];
            a += v.x ^ v.y ^ v.z ^ v.w;
        }
    }
    out[t] = a;
}

// The same with sw coalesced 16-byte stores after each random load (their values independent of it).
extern "C" __global__ void rs_write(const unsigned* __restrict__ x, unsigned mask, uint4* __restrict__ s,
                                    unsigned sw, unsigned iters, unsigned* __restrict__ out)
{
    unsigned T = gridDim.x * blockDim.x, t = blockIdx.x * blockDim.x + threadIdx.x, a = 0;
    for (unsigned i = 0; i < iters; ++i) {
        a += x[mix(t * iters + i) & mask];
        for (unsigned j = 0; j < sw; ++j)
            s[(size_t)(i * sw + j) * T + t] = make_uint4(i, j, t, mask);
    }
    out[t] = a;
}
"""

BLOCK = 256
CTAS_PER_SM = 8
ITERS = 16
RAND_BYTES = 1 << 30    #: the random loads' footprint (random_access.py's rd_rand at 1 GiB)
HIT_BYTES = 4 << 20     #: a footprint the L2 holds: the stream alone
#: (label, kernel, footprint bytes, sw) in launch order
LAUNCHES = ([("rand", "rs_read", RAND_BYTES, 0)]
            + [(f"rand + read {16 * w} B", "rs_read", RAND_BYTES, w) for w in (1, 2, 4, 8)]
            + [(f"hit + read {16 * w} B", "rs_read", HIT_BYTES, w) for w in (2, 4, 8)]
            + [(f"rand + write {16 * w} B", "rs_write", RAND_BYTES, w) for w in (2, 4)]
            + [(f"hit + write {16 * w} B", "rs_write", HIT_BYTES, w) for w in (2, 4)])
SW_MAX = max(w for *_, w in LAUNCHES)
COUNTERS = {"cycles": "sm__cycles_elapsed.avg", "dram_read_bytes": "dram__bytes_read.sum",
            "dram_write_bytes": "dram__bytes_write.sum", "l2_read_sectors": "lts__t_sectors_op_read.sum",
            "l2_write_sectors": "lts__t_sectors_op_write.sum"}


def _buffers(xp, ctas: int):
    """(x: RAND_BYTES of random words, s: the stream for SW_MAX, out); numpy's seed 0."""
    import numpy as np

    words = RAND_BYTES // 4
    x = xp.asarray(np.random.default_rng(0).integers(0, 1 << 32, words, dtype=np.uint32))
    threads = ctas * BLOCK
    s = xp.zeros(threads * ITERS * SW_MAX * 4, np.uint32)
    return x, s, xp.zeros(threads, np.uint32)


def _launch(xp, label: str, ctas: int, bufs):
    import numpy as np

    _, kernel, footprint, sw = next(x for x in LAUNCHES if x[0] == label)
    f = xp.RawModule(code=CODE).get_function(kernel)
    x, s, out = bufs
    return f((ctas,), (BLOCK,), (x, np.uint32(footprint // 4 - 1), s, np.uint32(sw), np.uint32(ITERS), out))


def main() -> None:
    import cupy

    ctas = cupy.cuda.Device().attributes["MultiProcessorCount"] * CTAS_PER_SM
    bufs = _buffers(cupy, ctas)
    for label, *_ in LAUNCHES:
        for _ in range(2):
            _launch(cupy, label, ctas, bufs)
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """The ncu CSV's measured rows (the second of each launch), by label: :data:`COUNTERS`."""
    from validation.probekit import counter_rows

    return counter_rows(path, ("rs_read", "rs_write"), [lab for lab, *_ in LAUNCHES],
                        {k: (m,) for k, m in COUNTERS.items()})


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch on gpusim in timing mode, the GPU's launch shape (132 x 8 CTAs)."""
    import time

    import gpusim

    t0 = time.perf_counter()
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs):
        ctas = 132 * CTAS_PER_SM
        res = _launch(gpusim, label, ctas, _buffers(gpusim, ctas))
    m = res.metrics
    return {k: float(m[v]) for k, v in COUNTERS.items()} | {
        "timed": str(res.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}


if __name__ == "__main__":
    from validation.probekit import probe_main

    probe_main("random_stream.py", sys.argv[1:], main, gpu_rows, simulate, ("dram_read_bytes", "DRAM read bytes"))
