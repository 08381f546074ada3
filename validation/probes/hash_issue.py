"""GPU probe: is ``slice_turns.py``'s reads-alone launch bound by its address hash or its loads?

``slice_turns.py``'s reads alone take the H100 100k cycles whatever their sectors (gpusim -23 %
with one sector): each of their loads comes with 14.5 SASS integer instructions of the address
hash (``MIX_CU``'s ``mix``). These launches run the same loop (every warp of a GPU-filling grid,
8 CTAs of 256 threads an SM, 16 iterations of 16 hashed indices) with the loads or without:

* ``hash only``: the 16 hashed indices summed, no load;
* ``hash + load``: each index loads a word of its line (``slice_turns.py``'s ``sector reads``);
* ``hash + load.cg``: the same loads with ``ld.global.cg`` (``__ldcg``: no L1 allocation);
* ``hash + load of 2 lines``: lanes 16-31 hash to a second line (two requests an instruction).

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,smsp__inst_executed.sum,\\
        lts__t_requests_srcunit_tex_op_read.sum \\
        --csv --page raw --print-units base --log-file $OUT/hash_issue.csv python3 validation/probes/hash_issue.py

Each launch runs twice (warm-up, then measured; ncu's rows follow :data:`PATTERNS`' order).
gpusim's side: ``python3 validation/probes/hash_issue.py sim hash_issue.csv OUT.json [--jobs N]``.
Needs CuPy only on the GPU.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))

from validation.probekit import MIX_CU  # noqa: E402
from validation.probes.slice_turns import BLOCK, CTAS_PER_SM, ITERS, LINES, READS  # noqa: E402

CODE = MIX_CU + r"""
// load 0: the hashed indices summed; 1: each loads a word of its line; 2: the same with ld.global.cg
// (no L1 allocation); 3: lanes 16-31 take a second hashed line (two requests an instruction)
extern "C" __global__ void hashed(const unsigned* x, unsigned line_mask, unsigned iters, unsigned reads,
                                  unsigned load, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, w = t >> 5, lane = t & 31, s = 0;
    for (unsigned i = 0; i < iters; ++i)
        for (unsigned r = 0; r < reads; ++r) {
            unsigned h = (w * iters + i) * reads + r;
            if (load == 3 && lane >= 16)
                h ^= 0x9e3779b9u;
            unsigned k = (mix(h) & line_mask) * 32 + lane % 8;
            s += load == 0 ? k : load == 2 ? __ldcg(x + k) : x[k];
        }
    out[t] = s;
}
"""

#: (label, load); the grid and loop are slice_turns.py's (BLOCK, CTAS_PER_SM, ITERS, READS, LINES)
PATTERNS = (("hash only", 0), ("hash + load", 1), ("hash + load.cg", 2), ("hash + load of 2 lines", 3))
COUNTERS = {"cycles": ("sm__cycles_elapsed.avg",), "instructions": ("smsp__inst_executed.sum",),
            "read_requests": ("lts__t_requests_srcunit_tex_op_read.sum",)}


def _args(xp, np, load: int, ctas: int, x):
    return (x, np.uint32(LINES - 1), np.uint32(ITERS), np.uint32(READS), np.uint32(load),
            xp.zeros(ctas * BLOCK, np.uint32))


def main() -> None:
    import cupy
    import numpy as np

    ctas = cupy.cuda.Device().attributes["MultiProcessorCount"] * CTAS_PER_SM
    f = cupy.RawModule(code=CODE).get_function("hashed")
    x = cupy.arange(LINES * 32, dtype=cupy.uint32)
    for label, load in PATTERNS:
        for _ in range(2):
            f((ctas,), (BLOCK,), _args(cupy, np, load, ctas, x))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """label -> :data:`COUNTERS` from ncu's CSV (the second row of each launch)."""
    from validation import probekit

    return probekit.counter_rows(path, {"hashed"}, [p[0] for p in PATTERNS], COUNTERS)


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch of :data:`PATTERNS` on gpusim in timing mode, on a GPU-filling grid of ``gpu``."""
    import time

    import numpy as np

    import gpusim
    from validation.probekit import counter_values

    t0 = time.perf_counter()
    load = dict(PATTERNS)[label]
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs) as dev:
        ctas = dev.config.sm_count * CTAS_PER_SM
        x = gpusim.asarray(np.arange(LINES * 32, dtype=np.uint32))
        res = gpusim.RawModule(code=CODE).get_function("hashed")((ctas,), (BLOCK,), _args(gpusim, np, load, ctas, x))
    return counter_values(res.metrics, COUNTERS) | {"timed": str(res.sampling),
                                                    "host_seconds": round(time.perf_counter() - t0, 1)}


if __name__ == "__main__":
    from validation.probekit import probe_main
    probe_main("hash_issue.py", sys.argv[1:], main, gpu_rows, simulate, ("instructions", "instructions"))
