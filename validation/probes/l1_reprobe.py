"""GPU probe: does a warp's dependent second load of a random sector it just loaded hit the L1?

The corpus's ``hash_lookup`` (fit half, -14.6 % in gpusim) probes a table of 32 MiB with linear
probing: 4.19M first probes at random slots, then 4.19M re-probes of the next slot, 3.67M of them in
the sector the thread has just loaded (``ld.global.nc``, cached in L1). The H100 counts 11.34M L2
read sectors, as if no re-probe hit the L1 (11.0M); gpusim 9.74M (about two in three hit). The
launch is bound by the L2's read requests, so the misses are its time. This probe isolates it: every
thread of ``c`` CTAs of 256 an SM loads ``ITERS`` random words of a 16 MiB buffer (L2-resident), and
after each the word ``dist`` words away, the address made dependent on the first load's value:

* ``dist 1``: the same sector (``hash_lookup``'s re-probe);
* ``dist 8``: the same 128-byte line, another sector;
* ``c`` 1, 2, 4, 6, 8 CTAs an SM (8 to 64 warps, 256 to 2,048 random lines in flight an SM, one
  iteration a warp at a time: how many other lines are allocated while the first load is in
  flight; the L1 holds 1,792 lines beside the 32 KB carveout).

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,lts__t_sectors_op_read.sum,\\
        l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct \\
        --csv --page raw --print-units base --log-file $OUT/l1_reprobe.csv \\
        python3 validation/probes/l1_reprobe.py | tee $OUT/l1_reprobe_log.txt

(each launch twice, the second measured). gpusim's side::

    python3 validation/probes/l1_reprobe.py sim l1_reprobe.csv OUT.json [--jobs N] [--set FIELD=VALUE ...]

Needs CuPy (the GPU side) or gpusim (``sim``); ``CODE`` and :data:`LAUNCHES` import anywhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.probekit import MIX_CU  # noqa: E402

CODE = MIX_CU + r"""
// Thread t loads x[j], j = mix(t * iters + i) & mask, then x[(j ^ dist) + (v & zero)] (zero = 0 at run
// time: the second address waits for the first load's value).
extern "C" __global__ void reprobe(const unsigned* __restrict__ x, unsigned mask, unsigned iters, unsigned zero,
                                   unsigned dist, unsigned* __restrict__ out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, s = 0;
#pragma unroll 1
    for (unsigned i = 0; i < iters; ++i) {
        unsigned j = mix(t * iters + i) & mask;
        unsigned v = x[j];
        s += v + x[(j ^ dist) + (v & zero)];
    }
    out[t] = s;
}
"""

BLOCK = 256
ITERS = 16
WORDS = 1 << 22            #: 16 MiB: L2-resident on the H100 and the H200
SMS = 132                  #: the H100 SXM's SMs (the grids are c x SMS CTAs on either GPU)
#: (label, dist, CTAs an SM)
LAUNCHES = [(f"dist {d} c{c}", d, c) for d in (1, 8) for c in (1, 2, 4, 6, 8)]
COUNTERS = {"cycles": "sm__cycles_elapsed.avg", "l2_read_sectors": "lts__t_sectors_op_read.sum",
            "l1_load_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "l1_load_hit_pct": "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct"}


def _launch(xp, label: str, x, out):
    import numpy as np

    _, dist, c = next(r for r in LAUNCHES if r[0] == label)
    f = xp.RawModule(code=CODE).get_function("reprobe")
    return f((c * SMS,), (BLOCK,), (x, np.uint32(WORDS - 1), np.uint32(ITERS), np.uint32(0), np.uint32(dist), out))


def _buffers(xp):
    import numpy as np

    return xp.zeros(WORDS, np.uint32), xp.zeros(max(c for *_, c in LAUNCHES) * SMS * BLOCK, np.uint32)


def main() -> None:
    import cupy

    x, out = _buffers(cupy)
    for label, *_ in LAUNCHES:
        for _ in range(2):
            _launch(cupy, label, x, out)
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """The ncu CSV's measured rows (the second of each launch), by label: :data:`COUNTERS`."""
    from validation.probekit import counter_rows

    return counter_rows(path, ("reprobe",), [lab for lab, *_ in LAUNCHES], {k: (m,) for k, m in COUNTERS.items()})


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch on gpusim in timing mode, the GPU's launch shape (caches cold, as ncu leaves them)."""
    from validation.probekit import simulate_launch

    return simulate_launch(lambda xp: _launch(xp, label, *_buffers(xp)), COUNTERS, gpu, overrides, jobs)


if __name__ == "__main__":
    from validation.probekit import probe_main

    probe_main("l1_reprobe.py", sys.argv[1:], main, gpu_rows, simulate, ("l2_read_sectors", "L2 read sectors"))
