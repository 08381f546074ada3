"""GPU probe: L1 hit throughput by lane stride, in ncu's SM cycles.

``l1_stride.ptx`` (source: ``l1_stride.cu``): one CTA of 1,024 threads; every thread loads
``a[lane * stride + (i & 31)]`` k times (k = 0, 64, 256), so a warp-load touches 1 to 32
different 128-byte lines (strides of 1 to 1,024 floats), all L1 hits after the first pass. The slope over k, divided by the
32 warps, is the cycles the L1 takes per warp-load; ``benchmarks/pipe_latency.py`` puts
gpusim's beside it.

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\\
l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct,l1tex__data_pipe_lsu_wavefronts.sum,\\
l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_global_op_ld.sum --csv --page raw \\
        --print-units base --log-file $OUT/l1_stride.csv python3 validation/probes/l1_stride.py

Needs CuPy only.
"""

from __future__ import annotations

import pathlib

PTX = pathlib.Path(__file__).with_name("l1_stride.ptx")
STEPS = (0, 64, 256)
#: floats between neighbouring lanes
STRIDES = (1, 8, 16, 32, 33, 34, 36, 40, 44, 48, 56, 64, 72, 80, 96, 128, 160, 192, 256, 512, 1024)


def launches():
    """``(label, stride, k)`` in launch order."""
    return [(f"l1_stride s{s} k{k}", s, k) for s in STRIDES for k in STEPS]


def main() -> None:
    import cupy

    f = cupy.RawModule(path=str(PTX)).get_function("l1_stride")
    a = cupy.ones(32 * max(STRIDES) + 64, cupy.float32)
    out = cupy.zeros(1024, cupy.float32)
    for label, s, k in launches():
        f((1,), (1024,), (a, cupy.int32(k), cupy.int32(s), out))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


if __name__ == "__main__":
    main()
