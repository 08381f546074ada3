"""GPU probe: what an empty kernel costs, by grid and block size, in ncu's SM cycles.

A kernel that only returns measures the launch overhead the timing model adds to every
launch (``launch_overhead_cycles``) and, over grids of many CTAs, the rate at which the CTA
scheduler dispatches CTAs (the cycles one more CTA costs when no CTA does any work).

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,sm__cycles_elapsed.max,gpu__time_duration.sum \\
        --csv --page raw --print-units base --log-file $OUT/empty.csv python3 validation/probes/launch_overhead.py

The launches are listed in order on stdout (grid, block); ncu's rows follow the same order.
Needs CuPy only.
"""

from __future__ import annotations

CODE = r'extern "C" __global__ void empty(unsigned long long* out) {}'  # compiles to EXIT only

#: (CTAs, threads per CTA): one CTA of each size, then grids of 1 to 1,024 CTAs per SM (132 SMs).
LAUNCHES = [(1, 32), (1, 256), (1, 1024)] + [(132 * k, b) for b in (32, 256, 1024) for k in (1, 8, 32, 128, 1024)]


def main() -> None:
    import cupy

    fn = cupy.RawModule(code=CODE).get_function("empty")
    out = cupy.zeros(1, cupy.uint64)
    for grid, block in LAUNCHES:
        fn((grid,), (block,), (out,))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch grid={grid} block={block}", flush=True)


if __name__ == "__main__":
    main()
