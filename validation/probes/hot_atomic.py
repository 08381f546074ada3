"""GPU probe: what one atomic a warp on a hot address costs, alone and amid other traffic.

``validation/probes/bfs_parts.py`` showed the corpus's BFS steps losing most of their time on
the H100 to one counter that every warp updates once (``atomicAdd(found, 1)``: 131,072 ``red``
requests cost 149k of ``bfs_bottomup``'s 460k cycles; the queue counter of ``bfs_topdown``, about
180k aggregated ``atom`` requests, 427k of its 717k), where gpusim charges 13k. The atomic probe
(``atomic_contention.py``) measured a hot address with every lane of a warp on it: 32 requests of
one SM in a row, 1.45 cycles each. This probe sends the hot address one request a warp (lane 0,
as ptxas's warp aggregation does), from every warp of a GPU-filling grid (8 CTAs of 256 threads
per SM, ``ITERS`` iterations), with or without a random 4-byte load per lane an iteration over
4 MiB (L2 hits):

* ``red A1`` / ``atom A1``: lane 0 adds 1 to one word (``red``: result unused; ``atom``: kept);
* ``red A32``: to one of 32 words 4 KB apart (``w % 32``): 32 hot addresses, a 32nd of the load each;
* ``red spread``: each warp its own line (no address shared);
* ``reads``: the loads alone (no atomic);
* ``red A1 + reads``, ``atom A1 + reads``, ``red spread + reads``: both;
* ``red A1 all lanes``: every lane on the one word, one iteration (``atomic_contention.py``'s case);
* ``red A1 once``, ``atom A1 once``: one atomic a warp over 16 waves (128 CTAs an SM), as a warp that
  counts once at its end does; ``chain``: 4 dependent loads a lane (a graph walk's), and ``chain + ...``:
  the chain, then the one atomic (``bfs_bottomup``'s shape; ``spread``: a line a warp).

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,lts__t_requests_srcunit_tex_op_atom.sum,\\
        lts__t_requests_srcunit_tex_op_red.sum,lts__t_requests_srcunit_tex_op_read.sum \\
        --csv --page raw --print-units base --log-file $OUT/hot_atomic.csv python3 validation/probes/hot_atomic.py

Each launch runs twice (warm-up, then measured; ncu's rows follow :func:`launches`' order).
gpusim's side: ``python3 validation/probes/hot_atomic.py sim hot_atomic.csv OUT.json [--jobs N]``.
Needs CuPy only on the GPU (``CODE`` and :func:`launches` import anywhere).
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))

from validation.probekit import MIX_CU  # noqa: E402

CODE = MIX_CU + r"""
// Lane 0 of warp w adds 1 to base[(w % A) * S] in every EVERY-th iteration (A = 0: no atomic;
// ATOM: the old value kept); every lane first loads `reads` words x[mix(...) & mask] an iteration
// (summed; CHAIN: each load's index depends on the value before, as a graph walk's do).
template <bool ATOM>
__device__ void lane0(unsigned* base, unsigned A, unsigned S, unsigned iters, const unsigned* x, unsigned mask,
                      unsigned reads, unsigned every, unsigned chain, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, w = t >> 5, s = 0;
    unsigned* p = base + (A ? (w % A) * S : 0);
    for (unsigned i = 0; i < iters; ++i) {
        for (unsigned r = 0; r < reads; ++r)
            s += x[(mix((t * iters + i) * reads + r) ^ (chain ? s : 0u)) & mask];
        if (A && (t & 31) == 0 && (i + 1) % every == 0) {
            if (ATOM)
                s += atomicAdd(p, 1u);
            else
                atomicAdd(p, 1u);
        }
    }
    out[t] = s;
}

extern "C" __global__ void lane_red(unsigned* base, unsigned A, unsigned S, unsigned iters, const unsigned* x,
                                    unsigned mask, unsigned reads, unsigned every, unsigned chain, unsigned* out)
{
    lane0<false>(base, A, S, iters, x, mask, reads, every, chain, out);
}

extern "C" __global__ void lane_atom(unsigned* base, unsigned A, unsigned S, unsigned iters, const unsigned* x,
                                     unsigned mask, unsigned reads, unsigned every, unsigned chain, unsigned* out)
{
    lane0<true>(base, A, S, iters, x, mask, reads, every, chain, out);
}

// Every lane adds 1 to base[(t % A) * S], iters times (red; the address from A at run time keeps
// ptxas from aggregating the warp's lanes into one request, as in atomic_contention.py).
extern "C" __global__ void all_red(unsigned* base, unsigned A, unsigned S, unsigned iters, const unsigned* x,
                                   unsigned mask, unsigned reads, unsigned every, unsigned chain, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned i = 0; i < iters; ++i)
        atomicAdd(base + (t % A) * S, 1u);
}
"""

BLOCK = 256
ITERS = 16
#: dependent loads a lane before the one atomic of the ``chain`` launches (their time about 1.6x the
#: hot address's, as in bfs_bottomup)
CHAIN = 4
#: words the loads pick from (4 MiB: L2 hits)
READ_WORDS = 1 << 20
#: lines a warp's own atomic word is spread over in ``red spread`` (A = SPREAD, S = 32: a line each)
SPREAD = 1 << 16
#: (label, kernel, A, S, iterations, loads an iteration, atomic every n-th iteration, loads chained, CTAs an SM)
PATTERNS = (("red A1", "lane_red", 1, 0, ITERS, 0, 1, 0, 8), ("atom A1", "lane_atom", 1, 0, ITERS, 0, 1, 0, 8),
            ("red A32", "lane_red", 32, 1024, ITERS, 0, 1, 0, 8), ("red spread", "lane_red", SPREAD, 32, ITERS, 0, 1, 0, 8),
            ("reads", "lane_red", 0, 0, ITERS, 1, 1, 0, 8), ("red A1 + reads", "lane_red", 1, 0, ITERS, 1, 1, 0, 8),
            ("atom A1 + reads", "lane_atom", 1, 0, ITERS, 1, 1, 0, 8),
            ("red spread + reads", "lane_red", SPREAD, 32, ITERS, 1, 1, 0, 8),
            ("red A1 all lanes", "all_red", 1, 0, 1, 0, 1, 0, 8),
            # one atomic a warp, at its end, over 16 waves (as bfs_bottomup's count): alone, after a chain of
            # 16 dependent loads, and the chain alone
            ("red A1 once", "lane_red", 1, 0, 1, 0, 1, 0, 128), ("atom A1 once", "lane_atom", 1, 0, 1, 0, 1, 0, 128),
            ("chain", "lane_red", 0, 0, CHAIN, 1, CHAIN, 1, 128),
            ("chain + red A1 once", "lane_red", 1, 0, CHAIN, 1, CHAIN, 1, 128),
            ("chain + atom A1 once", "lane_atom", 1, 0, CHAIN, 1, CHAIN, 1, 128),
            ("chain + red spread once", "lane_red", SPREAD, 32, CHAIN, 1, CHAIN, 1, 128))
COUNTERS = {"cycles": ("sm__cycles_elapsed.avg",),
            "atomic_requests": ("lts__t_requests_srcunit_tex_op_atom.sum", "lts__t_requests_srcunit_tex_op_red.sum"),
            "read_requests": ("lts__t_requests_srcunit_tex_op_read.sum",)}


def launches(sm_count: int = 132) -> list[tuple]:
    """``(label, kernel, A, S, iterations, loads an iteration, atomic every n-th iteration, loads
    chained, CTAs)`` in launch order."""
    return [(*p[:8], sm_count * p[8]) for p in PATTERNS]


def _args(xp, np, a: int, s: int, iters: int, reads: int, every: int, chain: int, ctas: int, base, x):
    out = xp.zeros(ctas * BLOCK, np.uint32)
    return (base, np.uint32(a), np.uint32(s), np.uint32(iters), x, np.uint32(READ_WORDS - 1), np.uint32(reads),
            np.uint32(every), np.uint32(chain), out)


def main() -> None:
    import cupy
    import numpy as np

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    mod = cupy.RawModule(code=CODE)
    base = cupy.zeros(SPREAD * 32, cupy.uint32)
    x = cupy.arange(READ_WORDS, dtype=cupy.uint32)
    for label, k, *shape, ctas in launches(sms):
        for _ in range(2):
            mod.get_function(k)((ctas,), (BLOCK,), _args(cupy, np, *shape, ctas, base, x))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """label -> :data:`COUNTERS` from ncu's CSV (the second row of each launch)."""
    from validation import probekit

    return probekit.counter_rows(path, {k for _, k, *_ in PATTERNS}, [p[0] for p in PATTERNS], COUNTERS)


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch of :func:`launches` on gpusim in timing mode (sampled as any launch is)."""
    import time

    import numpy as np

    import gpusim
    from validation.probekit import counter_values

    t0 = time.perf_counter()
    _, k, *shape, ctas = next(r for r in launches() if r[0] == label)
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs):
        base = gpusim.zeros(SPREAD * 32, np.uint32)
        x = gpusim.asarray(np.arange(READ_WORDS, dtype=np.uint32))
        res = gpusim.RawModule(code=CODE).get_function(k)((ctas,), (BLOCK,),
                                                           _args(gpusim, np, *shape, ctas, base, x))
    got = counter_values(res.metrics, COUNTERS)
    return got | {"timed": str(res.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}


if __name__ == "__main__":
    from validation.probekit import probe_main
    probe_main("hot_atomic.py", sys.argv[1:], main, gpu_rows, simulate, ("atomic_requests", "L2 atomic requests"))
