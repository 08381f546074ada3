"""GPU probe: the latency of one step of a dependent chain, per pipe, in ncu's SM cycles.

Each kernel of ``pipe_latency.ptx`` (source: ``pipe_latency.cu``) repeats one step ``k`` times;
one CTA runs on one SM. The slope of ``sm__cycles_elapsed.avg`` over ``k`` is the cycles one
step costs on the GPU; ``benchmarks/pipe_latency.py`` simulates the very same PTX and puts
gpusim's slope beside it. The steps: a CTA barrier (``bar.sync``) at 1, 8 and 32 warps, the
reduction tree's store / barrier / load / add, a dependent ``shfl.sync``, shuffle-then-add,
a shared store / load round trip in one warp, ``IMAD``, ``rem.u32``, shared atomics on one
word and on 32 words, a dependent ``vote.ballot`` and a global store / load round trip.

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,smsp__inst_executed.sum \\
        --csv --page raw --print-units base --log-file $OUT/pipe_latency.csv \\
        python3 validation/probes/pipe_latency.py > $OUT/pipe_latency_log.txt

The launches are printed in order on stdout (``launch LABEL``); ncu's rows follow the same
order. Needs CuPy only.
"""

from __future__ import annotations

import pathlib

PTX = pathlib.Path(__file__).with_name("pipe_latency.ptx")
STEPS = (0, 64, 256)

#: (label, kernel, threads per CTA, extra int32 arguments before ``out``) for each k in STEPS.
CHAINS = [
    ("bar_chain b32", "bar_chain", 32, ()),
    ("bar_chain b256", "bar_chain", 256, ()),
    ("bar_chain b1024", "bar_chain", 1024, ()),
    ("tree_chain b256", "tree_chain", 256, ()),
    ("shfl_chain b32", "shfl_chain", 32, ()),
    ("shfl_add_chain b32", "shfl_add_chain", 32, ()),
    ("smem_chain b32", "smem_chain", 32, ()),
    ("imad_chain b32", "imad_chain", 32, ()),
    ("rem_chain b32", "rem_chain", 32, (1000,)),
    ("atom_shared m1 b256", "atom_shared", 256, (1,)),
    ("atom_shared m32 b256", "atom_shared", 256, (32,)),
    ("vote_chain b32", "vote_chain", 32, ()),
    ("gmem_chain b32", "gmem_chain", 32, ()),
    ("tree_chain b1024", "tree_chain", 1024, ()),
]


def launches():
    """``(label, kernel, block, k, extra)`` in launch order."""
    return [(f"{lab} k{k}", kern, block, k, extra) for lab, kern, block, extra in CHAINS for k in STEPS]


def main() -> None:
    import cupy

    mod = cupy.RawModule(path=str(PTX))
    out = cupy.zeros(1024, cupy.int32)
    for label, kern, block, k, extra in launches():
        f = mod.get_function(kern)
        f((1,), (block,), (cupy.int32(k), *[cupy.int32(x) for x in extra], out))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


if __name__ == "__main__":
    main()
