"""The seeds' int32 reduction family: ``cuda/reduce_int.cu`` -> ``ptx/reduce_int.ptx``.

Owns the cases of seed 003's A100 table (int32 ``reduce0`` .. ``reduce6`` and the
elements-per-thread variants ``reduce7_1`` .. ``reduce7_1024``), each with a numpy oracle
(integer sums wrap as ``add.s32`` does, so any order is exact: every case is bit-exact).
A family of :data:`~.registry.SEED_FAMILIES`: kept out of ``gpusim.suite.CASES``;
:mod:`gpusim.suite.seeds` collects it as ``SEED_CASES`` beside the tables.

Imports numpy, the standard library and the suite's own core (:mod:`.case`, :mod:`.launch`)
only: never gpusim's engines, never cupy.
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .launch import Launcher, cdiv, pad

__all__ = ["CASE_LIST", "REDUCE7_K"]

_BLOCK = 256
_PTX = "reduce_int.ptx"
#: the elements-per-thread variants of the A100 table: reduce7_K loads K pairs per thread
REDUCE7_K = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def _ints(rng: np.random.Generator, n: int) -> np.ndarray:
    """n int32 in [-1000, 1000] (drawn as int32: 2**29 of them take 2 GiB, no int64 copy)."""
    return rng.integers(-1000, 1001, size=n, dtype=np.int32)


def _pad(x: np.ndarray, length: int) -> np.ndarray:
    """x zero padded to ``length``; x itself (no 2 GiB copy) when it is that long already."""
    return x if x.size == length else pad(x, length)


def _wrap32(x: np.ndarray) -> np.ndarray:
    """int64 sums as the int32 that ``add.s32`` leaves (two's complement wrap)."""
    return x.astype(np.int64).astype(np.uint64).astype(np.uint32).view(np.int32)


def _block_sums(x: np.ndarray, blocks: int, per_block: int) -> np.ndarray:
    """Sum of each run of ``per_block`` consecutive elements (zero padded): reduce0..reduce5."""
    return _wrap32(_pad(x, blocks * per_block).reshape(blocks, per_block).sum(axis=1, dtype=np.int64))


def _strided_sums(x: np.ndarray, grid: int, iters: int) -> np.ndarray:
    """Per-block sums of a grid-stride loop over pairs: block b sums the 512-element runs
    b, b + grid, b + 2 grid, ... (``iters`` of them): reduce6 and reduce7_K."""
    y = _pad(x, iters * grid * 2 * _BLOCK).reshape(iters, grid, 2 * _BLOCK)
    return _wrap32(y.sum(axis=(0, 2), dtype=np.int64))


def _simple(kernel: str, per_block: int):
    """reduce0..reduce5: ``cdiv(n, per_block)`` blocks of 256 threads, one partial per block."""
    def run(xp, n, rng):
        x = _ints(rng, n)
        blocks = cdiv(n, per_block)
        L = Launcher(xp, _PTX)
        d_in = L.upload("g_idata", x)
        d_out = xp.zeros(blocks, np.int32)
        L(kernel, (blocks,), (_BLOCK,), (d_in, d_out, np.uint32(n)))
        return L.result({"partials": d_out.get()}, {"partials": _block_sums(x, blocks, per_block)})
    return run


def _cascaded(kernel: str, k: int | None):
    """reduce6 (k None: grid cdiv(n, 512), the loop runs while i < n) and reduce7_K
    (grid cdiv(n, 512 K), K trips)."""
    def run(xp, n, rng):
        x = _ints(rng, n)
        grid = cdiv(n, 2 * _BLOCK * (k or 1))
        iters = k if k is not None else cdiv(n, 2 * _BLOCK * grid)
        L = Launcher(xp, _PTX)
        d_in = L.upload("g_idata", x)
        d_out = xp.zeros(grid, np.int32)
        L(kernel, (grid,), (_BLOCK,), (d_in, d_out, np.uint32(n)))
        return L.result({"partials": d_out.get()}, {"partials": _strided_sums(x, grid, iters)})
    return run


_N = 2**20
_G = "seeds_a100"
#: the A100 table's kernels, in table order (all launch ``reduce_int.ptx``)
CASE_LIST: list[Case] = [
    Case("reduce0", _G, _PTX, "reduce0", _N, 2000, _simple("reduce0", _BLOCK),
         "int32 interleaved addressing, divergent tid % (2*s) (seed 003's reduce0)"),
    Case("reduce1", _G, _PTX, "reduce1", _N, 2000, _simple("reduce1", _BLOCK),
         "int32 interleaved addressing, strided index: no divergence, bank conflicts"),
    Case("reduce2", _G, _PTX, "reduce2", _N, 2000, _simple("reduce2", _BLOCK),
         "int32 sequential addressing: no bank conflicts"),
    Case("reduce3", _G, _PTX, "reduce3", _N, 3000, _simple("reduce3", 2 * _BLOCK),
         "int32 first add during global load: half the blocks"),
    Case("reduce4", _G, _PTX, "reduce4", _N, 3000, _simple("reduce4", 2 * _BLOCK),
         "int32 unrolled last warp (volatile shared memory)"),
    Case("reduce5", _G, _PTX, "reduce5", _N, 3000, _simple("reduce5", 2 * _BLOCK),
         "int32 completely unrolled tree (block size a template parameter)"),
    Case("reduce6", _G, _PTX, "reduce6", _N, 3000, _cascaded("reduce6", None),
         "int32 multiple elements per thread: grid-stride loop into shared memory"),
    *[Case(f"reduce7_{k}", _G, _PTX, f"reduce7_{k}", _N, 3000, _cascaded(f"reduce7_{k}", k),
           f"int32 algorithm cascading: {k} pair{'s' if k > 1 else ''} of elements per thread")
      for k in REDUCE7_K],
]
