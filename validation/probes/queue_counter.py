"""GPU probe: what one queue counter costs when its value is used, as ``bfs_topdown``'s is.

``bfs_parts.py`` found the corpus's top-down BFS step losing 427k of its 717k cycles on the H100 to
its queue counter (``next[atomicAdd(next_size, 1)] = u``, ptxas aggregating the warp's winning
lanes into one ``atom``), about 4 cycles a counter request, where ``hot_atomic.py``'s ``atom A1``
(lane 0 adds 1 and keeps the old value) costs 1.5. These launches (every warp of a GPU-filling grid,
8 CTAs of 256 threads an SM, ``ITERS`` iterations, one counter request a warp and iteration)
add one step of the BFS pattern at a time:

* ``atom lane 0``: lane 0 adds 1, the old value summed (``hot_atomic.py``'s ``atom A1``);
* ``atom aggregated``: the lanes whose hash bit is set each add 1 (ptxas: one ``atom`` a warp of
  their count), the old values summed;
* ``atom aggregated + store``: the same, each such lane storing its id at ``queue[old]`` (the BFS
  queue: consecutive words);
* ``red aggregated + store spread``: the same lanes, the counter not read back (``red``), each lane
  storing at its own word (the stores without the counter's order).

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,lts__t_requests_srcunit_tex_op_atom.sum,\\
        lts__t_requests_srcunit_tex_op_red.sum,lts__t_requests_srcunit_tex_op_write.sum \\
        --csv --page raw --print-units base --log-file $OUT/queue_counter.csv python3 validation/probes/queue_counter.py

Each launch runs twice (warm-up, then measured; ncu's rows follow :data:`PATTERNS`' order). No
gpusim side yet. Needs CuPy only on the GPU.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))

from validation.probekit import MIX_CU  # noqa: E402

CODE = MIX_CU + r"""
// mode 0: lane 0 atomicAdd(count, 1), old value summed; 1: the lanes with hash bit set, old values
// summed; 2: the same, each storing at queue[old]; 3: red by those lanes, each storing at its own word
extern "C" __global__ void counter(unsigned* count, unsigned* queue, unsigned iters, unsigned mode, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, s = 0;
    for (unsigned i = 0; i < iters; ++i) {
        bool win = mode == 0 ? (t & 31) == 0 : (mix(t * iters + i) & 1) != 0;
        if (win) {
            if (mode == 3) {
                atomicAdd(count, 1u);
                queue[(t * iters + i) & ((1u << 24) - 1)] = t;
            } else {
                unsigned old = atomicAdd(count, 1u);
                if (mode == 2)
                    queue[old & ((1u << 24) - 1)] = t;
                else
                    s += old;
            }
        }
    }
    out[t] = s;
}
"""

BLOCK = 256
CTAS_PER_SM = 8
ITERS = 16
#: (label, mode)
PATTERNS = (("atom lane 0", 0), ("atom aggregated", 1), ("atom aggregated + store", 2),
            ("red aggregated + store spread", 3))
COUNTERS = {"cycles": ("sm__cycles_elapsed.avg",),
            "atomic_requests": ("lts__t_requests_srcunit_tex_op_atom.sum", "lts__t_requests_srcunit_tex_op_red.sum"),
            "write_requests": ("lts__t_requests_srcunit_tex_op_write.sum",)}


def main() -> None:
    import cupy
    import numpy as np

    ctas = cupy.cuda.Device().attributes["MultiProcessorCount"] * CTAS_PER_SM
    f = cupy.RawModule(code=CODE).get_function("counter")
    count = cupy.zeros(32, cupy.uint32)
    queue = cupy.zeros(1 << 24, cupy.uint32)
    out = cupy.zeros(ctas * BLOCK, cupy.uint32)
    for label, mode in PATTERNS:
        for _ in range(2):
            f((ctas,), (BLOCK,), (count, queue, np.uint32(ITERS), np.uint32(mode), out))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """label -> :data:`COUNTERS` from ncu's CSV (the second row of each launch)."""
    from validation import probekit

    return probekit.counter_rows(path, {"counter"}, [p[0] for p in PATTERNS], COUNTERS)


if __name__ == "__main__":
    main()
