"""GPU probe: what scattered global stores cost, by the lines one warp's store touches.

Transposes write columns: a warp's 32 lanes store 4 bytes each into up to 32 different 128 B
lines. This probe isolates that pattern from everything else a transpose does. Thread ``e`` of a
grid-filling launch stores the float ``e`` to ``out[(e % W) * (n / W) + e / W]``: ``W`` = 1 is a
coalesced store (one line a warp); ``W`` lanes apart store to ``W`` different lines, ``32 / W``
consecutive words in each (``W`` = 32: one 4-byte word in each of 32 lines, the naive
transpose's store). Every word of ``out`` (2^24 floats, 64 MiB) is written exactly once, so the
bytes that reach DRAM are the same for every ``W``; only the pattern differs. Blocks of 256
threads, 8 per SM (full occupancy), 2^16 CTAs. A second set repeats ``W`` = 1, 8 and 32 with
``out`` of 2^20 floats (4 MiB: the L2 holds it all, so DRAM write-back cannot limit it).

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,gpu__time_duration.sum,dram__bytes_read.sum,\\
        dram__bytes_write.sum,lts__t_sectors_op_write.sum,lts__t_requests_srcunit_tex_op_write.sum,\\
        l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum \\
        --csv --page raw --print-units base --log-file $OUT/store_scatter.csv \\
        python3 validation/probes/store_scatter.py | tee $OUT/store_scatter_log.txt

The launches are listed in order on stdout (``launch scatter_wW nN``); ncu's rows follow the
same order (``cupy.zeros`` launches no kernel). Needs CuPy only (``CODE`` and :func:`launches`
import anywhere).
"""

from __future__ import annotations

CODE = r"""
// W = 1 << lw, n = 1 << ln: out[(e % W) * (n / W) + e / W] with shifts only
extern "C" __global__ void scatter(float* __restrict__ out, unsigned ln, unsigned lw)
{
    unsigned e = blockIdx.x * blockDim.x + threadIdx.x;
    out[((e & ((1u << lw) - 1)) << (ln - lw)) | (e >> lw)] = (float)e;
}
"""

BLOCK = 256


def launches() -> list[tuple[str, int, int]]:
    """``(label, W, n floats)`` in launch order."""
    big = [(f"scatter_w{w} n{1 << 24}", w, 1 << 24) for w in (1, 2, 4, 8, 16, 32)]
    small = [(f"scatter_w{w} n{1 << 20}", w, 1 << 20) for w in (1, 8, 32)]
    return big + small


def main() -> None:
    import cupy
    import numpy as np

    f = cupy.RawModule(code=CODE).get_function("scatter")
    out = cupy.zeros(1 << 24, cupy.float32)
    for label, w, n in launches():
        f((n // BLOCK,), (BLOCK,), (out, np.uint32(n.bit_length() - 1), np.uint32(w.bit_length() - 1)))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


if __name__ == "__main__":
    main()
