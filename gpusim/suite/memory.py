"""Memory-access family: ``cuda/memory.cu`` -> ``ptx/memory.ptx``.

Owns the copy, AoS/SoA, local-memory and fp16 cases, and the occupancy and block-size sweeps of
the float4 copy. Imports numpy, the standard library and the suite's own core (:mod:`.case`,
:mod:`.launch`, :mod:`.occupancy`) only: never gpusim's engines, never cupy.
"""

from __future__ import annotations

import numpy as np

from .case import Case, SizeError
from .launch import Launcher, cdiv, int_f32, u32, uniform_f32
from .occupancy import COPY_OCCUPANCY_SMEM, OCC_BLOCK

_COPY_OFFSET = 1
_COPY_STRIDE = 4


def _run_copy_offset(xp, n, rng):
    a = uniform_f32(rng, n)
    L = Launcher(xp, "memory.ptx")
    d_a = L.upload("a", a)
    d_b = xp.zeros(n, np.float32)
    L("copy_offset", (cdiv(n - _COPY_OFFSET, 256),), (256,), (d_a, d_b, np.uint32(n), np.uint32(_COPY_OFFSET)))
    exp = np.zeros(n, np.float32)
    exp[_COPY_OFFSET:] = a[_COPY_OFFSET:]
    return L.result({"b": d_b.get()}, {"b": exp})


def _run_copy_stride(xp, n, rng):
    a = uniform_f32(rng, n)
    L = Launcher(xp, "memory.ptx")
    d_a = L.upload("a", a)
    d_b = xp.zeros(n, np.float32)
    L("copy_stride", (cdiv(cdiv(n, _COPY_STRIDE), 256),), (256,), (d_a, d_b, np.uint32(n), np.uint32(_COPY_STRIDE)))
    exp = np.zeros(n, np.float32)
    exp[::_COPY_STRIDE] = a[::_COPY_STRIDE]
    return L.result({"b": d_b.get()}, {"b": exp})


def _run_copy_vec4(xp, n, rng):
    if n % 4:
        raise SizeError(f"copy_vec4: n={n} must be a multiple of 4 (float4 elements)")
    a = uniform_f32(rng, n)
    L = Launcher(xp, "memory.ptx")
    d_a = L.upload("a", a)
    d_b = xp.zeros(n, np.float32)
    L("copy_vec4", (cdiv(n // 4, 256),), (256,), (d_a, d_b, np.uint32(n // 4)))
    return L.result({"b": d_b.get()}, {"b": a.copy()})


def _grid_stride_grid(n: int) -> int:
    """2 blocks of 256 per SM of an H100 (132 SMs) at most; fewer for small n so the loop runs."""
    return max(1, min(2 * 132, n // (256 * 8)))


def _run_copy_grid_stride(xp, n, rng):
    a = uniform_f32(rng, n)
    L = Launcher(xp, "memory.ptx")
    d_a = L.upload("a", a)
    d_b = xp.zeros(n, np.float32)
    L("copy_grid_stride", (_grid_stride_grid(n),), (256,), (d_a, d_b, np.uint32(n)))
    return L.result({"b": d_b.get()}, {"b": a.copy()})


_AOS_FIELDS = 20          # u, v, w, x[8], y[8], z
_U, _Y0 = 0, 11


def _aos_expected(data: np.ndarray) -> np.ndarray:
    exp = data.copy()
    exp[:, _U] = exp[:, _U] + np.float32(10.0)
    exp[:, _Y0] = exp[:, _Y0] + np.float32(10.0)
    return exp


def _run_aos_update(xp, n, rng):
    data = uniform_f32(rng, n * _AOS_FIELDS).reshape(n, _AOS_FIELDS)
    L = Launcher(xp, "memory.ptx")
    d = L.upload("data", data)
    L("aos_update", (cdiv(n, 256),), (256,), (d, np.uint32(n)))
    return L.result({"data": d.get()}, {"data": _aos_expected(data)})


def _run_soa_update(xp, n, rng):
    data = uniform_f32(rng, n * _AOS_FIELDS).reshape(n, _AOS_FIELDS)   # same values as AoS
    L = Launcher(xp, "memory.ptx")
    d = L.upload("soa", np.ascontiguousarray(data.T))                  # field-major (20, n)
    L("soa_update", (cdiv(n, 256),), (256,), (d, np.uint32(n)))
    return L.result({"soa": d.get()}, {"soa": np.ascontiguousarray(_aos_expected(data).T)})


_HIST_K = 16


def _run_local_hist8(xp, n, rng):
    v = u32(rng, n * _HIST_K)
    L = Launcher(xp, "memory.ptx")
    d_in = L.upload("in", v)
    d_out = xp.zeros(n * 8, np.uint32)
    L("local_hist8", (cdiv(n, 256),), (256,), (d_in, d_out, np.uint32(n), np.uint32(_HIST_K)))
    bins = (v.reshape(n, _HIST_K) & 7).astype(np.int64)
    exp = (bins[:, :, None] == np.arange(8)).sum(axis=1).astype(np.uint32).reshape(-1)
    return L.result({"out": d_out.get()}, {"out": exp})


_AXPY_ALPHA = 0.75


def _run_axpy_half(xp, n, rng):
    x = int_f32(rng, n, -512, 512, 1 / 256).astype(np.float16)
    y = int_f32(rng, n, -512, 512, 1 / 256).astype(np.float16)
    L = Launcher(xp, "memory.ptx")
    d_x, d_y = L.upload("x", x), L.upload("y", y)
    L("axpy_half", (cdiv(n, 256),), (256,), (d_x, d_y, np.float32(_AXPY_ALPHA), np.uint32(n)))
    alpha_h = np.float64(np.float16(_AXPY_ALPHA))
    # fma.rn.f16: alpha*x + y is exact in float64 (<= 12 significant bits here), then one rounding
    exp = (alpha_h * x.astype(np.float64) + y.astype(np.float64)).astype(np.float16)
    return L.result({"y": d_y.get()}, {"y": exp})


def _copy_vec4_launches(xp, n, rng, case: str, launches: list[tuple[str, int, int]]):
    """Copy the same n floats with copy_vec4 once per ``(output name, block, dynamic smem)``."""
    if n % 4:
        raise SizeError(f"{case}: n={n} must be a multiple of 4 (float4 elements)")
    a = uniform_f32(rng, n)
    L = Launcher(xp, "memory.ptx")
    d_a = L.upload("a", a)
    outs, exps = {}, {}
    for name, block, smem in launches:
        d_b = xp.zeros(n, np.float32)
        L("copy_vec4", (cdiv(n // 4, block),), (block,), (d_a, d_b, np.uint32(n // 4)), shared_mem=smem)
        outs[name] = d_b.get()
        exps[name] = a.copy()
    return L.result(outs, exps)


def _run_copy_occupancy(xp, n, rng):
    return _copy_vec4_launches(xp, n, rng, "copy_occupancy",
                               [(f"out_k{k}", OCC_BLOCK, smem) for k, smem in COPY_OCCUPANCY_SMEM.items()])


_BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)   #: copy_block_size's launches, in order (threads per block)


def _run_copy_block_size(xp, n, rng):
    return _copy_vec4_launches(xp, n, rng, "copy_block_size", [(f"out_b{b}", b, 0) for b in _BLOCK_SIZES])


_M = 2**20


#: this family's cases, in suite order (all launch ``memory.ptx``)
CASE_LIST: list[Case] = [
    Case("copy_offset", "memory", "memory.ptx", "copy_offset", _M, 3000, _run_copy_offset,
         f"misaligned copy a[i+{_COPY_OFFSET}] -> b: a warp touches 5 sectors instead of 4"),
    Case("copy_stride", "memory", "memory.ptx", "copy_stride", _M, 3000, _run_copy_stride,
         f"strided copy (stride {_COPY_STRIDE}): uncoalesced, most of each sector wasted"),
    Case("copy_vec4", "memory", "memory.ptx", "copy_vec4", _M, 4096, _run_copy_vec4,
         "vectorized float4 copy (ld/st .v4): more data per instruction",
         n_means="floats (multiple of 4)"),
    Case("copy_grid_stride", "memory", "memory.ptx", "copy_grid_stride", _M, 5000, _run_copy_grid_stride,
         "memory-bound grid-stride copy, 4 loads in flight per thread (occupancy, Little's law)"),
    Case("copy_occupancy", "memory", "memory.ptx", "copy_vec4", _M, 4096, _run_copy_occupancy,
         "occupancy cut by dynamic shared memory: the float4 copy at 1, 2, 3, 4, 6, 8 blocks/SM "
         "(COPY_OCCUPANCY_SMEM); bandwidth rises with resident warps and levels off (Little's law)",
         n_means="floats (multiple of 4)"),
    Case("copy_block_size", "memory", "memory.ptx", "copy_vec4", _M, 4096, _run_copy_block_size,
         "block size: the float4 copy with 32, 64, 128, 256, 512, 1024 threads per block over the "
         "same data (32-thread blocks hit the 32-blocks-per-SM limit: at most half the warps)",
         n_means="floats (multiple of 4)"),
    Case("aos_update", "memory", "memory.ptx", "aos_update", 2**18, 1000, _run_aos_update,
         "Array-of-Structures update of u and y[0]: 80-byte stride between threads (uncoalesced)",
         n_means="structs of 20 floats"),
    Case("soa_update", "memory", "memory.ptx", "soa_update", 2**18, 1000, _run_soa_update,
         "Structure-of-Arrays update of u and y[0]: contiguous per field (coalesced)",
         n_means="structs of 20 floats"),
    Case("local_hist8", "memory", "memory.ptx", "local_hist8", 2**16, 1000, _run_local_hist8,
         f"per-thread array indexed at run time lives in local memory ({_HIST_K} inputs, 8 bins per thread)",
         n_means="threads"),
    Case("axpy_half", "memory", "memory.ptx", "axpy_half", _M, 3000, _run_axpy_half,
         "mixed precision: fp16 storage, y = fma(alpha, x, y) in half (__hfma)"),
]
