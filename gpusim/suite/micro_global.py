"""Hand-written global-memory micro-kernels: ``ptx/micro_global.ptx`` (no ``.cu``).

Owns the coalescing cases (group ``micro``). Imports numpy, the standard library and the suite's
own core (:mod:`.case`, :mod:`.launch`) only: never gpusim's engines, never cupy.
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .launch import Launcher, cdiv, u32

_GMEM_STRIDES = (1, 2, 8, 32)
_GMEM_OFFSETS = (0, 1, 8, 31)


def _run_gmem_stride(xp, n, rng):
    v = u32(rng, n * max(_GMEM_STRIDES))
    L = Launcher(xp, "micro_global.ptx")
    d_in = L.upload("in", v)
    outs, exps = {}, {}
    for s in _GMEM_STRIDES:
        d_out = xp.zeros(n, np.uint32)
        L("gmem_stride_u32", (cdiv(n, 256),), (256,), (d_in, d_out, np.uint32(n), np.uint32(s)))
        outs[f"out_s{s}"] = d_out.get()
        exps[f"out_s{s}"] = v[np.arange(n) * s]
    return L.result(outs, exps)


def _run_gmem_offset(xp, n, rng):
    v = u32(rng, n + max(_GMEM_OFFSETS))
    L = Launcher(xp, "micro_global.ptx")
    d_in = L.upload("in", v)
    outs, exps = {}, {}
    for off in _GMEM_OFFSETS:
        d_out = xp.zeros(n, np.uint32)
        L("gmem_offset_u32", (cdiv(n, 256),), (256,), (d_in, d_out, np.uint32(n), np.uint32(off)))
        outs[f"out_off{off}"] = d_out.get()
        exps[f"out_off{off}"] = v[off: off + n].copy()
    return L.result(outs, exps)


def _run_gmem_uniform(xp, n, rng):
    v = u32(rng, cdiv(n, 32))
    L = Launcher(xp, "micro_global.ptx")
    d_in = L.upload("in", v)
    d_out = xp.zeros(n, np.uint32)
    L("gmem_uniform_u32", (cdiv(n, 256),), (256,), (d_in, d_out, np.uint32(n)))
    return L.result({"out": d_out.get()}, {"out": v[np.arange(n) // 32]})


#: this family's cases, in suite order (all launch ``micro_global.ptx``)
CASE_LIST: list[Case] = [
    Case("gmem_stride_u32", "micro", "micro_global.ptx", "gmem_stride_u32", 2**18, 1000, _run_gmem_stride,
         f"global loads a[i*stride], strides {_GMEM_STRIDES}: sectors per warp grow with the stride"),
    Case("gmem_offset_u32", "micro", "micro_global.ptx", "gmem_offset_u32", 2**18, 1000, _run_gmem_offset,
         f"global loads a[i+offset], offsets {_GMEM_OFFSETS}: misaligned warps touch one extra sector"),
    Case("gmem_uniform_u32", "micro", "micro_global.ptx", "gmem_uniform_u32", 2**18, 1000, _run_gmem_uniform,
         "global loads a[i/32]: one address per warp, one sector"),
]
