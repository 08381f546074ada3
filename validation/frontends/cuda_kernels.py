"""Eleven CuPy-style CUDA C kernels in one source string, with their launches, inputs and numpy oracles.

Used by ``tests/frontends/test_frontend_cuda.py`` (gpusim, NVRTC against nvcc, numpy oracles) and by
``validation/frontends/cuda_on_gpu.py`` (the same source through ``cupy.RawModule(code=...)`` on a GPU,
compared bit for bit with gpusim). Imports numpy only.

Each :class:`Case` names its kernel (an ``extern "C"`` name, or a template name expression with
``name_expressions``), its grid and block, a function making the host arguments from a numpy Generator
(arrays are copied to the device; numpy scalars pass as they are), the indices of the output arrays, and
an oracle returning the expected outputs. ``exact`` says whether the oracle is bit-exact (integer work,
single IEEE operations) or only close (contracted multiply-adds, ``expf``/``rsqrtf``), where the tests
compare against the nvcc-compiled PTX bit for bit instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

SOURCE = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void vadd_i32(const int* a, const int* b, int* c, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        c[i] = a[i] + b[i];
}

// Block sums in shared memory (tree), one atomicAdd per block.
extern "C" __global__ void block_sum_atomic(const int* x, int* total, int n) {
    __shared__ int s[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) atomicAdd(total, s[0]);
}

// Warp sums with butterfly shuffles.
extern "C" __global__ void warp_sum_shfl(const unsigned* x, unsigned* out) {
    unsigned v = x[blockIdx.x * blockDim.x + threadIdx.x];
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    if ((threadIdx.x & 31) == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}

// Tiled transpose through a padded shared tile (32 x 33): no bank conflicts.
extern "C" __global__ void transpose_tiled(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
    if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

// Privatised histogram: shared-memory atomics, then one global atomic per bin and block.
extern "C" __global__ void histogram64(const unsigned char* keys, unsigned* bins, int n) {
    __shared__ unsigned h[64];
    if (threadIdx.x < 64) h[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&h[keys[i] & 63], 1u);
    __syncthreads();
    if (threadIdx.x < 64) atomicAdd(&bins[threadIdx.x], h[threadIdx.x]);
}

// Tiled SGEMM, 16 x 16 tiles: C = A B (n x n, n a multiple of 16).
extern "C" __global__ void sgemm_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[16][16], Bs[16][16];
    int tx = threadIdx.x, ty = threadIdx.y, row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += 16) {
        As[ty][tx] = A[row * n + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < 16; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

// Row softmax, one warp per row (expf, fmaxf and shuffles).
extern "C" __global__ void softmax_rows(const float* x, float* y, int cols) {
    const float* r = x + blockIdx.x * cols;
    float m = -3.402823466e38f;
    for (int j = threadIdx.x; j < cols; j += 32) m = fmaxf(m, r[j]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += 32) s += expf(r[j] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    for (int j = threadIdx.x; j < cols; j += 32) y[blockIdx.x * cols + j] = expf(r[j] - m) / s;
}

// A template, instantiated through name_expressions.
template <typename T>
__global__ void scale_add(const T* x, T* y, T alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + y[i];
}

// Bit manipulation: population count, leading zeros, bit reversal, float bits.
extern "C" __global__ void bits(const unsigned* x, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned v = x[i];
        out[4 * i + 0] = __popc(v);
        out[4 * i + 1] = __clz(v);
        out[4 * i + 2] = __brev(v);
        out[4 * i + 3] = __float_as_uint(__uint_as_float(v) * 2.0f);
    }
}

// Vector normalisation with rsqrtf (one warp per 3-vector batch of 32).
extern "C" __global__ void normalize3(const float* v, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float a = v[3 * i], b = v[3 * i + 1], c = v[3 * i + 2];
        float r = rsqrtf(a * a + b * b + c * c);
        out[3 * i] = a * r; out[3 * i + 1] = b * r; out[3 * i + 2] = c * r;
    }
}
"""

#: The template instantiations the source's users ask for (``RawModule(name_expressions=...)``).
NAME_EXPRESSIONS = ("scale_add<float>", "scale_add<int>")
#: Their lowered (Itanium-mangled) names, the symbols of the nvcc build (CuPy 14 has no public look-up).
LOWERED = {"scale_add<float>": "_Z9scale_addIfEvPKT_PS0_S0_i", "scale_add<int>": "_Z9scale_addIiEvPKT_PS0_S0_i"}


@dataclass(frozen=True)
class Case:
    """One kernel launch of :data:`SOURCE` (see the module docstring)."""

    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    make_args: Callable[[np.random.Generator], tuple]
    outputs: tuple[int, ...]
    oracle: Callable[[tuple], list[np.ndarray]]
    exact: bool = True


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _block_sum(a):
    x, total, n = a
    return [np.array([x.astype(np.int64).sum()], np.int64).astype(np.int32)]


def _warp_sum(a):
    return [a[0].reshape(-1, 32).sum(axis=1, dtype=np.uint64).astype(np.uint32)]


def _bits(a):
    x = a[0]
    popc = np.array([bin(int(v)).count("1") for v in x], np.uint32)
    clz = np.array([32 - int(v).bit_length() for v in x], np.uint32)
    brev = np.array([int(f"{int(v):032b}"[::-1], 2) for v in x], np.uint32)
    with np.errstate(over="ignore", invalid="ignore"):
        doubled = (x.view(np.float32) * np.float32(2)).view(np.uint32)
    # FTZ (CuPy compiles with -ftz=true): a denormal input or result reads as a signed zero.
    f = x.view(np.float32)
    denorm_in = (np.abs(f) < np.finfo(np.float32).tiny) & (f != 0)
    denorm_out = (np.abs(doubled.view(np.float32)) < np.finfo(np.float32).tiny) & (doubled.view(np.float32) != 0)
    doubled = np.where(denorm_in | denorm_out, x & np.uint32(0x80000000), doubled)
    nan = np.isnan(doubled.view(np.float32))
    doubled = np.where(nan, np.uint32(0x7FFFFFFF), doubled)  # the GPU's canonical NaN
    return [np.stack([popc, clz, brev, doubled], axis=1).ravel()]


def _softmax(a):
    x = a[0].reshape(-1, a[2]).astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return [(e / e.sum(axis=1, keepdims=True)).astype(np.float32).ravel()]


def _normalize(a):
    v = a[0].reshape(-1, 3).astype(np.float64)
    return [(v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32).ravel()]


def cases(scale: int = 1) -> list[Case]:
    """The eleven kernels' launches (twelve, with both template instantiations); ``scale`` multiplies the
    problem sizes (1: test sizes, a few thousand elements)."""
    n = 4096 * scale
    side = 64 * min(scale, 4)  # SGEMM grows as side^3: 256 at most keeps the simulation to seconds
    rows, cols = 48 * scale, 80 * scale
    u32 = lambda rng, k: rng.integers(0, 2**32, k, dtype=np.uint64).astype(np.uint32)
    return [
        Case("saxpy", ((n + 255) // 256,), (256,),
             lambda rng: (np.float32(1.5), _f32(rng, n), _f32(rng, n), np.uint32(n)), (2,),
             lambda a: [(np.float64(a[0]) * a[1] + a[2]).astype(np.float32)], exact=False),
        Case("vadd_i32", (8,), (128,),
             lambda rng: (rng.integers(-2**30, 2**30, n, dtype=np.int32), rng.integers(-2**30, 2**30, n, dtype=np.int32),
                          np.zeros(n, np.int32), np.int32(n)), (2,),
             lambda a: [a[0] + a[1]]),
        Case("block_sum_atomic", ((n + 255) // 256,), (256,),
             lambda rng: (rng.integers(-1000, 1000, n, dtype=np.int32), np.zeros(1, np.int32), np.int32(n)), (1,),
             _block_sum),
        Case("warp_sum_shfl", (n // 256,), (256,), lambda rng: (u32(rng, n), np.zeros(n // 32, np.uint32)), (1,),
             _warp_sum),
        Case("transpose_tiled", ((cols + 31) // 32, (rows + 31) // 32), (32, 32),
             lambda rng: (_f32(rng, rows * cols), np.zeros(rows * cols, np.float32), np.int32(rows), np.int32(cols)),
             (1,), lambda a: [a[0].reshape(rows, cols).T.ravel().copy()]),
        Case("histogram64", (16,), (256,),
             lambda rng: (rng.integers(0, 256, n, dtype=np.uint8), np.zeros(64, np.uint32), np.int32(n)), (1,),
             lambda a: [np.bincount(a[0] & 63, minlength=64).astype(np.uint32)]),
        Case("sgemm_tiled", (side // 16, side // 16), (16, 16),
             lambda rng: (_f32(rng, side * side), _f32(rng, side * side), np.zeros(side * side, np.float32),
                          np.int32(side)), (2,),
             lambda a: [(a[0].reshape(side, side).astype(np.float64) @ a[1].reshape(side, side)).astype(np.float32).ravel()],
             exact=False),
        Case("softmax_rows", (rows,), (32,),
             lambda rng: (_f32(rng, rows * cols), np.zeros(rows * cols, np.float32), np.int32(cols)), (1,), _softmax,
             exact=False),
        Case("scale_add<float>", ((n + 255) // 256,), (256,),
             lambda rng: (_f32(rng, n), _f32(rng, n), np.float32(-0.75), np.int32(n)), (1,),
             lambda a: [(np.float64(a[2]) * a[0] + a[1]).astype(np.float32)], exact=False),
        Case("scale_add<int>", ((n + 255) // 256,), (256,),
             lambda rng: (rng.integers(-2**15, 2**15, n, dtype=np.int32), rng.integers(-2**30, 2**30, n, dtype=np.int32),
                          np.int32(7), np.int32(n)), (1,),
             lambda a: [(a[2] * a[0] + a[1]).astype(np.int32)]),
        Case("bits", ((n + 255) // 256,), (256,), lambda rng: (u32(rng, n), np.zeros(4 * n, np.uint32), np.int32(n)),
             (1,), _bits),
        Case("normalize3", ((n + 255) // 256,), (256,),
             lambda rng: (_f32(rng, 3 * n), np.zeros(3 * n, np.float32), np.int32(n)), (1,), _normalize, exact=False),
    ]


@dataclass(frozen=True)
class GeneratedCase:
    """A CuPy ``ElementwiseKernel`` or ``ReductionKernel`` (``kind``), its constructor's arguments, a function
    making its call's positional arguments (host arrays and scalars) and the call's keyword arguments."""

    kind: str
    ctor: tuple
    make_args: Callable[[np.random.Generator], tuple]
    call: dict
    exact: bool = True


def generated_cases(scale: int = 1) -> list[GeneratedCase]:
    """Element-wise and reduction kernels in CuPy's form, run by both CuPy and gpusim."""
    n = 4096 * scale
    return [
        GeneratedCase("elementwise", ("float32 x, float32 y", "float32 z", "z = x + y", "ew_add"),
                      lambda rng: (_f32(rng, n), _f32(rng, n)), {}),
        GeneratedCase("elementwise", ("T x, T y", "T z", "z = (x << 3) ^ y", "ew_shift_xor"),
                      lambda rng: (rng.integers(0, 2**20, n, dtype=np.int32), np.int32(12345)), {}),
        GeneratedCase("elementwise", ("T x, raw T y", "T z", "z = x - y[_ind.size() - i - 1]", "ew_rev"),
                      lambda rng: (rng.integers(-99, 99, n, dtype=np.int64), rng.integers(-99, 99, n, dtype=np.int64)),
                      {}),
        GeneratedCase("reduction", ("T x", "T y", "x", "a + b", "y = a", "0", "red_sum_i64"),
                      lambda rng: (rng.integers(-10**6, 10**6, n, dtype=np.int64),), {}),
        GeneratedCase("reduction", ("int32 x", "int32 m", "x", "max(a, b)", "m = a", "-2147483647 - 1", "red_max_ax1"),
                      lambda rng: (rng.integers(-10**6, 10**6, (64, n // 64), dtype=np.int32),), {"axis": 1}),
        GeneratedCase("reduction", ("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "red_l2_f32"),
                      lambda rng: (_f32(rng, 32, n // 32),), {"axis": 0}, exact=False),
    ]
