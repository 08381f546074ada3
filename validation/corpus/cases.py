"""The generalization corpus's launch cases (issue #28): kernels, launch shapes, inputs, oracles.

Owns :data:`CASES` (one :class:`Case` per launch: a kernel of ``kernels/<family>.cu`` at a size),
:func:`inputs` (the numpy arguments of a case at a size, from a seed), :func:`reference` (the numpy
oracle of its outputs), :func:`canonical` (the form of the outputs that is compared and digested),
:func:`split` (``split.toml``: family -> ``"fit"`` | ``"test"``) and :func:`source`.

Every case has two sizes: ``gpu`` fills an H100 (132 SMs) for many waves of CTAs where the kernel's
work allows (the docstring of each builder says what the size counts), ``small`` is a few CTAs for
the tests. The same seed gives the same inputs on the GPU (``on_gpu.py``) and on gpusim
(``simulate.py``).

Oracles: integer outputs are exact. Float outputs are exact too wherever the inputs make every
rounding vanish (small integers and multiples of powers of two, so any order of additions and any
fused multiply-add give the same bits: atomics, SpMV, stencils, convolution, GEMV/GEMM, gather and
scatter); softmax, layer norm, attention and the FFTs are compared within :attr:`Case.tol` (relative,
absolute) against float64 oracles, in the small tests only: bit-exactness against the H100 is checked
separately, by the digests of ``on_gpu.py`` and ``simulate.py``. Outputs whose bytes depend on the
order in which threads won atomics (the old values an ``atom`` returns, a frontier queue, a hash
table's slots) are compared and digested in a canonical form (:attr:`Case.canon`: sorted), which
every correct execution shares.

Imports numpy and the standard library only: never gpusim, never cupy.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

__all__ = ["Case", "CASES", "BY_NAME", "FAMILIES", "OPTIONS", "KERNEL_DIR", "inputs", "reference", "canonical",
           "digests", "split", "source"]

#: the kernels' folder (one ``<family>.cu`` per family)
KERNEL_DIR = Path(__file__).resolve().parent / "kernels"
#: NVRTC options, the same on both sides (CuPy and gpusim append ``-ftz=true`` and the target)
OPTIONS = ("-std=c++17",)
EMPTY = np.uint32(0xFFFFFFFF)
UNVISITED = np.uint32(0xFFFFFFFF)


@dataclass(frozen=True)
class Case:
    """One launch of one corpus kernel.

    Attributes:
        name: unique case name (``ncu`` rows and JSON keys use it).
        family: the family (``kernels/<family>.cu``; a key of ``split.toml``).
        kernel: the ``extern "C"`` kernel name.
        block: threads per CTA (x, y, z).
        grid: size -> CTAs (x, y, z).
        make: (rng, size) -> the kernel's arguments in order: numpy arrays (copied to the device)
            and numpy scalars (passed by value).
        outputs: indices of the arguments that are outputs (read back after the launch).
        ref: (arguments before the launch, size) -> the expected outputs (numpy arrays).
        sizes: ``{"gpu": n, "small": n}``; what ``n`` counts is the builder's.
        tol: ``None`` (exact) or (rtol, atol) for float outputs, used by the small tests only.
        canon: outputs -> their canonical form (order-independent outputs of atomics), else None.
        constants: size -> ``{__constant__ name: numpy array}`` written before the launch, else None.
        shared_mem: dynamic shared memory per CTA (bytes).
        note: what the case exercises.
    """

    name: str
    family: str
    kernel: str
    block: tuple[int, int, int]
    grid: Callable[[int], tuple[int, int, int]]
    make: Callable[[np.random.Generator, int], list]
    outputs: tuple[int, ...]
    ref: Callable[[list, int], list]
    sizes: dict
    tol: tuple[float, float] | None = None
    canon: Callable[[list], list] | None = None
    constants: Callable[[int], dict] | None = None
    shared_mem: int = 0
    note: str = ""

    @property
    def file(self) -> Path:
        """The kernel source file."""
        return KERNEL_DIR / f"{self.family}.cu"


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _g1(per_cta: int) -> Callable[[int], tuple[int, int, int]]:
    """A 1-D grid of ceil(n / per_cta) CTAs."""
    return lambda n: (_cdiv(n, per_cta), 1, 1)


def _ints_f32(rng, shape, lo: int, hi: int) -> np.ndarray:
    """Small integers as float32 (every sum and product of a few of them is exact)."""
    return rng.integers(lo, hi, shape).astype(np.float32)


# ------------------------------------------------------------------------------------------ atomics
def _ranks_in_groups(groups: np.ndarray) -> np.ndarray:
    """For each element, how many elements of its group come before it in a stable sort: the
    multiset of values an ``atomicAdd(&c[group], 1)`` returns, in some order."""
    order = np.argsort(groups, kind="stable")
    g = groups[order]
    first = np.r_[0, np.flatnonzero(g[1:] != g[:-1]) + 1]
    starts = np.repeat(first, np.diff(np.r_[first, len(g)]))
    return (np.arange(len(g)) - starts).astype(np.uint32)


def _atom_add_make(bins: int):
    def make(rng, n):
        return [rng.integers(0, bins, n, dtype=np.uint32), np.zeros(bins, np.uint32), np.zeros(n, np.uint32),
                np.int32(n)]
    return make


def _atom_add_ref(a, n):
    keys, counters = a[0], a[1]
    return [counters + np.bincount(keys, minlength=len(counters)).astype(np.uint32), np.sort(_ranks_in_groups(keys))]


def _red_add_make(bins: int, dtype):
    def make(rng, n):
        keys = rng.integers(0, bins, n, dtype=np.uint32)
        if dtype == np.float32:  # multiples of 1/4 in [-8, 8): sums stay exact in any order
            vals = (rng.integers(-32, 32, n) / 4).astype(np.float32)
        else:
            vals = rng.integers(0, 16, n, dtype=np.uint32)
        return [keys, vals, np.zeros(bins, dtype), np.int32(n)]
    return make


def _red_add_ref(a, n):
    keys, vals, acc = a[0], a[1], a[2]
    s = np.bincount(keys, weights=vals.astype(np.float64), minlength=len(acc))
    return [(acc.astype(np.float64) + s).astype(acc.dtype)]


def _atom_shared_make(rng, n):
    return [rng.integers(0, 1 << 32, n, dtype=np.uint32), np.zeros(32, np.uint32), np.zeros(n, np.uint32), np.int32(n)]


def _atom_shared_ref(a, n):
    keys = a[0]
    bins = (keys & 31).astype(np.int64)
    cta = np.arange(n) // 256
    return [a[1] + np.bincount(bins, minlength=32).astype(np.uint32), np.sort(_ranks_in_groups(cta * 32 + bins))]


def _red_max_make(rng, n):
    return [rng.integers(-(1 << 31), 1 << 31, n, dtype=np.int32), np.full(8, -(1 << 31), np.int32), np.int32(n)]


def _red_max_ref(a, n):
    v = a[0]
    return [np.maximum(a[1], np.array([v[s::8].max() if len(v[s::8]) else -(1 << 31) for s in range(8)], np.int32))]


def _canon_old(outs):
    return [outs[0], np.sort(outs[1])]


# ---------------------------------------------------------------------------------------- histogram
def _hist_make(skewed: bool):
    def make(rng, n):
        keys = rng.integers(0, 256, n, dtype=np.uint8)
        if skewed:  # 70 % of the keys are one byte value (a dominant colour)
            keys[rng.random(n) < 0.7] = 7
        return [keys, np.zeros(256, np.uint32), np.int32(n)]
    return make


def _hist_ref(a, n):
    return [a[1] + np.bincount(a[0], minlength=256).astype(np.uint32)]


# --------------------------------------------------------------------------------------------- scan
def _scan_make(rng, n):
    return [rng.integers(0, 1 << 32, n, dtype=np.uint32), np.zeros(n, np.uint32), None, np.int32(n)]


def _scan_block_make(section: int):
    def make(rng, n):
        a = _scan_make(rng, n)
        a[2] = np.zeros(_cdiv(n, section), np.uint32)
        return a
    return make


def _scan_block_ref(section: int):
    def ref(a, n):
        x = a[0]
        pad = np.zeros(_cdiv(n, section) * section, np.uint32)
        pad[:n] = x
        s = np.cumsum(pad.reshape(-1, section), axis=1, dtype=np.uint32)
        return [s.ravel()[:n], s[:, -1].copy()]
    return ref


def _scan_lookback_make(rng, n):
    tiles = _cdiv(n, 1024)
    return [rng.integers(0, 1 << 32, n, dtype=np.uint32), np.zeros(n, np.uint32), np.zeros(tiles, np.uint64),
            np.zeros(1, np.uint32), np.int32(n)]


def _scan_lookback_ref(a, n):
    return [np.cumsum(a[0], dtype=np.uint32)]


# --------------------------------------------------------------------------------------------- sort
def _radix_count_make(rng, n):
    return [rng.integers(0, 1 << 32, n, dtype=np.uint32), np.zeros(16 * _cdiv(n, 1024), np.uint32), np.uint32(4),
            np.int32(n)]


def _radix_count_ref(a, n):
    keys, shift = a[0], int(a[2])
    tiles = _cdiv(n, 1024)
    digit = (keys >> np.uint32(shift)) & np.uint32(15)
    tile = np.arange(n) // 1024
    counts = np.bincount(tile * 16 + digit, minlength=16 * tiles).reshape(tiles, 16)
    return [counts.T.ravel().astype(np.uint32)]


def _radix_split_make(rng, n):
    return [rng.integers(0, 1 << 32, n, dtype=np.uint32), np.zeros(n, np.uint32), np.zeros(n // 512, np.uint32),
            np.uint32(5)]


def _radix_split_ref(a, n):
    keys, bit = a[0], int(a[3])
    b = (keys >> np.uint32(bit)) & np.uint32(1)
    tile = np.arange(n) // 512
    order = np.lexsort((np.arange(n), b, tile))
    return [keys[order], np.bincount(tile, weights=b, minlength=n // 512).astype(np.uint32)]


MERGE_RUN = 1024


def _merge_make(rng, n):
    run = min(MERGE_RUN, n // 2)
    keys = rng.integers(0, 1 << 20, n, dtype=np.uint32)  # repeated keys: ties between the runs
    keys = np.sort(keys.reshape(-1, run), axis=1).ravel()
    return [keys, np.zeros(n, np.uint32), np.int32(run), np.int32(n)]


def _merge_ref(a, n):
    run = int(a[2])
    return [np.sort(a[0].reshape(-1, 2 * run), axis=1).ravel()]


# --------------------------------------------------------------------------------------------- spmv
def _csr(rng, rows: int, lo: int, hi: int, ncols: int, exact_mean: int | None = None):
    """A random CSR matrix: lo..hi-1 nonzeros per row (random columns), values in {-3..3} without
    0, and a dense x of small integers. ``exact_mean``: the degrees are exact_mean + u - u[perm]
    (u uniform in 0..exact_mean - lo), so there are exactly rows * exact_mean nonzeros."""
    if exact_mean is None:
        deg = rng.integers(lo, hi, rows)
    else:
        u = rng.integers(0, exact_mean - lo + 1, rows)
        deg = exact_mean + u - u[rng.permutation(rows)]
    row_ptr = np.zeros(rows + 1, np.int32)
    np.cumsum(deg, out=row_ptr[1:])
    nnz = int(row_ptr[-1])
    cols = rng.integers(0, ncols, nnz, dtype=np.int32)
    vals = rng.choice(np.array([-3, -2, -1, 1, 2, 3], np.float32), nnz)
    x = _ints_f32(rng, ncols, -4, 5)
    return row_ptr, cols, vals, x


def _spmv_dense_ref(rows, row_idx, cols, vals, x):
    return np.bincount(row_idx, weights=vals.astype(np.float64) * x[cols], minlength=rows).astype(np.float32)


def _csr_make(lo: int, hi: int):
    def make(rng, rows):
        row_ptr, cols, vals, x = _csr(rng, rows, lo, hi, rows)
        return [row_ptr, cols, vals, x, np.zeros(rows, np.float32), np.int32(rows)]
    return make


def _csr_ref(a, rows):
    row_ptr, cols, vals, x = a[:4]
    return [_spmv_dense_ref(rows, np.repeat(np.arange(rows), np.diff(row_ptr)), cols, vals, x)]


ELL_WIDTH = 16


def _ell_make(rng, rows):
    row_ptr, cols, vals, x = _csr(rng, rows, 8, ELL_WIDTH + 1, rows)
    deg = np.diff(row_ptr)
    ell_c = np.zeros((ELL_WIDTH, rows), np.int32)
    ell_v = np.zeros((ELL_WIDTH, rows), np.float32)
    k = np.arange(len(cols)) - np.repeat(row_ptr[:-1], deg)
    r = np.repeat(np.arange(rows), deg)
    ell_c[k, r], ell_v[k, r] = cols, vals
    return [ell_c.ravel(), ell_v.ravel(), x, np.zeros(rows, np.float32), np.int32(rows), np.int32(ELL_WIDTH)]


def _ell_ref(a, rows):
    c, v, x = a[0].reshape(ELL_WIDTH, rows), a[1].reshape(ELL_WIDTH, rows), a[2]
    return [(v.astype(np.float64) * x[c]).sum(axis=0).astype(np.float32)]


def _coo_make(rng, rows):
    row_ptr, cols, vals, x = _csr(rng, rows, 8, 25, rows, exact_mean=16)
    row_idx = np.repeat(np.arange(rows, dtype=np.int32), np.diff(row_ptr))
    return [row_idx, cols, vals, x, np.zeros(rows, np.float32), np.int32(len(cols))]


def _coo_ref(a, rows):
    return [_spmv_dense_ref(rows, a[0], a[1], a[2], a[3])]


def _coo_grid(rows: int) -> tuple[int, int, int]:
    return (_cdiv(rows * 16, 256), 1, 1)  # exactly 16 nonzeros per row on average (8..24)


# -------------------------------------------------------------------------------------------- graph
def _graph(rng, n: int, lo: int = 4, hi: int = 13):
    """A random directed graph in CSR, lo..hi-1 out-edges per vertex."""
    deg = rng.integers(lo, hi, n)
    row_ptr = np.zeros(n + 1, np.int32)
    np.cumsum(deg, out=row_ptr[1:])
    return row_ptr, rng.integers(0, n, int(row_ptr[-1]), dtype=np.int32)


def _bfs_state(rng, n: int, cur: int):
    """Levels of a BFS in progress: n/8 vertices at level cur - 1 (the frontier), n/4 at earlier
    levels, the rest unvisited."""
    perm = rng.permutation(n)
    level = np.full(n, UNVISITED, np.uint32)
    front = np.sort(perm[:n // 8]).astype(np.int32)
    level[front] = cur - 1
    level[perm[n // 8:n // 8 + n // 4]] = rng.integers(0, cur - 1, n // 4)
    return level, front


def _bfs_topdown_make(rng, n):
    row_ptr, cols = _graph(rng, n)
    level, front = _bfs_state(rng, n, 3)
    return [row_ptr, cols, front, np.int32(len(front)), level, np.uint32(3), np.full(n, -1, np.int32),
            np.zeros(1, np.int32)]


def _bfs_topdown_ref(a, n):
    row_ptr, cols, front, level, cur, nxt = a[0], a[1], a[2], a[4].copy(), a[5], a[6]
    deg = np.diff(row_ptr)[front]
    starts = np.repeat(row_ptr[front], deg)
    edges = starts + np.arange(int(deg.sum())) - np.repeat(np.cumsum(deg) - deg, deg)
    nb = np.unique(cols[edges])
    new = nb[level[nb] == UNVISITED]
    level[new] = cur
    out = nxt.copy()
    out[:len(new)] = new
    return [level, np.sort(out), np.array([len(new)], np.int32)]


def _canon_topdown(outs):
    return [outs[0], np.sort(outs[1]), outs[2]]


def _bfs_bottomup_make(rng, n):
    row_ptr, cols = _graph(rng, n)
    level, _ = _bfs_state(rng, n, 3)
    return [row_ptr, cols, level, np.uint32(3), np.zeros(1, np.int32), np.int32(n)]


def _bfs_bottomup_ref(a, n):
    row_ptr, cols, level, cur = a[0], a[1], a[2].copy(), a[3]
    src = np.repeat(np.arange(n), np.diff(row_ptr))
    hit = np.zeros(n, bool)
    hit[src[level[cols] == cur - 1]] = True
    new = hit & (level == UNVISITED)
    level[new] = cur
    return [level, np.array([new.sum()], np.int32)]


def _gather_make(rng, n):
    return [rng.standard_normal(n, dtype=np.float32), rng.integers(0, n, n, dtype=np.int32), np.zeros(n, np.float32),
            np.int32(n)]


def _gather_ref(a, n):
    return [a[0][a[1]]]


def _scatter_make(rng, n):
    return [rng.standard_normal(n, dtype=np.float32), rng.permutation(n).astype(np.int32), np.zeros(n, np.float32),
            np.int32(n)]


def _scatter_ref(a, n):
    out = np.zeros(n, np.float32)
    out[a[1]] = a[0]
    return [out]


# ------------------------------------------------------------------------------------------ stencil
C0, C1 = np.float32(0.5), np.float32(0.125)


def _stencil2d_make(rng, n):  # an n x n/2 grid (nx = n, ny = n / 2)
    nx, ny = n, n // 2
    return [_ints_f32(rng, nx * ny, 0, 16), np.zeros(nx * ny, np.float32), np.int32(nx), np.int32(ny), C0, C1]


def _stencil2d_ref(a, n):
    nx, ny = int(a[2]), int(a[3])
    g = a[0].reshape(ny, nx).astype(np.float64)
    out = np.zeros((ny, nx))
    out[1:-1, 1:-1] = 0.5 * g[1:-1, 1:-1] + 0.125 * (g[1:-1, :-2] + g[1:-1, 2:] + g[:-2, 1:-1] + g[2:, 1:-1])
    return [out.astype(np.float32).ravel()]


def _stencil3d_make(rng, n):  # an n^3 grid
    return [_ints_f32(rng, n ** 3, 0, 16), np.zeros(n ** 3, np.float32), np.int32(n), np.int32(n), np.int32(n), C0, C1]


def _stencil3d_ref(a, n):
    g = a[0].reshape(n, n, n).astype(np.float64)
    out = np.zeros((n, n, n))
    c = (slice(1, -1),) * 3
    nb = (g[1:-1, 1:-1, :-2] + g[1:-1, 1:-1, 2:] + g[1:-1, :-2, 1:-1] + g[1:-1, 2:, 1:-1] + g[:-2, 1:-1, 1:-1]
          + g[2:, 1:-1, 1:-1])
    out[c] = 0.5 * g[c] + 0.125 * nb
    return [out.astype(np.float32).ravel()]


# ------------------------------------------------------------------------------------------- conv2d
def _conv_make(rng, n):  # an n x n image
    return [_ints_f32(rng, n * n, 0, 16), np.zeros(n * n, np.float32), np.int32(n), np.int32(n)]


def _conv_filter(n):
    return {"filter": np.array([[1, 0, -1, 2, 1], [0, 2, 1, -2, 0], [-1, 1, 3, 1, -1], [0, -2, 1, 2, 0],
                                [1, 2, -1, 0, 1]], np.float32).ravel()}


def _conv_ref(a, n):
    f = _conv_filter(n)["filter"].reshape(5, 5).astype(np.float64)
    img = np.zeros((n + 4, n + 4))
    img[2:-2, 2:-2] = a[0].reshape(n, n)
    out = np.zeros((n, n))
    for i in range(5):
        for j in range(5):
            out += f[i, j] * img[i:i + n, j:j + n]
    return [out.astype(np.float32).ravel()]


# --------------------------------------------------------------------------------------------- norm
NORM_COLS = 1024


def _softmax_block_make(rng, rows):
    return [(3 * rng.standard_normal(rows * NORM_COLS)).astype(np.float32), np.zeros(rows * NORM_COLS, np.float32),
            np.int32(NORM_COLS)]


def _softmax_rows(x: np.ndarray, cols: int) -> np.ndarray:
    x = x.reshape(-1, cols).astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32).ravel()


def _softmax_block_ref(a, rows):
    return [_softmax_rows(a[0], NORM_COLS)]


def _softmax_warp_make(rng, rows):
    return [(3 * rng.standard_normal(rows * 128)).astype(np.float32), np.zeros(rows * 128, np.float32), np.int32(rows)]


def _softmax_warp_ref(a, rows):
    return [_softmax_rows(a[0], 128)]


def _layernorm_make(rng, rows):
    return [(rng.standard_normal(rows * NORM_COLS) + 1).astype(np.float32),
            rng.uniform(0.5, 1.5, NORM_COLS).astype(np.float32), rng.uniform(-0.5, 0.5, NORM_COLS).astype(np.float32),
            np.zeros(rows * NORM_COLS, np.float32), np.int32(NORM_COLS), np.float32(1e-5)]


def _layernorm_ref(a, rows):
    x = a[0].reshape(rows, NORM_COLS).astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return [(((x - mean) / np.sqrt(var + 1e-5)) * a[1] + a[2]).astype(np.float32).ravel()]


# ---------------------------------------------------------------------------------------- attention
ATTN_D = 64


def _attn_make(heads: int, nk: int):
    def make(rng, nq):
        q = rng.standard_normal(heads * nq * ATTN_D, dtype=np.float32)
        k = rng.standard_normal(heads * nk * ATTN_D, dtype=np.float32)
        v = rng.standard_normal(heads * nk * ATTN_D, dtype=np.float32)
        return [q, k, v, np.zeros(heads * nq * ATTN_D, np.float32), np.int32(nq), np.int32(nk),
                np.float32(1 / np.sqrt(ATTN_D))]
    return make


def _attn_ref(a, nq):
    nk = int(a[5])
    heads = len(a[0]) // (nq * ATTN_D)
    q = (a[0].reshape(heads, nq, ATTN_D) * a[6]).astype(np.float64)
    k = a[1].reshape(heads, nk, ATTN_D).astype(np.float64)
    v = a[2].reshape(heads, nk, ATTN_D).astype(np.float64)
    s = q @ k.transpose(0, 2, 1)
    p = np.exp(s - s.max(axis=2, keepdims=True))
    return [((p / p.sum(axis=2, keepdims=True)) @ v).astype(np.float32).ravel()]


# --------------------------------------------------------------------------------------------- gemv
def _gemv_make(cols: int):
    def make(rng, rows):
        return [_ints_f32(rng, rows * cols, -4, 5), _ints_f32(rng, cols, -4, 5), np.zeros(rows, np.float32),
                np.int32(rows), np.int32(cols)]
    return make


def _gemv_ref(a, rows):
    cols = int(a[4])
    return [(a[0].reshape(rows, cols).astype(np.float64) @ a[1]).astype(np.float32)]


def _bgemm_make(m: int):
    def make(rng, batch):
        return [_ints_f32(rng, batch * m * m, -4, 5), _ints_f32(rng, batch * m * m, -4, 5),
                np.zeros(batch * m * m, np.float32)]
    return make


def _bgemm_ref(m: int):
    def ref(a, batch):
        A = a[0].reshape(batch, m, m).astype(np.float64)
        B = a[1].reshape(batch, m, m).astype(np.float64)
        return [(A @ B).astype(np.float32).ravel()]
    return ref


# ---------------------------------------------------------------------------------------------- fft
def _twiddles(n: int) -> np.ndarray:
    """tw[m] = exp(-2 pi i m / n), m < n / 2, as float2 pairs (float32 re, im)."""
    w = np.exp(-2j * np.pi * np.arange(n // 2) / n)
    return np.stack([w.real, w.imag], axis=1).astype(np.float32).ravel()


def _cplx(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1, 2).astype(np.float64) @ np.array([1, 1j])


def _fft_stage_make(ns_of: Callable[[int], int]):
    def make(rng, n):
        return [rng.standard_normal(2 * n, dtype=np.float32), np.zeros(2 * n, np.float32), _twiddles(n), np.int32(n),
                np.int32(ns_of(n))]
    return make


def _stockham_stage(x: np.ndarray, w: np.ndarray, ns: int) -> np.ndarray:
    """One radix-2 Stockham stage (complex128) over the last axis, twiddles w of the full length."""
    n = x.shape[-1]
    half = n // 2
    j = np.arange(half)
    k = j & (ns - 1)
    a, b = x[..., :half], x[..., half:] * w[k * (half // ns)]
    d = (j // ns) * 2 * ns + k
    out = np.empty_like(x)
    out[..., d], out[..., d + ns] = a + b, a - b
    return out


def _to_f2(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag], axis=-1).astype(np.float32).ravel()


def _fft_stage_ref(a, n):
    return [_to_f2(_stockham_stage(_cplx(a[0]), _cplx(a[2]), int(a[4])))]


def _fft1024_make(rng, batch):
    return [rng.standard_normal(2 * 1024 * batch, dtype=np.float32), np.zeros(2 * 1024 * batch, np.float32),
            _twiddles(1024)]


def _fft1024_ref(a, batch):
    x = _cplx(a[0]).reshape(batch, 1024)
    return [_to_f2(np.fft.fft(x, axis=1))]


# -------------------------------------------------------------------------------------------- chase
def _cycle(rng, m: int) -> np.ndarray:
    """A successor array that is one random cycle through all m nodes."""
    perm = rng.permutation(m).astype(np.uint32)
    nxt = np.empty(m, np.uint32)
    nxt[perm] = np.roll(perm, -1)
    return nxt


def _chase_make(nodes_of: Callable[[int], int], steps: int):
    def make(rng, n):
        m = nodes_of(n)
        return [_cycle(rng, m), rng.integers(0, m, n, dtype=np.uint32), np.zeros(n, np.uint32), np.int32(steps),
                np.int32(n)]
    return make


def _chase_ref(a, n):
    p = a[1].astype(np.int64)
    for _ in range(int(a[3])):
        p = a[0][p]
    return [p.astype(np.uint32)]


def _chase_sum_make(nodes_of: Callable[[int], int], steps: int):
    def make(rng, n):
        m = nodes_of(n)
        return [_cycle(rng, m), rng.integers(0, 1 << 32, m, dtype=np.uint32), rng.integers(0, m, n, dtype=np.uint32),
                np.zeros(n, np.uint32), np.zeros(n, np.uint32), np.int32(steps), np.int32(n)]
    return make


def _chase_sum_ref(a, n):
    nxt, pay, p = a[0], a[1], a[2].astype(np.int64)
    s = np.zeros(n, np.uint32)
    for _ in range(int(a[5])):
        s += pay[p]
        p = nxt[p]
    return [p.astype(np.uint32), s]


# --------------------------------------------------------------------------------------------- hash
def _hash32(k: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finaliser, as hash.cu's hash32."""
    k = k.astype(np.uint32)
    k ^= k >> np.uint32(16)
    k *= np.uint32(0x85EBCA6B)
    k ^= k >> np.uint32(13)
    k *= np.uint32(0xC2B2AE35)
    k ^= k >> np.uint32(16)
    return k


def _distinct_keys(rng, n: int) -> np.ndarray:
    """n distinct random 32-bit keys, none EMPTY (a bijection of 0..n-1 from a random offset)."""
    base = np.uint32(rng.integers(0, 1 << 31))
    keys = _hash32(np.arange(n, dtype=np.uint32) + base) ^ np.uint32(0x5BD1E995)
    keys[keys == EMPTY] = np.uint32(0x12345678)  # at most one; that key cannot repeat (hash of a distinct input)
    return keys


def _insert_make(cap_log2_extra: float):
    def make(rng, n):
        cap = 1 << int(np.ceil(np.log2(n * cap_log2_extra)))
        keys = _distinct_keys(rng, n)
        return [keys, rng.integers(0, 1 << 32, n, dtype=np.uint32), np.full(cap, EMPTY, np.uint32),
                np.zeros(cap, np.uint32), np.uint32(cap - 1), np.int32(n)]
    return make


def _insert_ref(a, n):
    keys, vals, cap = a[0], a[1], len(a[2])
    order = np.argsort(keys)
    tk = np.full(cap, EMPTY, np.uint32)
    tv = np.zeros(cap, np.uint32)
    tk[:n], tv[:n] = keys[order], vals[order]
    return [tk, tv]


def _canon_table(outs):
    order = np.argsort(outs[0], kind="stable")
    return [outs[0][order], outs[1][order]]


def _build_table(keys: np.ndarray, vals: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """A linear-probing table holding keys (a valid layout: every key lies after its home slot
    with no empty slot between), built in vectorised rounds."""
    tk = np.full(cap, EMPTY, np.uint32)
    tv = np.zeros(cap, np.uint32)
    idx = np.arange(len(keys))
    slot = (_hash32(keys) & np.uint32(cap - 1)).astype(np.int64)
    while len(idx):
        free = tk[slot] == EMPTY
        cand, cslot = idx[free], slot[free]
        _, first = np.unique(cslot, return_index=True)
        win = cand[first]
        tk[cslot[first]], tv[cslot[first]] = keys[win], vals[win]
        placed = np.zeros(len(keys), bool)
        placed[win] = True
        keep = ~placed[idx]
        idx, slot = idx[keep], slot[keep]
        slot = np.where(tk[slot] == EMPTY, slot, (slot + 1) & (cap - 1))
    return tk, tv


def _lookup_make(rng, n):
    """n queries against a table of n / 2 keys at load 0.5; half the queries are present."""
    stored = n // 2
    cap = 1 << int(np.ceil(np.log2(2 * stored)))
    keys = _distinct_keys(rng, n)
    vals = rng.integers(0, 1 << 32, n, dtype=np.uint32)
    tk, tv = _build_table(keys[:stored], vals[:stored], cap)
    queries = keys[rng.permutation(n)]
    return [tk, tv, queries, np.zeros(n, np.uint32), np.uint32(cap - 1), np.int32(n)]


def _lookup_ref(a, n):
    tk, tv, q = a[0], a[1], a[2]
    have = tk != EMPTY
    k, v = tk[have], tv[have]
    order = np.argsort(k)
    k, v = k[order], v[order]
    pos = np.clip(np.searchsorted(k, q), 0, len(k) - 1)
    return [np.where(k[pos] == q, v[pos], EMPTY).astype(np.uint32)]


# ---------------------------------------------------------------------------------------- the cases
_SOFT = (2e-5, 1e-7)


def _c(name, family, kernel, block, grid, make, outputs, ref, gpu, small, **kw) -> Case:
    block = tuple(block) + (1,) * (3 - len(block))
    return Case(name, family, kernel, block, grid, make, tuple(outputs), ref, {"gpu": gpu, "small": small}, **kw)


def _grid2(bx: int, by: int, ny_of: Callable[[int], int] = lambda n: n):
    return lambda n: (_cdiv(n, bx), _cdiv(ny_of(n), by), 1)


CASES: list[Case] = [
    # atomics (n = threads, one atomic each)
    _c("atom_add_u32_contended", "atomics", "atom_add_u32", (256,), _g1(256), _atom_add_make(64), (1, 2), _atom_add_ref,
       1 << 22, 2048, canon=_canon_old, note="atom.global.add, 64 counters, old value kept"),
    _c("atom_add_u32_spread", "atomics", "atom_add_u32", (256,), _g1(256), _atom_add_make(1 << 20), (1, 2),
       _atom_add_ref, 1 << 22, 2048, canon=_canon_old, note="atom.global.add over 2^20 counters"),
    _c("red_add_u32_contended", "atomics", "red_add_u32", (256,), _g1(256), _red_add_make(64, np.uint32), (2,),
       _red_add_ref, 1 << 22, 2048, note="red.global.add, 64 counters"),
    _c("red_add_u32_spread", "atomics", "red_add_u32", (256,), _g1(256), _red_add_make(1 << 20, np.uint32), (2,),
       _red_add_ref, 1 << 22, 2048, note="red.global.add over 2^20 counters"),
    _c("red_add_f32_contended", "atomics", "red_add_f32", (256,), _g1(256), _red_add_make(1024, np.float32), (2,),
       _red_add_ref, 1 << 22, 2048, note="red.global.add.f32, 1,024 sums"),
    _c("atom_shared_add_u32", "atomics", "atom_shared_add_u32", (256,), _g1(256), _atom_shared_make, (1, 2),
       _atom_shared_ref, 1 << 22, 2048, canon=_canon_old, note="atom.shared.add (result used), 32 bins per CTA"),
    _c("red_shared_max_s32", "atomics", "red_shared_max_s32", (256,), _g1(256), _red_max_make, (1,), _red_max_ref,
       1 << 22, 2048, note="shared atomicMax to 8 slots, then global atomicMax per CTA"),
    # histogram (n = byte keys; 16 per thread)
    _c("hist_global_uniform", "histogram", "hist_global", (256,), _g1(4096), _hist_make(False), (1,), _hist_ref,
       1 << 24, 20000, note="one global atomic per key, uniform keys"),
    _c("hist_global_skewed", "histogram", "hist_global", (256,), _g1(4096), _hist_make(True), (1,), _hist_ref,
       1 << 24, 20000, note="one global atomic per key, 70 % one key"),
    _c("hist_private_uniform", "histogram", "hist_private", (256,), _g1(4096), _hist_make(False), (1,), _hist_ref,
       1 << 24, 20000, note="shared-memory privatised bins, uniform keys"),
    _c("hist_private_skewed", "histogram", "hist_private", (256,), _g1(4096), _hist_make(True), (1,), _hist_ref,
       1 << 24, 20000, note="shared-memory privatised bins, 70 % one key"),
    _c("hist_aggregate_skewed", "histogram", "hist_aggregate", (256,), _g1(4096), _hist_make(True), (1,), _hist_ref,
       1 << 24, 20000, note="privatised, contiguous 16 keys per thread, runs aggregated"),
    # scan (n = elements)
    _c("scan_kogge_stone", "scan", "scan_kogge_stone", (512,), _g1(512), _scan_block_make(512), (1, 2),
       _scan_block_ref(512), 1 << 21, 1500, note="Kogge-Stone block scan, 512 per CTA"),
    _c("scan_brent_kung", "scan", "scan_brent_kung", (512,), _g1(1024), _scan_block_make(1024), (1, 2),
       _scan_block_ref(1024), 1 << 22, 3000, note="Brent-Kung block scan, 1,024 per CTA"),
    _c("scan_shfl", "scan", "scan_shfl", (512,), _g1(512), _scan_block_make(512), (1, 2), _scan_block_ref(512),
       1 << 22, 1500, note="warp-shuffle block scan, 512 per CTA"),
    _c("scan_lookback", "scan", "scan_lookback", (256,), _g1(1024), _scan_lookback_make, (1,), _scan_lookback_ref,
       1 << 22, 5000, note="single-pass scan, decoupled look-back between CTAs (volatile flags)"),
    # sort (n = keys)
    _c("radix_count", "sort", "radix_count", (256,), _g1(1024), _radix_count_make, (1,), _radix_count_ref,
       1 << 22, 5000, note="4-bit digit counts per CTA, shared atomics, digit-major output"),
    _c("radix_split", "sort", "radix_split", (512,), _g1(512), _radix_split_make, (1, 2), _radix_split_ref,
       1 << 22, 2048, note="stable local split by one bit (ballot + popc), 512 keys per CTA"),
    _c("merge_corank", "sort", "merge_corank", (256,), _g1(2048), _merge_make, (1,), _merge_ref, 1 << 23, 8192,
       note="merge pairs of sorted runs of 1,024 with co-rank, 8 outputs per thread"),
    # spmv (n = rows)
    _c("spmv_csr_scalar", "spmv", "spmv_csr_scalar", (256,), _g1(256), _csr_make(4, 29), (4,), _csr_ref, 1 << 20, 700,
       note="CSR, thread per row, 4..28 nonzeros per row"),
    _c("spmv_csr_vector", "spmv", "spmv_csr_vector", (256,), _g1(8), _csr_make(16, 49), (4,), _csr_ref, 1 << 18, 100,
       note="CSR, warp per row, 16..48 nonzeros per row"),
    _c("spmv_ell", "spmv", "spmv_ell", (256,), _g1(256), _ell_make, (3,), _ell_ref, 1 << 20, 700,
       note="ELL width 16, column-major"),
    _c("spmv_coo", "spmv", "spmv_coo", (256,), _coo_grid, _coo_make, (4,), _coo_ref, 1 << 18, 100,
       note="COO, thread per nonzero, float atomics"),
    # graph (n = vertices, or elements for gather/scatter)
    _c("bfs_topdown", "graph", "bfs_topdown", (256,), lambda n: (_cdiv(n // 8, 256), 1, 1), _bfs_topdown_make,
       (4, 6, 7), _bfs_topdown_ref, 1 << 22, 8192, canon=_canon_topdown,
       note="frontier queue of n/8 vertices, atomicCAS on levels, atomic queue slots"),
    _c("bfs_bottomup", "graph", "bfs_bottomup", (256,), _g1(256), _bfs_bottomup_make, (2, 4), _bfs_bottomup_ref,
       1 << 22, 2048, note="thread per vertex, unvisited vertices look for a parent"),
    _c("gather", "graph", "gather", (256,), _g1(256), _gather_make, (2,), _gather_ref, 1 << 24, 2048,
       note="out[i] = x[idx[i]], random indices"),
    _c("scatter", "graph", "scatter", (256,), _g1(256), _scatter_make, (2,), _scatter_ref, 1 << 24, 2048,
       note="out[perm[i]] = x[i], random permutation"),
    # stencil (n = grid edge: n x n/2 for 2-D, n^3 for 3-D)
    _c("stencil2d_5pt", "stencil", "stencil2d_5pt", (32, 8), _grid2(32, 8, lambda n: n // 2), _stencil2d_make, (1,),
       _stencil2d_ref, 4096, 70, note="5-point, one output per thread"),
    _c("stencil3d_7pt", "stencil", "stencil3d_7pt", (32, 4, 2), lambda n: (_cdiv(n, 32), _cdiv(n, 4), _cdiv(n, 2)),
       _stencil3d_make, (1,), _stencil3d_ref, 192, 20, note="7-point, one output per thread"),
    _c("stencil3d_coarse", "stencil", "stencil3d_coarse", (32, 16),
       lambda n: (_cdiv(n - 2, 30), _cdiv(n - 2, 14), _cdiv(n - 2, 8)), _stencil3d_make, (1,), _stencil3d_ref, 192, 20,
       note="7-point, shared plane tile, coarsened 8 planes in z with register tiling"),
    # conv2d (n = image edge)
    _c("conv2d_const", "conv2d", "conv2d_const", (32, 8), _grid2(32, 8), _conv_make, (1,), _conv_ref, 1024, 40,
       constants=_conv_filter, note="5x5 filter in constant memory, one output per thread"),
    _c("conv2d_tiled", "conv2d", "conv2d_tiled", (32, 32), lambda n: (_cdiv(n, 28), _cdiv(n, 28), 1), _conv_make, (1,),
       _conv_ref, 1024, 40, constants=_conv_filter, note="5x5 constant filter, 32x32 input tile with halo in shared"),
    # norm (n = rows)
    _c("softmax_block", "norm", "softmax_block", (256,), lambda n: (n, 1, 1), _softmax_block_make, (1,),
       _softmax_block_ref, 4096, 3, tol=_SOFT, note="CTA per row of 1,024, three passes"),
    _c("softmax_warp", "norm", "softmax_warp", (256,), _g1(8), _softmax_warp_make, (1,), _softmax_warp_ref, 1 << 16,
       20, tol=_SOFT, note="warp per row of 128, row in registers"),
    _c("layernorm", "norm", "layernorm", (256,), lambda n: (n, 1, 1), _layernorm_make, (3,), _layernorm_ref, 4096, 3,
       tol=(2e-5, 2e-5), note="CTA per row of 1,024, two-pass mean and variance"),
    # attention (n = query rows per head)
    _c("attn_row_k128", "attention", "attn_row", (128,), lambda n: (n // 4, 8, 1), _attn_make(8, 128), (3,),
       _attn_ref, 1024, 4, tol=(1e-4, 1e-5), note="8 heads x 128 keys, a warp per query row, online softmax, d = 64"),
    _c("attn_row_k512", "attention", "attn_row", (128,), lambda n: (n // 4, 8, 1), _attn_make(8, 512), (3,),
       _attn_ref, 256, 4, tol=(1e-4, 1e-5), note="8 heads x 512 keys, a warp per query row"),
    # gemv (n = rows, or matrices of a batch)
    _c("gemv_thread_row", "gemv", "gemv_thread_row", (256,), _g1(256), _gemv_make(64), (2,), _gemv_ref, 1 << 18, 600,
       note="thread per row, 64 columns (strided reads)"),
    _c("gemv_warp_row", "gemv", "gemv_warp_row", (256,), _g1(8), _gemv_make(256), (2,), _gemv_ref, 1 << 16, 40,
       note="warp per row, 256 columns, shuffle reduction"),
    _c("bgemm16", "gemv", "bgemm16", (16, 16), lambda n: (n, 1, 1), _bgemm_make(16), (2,), _bgemm_ref(16), 8192, 6,
       note="batched 16x16x16, CTA per matrix"),
    _c("bgemm32_reg", "gemv", "bgemm32_reg", (32, 8), lambda n: (n, 1, 1), _bgemm_make(32), (2,), _bgemm_ref(32), 2048,
       4, note="batched 32x32x32, 4 outputs per thread"),
    # fft (n = points, or FFTs of a batch)
    _c("fft_stage_first", "fft", "fft_radix2_stage", (256,), lambda n: (_cdiv(n // 2, 256), 1, 1),
       _fft_stage_make(lambda n: 1), (1,), _fft_stage_ref, 1 << 22, 2048, tol=(1e-5, 1e-5),
       note="radix-2 Stockham stage Ns = 1"),
    _c("fft_stage_last", "fft", "fft_radix2_stage", (256,), lambda n: (_cdiv(n // 2, 256), 1, 1),
       _fft_stage_make(lambda n: n // 2), (1,), _fft_stage_ref, 1 << 22, 2048, tol=(1e-5, 1e-5),
       note="radix-2 Stockham stage Ns = N/2"),
    _c("fft1024_shared", "fft", "fft1024_shared", (512,), lambda n: (n, 1, 1), _fft1024_make, (1,), _fft1024_ref, 1024,
       2, tol=(1e-4, 1e-4), note="1,024-point FFT per CTA in shared memory, 10 stages"),
    # chase (n = chains, one per thread)
    _c("chase_l2", "chase", "chase", (256,), _g1(256), _chase_make(lambda n: 2 * n, 16), (2,), _chase_ref, 1 << 20,
       1024, note="16 dependent loads per thread over a cycle of 2n nodes (8 MiB: L2-resident)"),
    _c("chase_dram", "chase", "chase", (256,), _g1(256), _chase_make(lambda n: 32 * n, 8), (2,), _chase_ref, 1 << 20,
       1024, note="8 dependent loads per thread over a cycle of 32n nodes (128 MiB: DRAM)"),
    _c("chase_sum_l1", "chase", "chase_sum", (256,), _g1(256), _chase_sum_make(lambda n: 1 << 13, 16), (3, 4),
       _chase_sum_ref, 1 << 20, 1024, note="16 steps with a payload load, 32 KiB of nodes"),
    # hash (n = keys inserted, or queries)
    _c("hash_insert_half", "hash", "hash_insert", (256,), _g1(256), _insert_make(2.0), (2, 3), _insert_ref, 1 << 21,
       1500, canon=_canon_table, note="atomicCAS linear probing to load 0.5"),
    _c("hash_insert_75", "hash", "hash_insert", (256,), _g1(256), _insert_make(4 / 3), (2, 3), _insert_ref,
       3 << 19, 1536, canon=_canon_table, note="atomicCAS linear probing to load 0.75"),
    _c("hash_lookup", "hash", "hash_lookup", (256,), _g1(256), _lookup_make, (3,), _lookup_ref, 1 << 22, 2048,
       note="probe a load-0.5 table, half the queries absent"),
]

BY_NAME: dict[str, Case] = {c.name: c for c in CASES}
FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(c.family for c in CASES))


def _seed(case: Case, seed: int) -> np.random.Generator:
    """The case's generator: the seed and a stable hash of the case name (so cases differ)."""
    salt = int.from_bytes(hashlib.sha256(case.name.encode()).digest()[:4], "little")
    return np.random.default_rng([seed, salt])


def inputs(case: Case, n: int, seed: int = 0) -> list:
    """The arguments of ``case`` at size ``n`` (numpy arrays and numpy scalars, in kernel order)."""
    return case.make(_seed(case, seed), n)


def reference(case: Case, args: list, n: int) -> list[np.ndarray]:
    """The numpy oracle's outputs (canonical form) for ``args`` (from :func:`inputs`, before the launch)."""
    return canonical(case, case.ref(args, n))


def canonical(case: Case, outputs: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs in the form that is compared and digested (:attr:`Case.canon`, else as they are)."""
    outs = [np.ascontiguousarray(o) for o in outputs]
    return case.canon(outs) if case.canon else outs


def digests(case: Case, outputs: list[np.ndarray]) -> list[str]:
    """sha256 of each canonical output's bytes."""
    return [hashlib.sha256(np.ascontiguousarray(o).tobytes()).hexdigest() for o in canonical(case, outputs)]


def split(path: str | Path | None = None) -> dict[str, str]:
    """``split.toml``'s family -> ``"fit"`` | ``"test"``."""
    path = Path(path) if path else Path(__file__).resolve().parent / "split.toml"
    return dict(tomllib.loads(path.read_text())["families"])


def source(family: str) -> str:
    """The CUDA C source of a family."""
    return (KERNEL_DIR / f"{family}.cu").read_text()
