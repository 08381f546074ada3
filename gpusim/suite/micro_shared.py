"""Hand-written shared-memory micro-kernels: ``ptx/micro_shared.ptx`` (no ``.cu``).

Owns the one-warp bank-conflict cases (group ``micro``). Imports numpy, the standard library and
the suite's own core (:mod:`.case`, :mod:`.launch`) only: never gpusim's engines, never cupy.
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .launch import Launcher, u32

_MICRO_STRIDES = (1, 2, 4, 8, 16, 32, 33, 64)


def _smem_stride_run(kernel: str, words: int):
    def run(xp, n, rng):
        v = u32(rng, 32 * words)
        L = Launcher(xp, "micro_shared.ptx")
        d_in = L.upload("in", v)
        outs, exps = {}, {}
        u = (np.arange(32) + 1) & 31
        for s in _MICRO_STRIDES:
            d_out = xp.zeros(32 * words, np.uint32)
            L(kernel, (1,), (32,), (d_in, d_out, np.uint32(s)))
            outs[f"out_s{s}"] = d_out.get()
            exps[f"out_s{s}"] = v.reshape(32, words)[u].reshape(-1)
        return L.result(outs, exps)
    return run


_SAME_WORD_SHIFTS = (0, 2, 5)


def _run_smem_same_word(xp, n, rng):
    v = u32(rng, 32)
    L = Launcher(xp, "micro_shared.ptx")
    d_in = L.upload("in", v)
    outs, exps = {}, {}
    for sh in _SAME_WORD_SHIFTS:
        d_out = xp.zeros(32, np.uint32)
        L("smem_same_word_u32", (1,), (32,), (d_in, d_out, np.uint32(sh)))
        outs[f"out_shift{sh}"] = d_out.get()
        exps[f"out_shift{sh}"] = v[np.arange(32) >> sh]
    return L.result(outs, exps)


#: this family's cases, in suite order (all launch ``micro_shared.ptx``)
CASE_LIST: list[Case] = [
    Case("smem_stride_u32", "micro", "micro_shared.ptx", "smem_stride_u32", 32, 32,
         _smem_stride_run("smem_stride_u32", 1),
         f"one warp, st/ld.shared.u32 at lane*stride*4, strides {_MICRO_STRIDES}: bank-conflict degree",
         n_means="lanes (fixed: one warp)"),
    Case("smem_stride_v2_u32", "micro", "micro_shared.ptx", "smem_stride_v2_u32", 32, 32,
         _smem_stride_run("smem_stride_v2_u32", 2),
         "one warp, st/ld.shared.v2.u32 (8-byte elements) at lane*stride*8", n_means="lanes (fixed: one warp)"),
    Case("smem_stride_v4_u32", "micro", "micro_shared.ptx", "smem_stride_v4_u32", 32, 32,
         _smem_stride_run("smem_stride_v4_u32", 4),
         "one warp, st/ld.shared.v4.u32 (16-byte elements) at lane*stride*16", n_means="lanes (fixed: one warp)"),
    Case("smem_same_word_u32", "micro", "micro_shared.ptx", "smem_same_word_u32", 32, 32, _run_smem_same_word,
         f"one warp reads word lane >> shift, shifts {_SAME_WORD_SHIFTS}: broadcast/multicast, no conflict",
         n_means="lanes (fixed: one warp)"),
]
