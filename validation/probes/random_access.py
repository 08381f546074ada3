"""GPU probe: what random (irregular) global accesses cost, by footprint, from 4 MiB to 8 GiB.

The generalization corpus's irregular kernels (``validation/corpus``: hash inserts, BFS, gather,
scatter; fit half) run 26-68 % faster in gpusim than on the H100. gpusim prices a random access
as an L2 lookup, and a miss as a 64-byte DRAM access at the streaming rate; it has no TLB, no
DRAM row locality and no read-for-partial-write. This probe measures each access kind by its
footprint ``F`` (a power of two: 4, 16, 32, 64, 256 MiB, 1, 4, 8 GiB), every thread of a
GPU-filling grid (8 CTAs of 256 threads per SM) making ``ITERS`` independent accesses at
``hash(thread, i) mod F`` (a 32-bit integer mix, the same on both sides):

* ``rd_rand``: 4-byte loads, one sector per lane (every lane its own line);
* ``rd_line``: a warp loads one random 128-byte line (lane ``l`` word ``l``: one request, four sectors);
* ``wr_rand``: 4-byte stores (a partial sector each);
* ``wr_line``: a warp stores one whole random line;
* ``red_rand``: ``atomicAdd`` with the result unused (``red.global.add.u32``);
* ``cas_rand``: ``atomicCAS`` with the old value kept (``atom.global.cas.b32``), as hash inserts do;
* ``rd_mod``, ``wr_mod``: ``rd_rand`` and ``wr_rand`` at ``hash mod words``, over 8-48 MiB (where
  the L2 starts to miss);
* ``rdwr_rand``, ``caswr_rand``, ``rdred_rand`` (at 4 MiB and 1 GiB): two kinds an iteration, at
  independent words: whether the kinds share the L2's request handling (time of the sum) or not
  (time of the slower);
* ``chase``: one thread following a chain of ``CHASE_NODES`` nodes, node ``j`` in the ``j``-th
  ``F / CHASE_NODES`` bytes at a hashed 128-byte line of them, visited in a full-period
  congruential order (``j -> (A j + C) mod CHASE_NODES``): ``chase_cold`` walks it once (every
  load misses the L2), ``chase`` five times; their difference over ``4 x CHASE_NODES`` is the
  latency of one L2-resident ``ld.global.cg`` at footprint ``F``, with nothing else in flight -- its growth
  with ``F`` is the TLB's (the nodes are 2 KiB apart at 4 MiB, on separate 2 MiB pages from 4 GiB).

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,gpu__time_duration.sum,\\
        lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_op_read.sum,lts__t_sector_op_read_hit_rate.pct,\\
        lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_op_write.sum,\\
        lts__t_requests_srcunit_tex_op_atom.sum,lts__t_requests_srcunit_tex_op_red.sum,\\
        dram__bytes_read.sum,dram__bytes_write.sum \\
        --csv --page raw --print-units base --log-file $OUT/random_access.csv \\
        python3 validation/probes/random_access.py | tee $OUT/random_access_log.txt

The launches are listed in order on stdout (``launch LABEL``); ncu's rows of the probe's kernels
follow that order (the chains' set-up adds CuPy kernels, which :func:`gpu_rows` leaves out). Needs CuPy only (``CODE`` and :func:`launches`
import anywhere).

The same launches on gpusim (timing mode, same shapes; footprints over ``SIM_MAX_BYTES`` are
not simulated: gpusim has no footprint-dependent mechanism beyond the L2's capacity)::

    python3 validation/probes/random_access.py sim random_access.csv OUT.json [--labels ...] [--jobs N]
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.probekit import MIX_CU  # noqa: E402

CODE = MIX_CU + r"""
// Thread t loads x[mix(t * iters + i) & mask], i < iters (independent loads, summed).
extern "C" __global__ void rd_rand(const unsigned* x, unsigned mask, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, s = 0;
    for (unsigned i = 0; i < iters; ++i)
        s += x[mix(t * iters + i) & mask];
    out[t] = s;
}

// Warp w loads line mix(w * iters + i) & lmask, lane l its word l.
extern "C" __global__ void rd_line(const unsigned* x, unsigned lmask, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, w = t >> 5, s = 0;
    for (unsigned i = 0; i < iters; ++i)
        s += x[(size_t)(mix(w * iters + i) & lmask) * 32 + (t & 31)];
    out[t] = s;
}

// Thread t stores t at x[mix(t * iters + i) & mask].
extern "C" __global__ void wr_rand(unsigned* x, unsigned mask, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned i = 0; i < iters; ++i)
        x[mix(t * iters + i) & mask] = t;
}

// Warp w stores a whole random line.
extern "C" __global__ void wr_line(unsigned* x, unsigned lmask, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, w = t >> 5;
    for (unsigned i = 0; i < iters; ++i)
        x[(size_t)(mix(w * iters + i) & lmask) * 32 + (t & 31)] = t;
}

// red.global.add.u32 at random words.
extern "C" __global__ void red_rand(unsigned* x, unsigned mask, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned i = 0; i < iters; ++i)
        atomicAdd(&x[mix(t * iters + i) & mask], 1u);
}

// atom.global.cas.b32 at random words, the old values summed (a hash insert's claim).
extern "C" __global__ void cas_rand(unsigned* x, unsigned mask, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, s = 0;
    for (unsigned i = 0; i < iters; ++i)
        s += atomicCAS(&x[mix(t * iters + i) & mask], 0u, t + 1);
    out[t] = s;
}

// rd_rand / wr_rand over any number of words (hash mod words, not a mask).
extern "C" __global__ void rd_mod(const unsigned* x, unsigned words, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, s = 0;
    for (unsigned i = 0; i < iters; ++i)
        s += x[mix(t * iters + i) % words];
    out[t] = s;
}

extern "C" __global__ void wr_mod(unsigned* x, unsigned words, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned i = 0; i < iters; ++i)
        x[mix(t * iters + i) % words] = t;
}

// Mixed traffic (each iteration two accesses at independent random words): a load and a store,
// a CAS and a store (a hash insert's claim and value), a load and a red.
extern "C" __global__ void rdwr_rand(unsigned* x, unsigned mask, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, s = 0;
    for (unsigned i = 0; i < iters; ++i) {
        s += x[mix(t * iters + i) & mask];
        x[mix(~(t * iters + i)) & mask] = t;
    }
    out[t] = s;
}

extern "C" __global__ void caswr_rand(unsigned* x, unsigned mask, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, s = 0;
    for (unsigned i = 0; i < iters; ++i) {
        s += atomicCAS(&x[mix(t * iters + i) & mask], 0u, t + 1);
        x[mix(~(t * iters + i)) & mask] = t;
    }
    out[t] = s;
}

extern "C" __global__ void rdred_rand(unsigned* x, unsigned mask, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, s = 0;
    for (unsigned i = 0; i < iters; ++i) {
        s += x[mix(t * iters + i) & mask];
        atomicAdd(&x[mix(~(t * iters + i)) & mask], 1u);
    }
    out[t] = s;
}

// One thread: p = x[p], steps times (x holds word indices of 128-byte nodes), past the L1
// (ld.global.cg: the nodes' lines would otherwise partly fit in it).
extern "C" __global__ void chase(const unsigned* x, unsigned mask, unsigned steps, unsigned* out)
{
    size_t p = 0;
    for (unsigned i = 0; i < steps; ++i)
        p = __ldcg(&x[p]);
    out[0] = (unsigned)p;
}
"""

BLOCK = 256
CTAS_PER_SM = 8
ITERS = 16
LINE_ITERS = 64
CHASE_NODES = 2048
CHASE_A, CHASE_C = 1103515245, 12345
#: footprints in bytes
FOOTPRINTS = tuple(1 << k for k in (22, 24, 25, 26, 28, 30, 32, 33))
KERNELS = ("rd_rand", "rd_line", "wr_rand", "wr_line", "red_rand", "cas_rand", "chase_cold", "chase")
#: kernels of two access kinds an iteration, at these footprints (after the single kinds)
MIXED = ("rdwr_rand", "caswr_rand", "rdred_rand")
MIXED_FOOTPRINTS = (1 << 22, 1 << 30)
#: footprints around the L2's size for ``rd_mod``/``wr_mod`` (random loads and stores at
#: ``hash mod words``): where the L2 starts to miss
CAPACITY_FOOTPRINTS = tuple(m << 20 for m in (8, 20, 24, 28, 40, 48))
#: CTAs (one an SM) of the launches on fewer SMs, of FEW_SMS_BLOCK threads making 8x the accesses
FEW_SMS = (16, 66)
FEW_SMS_BLOCK = 1024
#: gpusim simulates footprints up to this many bytes (its buffers are host memory)
SIM_MAX_BYTES = 1 << 30


def _label(kernel: str, footprint: int) -> str:
    mib = footprint >> 20
    return f"{kernel} {mib // 1024} GiB" if mib >= 1024 else f"{kernel} {mib} MiB"


def launches(sm_count: int = 132) -> list[tuple[str, str, int, int, int, int]]:
    """``(label, kernel, footprint bytes, mask argument, iterations, CTAs)`` in launch order: every
    kernel at every footprint, the mixed kernels (:data:`MIXED`), the L2-resident kernels at 4 MiB on fewer SMs (``CTAS`` CTAs of
    ``FEW_SMS_BLOCK`` threads, one per SM: a limit per SM scales with the CTAs, one of the
    L2 does not), then ``rd_mod``/``wr_mod`` at :data:`CAPACITY_FOOTPRINTS` (``mask`` is then the
    number of words)."""
    rows = []
    for fp in FOOTPRINTS:
        for k in KERNELS:
            if k.startswith("chase"):
                rows.append((_label(k, fp), "chase", fp, 0, CHASE_NODES * (1 if k == "chase_cold" else 5), 1))
            elif k.endswith("_line"):
                rows.append((_label(k, fp), k, fp, fp // 128 - 1, LINE_ITERS, sm_count * CTAS_PER_SM))
            else:
                rows.append((_label(k, fp), k, fp, fp // 4 - 1, ITERS, sm_count * CTAS_PER_SM))
    for fp in MIXED_FOOTPRINTS:
        for k in MIXED:
            rows.append((_label(k, fp), k, fp, fp // 4 - 1, ITERS, sm_count * CTAS_PER_SM))
    fp = FOOTPRINTS[0]
    for k in ("rd_rand", "rd_line", "wr_rand", "red_rand"):
        for ctas in FEW_SMS:
            line = k.endswith("_line")
            rows.append((f"{_label(k, fp)} {ctas} CTAs", k, fp, fp // (128 if line else 4) - 1,
                         (LINE_ITERS if line else ITERS) * 8, ctas))
    for fp in CAPACITY_FOOTPRINTS:
        for k in ("rd_mod", "wr_mod"):
            rows.append((_label(k, fp), k, fp, fp // 4, ITERS, sm_count * CTAS_PER_SM))
    return rows


def block_of(label: str) -> int:
    """Threads a CTA of launch ``label``."""
    return 1 if label.startswith("chase") else FEW_SMS_BLOCK if label.endswith("CTAs") else BLOCK


def chase_nodes(np, footprint: int):
    """``(word indices, successors)`` of the chase over ``footprint`` bytes (numpy int64 and
    uint32 arrays of ``CHASE_NODES``): node ``j`` is word ``j F / (4 CHASE_NODES) + 32 h(j)``,
    ``h(j)`` a multiplicative hash of ``j`` below the lines of its ``F / CHASE_NODES`` bytes; it
    holds the word index of node ``(A j + C) mod CHASE_NODES``. Node 0 is at word 0."""
    span = footprint // CHASE_NODES
    j = np.arange(CHASE_NODES, dtype=np.int64)
    word = j * (span // 4) + ((j * 2654435761) % max(span // 128, 1)) * 32 * (j > 0)
    return word, word[(j * CHASE_A + CHASE_C) % CHASE_NODES].astype(np.uint32)


def main() -> None:
    import cupy
    import numpy as np

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    mod = cupy.RawModule(code=CODE)
    buf = cupy.zeros(max(FOOTPRINTS) // 4, cupy.uint32)
    out = cupy.zeros(max(sms * CTAS_PER_SM * BLOCK, max(FEW_SMS) * FEW_SMS_BLOCK), cupy.uint32)
    for warm in (True, False):
        for label, k, fp, mask, iters, ctas in launches(sms):
            if warm and fp > FOOTPRINTS[0]:
                continue
            block = block_of(label)
            if k == "chase":
                idx, nxt = chase_nodes(np, fp)
                buf[cupy.asarray(idx)] = cupy.asarray(nxt)
            mod.get_function(k)((ctas,), (block,), (buf, np.uint32(mask), np.uint32(iters), out))
            cupy.cuda.runtime.deviceSynchronize()
            print(f"{'warmup' if warm else 'launch'} {label}", flush=True)


COUNTERS = {
    "cycles": ("sm__cycles_elapsed.avg",),
    "l2_read_requests": ("lts__t_requests_srcunit_tex_op_read.sum",),
    "l2_read_sectors": ("lts__t_sectors_op_read.sum",),
    "l2_write_requests": ("lts__t_requests_srcunit_tex_op_write.sum",),
    "l2_atomic_requests": ("lts__t_requests_srcunit_tex_op_atom.sum", "lts__t_requests_srcunit_tex_op_red.sum"),
    "dram_read_bytes": ("dram__bytes_read.sum",),
    "dram_write_bytes": ("dram__bytes_write.sum",),
}


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """The ncu CSV's measured launches (the last ``len(launches())`` rows of the probe's kernels:
    the warm-up launches come first, CuPy's own kernels that set up the chains are left out), by
    label: :data:`COUNTERS`."""
    import csv

    with open(path) as f:
        rows = [r for r in csv.DictReader(line for line in f if line.startswith('"'))
                if r["Kernel Name"] in {k for _, k, *_ in launches()}]
    labels = [r[0] for r in launches()]
    rows = rows[-len(labels):]

    def num(v: str) -> float:
        return float(v.replace(",", "")) if v else 0.0
    return {lab: {key: sum(num(r[m]) for m in names) for key, names in COUNTERS.items()}
            for lab, r in zip(labels, rows)}


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1,
             sampling: bool = True) -> dict:
    """One launch of :func:`launches` on gpusim in timing mode (the same launch shape;
    ``sampling`` False: the detailed engine). Raises ValueError for a footprint over
    :data:`SIM_MAX_BYTES`."""
    import time

    import numpy as np

    import gpusim

    t0 = time.perf_counter()
    _, k, fp, mask, iters, ctas = next(r for r in launches() if r[0] == label)
    if fp > SIM_MAX_BYTES:
        raise ValueError(f"{label}: footprint {fp} B is over SIM_MAX_BYTES ({SIM_MAX_BYTES} B)")
    host = np.zeros(fp // 4, np.uint32)  # calloc'd: only the pages written take memory
    if k == "chase":
        idx, nxt = chase_nodes(np, fp)
        host[idx] = nxt
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs, sampling=sampling):
        f = gpusim.RawModule(code=CODE).get_function(k)
        buf = gpusim.asarray(host)
        out = gpusim.zeros(ctas * block_of(label), np.uint32)
        res = f((ctas,), (block_of(label),), (buf, np.uint32(mask), np.uint32(iters), out))
    m = res.metrics
    got = {key: float(sum(m.get(n, 0.0) for n in names)) for key, names in COUNTERS.items()}
    return got | {"timed": str(res.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}


def sim(argv: list[str]) -> None:
    """``sim CSV OUT.json``: every launch up to :data:`SIM_MAX_BYTES` on gpusim against the GPU's
    rows (:func:`validation.probekit.sim_against_gpu`)."""
    from validation.probekit import sim_against_gpu

    if "--labels" not in argv:
        argv = argv + ["--labels"] + [r[0] for r in launches() if r[2] <= SIM_MAX_BYTES]
    sim_against_gpu("random_access.py", argv, gpu_rows, simulate, ("dram_read_bytes", "DRAM read bytes"))


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    if sys.argv[1:2] == ["sim"]:
        sim(sys.argv[2:])
    else:
        main()
