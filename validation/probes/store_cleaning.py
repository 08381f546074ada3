"""GPU probe: when does the H100's L2 write dirty sectors back below its capacity?

``random_access.py``'s ``wr_mod`` showed that random 4-byte stores over 8-48 MiB (less than the
50 MB L2) cost DRAM writes that grow past one a sector (0.66 at 8 MiB, 2.1 at 32 MiB) while DRAM
reads stay at one a sector: sectors are completed once and then written back again and again
without being evicted (docs/model/memory.md, "Irregular access"). This probe varies what could
trigger those write-backs, at fixed footprints ``F`` (8, 16, 32 MiB):

* ``wr_mod`` (the same kernel as ``random_access.py``'s: ``x[mix(t * iters + i) % words] = t``)
  with ``iters`` = 2, 4, 16, 64 stores a thread: the stores a sector per launch;
* ``wr_mod`` at 16 MiB with a quarter of the CTAs and four times the iterations (the same
  stores, over a longer time with less in flight): does the count follow time or stores?
* ``wr_sec``: groups of 8 lanes store one whole random 32-byte sector (``iters`` 16): do
  complete sectors get the same write-backs as partial ones?
* ``--footprints M ... --sequential`` (session 41): ``wr_seq`` stores every word of M MiB once,
  in order (whole lines, nothing read): how much of a footprint below the capacity is written
  back during the launch (the L2's cap on dirty data)?

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,gpu__time_duration.sum,\\
        lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum,dram__bytes_read.sum,dram__bytes_write.sum \\
        --csv --page raw --print-units base --log-file $OUT/store_cleaning.csv \\
        python3 validation/probes/store_cleaning.py | tee $OUT/store_cleaning_log.txt

ncu's rows follow :func:`launches`' order (``launch LABEL`` lines on stdout); ncu flushes the
caches before each launch (its default ``--cache-control all``). Needs CuPy only; :func:`launches`
imports anywhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.probekit import MIX_CU  # noqa: E402

CODE = MIX_CU + r"""
extern "C" __global__ void wr_mod(unsigned* x, unsigned words, unsigned iters)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned i = 0; i < iters; ++i)
        x[mix(t * iters + i) % words] = t;
}

// Every word of x[0, words) stored once, in order (a grid-stride loop of coalesced 4-byte stores:
// whole lines, no reads): how much of a footprint below the L2's capacity is written back?
extern "C" __global__ void wr_seq(unsigned* x, unsigned words, unsigned iters)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x)
        x[i] = i;
}

// Lanes 8g..8g+7 store the 8 words of sector mix(g * iters + i) % sectors (a whole sector).
extern "C" __global__ void wr_sec(unsigned* x, unsigned words, unsigned iters)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, g = t >> 3;
    for (unsigned i = 0; i < iters; ++i)
        x[(size_t)(mix(g * iters + i) % (words / 8)) * 8 + (t & 7)] = t;
}
"""

BLOCK = 256
CTAS_PER_SM = 8
FOOTPRINTS_MIB = (8, 16, 32)
ITERS = (2, 4, 16, 64)


def launches(sm_count: int = 132) -> list[tuple[str, str, int, int, int]]:
    """``(label, kernel, footprint bytes, iterations, CTAs)`` in launch order."""
    full = sm_count * CTAS_PER_SM
    rows = [(f"wr_mod {m} MiB iters {it}", "wr_mod", m << 20, it, full) for m in FOOTPRINTS_MIB for it in ITERS]
    rows.append(("wr_mod 16 MiB iters 64 quarter grid", "wr_mod", 16 << 20, 64, full // 4))
    rows += [(f"wr_sec {m} MiB iters 16", "wr_sec", m << 20, 16, full) for m in FOOTPRINTS_MIB]
    return rows


def partial_cap_model(footprint_mib: int, iters: int, cap: int, seed: int = 0) -> float:
    """Completions a sector that a candidate rule predicts for ``wr_mod`` (host-side, no GPU): the
    L2 holds at most ``cap`` partly written sectors (LRU); beyond that the least recently written
    one is read, merged and written back, and is whole from then on. A sector all 8 of whose words
    were stored is whole too. The stores come in random order (the GPU interleaves its threads'
    ``i``-th stores). Returns completions / sectors of the footprint, to compare with the table's
    DRAM reads a sector."""
    import collections

    import numpy as np

    words = (footprint_mib << 20) // 4
    w = np.random.default_rng(seed).integers(0, words, 132 * CTAS_PER_SM * BLOCK * iters)
    partial: collections.OrderedDict[int, int] = collections.OrderedDict()
    whole: set[int] = set()
    done = 0
    for sec, bit in zip((w >> 3).tolist(), (1 << (w & 7)).tolist()):
        if sec in whole:
            continue
        m = partial.pop(sec, 0) | bit
        if m == 255:
            whole.add(sec)
            continue
        partial[sec] = m
        if len(partial) > cap:
            whole.add(partial.popitem(last=False)[0])
            done += 1
    return done / (words / 8)


def main(argv: list[str] | None = None) -> None:
    """Run :func:`launches` on the GPU, or with ``--footprints M ...`` (MiB) only ``wr_mod`` at those
    footprints and ``--iters`` (session 40: where below 8 MiB does the cleaning start?)."""
    import argparse

    import cupy
    import numpy as np

    p = argparse.ArgumentParser(prog="validation/probes/store_cleaning.py")
    p.add_argument("--footprints", type=int, nargs="+", metavar="MIB")
    p.add_argument("--iters", type=int, default=16)
    p.add_argument("--sequential", action="store_true",
                   help="with --footprints: wr_seq (every word stored once, in order) instead of wr_mod")
    a = p.parse_args(argv)
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    kernel = "wr_seq" if a.sequential else "wr_mod"
    rows = launches(sms) if not a.footprints else [
        (f"{kernel} {m} MiB" + ("" if a.sequential else f" iters {a.iters}"), kernel, m << 20, a.iters,
         sms * CTAS_PER_SM) for m in a.footprints]
    mod = cupy.RawModule(code=CODE)
    buf = cupy.zeros(max(r[2] for r in rows) >> 2, cupy.uint32)
    for label, k, fp, iters, ctas in rows:
        mod.get_function(k)((ctas,), (BLOCK,), (buf, np.uint32(fp // 4), np.uint32(iters)))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


if __name__ == "__main__":
    main()
