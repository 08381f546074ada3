"""Matrix-multiply family: ``cuda/matmul.cu`` -> ``ptx/matmul.ptx``.

Owns the matmul cases (naive, shared tiles, register tiles) and their exact small-integer
oracle. Imports numpy, the standard library and the suite's own core (:mod:`.case`,
:mod:`.launch`) only: never gpusim's engines, never cupy.
"""

from __future__ import annotations

import numpy as np

from .case import Case, SizeError
from .launch import Launcher, cdiv, int_f32


def _matmul_exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for small-integer float32 matrices: every partial sum is exact, so any order agrees."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def _matmul_inputs(rng, n):
    return int_f32(rng, (n, n), -4, 4), int_f32(rng, (n, n), -4, 4)


def _run_matmul_naive(xp, n, rng):
    a, b = _matmul_inputs(rng, n)
    L = Launcher(xp, "matmul.ptx")
    d_a, d_b = L.upload("A", a), L.upload("B", b)
    d_c = xp.zeros((n, n), np.float32)
    L("matmul_naive", (cdiv(n, 32), cdiv(n, 32)), (32, 32), (d_a, d_b, d_c, np.int32(n)))
    return L.result({"C": d_c.get()}, {"C": _matmul_exact(a, b)})


def _run_matmul_tiled(xp, n, rng):
    a, b = _matmul_inputs(rng, n)
    L = Launcher(xp, "matmul.ptx")
    d_m, d_n = L.upload("M", a), L.upload("N", b)
    d_out = xp.zeros((n, n), np.float32)
    h = w = k = np.int32(n)
    L("matmul_tiled", (cdiv(n, 16), cdiv(n, 16)), (16, 16), (d_out, d_m, d_n, h, w, k))
    return L.result({"out": d_out.get()}, {"out": _matmul_exact(a, b)})


def _run_matmul_regtile(xp, n, rng):
    if n % 4:
        raise SizeError(f"matmul_regtile: n={n} must be a multiple of V=4")
    a, b = _matmul_inputs(rng, n)
    L = Launcher(xp, "matmul.ptx")
    d_a, d_b = L.upload("A", a), L.upload("B", b)
    d_c = xp.zeros((n, n), np.float32)
    g = cdiv(n // 4, 16)
    L("matmul_regtile", (g, g), (16, 16), (d_a, d_b, d_c, np.int32(n)))
    return L.result({"C": d_c.get()}, {"C": _matmul_exact(a, b)})


def _run_matmul_smem_regtile(xp, n, rng):
    if n % 64:
        raise SizeError(f"matmul_smem_regtile: n={n} must be a multiple of L=64")
    at, b = _matmul_inputs(rng, n)
    L = Launcher(xp, "matmul.ptx")
    d_at, d_b = L.upload("At", at), L.upload("B", b)
    d_c = xp.zeros((n, n), np.float32)
    L("matmul_smem_regtile", (n // 64, n // 64), (16, 16), (d_at, d_b, d_c, np.int32(n)))
    return L.result({"C": d_c.get()}, {"C": _matmul_exact(at.T, b)})


#: this family's cases, in suite order (all launch ``matmul.ptx``)
CASE_LIST: list[Case] = [
    Case("matmul_naive", "matmul", "matmul.ptx", "matmul_naive", 256, 40, _run_matmul_naive,
         "matmul, one thread per output element (2N^3 global loads; row index from threadIdx.x)",
         n_means="matrix side N (N x N)"),
    Case("matmul_tiled", "matmul", "matmul.ptx", "matmul_tiled", 256, 40, _run_matmul_tiled,
         "matmul with 16x16 shared-memory tiles (each input read N/16 times)",
         n_means="matrix side N (N x N)"),
    Case("matmul_regtile", "matmul", "matmul.ptx", "matmul_regtile", 256, 40, _run_matmul_regtile,
         "matmul with register tiling: each thread computes a 4x4 block of C",
         n_means="matrix side N (N x N, multiple of 4)"),
    Case("matmul_smem_regtile", "matmul", "matmul.ptx", "matmul_smem_regtile", 256, 64, _run_matmul_smem_regtile,
         "matmul with 64x64 block tiles in shared memory (cooperative fetching) + 4x4 register tiles; "
         "C = At^T B as the notes index A[k][row]",
         n_means="matrix side N (N x N, multiple of 64)"),
]
