"""Instruction-level-parallelism family: ``cuda/ilp.cu`` -> ``ptx/ilp.ptx``.

Owns the FMA cases at 1, 2 and 4 independent elements per thread. Imports numpy, the standard
library and the suite's own core (:mod:`.case`, :mod:`.launch`) only: never gpusim's engines,
never cupy.
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .launch import Launcher, cdiv, int_f32


def _ilp_run(kernel: str, per_block: int):
    def run(xp, n, rng):
        a = int_f32(rng, n, -64, 64, 1 / 8)
        b = int_f32(rng, n, -64, 64, 1 / 8)
        c = int_f32(rng, n, -4096, 4096, 1 / 64)
        L = Launcher(xp, "ilp.ptx")
        d_a, d_b, d_c = L.upload("a", a), L.upload("b", b), L.upload("c", c)
        L(kernel, (cdiv(n, per_block),), (256,), (d_a, d_b, d_c, np.uint32(n)))
        # c + a*b: multiples of 1/64 below 2**10 -- exact in float32, fused or not
        exp = (c.astype(np.float64) + a.astype(np.float64) * b.astype(np.float64)).astype(np.float32)
        return L.result({"c": d_c.get()}, {"c": exp})
    return run


_M = 2**20


#: this family's cases, in suite order (all launch ``ilp.ptx``)
CASE_LIST: list[Case] = [
    Case("ilp_fma_1", "ilp", "ilp.ptx", "ilp_fma_1", _M, 3000, _ilp_run("ilp_fma_1", 256),
         "c += a*b, one element per thread: load -> FFMA -> store fully dependent"),
    Case("ilp_fma_unroll2_grid", "ilp", "ilp.ptx", "ilp_fma_unroll2_grid", _M, 3000,
         _ilp_run("ilp_fma_unroll2_grid", 512),
         "#pragma unroll 2 over a grid stride (run-time stride): two independent elements per thread"),
    Case("ilp_fma_unroll2_block", "ilp", "ilp.ptx", "ilp_fma_unroll2_block", _M, 3000,
         _ilp_run("ilp_fma_unroll2_block", 512),
         "#pragma unroll 2 over a constant block stride: statically analysable addresses"),
    Case("ilp_fma_unroll4_block", "ilp", "ilp.ptx", "ilp_fma_unroll4_block", _M, 3000,
         _ilp_run("ilp_fma_unroll4_block", 1024),
         "#pragma unroll 4 over a constant block stride: four loads in flight per thread"),
]
