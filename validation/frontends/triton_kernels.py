"""Triton kernels in the shapes of Triton's tutorials, shared by gpusim's tests and the GPU script.

Owns: the ``@triton.jit`` kernels (01 vector add, 02 fused softmax, 03 matmul, 05 layer norm forward, and
one kernel that uses an instruction gpusim does not model, for the error-naming test), their
launch rules (grid, BLOCK, num_warps as the tutorials choose them) through :func:`launch_*`, and the
seeded inputs of each case. Imports numpy and triton only: the same module runs under gpusim
(``gpusim.frontends.triton.jit``) and on a GPU (``triton.jit`` with torch tensors), so the PTX, the
launch and the inputs are the same on both sides (``validation/frontends/triton_on_gpu.py``).

A ``launch_*`` function takes ``kernel``, the launchable form of the jit function (``fn`` itself on
the GPU, ``gpusim.frontends.triton.jit(fn)`` under gpusim), and array arguments of either side; it
uses only ``.shape``/``.stride`` and ``kernel[grid](...)``.

Sources: https://triton-lang.org/main/getting-started/tutorials/ (01-vector-add, 02-fused-softmax,
03-matrix-multiplication, 05-layer-norm), Triton 3.6.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

__all__ = ["add_kernel", "softmax_kernel", "layer_norm_fwd_kernel", "matmul_kernel", "gdc_kernel", "launch_add",
           "launch_softmax", "launch_layer_norm", "launch_matmul", "CASES", "SMALL", "LARGE", "KERNELS", "inputs",
           "empty_outputs", "run_case", "softmax_exact_inputs", "layer_norm_exact_inputs"]


# ---------------------------------------------------------------- 01 vector add
@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def launch_add(kernel, x, y, out, n: int, block: int = 1024, num_warps: int = 4):
    """``out[:n] = x[:n] + y[:n]``; the tutorial's grid: a callable of the meta-parameters."""
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    return kernel[grid](x, y, out, n, BLOCK_SIZE=block, num_warps=num_warps)


# ---------------------------------------------------------------- 02 fused softmax (one program per row)
@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    mask = col_offsets < n_cols
    row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    output_ptrs = output_row_start_ptr + col_offsets
    tl.store(output_ptrs, softmax_output, mask=mask)


def softmax_warps(block: int) -> int:
    """The tutorial's first version: 4 warps, 8 from 2048 columns, 16 from 4096."""
    return 16 if block >= 4096 else 8 if block >= 2048 else 4


def launch_softmax(kernel, x, y, num_warps: int | None = None):
    """``y = softmax(x, axis=1)`` for a 2-D float32 ``x`` (rows contiguous): one program per row,
    ``BLOCK_SIZE`` = the next power of two of the row length."""
    n_rows, n_cols = x.shape
    block = triton.next_power_of_2(n_cols)
    warps = num_warps or softmax_warps(block)
    return kernel[(n_rows,)](y, x, _row_stride(x), _row_stride(y), n_cols, BLOCK_SIZE=block, num_warps=warps)


# ---------------------------------------------------------------- 05 layer norm (forward)
@triton.jit
def layer_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    # Compute mean
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # Compute variance
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    # Write mean / rstd
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # Normalize and apply linear transformation
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        # Write output
        tl.store(Y + cols, y, mask=mask)


def launch_layer_norm(kernel, x, w, b, y, mean, rstd, eps: float = 1e-5, block: int | None = None):
    """The tutorial's ``LayerNorm.forward``: one program per row, ``BLOCK_SIZE`` = the next power of two
    of N up to 64 KiB of elements, ``num_warps = min(max(BLOCK_SIZE // 256, 1), 8)``; ``block`` forces a
    smaller BLOCK_SIZE (several loop trips per row)."""
    m, n = x.shape
    max_fused = 65536 // x.dtype.itemsize  # torch and numpy dtypes both have itemsize
    block = block or min(max_fused, triton.next_power_of_2(n))
    num_warps = min(max(block // 256, 1), 8)
    return kernel[(m,)](x, y, w, b, mean, rstd, _row_stride(x), n, eps, BLOCK_SIZE=block, num_warps=num_warps)


# ---------------------------------------------------------------- 03 matrix multiplication (fp16 in, fp32 accumulate)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def launch_matmul(kernel, a, b, c, block=(128, 128, 32), group_m: int = 8, num_warps: int = 4, num_stages: int = 3):
    """``c = a @ b`` (fp16, fp32 accumulation): the tutorial's kernel at one fixed configuration (no
    autotuning, so both sides compile the same PTX): 128x128x32 tiles, 4 warps, 3 stages."""
    (m, k), (_, n) = a.shape, b.shape
    bm, bn, bk = block
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_SIZE_M"]) * triton.cdiv(n, meta["BLOCK_SIZE_N"]),)  # noqa: E731
    return kernel[grid](a, b, c, m, n, k, *_strides(a), *_strides(b), *_strides(c), BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                        BLOCK_SIZE_K=bk, GROUP_SIZE_M=group_m, num_warps=num_warps, num_stages=num_stages)


# ---------------------------------------------------------------- an instruction gpusim does not model
@triton.jit
def gdc_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.extra.cuda.gdc_wait()  # griddepcontrol.wait (programmatic dependent launch): not modelled
    tl.store(x_ptr + offs, x + 1, mask=offs < n)


def _strides(a) -> tuple[int, int]:
    """Strides in elements of a 2-D array: torch tensors have ``.stride()``; numpy/gpusim arrays here
    are C-contiguous."""
    s = getattr(a, "stride", None)
    return (int(s(0)), int(s(1))) if callable(s) else (int(a.shape[1]), 1)


def _row_stride(a) -> int:
    return _strides(a)[0]


# ---------------------------------------------------------------- cases shared with the GPU script
#: name -> (kernel family, shape): the small sizes of the tests (seeded inputs), and the GPU-filling sizes.
CASES: dict[str, tuple[str, tuple[int, ...]]] = {
    "add_small": ("add", (3000,)),
    "softmax_small": ("softmax", (5, 300)),
    "softmax_pow2": ("softmax", (3, 256)),
    "softmax_exact": ("softmax", (3, 300)),      # softmax_exact_inputs: exact in any order
    "layer_norm_small": ("layer_norm", (4, 300)),
    "layer_norm_loop": ("layer_norm", (2, 700)),  # BLOCK_SIZE 256: three loop trips per pass
    "layer_norm_exact": ("layer_norm", (3, 256)),  # layer_norm_exact_inputs
    "matmul_small": ("matmul", (192, 160, 96)),   # M, N, K: 4 programs, masked edges, 3 k-steps
    "add_2p24": ("add", (1 << 24,)),
    "add_2p26": ("add", (1 << 26,)),
    "softmax_4096": ("softmax", (4096, 4096)),
    "softmax_8192x2048": ("softmax", (8192, 2048)),
    "layer_norm_4096": ("layer_norm", (4096, 4096)),
    "matmul_2048": ("matmul", (2048, 2048, 2048)),
}
LARGE = ["add_2p24", "add_2p26", "softmax_4096", "softmax_8192x2048", "layer_norm_4096", "matmul_2048"]
SMALL = [k for k in CASES if k not in LARGE]
#: BLOCK_SIZE forced for a case (else the tutorial's rule).
BLOCK = {"layer_norm_loop": 256}
#: The outputs each family writes, in the order ``run_case`` returns them.
OUTPUTS = {"add": ("out",), "softmax": ("y",), "layer_norm": ("y", "mean", "rstd"), "matmul": ("c",)}


def inputs(name: str, seed: int = 0) -> dict[str, np.ndarray]:
    """The seeded host inputs of case ``name``: ``x``, ``y`` (add); ``x`` (softmax); ``x``, ``w``, ``b``
    (layer norm), float32 normal(0, 1) draws unless the case is an ``_exact`` one; ``a``, ``b``
    (matmul, float16 normal(0, 1))."""
    family, shape = CASES[name]
    rng = np.random.default_rng(seed)
    f32 = lambda *s: rng.standard_normal(s, dtype=np.float32)  # noqa: E731
    if name == "softmax_exact":
        return {"x": softmax_exact_inputs(*shape, seed=seed)[0]}
    if name == "layer_norm_exact":
        return layer_norm_exact_inputs(*shape, seed=seed)
    if family == "add":
        return {"x": f32(*shape), "y": f32(*shape)}
    if family == "softmax":
        return {"x": f32(*shape)}
    if family == "matmul":
        m, n, k = shape
        return {"a": f32(m, k).astype(np.float16), "b": f32(k, n).astype(np.float16)}
    m, n = shape
    return {"x": f32(m, n), "w": f32(n), "b": f32(n)}


def empty_outputs(name: str, xp=np, **kw) -> dict:
    """Zeroed output arrays of case ``name`` made by ``xp.zeros`` (numpy, gpusim; torch needs ``device=``)."""
    family, shape = CASES[name]
    f32 = getattr(xp, "float32", np.float32)
    if family == "add":
        return {"out": xp.zeros(shape, dtype=f32, **kw)}
    if family == "softmax":
        return {"y": xp.zeros(shape, dtype=f32, **kw)}
    if family == "matmul":
        return {"c": xp.zeros(shape[:2], dtype=getattr(xp, "float16", np.float16), **kw)}
    return {"y": xp.zeros(shape, dtype=f32, **kw), "mean": xp.zeros(shape[:1], dtype=f32, **kw),
            "rstd": xp.zeros(shape[:1], dtype=f32, **kw)}


def run_case(kernels: dict, name: str, ins: dict, outs: dict):
    """Launch case ``name``: ``kernels`` maps family -> launchable kernel (``kernel[grid](...)``),
    ``ins``/``outs`` the device arrays of :func:`inputs`/:func:`empty_outputs`. Returns the launch's value."""
    family, shape = CASES[name]
    k = kernels[family]
    if family == "add":
        return launch_add(k, ins["x"], ins["y"], outs["out"], shape[0])
    if family == "softmax":
        return launch_softmax(k, ins["x"], outs["y"])
    if family == "matmul":
        return launch_matmul(k, ins["a"], ins["b"], outs["c"])
    return launch_layer_norm(k, ins["x"], ins["w"], ins["b"], outs["y"], outs["mean"], outs["rstd"],
                             block=BLOCK.get(name))


#: family -> the jit function.
KERNELS = {"add": add_kernel, "softmax": softmax_kernel, "layer_norm": layer_norm_fwd_kernel, "matmul": matmul_kernel}


def softmax_exact_inputs(rows: int, cols: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows of x = e * ln 2 (e integer in -12..0, one 0 per row), chosen so that Triton's
    ``ex2.approx((x - max) * log2(e))`` is exactly 2^e and the row's 2^e sum to a power of two, 2^j:
    the softmax is then exactly 2^(e - j), whatever order the reductions add in. Returns (x, softmax)."""
    rng = np.random.default_rng(seed)
    l2e = np.float32(1.4426950408889634)  # 0f3FB8AA3B, the constant Triton multiplies by
    table = {}
    for e in range(-12, 1):  # each has a float32 x with fl(x * log2e) == e (not all do: -13, -15)
        x0 = np.float32(e * np.log(2))
        near = (x0 + np.arange(-4, 5) * np.spacing(x0)).astype(np.float32)
        table[e] = next(x for x in near if np.float32(x * l2e) == e)
    xs, want = np.empty((rows, cols), np.float32), np.empty((rows, cols), np.float32)
    if not 4 <= cols <= 1 << 12:
        raise ValueError(f"softmax_exact_inputs needs 4 to 4096 columns, got {cols}")
    j = int(np.log2(cols)) - 1
    for r in range(rows):
        exps = [0] * (1 << j)  # sum 2^j, 2 to cols / 2 elements
        while len(exps) < cols:  # split 2^e into two 2^(e-1): the sum stays 2^j
            k = int(rng.integers(1, len(exps)))  # never the first: it stays 2^0, the row's max
            if exps[k] > -12:
                e = exps.pop(k)
                exps += [e - 1, e - 1]
        e = np.array(rng.permutation(exps))
        xs[r] = [table[v] for v in e]
        want[r] = np.ldexp(np.float32(1), e - j)
    return xs, want


def layer_norm_exact_inputs(rows: int, cols: int, seed: int = 0) -> dict[str, np.ndarray]:
    """x = c + (v, -v) shuffled (v, c small integers; ``cols`` even and a power of two) so the mean
    (c) and the variance are exact in any order; w small integers and b quarters, so
    fma((x - mean) * rstd, w, b) is one rounding of an exact value."""
    rng = np.random.default_rng(seed)
    v = rng.integers(-4, 5, (rows, cols // 2)).astype(np.float32)
    x = np.concatenate([v, -v], 1) + rng.integers(-3, 4, (rows, 1)).astype(np.float32)
    return {"x": rng.permuted(x, axis=1), "w": rng.integers(-3, 4, cols).astype(np.float32),
            "b": (rng.integers(-8, 9, cols) / 4).astype(np.float32)}
