"""GPU probe: what fetching a kernel's code costs, in ncu's SM cycles.

``icache.ptx`` (source: ``icache.cu``) holds straight-line kernels of 0, 256, 1,024 and 2,048
unrolled steps of four independent ``IMAD`` chains (about 16 bytes of SASS per instruction, up
to 128 KiB of code). One warp runs each, twice in a row. Under ``ncu --cache-control all`` every
launch starts with flushed caches (cold code); under ``--cache-control none`` the second launch
finds the code where the first left it. ``benchmarks/pipe_latency.py`` puts the cycles per
instruction beside gpusim's, which fetches no code.

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    for c in all none; do ncu --clock-control none --cache-control $c \\
        --metrics sm__cycles_elapsed.avg,smsp__inst_executed.sum --csv --page raw --print-units base \\
        --log-file $OUT/icache_$c.csv python3 validation/probes/icache.py; done

Needs CuPy only.
"""

from __future__ import annotations

import pathlib

PTX = pathlib.Path(__file__).with_name("icache.ptx")
STEPS = (0, 256, 1024, 2048)


def launches():
    """``(label, kernel)`` in launch order: each kernel twice."""
    return [(f"straight_{n} run{r}", f"straight_{n}") for n in STEPS for r in (1, 2)]


def main() -> None:
    import cupy

    mod = cupy.RawModule(path=str(PTX))
    out = cupy.zeros(32, cupy.uint32)
    for label, kern in launches():
        mod.get_function(kern)((1,), (32,), (out,))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


if __name__ == "__main__":
    main()
