"""Half-precision matrix-multiply family on the tensor cores: ``cuda/hgemm.cu`` -> ``ptx/hgemm.ptx``.

Owns the HGEMM case (f16 inputs, f32 accumulators and output; ldmatrix + mma.sync.m16n8k16) and
its oracle: the kernel's order of operations (one ``mma`` per 16-wide k step, accumulating into C)
with the tensor core's arithmetic as measured on an H100 (:func:`tensor_core_step`; the same
algorithm as ``isa/mma.py``, restated here because the suite imports numpy only). The inputs are
random normal f16 values, so the result depends on that rounding: the oracle is bit-exact, not a
tolerance. Imports numpy, the standard library and the suite's own core (:mod:`.case`,
:mod:`.launch`) only: never gpusim's engines, never cupy.
"""

from __future__ import annotations

import numpy as np

from .case import Case, SizeError
from .launch import Launcher

_NONE = -(1 << 20)          # the exponent of a zero term


def _f16_exponent(x: np.ndarray) -> np.ndarray:
    """Unbiased exponents of f16 values, subnormals at -14."""
    field = (x.view(np.uint16) >> np.uint16(10)) & np.uint16(0x1F)
    return np.maximum(field.astype(np.int64), 1) - 15


def tensor_core_step(acc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One ``mma.sync ... .f32.f16.f16.f32`` step on whole matrices: ``acc + a @ b`` with the
    H100's tensor-core arithmetic for each element (finite inputs).

    ``acc``: (M, N) float32; ``a``: (M, 16) float16; ``b``: (16, N) float16. Returns (M, N)
    float32. Per element: the 16 exact products and ``acc`` are truncated toward zero to
    multiples of ``2**(E - 25)``, E the largest of the products' exponent sums and of acc's
    exponent, added exactly, and the sum rounded toward zero to f32 (zero: +0.0; 2**128 or
    more: inf). Measured: ``validation/reports/h100/tensor_core/``; see ``isa/mma.py``.
    """
    av, bv = a.astype(np.float64), b.astype(np.float64)
    ea, eb = _f16_exponent(a), _f16_exponent(b)
    p = av[:, None, :] * bv.T[None, :, :]                                 # (M, N, 16), exact
    nz = (av != 0)[:, None, :] & (bv.T != 0)[None, :, :]
    ep = np.where(nz, ea[:, None, :] + eb.T[None, :, :], _NONE).max(-1)
    c = acc.astype(np.float64)
    _, fe = np.frexp(np.where(c != 0, c, 1.0))
    ec = np.where(c != 0, np.maximum(fe - 1, -126), _NONE)
    E = np.maximum(ep, ec)
    E = np.where(E == _NONE, 0, E)
    q = np.ldexp(1.0, E - 25)
    s = (np.trunc(c / q) + np.trunc(p / q[..., None]).sum(-1)) * q          # exact in float64
    with np.errstate(over="ignore"):
        r = s.astype(np.float32)
        r = np.where(np.abs(r.astype(np.float64)) > np.abs(s), np.nextafter(r, np.float32(0)), r)
        r = np.where(np.abs(s) >= 2.0 ** 128, np.copysign(np.float32(np.inf), s).astype(np.float32), r)
    return np.where(r == 0, np.float32(0.0), r).astype(np.float32)


def hgemm_oracle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` as ``hgemm_mma`` computes it: C starts at +0.0 and takes one tensor-core step
    per 16-wide slice of k, in increasing k. ``a``, ``b``: (N, N) float16; returns float32."""
    n = a.shape[0]
    acc = np.zeros((n, b.shape[1]), np.float32)
    for k0 in range(0, a.shape[1], 16):
        acc = tensor_core_step(acc, a[:, k0:k0 + 16], b[k0:k0 + 16, :])
    return acc


def _run_hgemm(xp, n, rng):
    if n % 64:
        raise SizeError(f"hgemm_mma: n={n} must be a multiple of 64")
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    L = Launcher(xp, "hgemm.ptx")
    d_a, d_b = L.upload("A", a), L.upload("B", b)
    d_c = xp.zeros((n, n), np.float32)
    L("hgemm_mma", (n // 64, n // 64), (128,), (d_a, d_b, d_c, np.int32(n)))
    return L.result({"C": d_c.get()}, {"C": hgemm_oracle(a, b)})


#: this family's cases, in suite order (all launch ``hgemm.ptx``)
CASE_LIST: list[Case] = [
    Case("hgemm_mma", "matmul", "hgemm.ptx", "hgemm_mma", 512, 64, _run_hgemm,
         "mixed-precision matmul on the tensor cores: f16 inputs staged in shared memory, ldmatrix fragments, "
         "mma.sync.m16n8k16 with f32 accumulators (64x64 tile per 4-warp block)",
         n_means="matrix side N (N x N, multiple of 64)"),
]
