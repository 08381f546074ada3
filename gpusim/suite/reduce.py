"""Reduction family: ``cuda/reduce.cu`` -> ``ptx/reduce.ptx`` (float v0..v7, atomics).

Owns the reduce cases and their oracles, each of which reproduces the kernel's float32 operation
order exactly. Imports numpy, the standard library and the suite's own core (:mod:`.case`,
:mod:`.launch`) only: never gpusim's engines, never cupy.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .case import Case
from .launch import Launcher, cdiv, pad, uniform_f32


def _tree_sequential(x: np.ndarray) -> np.ndarray:
    """Rows of x (B, S), S a power of two, reduced as ``s[t] += s[t + s]`` for s = S/2 .. 1."""
    x = np.array(x, dtype=np.float32, copy=True)
    s = x.shape[1] // 2
    while s >= 1:
        x[:, :s] += x[:, s: 2 * s]
        s //= 2
    return x[:, 0].copy()


def _tree_interleaved(x: np.ndarray) -> np.ndarray:
    """Rows of x (B, S) reduced as ``s[t] += s[t + s]`` for t % 2s == 0, s = 1, 2, .. S/2 (v0, v1)."""
    x = np.array(x, dtype=np.float32, copy=True)
    s = 1
    while s < x.shape[1]:
        x[:, :: 2 * s] += x[:, s:: 2 * s]
        s *= 2
    return x[:, 0].copy()


def _first_add(x: np.ndarray, n_blocks: int, block: int = 256) -> np.ndarray:
    """(B, block) of ``g[i] + g[i + blockDim]`` for blocks of 2*block elements (v3..v7)."""
    y = pad(x, n_blocks * 2 * block).reshape(n_blocks, 2, block)
    return y[:, 0, :] + y[:, 1, :]


def _butterfly(v: np.ndarray, width: int) -> np.ndarray:
    """``v += shfl_xor(v, m)`` for m = width/2 .. 1 along the last axis (width lanes)."""
    v = np.array(v, dtype=np.float32, copy=True)
    lanes = np.arange(v.shape[-1])
    m = width // 2
    while m >= 1:
        v = v + v[..., lanes ^ m]
        m //= 2
    return v


def _block_shfl_xor(first: np.ndarray) -> np.ndarray:
    """v7's block sum from the (B, 256) per-thread values: warp butterflies, then 8 warp sums."""
    b = first.shape[0]
    warp_sums = _butterfly(first.reshape(b, 8, 32), 32)[:, :, 0]      # lane 0 of each warp
    lanes = np.zeros((b, 32), np.float32)
    lanes[:, :8] = warp_sums                                           # lane < NUM_WARPS
    return _butterfly(lanes, 8)[:, 0]


def _block_shfl_down(first: np.ndarray) -> np.ndarray:
    b = first.shape[0]
    warp_sums = _tree_sequential(first.reshape(b * 8, 32)).reshape(b, 8)
    return _tree_sequential(warp_sums)


def _cascade(x: np.ndarray, grid: int, block: int = 256) -> np.ndarray:
    """reduce_v6's per-block sums: grid-stride ``mySum += g[i]; mySum += g[i+block]``, then a tree."""
    sweep = 2 * block * grid
    iters = max(1, cdiv(x.size, sweep))
    y = pad(x, iters * sweep).reshape(iters, grid, 2, block)
    acc = np.zeros((grid, block), np.float32)
    for it in range(iters):
        acc = acc + y[it, :, 0, :]
        acc = acc + y[it, :, 1, :]
    return _tree_sequential(acc)


def _strided_thread_sums(x: np.ndarray, grid: int, block: int = 256) -> np.ndarray:
    """(grid, block) of per-thread grid-stride sums ``sum += g[i]``, i = t, t + grid*block, ..."""
    stride = grid * block
    iters = max(1, cdiv(x.size, stride))
    y = pad(x, iters * stride).reshape(iters, grid, block)
    acc = np.zeros((grid, block), np.float32)
    for it in range(iters):
        acc = acc + y[it]
    return acc



_RED_BLOCK = 256


def _reduce_run(kernel: str, per_block: int, oracle: Callable[[np.ndarray, int], np.ndarray]):
    def run(xp, n, rng):
        x = uniform_f32(rng, n)
        blocks = cdiv(n, per_block)
        L = Launcher(xp, "reduce.ptx")
        d_in = L.upload("g_idata", x)
        d_out = xp.zeros(blocks, np.float32)
        L(kernel, (blocks,), (_RED_BLOCK,), (d_in, d_out, np.uint32(n)))
        return L.result({"partials": d_out.get()}, {"partials": oracle(x, blocks)})
    return run


def _oracle_interleaved(x, blocks):
    return _tree_interleaved(pad(x, blocks * _RED_BLOCK).reshape(blocks, _RED_BLOCK))


def _oracle_sequential(x, blocks):
    return _tree_sequential(pad(x, blocks * _RED_BLOCK).reshape(blocks, _RED_BLOCK))


def _oracle_first_add(x, blocks):
    return _tree_sequential(_first_add(x, blocks))


def _oracle_shfl_xor(x, blocks):
    return _block_shfl_xor(_first_add(x, blocks))


def _oracle_shfl_down(x, blocks):
    return _block_shfl_down(_first_add(x, blocks))


def _v6_grid(n: int) -> int:
    """Cascading: at most 64 blocks, at least ~8 loop steps per thread when n allows."""
    return max(1, min(64, n // (2 * _RED_BLOCK * 8)))


def _run_reduce_v6(xp, n, rng):
    x = uniform_f32(rng, n)
    grid = _v6_grid(n)
    smem = _RED_BLOCK * 4
    L = Launcher(xp, "reduce.ptx")
    d_in = L.upload("g_idata", x)
    d_part = xp.zeros(grid, np.float32)
    d_sum = xp.zeros(1, np.float32)
    # launch 1: grid blocks -> grid partials; launch 2 (kernel launch = global sync): 1 block
    L("reduce_v6", (grid,), (_RED_BLOCK,), (d_in, d_part, np.uint32(n)), shared_mem=smem)
    L("reduce_v6", (1,), (_RED_BLOCK,), (d_part, d_sum, np.uint32(grid)), shared_mem=smem)
    part = _cascade(x, grid)
    total = _cascade(part, 1)
    return L.result({"partials": d_part.get(), "sum": d_sum.get()}, {"partials": part, "sum": total})


def _atomic_grid(n: int) -> int:
    return max(1, min(64, cdiv(n, _RED_BLOCK)))


def _run_reduce_atomic_int(xp, n, rng):
    x = rng.integers(-1000, 1001, size=n).astype(np.int32)
    grid = _atomic_grid(n)
    L = Launcher(xp, "reduce.ptx")
    d_in = L.upload("g_idata", x)
    d_out = xp.zeros(1, np.int32)
    L("reduce_atomic_int", (grid,), (_RED_BLOCK,), (d_in, d_out, np.uint32(n)))
    expected = np.array([np.sum(x, dtype=np.int64)], dtype=np.int64).astype(np.int32)
    return L.result({"sum": d_out.get()}, {"sum": expected})


_ATOMIC_F32_RTOL = 1e-5


def _run_reduce_atomic_f32(xp, n, rng):
    x = uniform_f32(rng, n)
    grid = _atomic_grid(n)
    L = Launcher(xp, "reduce.ptx")
    d_in = L.upload("g_idata", x)
    d_out = xp.zeros(1, np.float32)
    L("reduce_atomic_f32", (grid,), (_RED_BLOCK,), (d_in, d_out, np.uint32(n)))
    partials = _block_shfl_xor(_strided_thread_sums(x, grid))      # exact per block
    expected = np.array([np.sum(partials, dtype=np.float64)], dtype=np.float32)
    note = ("the <= 64 block partials (each bit-exact) are combined by atomicAdd in an unspecified "
            "order; for non-negative inputs any order is within (64-1)*2**-24 ~ 3.8e-6 relative of the "
            "exactly rounded sum")
    return L.result({"sum": d_out.get()}, {"sum": expected}, exact=False, rtol=_ATOMIC_F32_RTOL, note=note)


_M = 2**20


#: this family's cases, in suite order (all launch ``reduce.ptx``)
CASE_LIST: list[Case] = [
    Case("reduce_v0", "reduce", "reduce.ptx", "reduce_v0", _M, 3000,
         _reduce_run("reduce_v0", _RED_BLOCK, _oracle_interleaved),
         "reduction v0: interleaved addressing, divergent `tid % (2*s)` branch"),
    Case("reduce_v1", "reduce", "reduce.ptx", "reduce_v1", _M, 3000,
         _reduce_run("reduce_v1", _RED_BLOCK, _oracle_interleaved),
         "reduction v1: interleaved addressing with strided index (no divergence, shared bank conflicts)"),
    Case("reduce_v2", "reduce", "reduce.ptx", "reduce_v2", _M, 3000,
         _reduce_run("reduce_v2", _RED_BLOCK, _oracle_sequential),
         "reduction v2: sequential addressing (conflict-free shared memory)"),
    Case("reduce_v3", "reduce", "reduce.ptx", "reduce_v3", _M, 3000,
         _reduce_run("reduce_v3", 2 * _RED_BLOCK, _oracle_first_add),
         "reduction v3: first add during global load (half the blocks, no idle threads)"),
    Case("reduce_v4", "reduce", "reduce.ptx", "reduce_v4", _M, 3000,
         _reduce_run("reduce_v4", 2 * _RED_BLOCK, _oracle_first_add),
         "reduction v4: unrolled last warp on volatile shared memory, no __syncthreads"),
    Case("reduce_v5", "reduce", "reduce.ptx", "reduce_v5", _M, 3000,
         _reduce_run("reduce_v5", 2 * _RED_BLOCK, _oracle_first_add),
         "reduction v5: completely unrolled (block size as a template constant)"),
    Case("reduce_v6", "reduce", "reduce.ptx", "reduce_v6", _M, 3000, _run_reduce_v6,
         "reduction v6: algorithm cascading, many elements per thread (grid-stride), dynamic shared "
         "memory; a second launch reduces the partials"),
    Case("reduce_v7", "reduce", "reduce.ptx", "reduce_v7", _M, 3000,
         _reduce_run("reduce_v7", 2 * _RED_BLOCK, _oracle_shfl_xor),
         "reduction v7: warp shuffle __shfl_xor_sync butterfly (seed 000's reduce_v5)"),
    Case("reduce_v7_down", "reduce", "reduce.ptx", "reduce_v7_down", _M, 3000,
         _reduce_run("reduce_v7_down", 2 * _RED_BLOCK, _oracle_shfl_down),
         "reduction v7 with __shfl_down_sync instead of the xor butterfly"),
    Case("reduce_atomic_int", "reduce", "reduce.ptx", "reduce_atomic_int", _M, 3000, _run_reduce_atomic_int,
         "integer sum finished with shared and global atomicAdd (atomics as the global sync)"),
    Case("reduce_atomic_f32", "reduce", "reduce.ptx", "reduce_atomic_f32", _M, 3000, _run_reduce_atomic_f32,
         "float sum: shuffle block reduction, global atomicAdd of block partials (order not defined)"),
]
