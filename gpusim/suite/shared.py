"""Shared-memory family: ``cuda/shared.cu`` -> ``ptx/shared.ptx``.

Owns the transposes (naive, bank-conflicted, padded, swizzled) and the strided shared reads.
Imports numpy, the standard library and the suite's own core (:mod:`.case`, :mod:`.launch`)
only: never gpusim's engines, never cupy.
"""

from __future__ import annotations

import numpy as np

from .case import Case, SizeError
from .launch import Launcher, cdiv, uniform_f32


def _transpose_run(kernel: str):
    def run(xp, n, rng):
        a = uniform_f32(rng, n * n).reshape(n, n)
        L = Launcher(xp, "shared.ptx")
        d_in = L.upload("in", a)
        d_out = xp.zeros((n, n), np.float32)
        L(kernel, (cdiv(n, 32), cdiv(n, 32)), (32, 32), (d_in, d_out, np.int32(n)))
        return L.result({"out": d_out.get()}, {"out": np.ascontiguousarray(a.T)})
    return run


_SHARED_STRIDES = (1, 2, 4, 32, 33)


def _run_shared_stride(xp, n, rng):
    if n % 1024:
        raise SizeError(f"shared_stride: n={n} must be a multiple of 1024 (one buffer per block)")
    a = uniform_f32(rng, n)
    blocks = n // 1024
    L = Launcher(xp, "shared.ptx")
    d_in = L.upload("in", a)
    outs, exps = {}, {}
    t = np.arange(256)
    for s in _SHARED_STRIDES:
        d_out = xp.zeros(blocks * 256, np.float32)
        L("shared_stride", (blocks,), (256,), (d_in, d_out, np.uint32(s)))
        outs[f"out_s{s}"] = d_out.get()
        exps[f"out_s{s}"] = a.reshape(blocks, 1024)[:, (t * s) % 1024].reshape(-1)
    return L.result(outs, exps)


_M = 2**20


#: this family's cases, in suite order (all launch ``shared.ptx``)
CASE_LIST: list[Case] = [
    Case("transpose_naive", "shared", "shared.ptx", "transpose_naive", 1024, 48, _transpose_run("transpose_naive"),
         "transpose without shared memory: coalesced reads, strided writes", n_means="matrix side (n x n)"),
    Case("transpose_conflict", "shared", "shared.ptx", "transpose_conflict", 1024, 48,
         _transpose_run("transpose_conflict"),
         "shared tile[32][32] read by column: 32-way bank conflict", n_means="matrix side (n x n)"),
    Case("transpose_padded", "shared", "shared.ptx", "transpose_padded", 1024, 48,
         _transpose_run("transpose_padded"),
         "shared tile[32][33]: padding removes the bank conflict", n_means="matrix side (n x n)"),
    Case("transpose_swizzled", "shared", "shared.ptx", "transpose_swizzled", 1024, 48,
         _transpose_run("transpose_swizzled"),
         "shared tile[32][32] with XOR-swizzled column (ty ^ tx): no bank conflict",
         n_means="matrix side (n x n)"),
    Case("shared_stride", "shared", "shared.ptx", "shared_stride", _M, 4096, _run_shared_stride,
         f"strided shared reads buf[(t*stride) % 1024], strides {_SHARED_STRIDES}: gcd(stride,32)-way conflicts",
         n_means="input floats (multiple of 1024)"),
]
