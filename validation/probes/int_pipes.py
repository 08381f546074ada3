"""GPU probe: how many cycles a warp instruction of each integer pipe takes per SM sub-partition.

``int_pipes.ptx`` (source ``int_pipes.cu``): one CTA of 1,024 threads (8 warps per sub-partition)
runs 8 independent chains of one operation for ``n`` iterations between two ``clock64`` reads;
what counts are the divergence suite's two hash rounds, which ptxas cannot simplify:
``path_b`` (``x = (x ^ (x >> 7)) + C``: ``VIADD`` + ``SHF.R.U32.HI`` + ``LOP3.LUT``) and
``path_a`` (``x = (x * C) ^ (x >> 15)``: ``IMAD`` + ``SHF`` + ``LOP3``), and ``fma_reg`` (8
``FFMA``). The chains of one constant operation (``xor_reg``, ``shr_imm``, ``mul_imm``,
``add_imm``) are folded by ptxas (``x ^ c ^ c = x``; shifts, multiplies and adds by constants
combine), so they read faster than their PTX says and are kept only as raw output. Prints, per
kernel, ``cycles / (n * 8)``: the cycles of one loop iteration of the 8 warps of a
sub-partition, per warp. Measured on the H100 (``validation/reports/h100/int_pipes``): path_b
32.8, path_a 32.5, i.e. 16 ALU instructions (``SHF``, ``LOP3``) at 2 cycles with the adds and
multiplies on another pipe; fma_reg 9.0 (8 ``FFMA`` + loop at one a cycle).

Run on a GPU machine: ``python3 validation/probes/int_pipes.py > $OUT/int_pipes.json``. Needs CuPy only.
"""

from __future__ import annotations

import json
import pathlib
import sys

PTX = pathlib.Path(__file__).with_name("int_pipes.ptx")
KERNELS = ("xor_reg", "shr_imm", "mul_imm", "fma_reg", "add_imm", "path_b", "path_a")
N = (256, 4096)


def measure(ptx: pathlib.Path, kernels: dict[str, int], threads: int = 1024,
            key: str = "cycles_per_iteration_per_warp") -> dict:
    """Per kernel of ``ptx`` (each ``(unsigned* out, unsigned c, int n, long long* t)``, one CTA of
    ``threads``): the median of 5 ``clock64`` spans at each n of :data:`N`, and under ``key``
    ``(cycles[N1] - cycles[N0]) / ((N1 - N0) x kernels[name])``: with 1,024 threads and 8, the
    cycles of one loop iteration per warp of a sub-partition (8 warps each); with one warp and a
    chain's steps a loop trip, the cycles of one dependent step."""
    import cupy

    mod = cupy.RawModule(path=str(ptx))
    out = cupy.zeros(threads, cupy.uint32)
    t = cupy.zeros(1, cupy.int64)
    res = {}
    for name, per in kernels.items():
        f = mod.get_function(name)
        cyc = []
        for n in N:
            vals = []
            for _ in range(5):
                f((1,), (threads,), (out, cupy.uint32(7), cupy.int32(n), t))
                vals.append(int(t.get()[0]))
            cyc.append(sorted(vals)[2])
        res[name] = {"cycles": dict(zip(map(str, N), cyc)), key: (cyc[1] - cyc[0]) / ((N[1] - N[0]) * per)}
    return res


def main() -> None:
    json.dump(measure(PTX, dict.fromkeys(KERNELS, 8)), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
