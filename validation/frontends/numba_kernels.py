"""``@numba.cuda.jit`` kernels in the shapes Numba's documentation shows, with seeded inputs, launch
shapes and numpy oracles: the one source that both gpusim's Numba front-end
(:mod:`gpusim.frontends.numba`, tested in ``tests/frontends/test_frontend_numba.py``) and real
Numba on a GPU (``validation/frontends/numba_on_gpu.py``) run.

Owns: the kernels (each a real ``numba.cuda`` dispatcher, lazy, so importing needs numba-cuda but no
GPU) and :data:`CASES`, one :class:`Case` per kernel: ``inputs(rng)`` -> the argument tuple (host numpy
arrays and scalars; the arrays that the kernel writes come zeroed), ``launch(args)`` -> ``(grid, block)``,
``outputs`` (indices of the arguments the kernel writes) and ``oracle(args)`` -> those outputs as numpy
computes them (None: the GPU is the only reference), in the kernel's order of operations (``isa.fp.fma`` where NVVM contracts ``a * b + c``
into ``fma.rn``), so a correct run equals it bit for bit.

Imports numpy, numba-cuda and (inside the oracles) :mod:`isa.fp`; no gpusim, no cupy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numba import cuda, float32, int32

__all__ = ["CASES", "Case", "TPB", "vec_add", "fast_matmul", "warp_sum", "scale_transpose_2d", "saxpy_stride",
           "clamp_floor_rows", "exp_sqrt"]


# --------------------------------------------------------------------------- vector add
@cuda.jit
def vec_add(a, b, c):
    """c = a + b (Numba docs, "Writing CUDA Kernels": one thread per element)."""
    tid = cuda.grid(1)
    size = len(c)
    if tid < size:
        c[tid] = a[tid] + b[tid]


# --------------------------------------------------------------------------- shared-memory matmul
# Controls threads per block and shared memory usage.
# The computation will be done on blocks of TPBxTPB elements.
TPB = 16


@cuda.jit
def fast_matmul(A, B, C):
    """C = A @ B with TPB x TPB tiles in shared memory (Numba docs, "Matrix multiplication": ``fast_matmul``)."""
    # Define an array in the shared memory
    # The size and type of the arrays must be known at compile time
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)

    x, y = cuda.grid(2)

    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x    # blocks per grid

    # Each thread computes one element in the result matrix.
    # The dot product is chunked into dot products of TPB-long vectors.
    tmp = float32(0.)
    for i in range(bpg):
        # Preload data into shared memory
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]

        # Wait until all threads finish preloading
        cuda.syncthreads()

        # Computes partial product on the shared memory
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]

        # Wait until all threads finish computing
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


# --------------------------------------------------------------------------- warp-shuffle reduction
@cuda.jit
def warp_sum(a, out):
    """out[0] += sum(a): each warp sums its 32 values with ``shfl_down_sync``, lane 0 adds the warp's
    sum with ``atomic.add`` (int32: exact in any order of the atomics)."""
    i = cuda.grid(1)
    val = int32(0)
    if i < a.size:
        val = a[i]
    offset = 16
    while offset > 0:
        val += cuda.shfl_down_sync(0xffffffff, val, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, val)


# --------------------------------------------------------------------------- 2-D kernel
@cuda.jit
def scale_transpose_2d(a, out, alpha):
    """out[y, x] = alpha * a[x, y] + 1 with ``cuda.grid(2)`` (float64; ``alpha`` a Python float)."""
    x, y = cuda.grid(2)
    if x < a.shape[0] and y < a.shape[1]:
        out[y, x] = alpha * a[x, y] + 1.0


# --------------------------------------------------------------------------- grid-stride loop
@cuda.jit
def saxpy_stride(a, x, y, out):
    """out = a * x + y over a grid-stride loop (``cuda.gridsize``): fewer threads than elements."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        out[i] = a * x[i] + y[i]


# --------------------------------------------------------------------------- device function + math
@cuda.jit(device=True)
def _clamp(v, lo, hi):
    return min(max(v, lo), hi)


@cuda.jit
def clamp_floor_rows(m, out):
    """out[r, c] = clamp(m[r, c], -4, 4) // 1 + r  with a device function (integer-valued float32: exact)."""
    r, c = cuda.grid(2)
    if r < m.shape[0] and c < m.shape[1]:
        out[r, c] = _clamp(m[r, c], float32(-4.0), float32(4.0)) // float32(1.0) + float32(r)


# --------------------------------------------------------------------------- libdevice math (GPU-checked)
@cuda.jit
def exp_sqrt(a, out):
    """out = exp(a) / 2 + sqrt(|a|) in float32: libdevice's ``__nv_expf`` (``ex2.approx``) and
    ``sqrt.rn``; no numpy oracle (the GPU is the reference), ``oracle`` is None."""
    i = cuda.grid(1)
    if i < a.size:
        out[i] = math.exp(a[i]) * float32(0.5) + math.sqrt(abs(a[i]))


# --------------------------------------------------------------------------- cases
@dataclass(frozen=True)
class Case:
    """One kernel with its seeded inputs, launch shape and oracle (see the module docstring)."""

    name: str
    kernel: Any
    inputs: Callable[[np.random.Generator], tuple]
    launch: Callable[[tuple], tuple]
    outputs: tuple[int, ...]
    oracle: Callable[[tuple], list] | None


def _fma32(a, b, c):
    from isa.fp import fma

    return fma(np.float32(a), np.float32(b), np.float32(c), ty="f32")


def _matmul_oracle(args):
    A, B, _ = args
    n, k = A.shape
    m = B.shape[1]
    kp = -(-k // TPB) * TPB
    Ap = np.zeros((n, kp), np.float32)
    Ap[:, :k] = A
    Bp = np.zeros((kp, m), np.float32)
    Bp[:k] = B
    tmp = np.zeros((n, m), np.float32)
    for j in range(kp):                     # the kernel's order: j over the tiles, fma each step
        tmp = _fma32(Ap[:, j:j + 1], Bp[j:j + 1, :], tmp)
    return [tmp]


def _scale_transpose_oracle(args):
    from isa.fp import fma

    a, _, alpha = args
    return [fma(np.float64(alpha), a.T.astype(np.float64), np.float64(1.0), ty="f64")]


def _clamp_floor_rows_oracle(args):
    m, _ = args
    rows = np.arange(m.shape[0], dtype=np.float32)[:, None]
    return [(np.floor_divide(np.clip(m, np.float32(-4), np.float32(4)), np.float32(1)) + rows).astype(np.float32)]


CASES: list[Case] = [
    Case("vec_add", vec_add,
         lambda rng: (rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32),
                      np.zeros(1000, np.float32)),
         lambda args: ((len(args[2]) + 127) // 128, 128), (2,),
         lambda args: [args[0] + args[1]]),
    Case("fast_matmul", fast_matmul,
         lambda rng: (rng.standard_normal((40, 40)).astype(np.float32), rng.standard_normal((40, 40)).astype(np.float32),
                      np.zeros((40, 40), np.float32)),
         lambda args: ((-(-args[2].shape[1] // TPB), -(-args[2].shape[0] // TPB)), (TPB, TPB)), (2,),
         _matmul_oracle),
    Case("warp_sum", warp_sum,
         lambda rng: (rng.integers(-1000, 1000, 1000, dtype=np.int32), np.zeros(1, np.int32)),
         lambda args: ((len(args[0]) + 255) // 256, 256), (1,),
         lambda args: [np.array([args[0].sum(dtype=np.int32)], np.int32)]),
    Case("scale_transpose_2d", scale_transpose_2d,
         lambda rng: (rng.standard_normal((24, 40)), np.zeros((40, 24)), float(rng.standard_normal())),
         lambda args: (((args[0].shape[0] + 7) // 8, (args[0].shape[1] + 7) // 8), (8, 8)), (1,),
         _scale_transpose_oracle),
    Case("saxpy_stride", saxpy_stride,
         lambda rng: (np.float32(rng.standard_normal()), rng.standard_normal(3000).astype(np.float32),
                      rng.standard_normal(3000).astype(np.float32), np.zeros(3000, np.float32)),
         lambda args: (4, 128), (3,),
         lambda args: [_fma32(args[0], args[1], args[2])]),
    Case("clamp_floor_rows", clamp_floor_rows,
         lambda rng: ((rng.standard_normal((20, 30)) * 4).astype(np.float32), np.zeros((20, 30), np.float32)),
         lambda args: (((args[0].shape[0] + 15) // 16, (args[0].shape[1] + 15) // 16), (16, 16)), (1,),
         _clamp_floor_rows_oracle),
    Case("exp_sqrt", exp_sqrt,
         lambda rng: ((rng.standard_normal(500) * 3).astype(np.float32), np.zeros(500, np.float32)),
         lambda args: (4, 128), (1,), None),
]
