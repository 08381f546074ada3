"""The kernel suite: the course-notes kernels, their PTX, launches and numpy oracles.

Owns:

* ``cuda/*.cu`` -- the seed kernels (reductions v0-v7, matmul, 1D convolution,
  copies, AoS/SoA, ILP, divergence, warp primitives, bank conflicts) as CUDA C,
  each file headed by the exact ``nvcc`` command that produced its PTX;
* ``ptx/*.ptx`` -- that PTX, committed unmodified, plus two hand-written PTX
  micro-kernel files for teaching (``micro_shared.ptx``: bank-conflict
  strides; ``micro_global.ptx``: coalescing patterns);
* this registry: one :class:`Case` per kernel, whose ``run`` function launches
  it and returns a :class:`CaseRun` holding what the kernel produced and what
  a numpy oracle says it must produce.

One source, two executors.  A case's ``run(xp, n, rng)`` receives ``xp`` --
either the ``gpusim`` module or the ``cupy`` module -- and uses nothing of it
but ``xp.RawModule(path=...)``, ``module.get_function(name)``,
``kernel(grid, block, args, shared_mem=...)`` (args: ``xp`` arrays and numpy
scalars ``np.uint32``/``np.int32``/``np.float32``), ``xp.asarray``,
``xp.zeros``, ``xp.empty`` and ``array.get()``.  So the very same case code
runs in the simulator and on a real GPU (``validation/probes/suite_on_gpu.py``).
:class:`DryRun` is a third ``xp`` that launches nothing but checks every
launch against the PTX ``.entry`` parameter list (used by the static tests).

This module imports only numpy and the standard library at module level, so
it can be loaded on a machine that has CuPy but none of gpusim's other
dependencies (by import or by file path).

Sizes: ``n`` means what :attr:`Case.n_means` says (elements, matrix side...).
Exactness: every oracle reproduces the kernel's own order of floating-point
operations (tree shapes, butterfly exchanges, accumulation order), or uses
inputs whose results are exact in any order (small integers, dyadic
fractions), so nearly every case is ``exact=True``: outputs must equal the
oracle bit for bit.  The one exception is ``reduce_atomic_f32``, whose block
partials are combined by ``atomicAdd`` in an unspecified order (see its rtol).

Usage::

    import gpusim, numpy as np
    from gpusim.suite import CASES, run_case, check
    r = run_case(CASES["reduce_v2"], gpusim)          # default_n, seed 0
    ok, message = check(r)
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

__all__ = [
    "SizeError", "Case", "CaseRun", "CASES", "GROUPS", "SUITE_DIR", "PTX_DIR", "CUDA_DIR",
    "ptx_path", "cuda_path", "run_case", "compare", "check", "DryRun",
    "entry_params", "TIMING_SIZES", "SCALE_SIZES", "COPY_OCCUPANCY_SMEM", "copy_occupancy_smem",
]

SUITE_DIR = pathlib.Path(__file__).resolve().parent


class SizeError(ValueError):
    """A suite case cannot run at the problem size ``n`` it was given (the message says why)."""
PTX_DIR = SUITE_DIR / "ptx"
CUDA_DIR = SUITE_DIR / "cuda"


# --------------------------------------------------------------------------- API


@dataclass(frozen=True)
class Case:
    """One kernel of the suite with its default launch and oracle."""

    name: str        #: unique case name, e.g. "reduce_v0", "matmul_tiled"
    group: str       #: topic: reduce, matmul, conv, memory, ilp, divergence, warp, shared, micro
    ptx: str         #: file name under ``ptx/``
    kernel: str      #: PTX ``.entry`` name launched (first launch if several)
    default_n: int   #: problem size for ``gpusim run`` and the full GPU check
    test_n: int      #: small size for fast tests (a few thousand threads at most)
    run: Callable[[Any, int, np.random.Generator], "CaseRun"]  #: ``run(xp, n, rng)``
    doc: str         #: one line: the seed concept it teaches
    n_means: str = "elements"  #: what ``n`` counts for this case

    @property
    def source(self) -> pathlib.Path | None:
        """The CUDA C file this case's PTX was compiled from (None: hand-written PTX)."""
        return cuda_path(self)


@dataclass
class CaseRun:
    """What one ``Case.run`` produced.

    ``outputs`` and ``expected`` map the same names to host numpy arrays of
    the same shape and dtype.  ``exact``: outputs must equal expected bit for
    bit; otherwise ``|out - exp| <= rtol * |exp|`` elementwise, for the reason
    given in ``tolerance_note``.  ``launches`` holds what every kernel call
    returned, in order (gpusim: a launch result with ``metrics``; CuPy: None).
    ``grid``, ``block``, ``shared_mem`` and ``kernel`` describe the main
    (first) launch, for display.
    """

    outputs: dict[str, np.ndarray]
    expected: dict[str, np.ndarray]
    launches: list
    grid: tuple
    block: tuple
    shared_mem: int
    kernel: str
    exact: bool = True
    rtol: float = 0.0
    tolerance_note: str = ""
    inputs: dict[str, np.ndarray] = field(default_factory=dict)  #: host copies of uploaded inputs


def ptx_path(case: Case) -> pathlib.Path:
    """Absolute path of the case's PTX file."""
    return PTX_DIR / case.ptx


def cuda_path(case: Case) -> pathlib.Path | None:
    """The ``cuda/*.cu`` file the case's PTX was generated from, or None if hand-written."""
    p = CUDA_DIR / (pathlib.Path(case.ptx).stem + ".cu")
    return p if p.exists() else None


def run_case(case: Case, xp: Any, n: int | None = None, seed: int = 0) -> CaseRun:
    """Run ``case`` with ``xp`` at size ``n`` (default: ``case.default_n``), inputs from ``seed``."""
    return case.run(xp, case.default_n if n is None else int(n), np.random.default_rng(seed))


def compare(run: CaseRun) -> list[dict]:
    """Per-output comparison rows: name, shape, dtype, exact_equal, max_abs_err, max_rel_err, ok."""
    rows = []
    for key, exp in run.expected.items():
        out = run.outputs.get(key)
        row: dict[str, Any] = {"output": key, "shape": list(np.shape(exp)), "dtype": str(np.asarray(exp).dtype)}
        if out is None or np.shape(out) != np.shape(exp) or np.asarray(out).dtype != np.asarray(exp).dtype:
            got = None if out is None else f"{np.asarray(out).dtype}{list(np.shape(out))}"
            row.update(exact_equal=False, max_abs_err=float("inf"), max_rel_err=float("inf"), ok=False,
                       problem=f"output {key!r}: expected {row['dtype']}{row['shape']}, got {got}")
            rows.append(row)
            continue
        out = np.ascontiguousarray(out)
        exp = np.ascontiguousarray(exp)
        exact_equal = bool(np.array_equal(out.view(np.uint8), exp.view(np.uint8)))
        o64 = out.astype(np.float64)
        e64 = exp.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            abs_err = np.abs(o64 - e64)
            rel_err = np.where(e64 != 0, abs_err / np.abs(e64), np.where(abs_err == 0, 0.0, np.inf))
        max_abs = float(np.nanmax(abs_err)) if abs_err.size else 0.0
        max_rel = float(np.nanmax(rel_err)) if rel_err.size else 0.0
        if run.exact:
            ok = exact_equal
        else:
            ok = bool(np.all(abs_err <= run.rtol * np.abs(e64)))
        row.update(exact_equal=exact_equal, max_abs_err=max_abs, max_rel_err=max_rel, ok=ok)
        if not ok:
            if run.exact:
                flat_out = out.view(np.uint8).reshape(out.size, -1)
                bad_mask = (flat_out != exp.view(np.uint8).reshape(exp.size, -1)).any(axis=1)
            else:
                bad_mask = ~(abs_err <= run.rtol * np.abs(e64)).reshape(-1)
            bad = np.flatnonzero(bad_mask)
            if bad.size:
                i = int(bad[0])
                row["problem"] = (f"output {key!r}: {bad.size} of {out.size} elements differ; first at flat "
                                  f"index {i}: got {out.reshape(-1)[i]}, expected {exp.reshape(-1)[i]}")
        rows.append(row)
    for key in run.outputs:
        if key not in run.expected:
            rows.append({"output": key, "ok": False, "exact_equal": False, "max_abs_err": float("inf"),
                         "max_rel_err": float("inf"), "problem": f"output {key!r} has no oracle"})
    return rows


def check(run: CaseRun) -> tuple[bool, str]:
    """(ok, one-line message) for a :class:`CaseRun` against its oracle."""
    rows = compare(run)
    ok = all(r["ok"] for r in rows)
    max_abs = max((r["max_abs_err"] for r in rows), default=0.0)
    max_rel = max((r["max_rel_err"] for r in rows), default=0.0)
    if ok:
        if run.exact:
            return True, f"bit-exact ({len(rows)} output{'s' if len(rows) != 1 else ''})"
        return True, f"within rtol {run.rtol:g} (max rel err {max_rel:.3g})"
    problems = "; ".join(r.get("problem", r["output"]) for r in rows if not r["ok"])
    mode = "bit-exact" if run.exact else f"rtol {run.rtol:g}"
    return False, f"MISMATCH ({mode}; max abs err {max_abs:.3g}, max rel err {max_rel:.3g}): {problems}"


# --------------------------------------------------------------------------- helpers


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


_DEFAULT_DYNAMIC_SMEM = 48 * 1024  #: dynamic shared memory a kernel may use without opting in (bytes)


class _Launcher:
    """Loads one PTX file with ``xp`` and records the kernel launches of a run.

    A launch with more dynamic shared memory than the 48 KiB default (minus the
    kernel's static shared memory) first raises the kernel's
    ``max_dynamic_shared_size_bytes`` to that amount, as CUDA requires.
    """

    def __init__(self, xp: Any, ptx: str):
        self.xp = xp
        self.module = xp.RawModule(path=str(PTX_DIR / ptx))
        self.launches: list = []
        self.main: tuple | None = None
        self.inputs: dict[str, np.ndarray] = {}

    def upload(self, name: str, host: np.ndarray):
        """``xp.asarray(host)``, remembering the host array as input ``name``."""
        host = np.ascontiguousarray(host)
        self.inputs[name] = host
        return self.xp.asarray(host)

    def __call__(self, kernel: str, grid: tuple, block: tuple, args: tuple, shared_mem: int = 0):
        fn = self.module.get_function(kernel)
        static = int(getattr(fn, "shared_size_bytes", 0) or 0)
        if int(shared_mem) > _DEFAULT_DYNAMIC_SMEM - static and \
                int(shared_mem) > fn.max_dynamic_shared_size_bytes:
            # like cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, n): CUDA
            # refuses more than 48 KiB (minus static) of dynamic shared memory unless the kernel
            # opted in; gpusim's, CuPy's and DryRun's kernels all have this settable property.
            # Only ever raised: the attribute belongs to the kernel, not to one launch
            fn.max_dynamic_shared_size_bytes = int(shared_mem)
        result = fn(grid, block, args, shared_mem=shared_mem)
        self.launches.append(result)
        if self.main is None:
            self.main = (kernel, tuple(grid), tuple(block), int(shared_mem))
        return result

    def result(self, outputs: dict, expected: dict, exact: bool = True, rtol: float = 0.0,
               note: str = "") -> CaseRun:
        kernel, grid, block, smem = self.main if self.main else ("", (), (), 0)
        return CaseRun(outputs=outputs, expected=expected, launches=self.launches, grid=grid,
                       block=block, shared_mem=smem, kernel=kernel, exact=exact, rtol=rtol,
                       tolerance_note=note, inputs=self.inputs)


def _uniform_f32(rng: np.random.Generator, n: int) -> np.ndarray:
    """n float32 in [0, 1) (multiples of 2**-24: no subnormals)."""
    return rng.random(n, dtype=np.float32)


def _int_f32(rng: np.random.Generator, shape, lo: int, hi: int, scale: float = 1.0) -> np.ndarray:
    """Integers in [lo, hi] times ``scale`` (a power of two) as float32: exactly representable."""
    return (rng.integers(lo, hi + 1, size=shape).astype(np.float64) * scale).astype(np.float32)


def _u32(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 2**32, size=n, dtype=np.uint32)


def _pad(x: np.ndarray, length: int) -> np.ndarray:
    """x followed by zeros up to ``length`` (loads past n read 0 in every kernel)."""
    out = np.zeros(length, dtype=x.dtype)
    out[: x.size] = x
    return out


# ---- reduction oracles: each reproduces the kernel's float32 operation order exactly


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
    y = _pad(x, n_blocks * 2 * block).reshape(n_blocks, 2, block)
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
    iters = max(1, _cdiv(x.size, sweep))
    y = _pad(x, iters * sweep).reshape(iters, grid, 2, block)
    acc = np.zeros((grid, block), np.float32)
    for it in range(iters):
        acc = acc + y[it, :, 0, :]
        acc = acc + y[it, :, 1, :]
    return _tree_sequential(acc)


def _strided_thread_sums(x: np.ndarray, grid: int, block: int = 256) -> np.ndarray:
    """(grid, block) of per-thread grid-stride sums ``sum += g[i]``, i = t, t + grid*block, ..."""
    stride = grid * block
    iters = max(1, _cdiv(x.size, stride))
    y = _pad(x, iters * stride).reshape(iters, grid, block)
    acc = np.zeros((grid, block), np.float32)
    for it in range(iters):
        acc = acc + y[it]
    return acc


# --------------------------------------------------------------------------- reduce

_RED_BLOCK = 256


def _reduce_run(kernel: str, per_block: int, oracle: Callable[[np.ndarray, int], np.ndarray]):
    def run(xp, n, rng):
        x = _uniform_f32(rng, n)
        blocks = _cdiv(n, per_block)
        L = _Launcher(xp, "reduce.ptx")
        d_in = L.upload("g_idata", x)
        d_out = xp.zeros(blocks, np.float32)
        L(kernel, (blocks,), (_RED_BLOCK,), (d_in, d_out, np.uint32(n)))
        return L.result({"partials": d_out.get()}, {"partials": oracle(x, blocks)})
    return run


def _oracle_interleaved(x, blocks):
    return _tree_interleaved(_pad(x, blocks * _RED_BLOCK).reshape(blocks, _RED_BLOCK))


def _oracle_sequential(x, blocks):
    return _tree_sequential(_pad(x, blocks * _RED_BLOCK).reshape(blocks, _RED_BLOCK))


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
    x = _uniform_f32(rng, n)
    grid = _v6_grid(n)
    smem = _RED_BLOCK * 4
    L = _Launcher(xp, "reduce.ptx")
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
    return max(1, min(64, _cdiv(n, _RED_BLOCK)))


def _run_reduce_atomic_int(xp, n, rng):
    x = rng.integers(-1000, 1001, size=n).astype(np.int32)
    grid = _atomic_grid(n)
    L = _Launcher(xp, "reduce.ptx")
    d_in = L.upload("g_idata", x)
    d_out = xp.zeros(1, np.int32)
    L("reduce_atomic_int", (grid,), (_RED_BLOCK,), (d_in, d_out, np.uint32(n)))
    expected = np.array([np.sum(x, dtype=np.int64)], dtype=np.int64).astype(np.int32)
    return L.result({"sum": d_out.get()}, {"sum": expected})


_ATOMIC_F32_RTOL = 1e-5


def _run_reduce_atomic_f32(xp, n, rng):
    x = _uniform_f32(rng, n)
    grid = _atomic_grid(n)
    L = _Launcher(xp, "reduce.ptx")
    d_in = L.upload("g_idata", x)
    d_out = xp.zeros(1, np.float32)
    L("reduce_atomic_f32", (grid,), (_RED_BLOCK,), (d_in, d_out, np.uint32(n)))
    partials = _block_shfl_xor(_strided_thread_sums(x, grid))      # exact per block
    expected = np.array([np.sum(partials, dtype=np.float64)], dtype=np.float32)
    note = ("the <= 64 block partials (each bit-exact) are combined by atomicAdd in an unspecified "
            "order; for non-negative inputs any order is within (64-1)*2**-24 ~ 3.8e-6 relative of the "
            "exactly rounded sum")
    return L.result({"sum": d_out.get()}, {"sum": expected}, exact=False, rtol=_ATOMIC_F32_RTOL, note=note)


# --------------------------------------------------------------------------- matmul


def _matmul_exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for small-integer float32 matrices: every partial sum is exact, so any order agrees."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def _matmul_inputs(rng, n):
    return _int_f32(rng, (n, n), -4, 4), _int_f32(rng, (n, n), -4, 4)


def _run_matmul_naive(xp, n, rng):
    a, b = _matmul_inputs(rng, n)
    L = _Launcher(xp, "matmul.ptx")
    d_a, d_b = L.upload("A", a), L.upload("B", b)
    d_c = xp.zeros((n, n), np.float32)
    L("matmul_naive", (_cdiv(n, 32), _cdiv(n, 32)), (32, 32), (d_a, d_b, d_c, np.int32(n)))
    return L.result({"C": d_c.get()}, {"C": _matmul_exact(a, b)})


def _run_matmul_tiled(xp, n, rng):
    a, b = _matmul_inputs(rng, n)
    L = _Launcher(xp, "matmul.ptx")
    d_m, d_n = L.upload("M", a), L.upload("N", b)
    d_out = xp.zeros((n, n), np.float32)
    h = w = k = np.int32(n)
    L("matmul_tiled", (_cdiv(n, 16), _cdiv(n, 16)), (16, 16), (d_out, d_m, d_n, h, w, k))
    return L.result({"out": d_out.get()}, {"out": _matmul_exact(a, b)})


def _run_matmul_regtile(xp, n, rng):
    if n % 4:
        raise SizeError(f"matmul_regtile: n={n} must be a multiple of V=4")
    a, b = _matmul_inputs(rng, n)
    L = _Launcher(xp, "matmul.ptx")
    d_a, d_b = L.upload("A", a), L.upload("B", b)
    d_c = xp.zeros((n, n), np.float32)
    g = _cdiv(n // 4, 16)
    L("matmul_regtile", (g, g), (16, 16), (d_a, d_b, d_c, np.int32(n)))
    return L.result({"C": d_c.get()}, {"C": _matmul_exact(a, b)})


def _run_matmul_smem_regtile(xp, n, rng):
    if n % 64:
        raise SizeError(f"matmul_smem_regtile: n={n} must be a multiple of L=64")
    at, b = _matmul_inputs(rng, n)
    L = _Launcher(xp, "matmul.ptx")
    d_at, d_b = L.upload("At", at), L.upload("B", b)
    d_c = xp.zeros((n, n), np.float32)
    L("matmul_smem_regtile", (n // 64, n // 64), (16, 16), (d_at, d_b, d_c, np.int32(n)))
    return L.result({"C": d_c.get()}, {"C": _matmul_exact(at.T, b)})


# --------------------------------------------------------------------------- conv


def _conv_oracle(x: np.ndarray) -> np.ndarray:
    r = np.float32(0.0) + x[:-2]          # result = 0.0f; result += input[idx + i] ...
    r = r + x[1:-1]
    r = r + x[2:]
    return r / np.float32(3.0)            # div.rn.f32: correctly rounded, as numpy's


def _conv_run(kernel: str):
    def run(xp, n, rng):
        x = _uniform_f32(rng, n + 2)
        L = _Launcher(xp, "conv.ptx")
        d_in = L.upload("input", x)
        d_out = xp.zeros(n, np.float32)
        L(kernel, (_cdiv(n, 128),), (128,), (np.int32(n), d_in, d_out))
        return L.result({"output": d_out.get()}, {"output": _conv_oracle(x)})
    return run


# --------------------------------------------------------------------------- memory

_COPY_OFFSET = 1
_COPY_STRIDE = 4


def _run_copy_offset(xp, n, rng):
    a = _uniform_f32(rng, n)
    L = _Launcher(xp, "memory.ptx")
    d_a = L.upload("a", a)
    d_b = xp.zeros(n, np.float32)
    L("copy_offset", (_cdiv(n - _COPY_OFFSET, 256),), (256,), (d_a, d_b, np.uint32(n), np.uint32(_COPY_OFFSET)))
    exp = np.zeros(n, np.float32)
    exp[_COPY_OFFSET:] = a[_COPY_OFFSET:]
    return L.result({"b": d_b.get()}, {"b": exp})


def _run_copy_stride(xp, n, rng):
    a = _uniform_f32(rng, n)
    L = _Launcher(xp, "memory.ptx")
    d_a = L.upload("a", a)
    d_b = xp.zeros(n, np.float32)
    L("copy_stride", (_cdiv(_cdiv(n, _COPY_STRIDE), 256),), (256,), (d_a, d_b, np.uint32(n), np.uint32(_COPY_STRIDE)))
    exp = np.zeros(n, np.float32)
    exp[::_COPY_STRIDE] = a[::_COPY_STRIDE]
    return L.result({"b": d_b.get()}, {"b": exp})


def _run_copy_vec4(xp, n, rng):
    if n % 4:
        raise SizeError(f"copy_vec4: n={n} must be a multiple of 4 (float4 elements)")
    a = _uniform_f32(rng, n)
    L = _Launcher(xp, "memory.ptx")
    d_a = L.upload("a", a)
    d_b = xp.zeros(n, np.float32)
    L("copy_vec4", (_cdiv(n // 4, 256),), (256,), (d_a, d_b, np.uint32(n // 4)))
    return L.result({"b": d_b.get()}, {"b": a.copy()})


def _grid_stride_grid(n: int) -> int:
    """2 blocks of 256 per SM of an H100 (132 SMs) at most; fewer for small n so the loop runs."""
    return max(1, min(2 * 132, n // (256 * 8)))


def _run_copy_grid_stride(xp, n, rng):
    a = _uniform_f32(rng, n)
    L = _Launcher(xp, "memory.ptx")
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
    data = _uniform_f32(rng, n * _AOS_FIELDS).reshape(n, _AOS_FIELDS)
    L = _Launcher(xp, "memory.ptx")
    d = L.upload("data", data)
    L("aos_update", (_cdiv(n, 256),), (256,), (d, np.uint32(n)))
    return L.result({"data": d.get()}, {"data": _aos_expected(data)})


def _run_soa_update(xp, n, rng):
    data = _uniform_f32(rng, n * _AOS_FIELDS).reshape(n, _AOS_FIELDS)   # same values as AoS
    L = _Launcher(xp, "memory.ptx")
    d = L.upload("soa", np.ascontiguousarray(data.T))                  # field-major (20, n)
    L("soa_update", (_cdiv(n, 256),), (256,), (d, np.uint32(n)))
    return L.result({"soa": d.get()}, {"soa": np.ascontiguousarray(_aos_expected(data).T)})


_HIST_K = 16


def _run_local_hist8(xp, n, rng):
    v = _u32(rng, n * _HIST_K)
    L = _Launcher(xp, "memory.ptx")
    d_in = L.upload("in", v)
    d_out = xp.zeros(n * 8, np.uint32)
    L("local_hist8", (_cdiv(n, 256),), (256,), (d_in, d_out, np.uint32(n), np.uint32(_HIST_K)))
    bins = (v.reshape(n, _HIST_K) & 7).astype(np.int64)
    exp = (bins[:, :, None] == np.arange(8)).sum(axis=1).astype(np.uint32).reshape(-1)
    return L.result({"out": d_out.get()}, {"out": exp})


_AXPY_ALPHA = 0.75


def _run_axpy_half(xp, n, rng):
    x = _int_f32(rng, n, -512, 512, 1 / 256).astype(np.float16)
    y = _int_f32(rng, n, -512, 512, 1 / 256).astype(np.float16)
    L = _Launcher(xp, "memory.ptx")
    d_x, d_y = L.upload("x", x), L.upload("y", y)
    L("axpy_half", (_cdiv(n, 256),), (256,), (d_x, d_y, np.float32(_AXPY_ALPHA), np.uint32(n)))
    alpha_h = np.float64(np.float16(_AXPY_ALPHA))
    # fma.rn.f16: alpha*x + y is exact in float64 (<= 12 significant bits here), then one rounding
    exp = (alpha_h * x.astype(np.float64) + y.astype(np.float64)).astype(np.float16)
    return L.result({"y": d_y.get()}, {"y": exp})


# --------------------------------------------------------------------------- ilp


def _ilp_run(kernel: str, per_block: int):
    def run(xp, n, rng):
        a = _int_f32(rng, n, -64, 64, 1 / 8)
        b = _int_f32(rng, n, -64, 64, 1 / 8)
        c = _int_f32(rng, n, -4096, 4096, 1 / 64)
        L = _Launcher(xp, "ilp.ptx")
        d_a, d_b, d_c = L.upload("a", a), L.upload("b", b), L.upload("c", c)
        L(kernel, (_cdiv(n, per_block),), (256,), (d_a, d_b, d_c, np.uint32(n)))
        # c + a*b: multiples of 1/64 below 2**10 -- exact in float32, fused or not
        exp = (c.astype(np.float64) + a.astype(np.float64) * b.astype(np.float64)).astype(np.float32)
        return L.result({"c": d_c.get()}, {"c": exp})
    return run


# --------------------------------------------------------------------------- divergence / warp

_ROUNDS = 16
_K_A = np.uint32(0x9E3779B1)
_K_B = np.uint32(0x9E3779B9)


def _step_a(x: np.ndarray) -> np.ndarray:
    return (x * _K_A) ^ (x >> np.uint32(15))


def _step_b(x: np.ndarray) -> np.ndarray:
    return (x ^ (x >> np.uint32(7))) + _K_B


def _path(x: np.ndarray, step) -> np.ndarray:
    for _ in range(_ROUNDS):
        x = step(x)
    return x


def _branch_run(kernel: str, take_a: Callable[[np.ndarray], np.ndarray]):
    def run(xp, n, rng):
        v = _u32(rng, n)
        L = _Launcher(xp, "divergence.ptx")
        d_in = L.upload("in", v)
        d_out = xp.zeros(n, np.uint32)
        L(kernel, (_cdiv(n, 256),), (256,), (d_in, d_out, np.uint32(n)))
        tid = np.arange(n) % 256
        with np.errstate(over="ignore"):
            exp = np.where(take_a(tid), _path(v, _step_a), _path(v, _step_b)).astype(np.uint32)
        return L.result({"out": d_out.get()}, {"out": exp})
    return run


def _run_divergent_loop(xp, n, rng):
    v = _u32(rng, n)
    L = _Launcher(xp, "divergence.ptx")
    d_in = L.upload("in", v)
    d_out = xp.zeros(n, np.uint32)
    L("divergent_loop", (_cdiv(n, 256),), (256,), (d_in, d_out, np.uint32(n)))
    trips = (np.arange(n) % 256) % 32
    exp = v.copy()
    with np.errstate(over="ignore"):
        for r in range(31):
            exp = np.where(trips > r, _step_a(exp), exp).astype(np.uint32)
    return L.result({"out": d_out.get()}, {"out": exp})


def _whole_warps(name: str, n: int) -> None:
    if n % 32:
        raise SizeError(f"{name}: n={n} must be a multiple of 32 (whole warps)")


def _run_warp_vote(xp, n, rng):
    _whole_warps("warp_vote", n)
    v = rng.integers(-104, 100, size=n).astype(np.int32)
    w = n // 32
    L = _Launcher(xp, "divergence.ptx")
    d_in = L.upload("in", v)
    d_ballot, d_all, d_any = xp.zeros(w, np.uint32), xp.zeros(w, np.int32), xp.zeros(w, np.int32)
    L("warp_vote", (_cdiv(n, 256),), (256,), (d_in, d_ballot, d_all, d_any, np.uint32(n)))
    lanes = v.reshape(w, 32)
    ballot = ((lanes > 0).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
    exp = {"ballot": ballot, "all": (lanes > -100).all(axis=1).astype(np.int32),
           "any": (lanes > 90).any(axis=1).astype(np.int32)}
    return L.result({"ballot": d_ballot.get(), "all": d_all.get(), "any": d_any.get()}, exp)


def _run_warp_scan(xp, n, rng):
    _whole_warps("warp_scan", n)
    v = rng.integers(-1000, 1001, size=n).astype(np.int32)
    L = _Launcher(xp, "divergence.ptx")
    d_in = L.upload("in", v)
    d_scan, d_total = xp.zeros(n, np.int32), xp.zeros(n, np.int32)
    L("warp_scan", (_cdiv(n, 256),), (256,), (d_in, d_scan, d_total, np.uint32(n)))
    lanes = v.reshape(-1, 32).astype(np.int64)
    scan = np.cumsum(lanes, axis=1)
    total = np.repeat(scan[:, -1:], 32, axis=1)
    return L.result({"scan": d_scan.get(), "total": d_total.get()},
                    {"scan": scan.reshape(-1).astype(np.int32), "total": total.reshape(-1).astype(np.int32)})


# --------------------------------------------------------------------------- shared


def _transpose_run(kernel: str):
    def run(xp, n, rng):
        a = _uniform_f32(rng, n * n).reshape(n, n)
        L = _Launcher(xp, "shared.ptx")
        d_in = L.upload("in", a)
        d_out = xp.zeros((n, n), np.float32)
        L(kernel, (_cdiv(n, 32), _cdiv(n, 32)), (32, 32), (d_in, d_out, np.int32(n)))
        return L.result({"out": d_out.get()}, {"out": np.ascontiguousarray(a.T)})
    return run


_SHARED_STRIDES = (1, 2, 4, 32, 33)


def _run_shared_stride(xp, n, rng):
    if n % 1024:
        raise SizeError(f"shared_stride: n={n} must be a multiple of 1024 (one buffer per block)")
    a = _uniform_f32(rng, n)
    blocks = n // 1024
    L = _Launcher(xp, "shared.ptx")
    d_in = L.upload("in", a)
    outs, exps = {}, {}
    t = np.arange(256)
    for s in _SHARED_STRIDES:
        d_out = xp.zeros(blocks * 256, np.float32)
        L("shared_stride", (blocks,), (256,), (d_in, d_out, np.uint32(s)))
        outs[f"out_s{s}"] = d_out.get()
        exps[f"out_s{s}"] = a.reshape(blocks, 1024)[:, (t * s) % 1024].reshape(-1)
    return L.result(outs, exps)


# --------------------------------------------------------------------------- micro (hand-written PTX)

_MICRO_STRIDES = (1, 2, 4, 8, 16, 32, 33, 64)


def _smem_stride_run(kernel: str, words: int):
    def run(xp, n, rng):
        v = _u32(rng, 32 * words)
        L = _Launcher(xp, "micro_shared.ptx")
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
    v = _u32(rng, 32)
    L = _Launcher(xp, "micro_shared.ptx")
    d_in = L.upload("in", v)
    outs, exps = {}, {}
    for sh in _SAME_WORD_SHIFTS:
        d_out = xp.zeros(32, np.uint32)
        L("smem_same_word_u32", (1,), (32,), (d_in, d_out, np.uint32(sh)))
        outs[f"out_shift{sh}"] = d_out.get()
        exps[f"out_shift{sh}"] = v[np.arange(32) >> sh]
    return L.result(outs, exps)


_GMEM_STRIDES = (1, 2, 8, 32)
_GMEM_OFFSETS = (0, 1, 8, 31)


def _run_gmem_stride(xp, n, rng):
    v = _u32(rng, n * max(_GMEM_STRIDES))
    L = _Launcher(xp, "micro_global.ptx")
    d_in = L.upload("in", v)
    outs, exps = {}, {}
    for s in _GMEM_STRIDES:
        d_out = xp.zeros(n, np.uint32)
        L("gmem_stride_u32", (_cdiv(n, 256),), (256,), (d_in, d_out, np.uint32(n), np.uint32(s)))
        outs[f"out_s{s}"] = d_out.get()
        exps[f"out_s{s}"] = v[np.arange(n) * s]
    return L.result(outs, exps)


def _run_gmem_offset(xp, n, rng):
    v = _u32(rng, n + max(_GMEM_OFFSETS))
    L = _Launcher(xp, "micro_global.ptx")
    d_in = L.upload("in", v)
    outs, exps = {}, {}
    for off in _GMEM_OFFSETS:
        d_out = xp.zeros(n, np.uint32)
        L("gmem_offset_u32", (_cdiv(n, 256),), (256,), (d_in, d_out, np.uint32(n), np.uint32(off)))
        outs[f"out_off{off}"] = d_out.get()
        exps[f"out_off{off}"] = v[off: off + n].copy()
    return L.result(outs, exps)


def _run_gmem_uniform(xp, n, rng):
    v = _u32(rng, _cdiv(n, 32))
    L = _Launcher(xp, "micro_global.ptx")
    d_in = L.upload("in", v)
    d_out = xp.zeros(n, np.uint32)
    L("gmem_uniform_u32", (_cdiv(n, 256),), (256,), (d_in, d_out, np.uint32(n)))
    return L.result({"out": d_out.get()}, {"out": v[np.arange(n) // 32]})


# --------------------------------------------------------------------------- occupancy (Little's law)

# H100 shared memory per SM (228 KB carveout), reserved per block, allocation granularity
# (hardware-facts section 4; cudaOccMaxActiveBlocksPerMultiprocessor, driver-verified on the H100)
_H100_SMEM_PER_SM = 233472
_H100_SMEM_RESERVED_PER_BLOCK = 1024
_H100_SMEM_GRANULE = 128
_H100_SMEM_OPTIN = 232448          # sharedMemPerBlockOptin: 227 KB
_OCC_BLOCK = 256                   # threads per block: 8 warps; 8 blocks = the 64-warp limit
_OCC_BLOCKS_PER_SM = (1, 2, 3, 4, 6, 8)


def copy_occupancy_smem(blocks_per_sm: int) -> int:
    """Dynamic shared memory (bytes) that limits 256-thread blocks to ``blocks_per_sm`` on an H100.

    A block allocates ``S = roundup(shared_mem + 1024, 128)`` bytes of the SM's 233472, so
    ``floor(233472 / S)`` blocks fit.  S is taken midway between the smallest allocation that
    gives ``blocks_per_sm`` blocks and the largest (rounded down to the 128 B granule), so the
    limit holds with a margin on both sides.  8 blocks of 256 threads are the warp limit
    (64 warps/SM) already, so 8 (or more) needs none.
    """
    k = int(blocks_per_sm)
    if k >= 2048 // _OCC_BLOCK:
        return 0
    hi = _H100_SMEM_PER_SM / k                 # largest S giving k blocks
    lo = _H100_SMEM_PER_SM / (k + 1)           # S must exceed this
    s_cta = int((hi + lo) / 2) // _H100_SMEM_GRANULE * _H100_SMEM_GRANULE
    smem = min(s_cta - _H100_SMEM_RESERVED_PER_BLOCK, _H100_SMEM_OPTIN)
    alloc = _cdiv(smem + _H100_SMEM_RESERVED_PER_BLOCK, _H100_SMEM_GRANULE) * _H100_SMEM_GRANULE
    if smem < 0 or _H100_SMEM_PER_SM // alloc != k:
        raise SizeError(f"no dynamic shared memory size gives {k} blocks of {_OCC_BLOCK} threads per H100 SM")
    return smem


#: copy_occupancy's launches in order: H100 blocks per SM -> dynamic shared memory per block
#: (bytes; unused by the kernel, it only limits how many 256-thread blocks an SM holds).
#: {1: 174080, 2: 96256, 3: 67072, 4: 51456, 6: 35072, 8: 0}
COPY_OCCUPANCY_SMEM: dict[int, int] = {k: copy_occupancy_smem(k) for k in _OCC_BLOCKS_PER_SM}


def _copy_vec4_launches(xp, n, rng, case: str, launches: list[tuple[str, int, int]]):
    """Copy the same n floats with copy_vec4 once per ``(output name, block, dynamic smem)``."""
    if n % 4:
        raise SizeError(f"{case}: n={n} must be a multiple of 4 (float4 elements)")
    a = _uniform_f32(rng, n)
    L = _Launcher(xp, "memory.ptx")
    d_a = L.upload("a", a)
    outs, exps = {}, {}
    for name, block, smem in launches:
        d_b = xp.zeros(n, np.float32)
        L("copy_vec4", (_cdiv(n // 4, block),), (block,), (d_a, d_b, np.uint32(n // 4)), shared_mem=smem)
        outs[name] = d_b.get()
        exps[name] = a.copy()
    return L.result(outs, exps)


def _run_copy_occupancy(xp, n, rng):
    return _copy_vec4_launches(xp, n, rng, "copy_occupancy",
                               [(f"out_k{k}", _OCC_BLOCK, smem) for k, smem in COPY_OCCUPANCY_SMEM.items()])


_BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)   #: copy_block_size's launches, in order (threads per block)


def _run_copy_block_size(xp, n, rng):
    return _copy_vec4_launches(xp, n, rng, "copy_block_size", [(f"out_b{b}", b, 0) for b in _BLOCK_SIZES])


# --------------------------------------------------------------------------- the registry

_M = 2**20
_CASE_LIST: list[Case] = [
    # reduce.ptx -- seed 000 (CMU 15-779) and seed 003 (CUDA Mode / Mark Harris)
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
    # matmul.ptx -- seeds 000, 002, 004
    Case("matmul_naive", "matmul", "matmul.ptx", "matmul_naive", 256, 40, _run_matmul_naive,
         "matmul, one thread per output element (2N^3 global loads; row index from threadIdx.x)",
         n_means="matrix side N (N x N)"),
    Case("matmul_tiled", "matmul", "matmul.ptx", "matmul_tiled", 256, 40, _run_matmul_tiled,
         "matmul with 16x16 shared-memory tiles (each input read N/16 times)",
         n_means="matrix side N (N x N)"),
    Case("matmul_regtile", "matmul", "matmul.ptx", "matmul_regtile", 256, 40, _run_matmul_regtile,
         "matmul with register tiling: each thread computes a 4x4 block of C",
         n_means="matrix side N (N x N, multiple of 4)"),
    Case("matmul_smem_regtile", "matmul", "matmul.ptx", "matmul_smem_regtile", 256, 64, _run_matmul_smem_regtile,
         "matmul with 64x64 block tiles in shared memory (cooperative fetching) + 4x4 register tiles; "
         "C = At^T B as the notes index A[k][row]",
         n_means="matrix side N (N x N, multiple of 64)"),
    # conv.ptx -- seed 000
    Case("conv1d_naive", "conv", "conv.ptx", "conv1d_naive", _M, 1000, _conv_run("conv1d_naive"),
         "1D 3-point convolution, three global loads per output", n_means="outputs (input has n+2)"),
    Case("conv1d_shared", "conv", "conv.ptx", "conv1d_shared", _M, 1000, _conv_run("conv1d_shared"),
         "1D convolution staging block + halo in shared memory (__syncthreads)",
         n_means="outputs (input has n+2)"),
    # memory.ptx -- seeds 001, 004
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
    # ilp.ptx -- seed 001
    Case("ilp_fma_1", "ilp", "ilp.ptx", "ilp_fma_1", _M, 3000, _ilp_run("ilp_fma_1", 256),
         "c += a*b, one element per thread: load -> FFMA -> store fully dependent"),
    Case("ilp_fma_unroll2_grid", "ilp", "ilp.ptx", "ilp_fma_unroll2_grid", _M, 3000,
         _ilp_run("ilp_fma_unroll2_grid", 512),
         "#pragma unroll 2 over a grid stride (run-time stride): two independent elements per thread"),
    Case("ilp_fma_unroll2_block", "ilp", "ilp.ptx", "ilp_fma_unroll2_block", _M, 3000,
         _ilp_run("ilp_fma_unroll2_block", 512),
         "#pragma unroll 2 over a constant block stride: statically analysable addresses"),
    Case("ilp_fma_unroll4_block", "ilp", "ilp.ptx", "ilp_fma_unroll4_block", _M, 3000,
         _ilp_run("ilp_fma_unroll4_block", 1024),
         "#pragma unroll 4 over a constant block stride: four loads in flight per thread"),
    # divergence.ptx -- seeds 000, 004
    Case("divergent_branch", "divergence", "divergence.ptx", "divergent_branch", _M, 3000,
         _branch_run("divergent_branch", lambda t: t % 2 == 0),
         "warp divergence: even/odd lanes take different 16-round paths, every warp runs both"),
    Case("uniform_branch", "divergence", "divergence.ptx", "uniform_branch", _M, 3000,
         _branch_run("uniform_branch", lambda t: (t // 32) % 2 == 0),
         "warp-uniform branch on threadIdx.x / 32: the same work, no divergence"),
    Case("divergent_loop", "divergence", "divergence.ptx", "divergent_loop", _M, 3000, _run_divergent_loop,
         "per-lane loop trip count (tid % 32): the warp runs as long as its slowest lane"),
    Case("warp_vote", "warp", "divergence.ptx", "warp_vote", _M, 2048, _run_warp_vote,
         "warp vote: __ballot_sync / __all_sync / __any_sync", n_means="elements (multiple of 32)"),
    Case("warp_scan", "warp", "divergence.ptx", "warp_scan", _M, 2048, _run_warp_scan,
         "warp inclusive scan with __shfl_up_sync, total broadcast with __shfl_sync",
         n_means="elements (multiple of 32)"),
    # shared.ptx -- seed 001
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
    # hand-written micro-kernels
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
    Case("gmem_stride_u32", "micro", "micro_global.ptx", "gmem_stride_u32", 2**18, 1000, _run_gmem_stride,
         f"global loads a[i*stride], strides {_GMEM_STRIDES}: sectors per warp grow with the stride"),
    Case("gmem_offset_u32", "micro", "micro_global.ptx", "gmem_offset_u32", 2**18, 1000, _run_gmem_offset,
         f"global loads a[i+offset], offsets {_GMEM_OFFSETS}: misaligned warps touch one extra sector"),
    Case("gmem_uniform_u32", "micro", "micro_global.ptx", "gmem_uniform_u32", 2**18, 1000, _run_gmem_uniform,
         "global loads a[i/32]: one address per warp, one sector"),
]

#: name -> Case, in suite order
CASES: dict[str, Case] = {}
for _c in _CASE_LIST:
    if _c.name in CASES:  # pragma: no cover - guarded by tests
        raise ValueError(f"duplicate suite case {_c.name!r}")
    CASES[_c.name] = _c
del _c

#: group -> case names, in suite order
GROUPS: dict[str, list[str]] = {}
for _name, _case in CASES.items():
    GROUPS.setdefault(_case.group, []).append(_name)
del _name, _case


# --------------------------------------------------------------------------- timing sizes

# The problem sizes the timing comparison (simulator timing mode vs the H100's Nsight Compute
# counters, validation/probes/timing_on_gpu.py) runs each case at: its test_n and one "medium"
# size of about 2**15 to 2**16 threads in total, small enough for the timing simulator (~30,000
# warp-instructions per host second).  n counts what the case's ``n_means`` says:
#   reduce_*:          input floats/ints (2**15 and 2**16; v3-v7 use 2 elements per thread)
#   matmul_*:          matrix side N (64: 4096 outputs; 128: 16384 outputs/threads, fewer for regtile)
#   conv1d_*:          outputs (= threads)
#   copy_*/axpy/gmem_*: elements (copy_vec4: floats, 4 per thread); aos/soa: structs (= threads)
#   local_hist8:       threads; ilp_*: elements (1, 2 or 4 per thread); divergence/warp: elements
#   transpose_*:       matrix side (256: 65536 threads); shared_stride: floats (1024 per block)
#   micro smem_*:      one warp (test_n only)
#   copy_occupancy:    floats (4 per thread): 2**18 (256 blocks) and 2**20 (1024 blocks), each
#                      size launched 6 times (COPY_OCCUPANCY_SMEM)
_MEDIUM_BY_GROUP: dict[str, tuple[int, ...]] = {
    "reduce": (2**15, 2**16),
    "matmul": (64, 128),
    "conv": (2**16,),
    "memory": (2**16,),
    "ilp": (2**16,),
    "divergence": (2**16,),
    "warp": (2**16,),
}
_MEDIUM_BY_CASE: dict[str, tuple[int, ...]] = {
    "transpose_naive": (256,), "transpose_conflict": (256,), "transpose_padded": (256,),
    "transpose_swizzled": (256,), "shared_stride": (2**16,),
    "smem_stride_u32": (), "smem_stride_v2_u32": (), "smem_stride_v4_u32": (), "smem_same_word_u32": (),
    "gmem_stride_u32": (2**16,), "gmem_offset_u32": (2**16,), "gmem_uniform_u32": (2**16,),
    "copy_occupancy": (2**18, 2**20),
    # 2**17 threads: one wave on 132 SMs at every block size (32-thread blocks: 4096 <= 32 x 132)
    "copy_block_size": (2**19,),
}


def _timing_sizes(case: Case) -> tuple[int, ...]:
    """test_n plus the medium sizes of the case (by name) or its group; a case of another group
    (shared, micro) that is not listed above is timed at its test_n only."""
    medium = _MEDIUM_BY_CASE.get(case.name, _MEDIUM_BY_GROUP.get(case.group, ()))
    return tuple(sorted({case.test_n, *medium}))


#: case name -> problem sizes n (ascending; the first is the case's test_n) of the timing comparison
TIMING_SIZES: dict[str, tuple[int, ...]] = {name: _timing_sizes(case) for name, case in CASES.items()}

#: case name -> problem size of the scale tier of the validation: a GPU-filling launch of at
#: least 4 waves on the H100's 132 SMs or at least 50,000 cycles (issue #11), so that launch
#: overhead (about 4,400 cycles) is a small part of it; timed with the sampled engine.
#: The one-warp micro-kernels have no scale size.
SCALE_SIZES: dict[str, int] = {
    **{name: 2**24 for name, case in CASES.items() if case.group in ("reduce", "conv", "ilp", "divergence", "warp")},
    **{name: 2**24 for name in ("copy_offset", "copy_stride", "copy_vec4", "copy_grid_stride", "copy_occupancy",
                                "copy_block_size", "axpy_half", "shared_stride", "gmem_stride_u32",
                                "gmem_offset_u32", "gmem_uniform_u32")},
    "aos_update": 2**21, "soa_update": 2**21, "local_hist8": 2**22,
    **{name: 512 for name in ("matmul_naive", "matmul_tiled", "matmul_regtile", "matmul_smem_regtile")},
    **{name: 4096 for name in ("transpose_naive", "transpose_conflict", "transpose_padded", "transpose_swizzled")},
}


# --------------------------------------------------------------------------- DryRun


_ENTRY_RE = re.compile(r"\.entry\s+([A-Za-z_$%][\w$]*)\s*\(([^)]*)\)", re.S)
_PARAM_RE = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([\w$]+)(\[\d+\])?")
_REQNTID_RE = re.compile(r"\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?")


def entry_params(ptx_text: str) -> dict[str, dict]:
    """``{entry: {"params": [ptx type, ...], "reqntid": (x, y, z) | None}}`` for every ``.entry``."""
    out = {}
    for m in _ENTRY_RE.finditer(ptx_text):
        params = [p.group(1) for p in _PARAM_RE.finditer(m.group(2))]
        tail = ptx_text[m.end(): ptx_text.find("{", m.end())]
        r = _REQNTID_RE.search(tail)
        req = tuple(int(g or 1) for g in r.groups()) if r else None
        out[m.group(1)] = {"params": params, "reqntid": req}
    return out


class DryRun:
    """An ``xp`` that launches nothing: checks each launch and records it.

    Arrays are host numpy arrays behind a ``.get()``; kernels are never run,
    so outputs stay as allocated (zeros).  Each launch is checked against the
    PTX entry: the argument count, each argument's kind (array <-> ``.u64``,
    ``np.uint32``/``np.int32`` <-> ``.u32``/``.s32``/``.b32``, ``np.float32`` <->
    ``.f32``), block size (<= 1024 threads, ``.reqntid``), grid and shared
    memory (<= 227 KiB).  Violations raise ``ValueError``; the checked
    launches are in ``self.log`` as ``(kernel, grid, block, shared_mem)``.
    Only the API subset the suite may use exists here, so a case that uses
    anything else fails with AttributeError.
    """

    class ndarray:
        def __init__(self, host: np.ndarray):
            self._host = host
            self.shape = host.shape
            self.dtype = host.dtype
            self.size = host.size

        def get(self) -> np.ndarray:
            return self._host.copy()

    def __init__(self) -> None:
        self.log: list[tuple] = []

    def asarray(self, a) -> "DryRun.ndarray":
        return DryRun.ndarray(np.array(a, copy=True))

    def zeros(self, shape, dtype) -> "DryRun.ndarray":
        return DryRun.ndarray(np.zeros(shape, dtype))

    def empty(self, shape, dtype) -> "DryRun.ndarray":
        return DryRun.ndarray(np.zeros(shape, dtype))

    def RawModule(self, *, path: str) -> "_DryModule":  # noqa: N802 - mirrors CuPy
        return _DryModule(self, pathlib.Path(path))


class _DryModule:
    def __init__(self, dry: DryRun, path: pathlib.Path):
        self.dry = dry
        self.path = path
        self.entries = entry_params(path.read_text())
        self.max_dynamic: dict[str, int] = {}   #: kernel -> raised max_dynamic_shared_size_bytes

    def get_function(self, name: str) -> "_DryKernel":
        if name not in self.entries:
            raise ValueError(f"{self.path.name}: no .entry {name!r}")
        return _DryKernel(self, name)


_SCALAR_KINDS = {
    "u32": (np.uint32, np.int32), "s32": (np.int32, np.uint32), "b32": (np.uint32, np.int32),
    "f32": (np.float32,), "u64": (np.uint64, np.int64), "s64": (np.int64, np.uint64), "b64": (np.uint64, np.int64),
}


class _DryKernel:
    def __init__(self, module: _DryModule, name: str):
        self.module = module
        self.name = name

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        """CUDA's launch limit for dynamic shared memory: 48 KiB unless raised (static smem ignored)."""
        return self.module.max_dynamic.get(self.name, _DEFAULT_DYNAMIC_SMEM)

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value: int) -> None:
        if not 0 <= int(value) <= 227 * 1024:
            raise ValueError(f"{self.module.path.name}:{self.name}: max_dynamic_shared_size_bytes={value} "
                             f"outside 0..{227 * 1024}")
        self.module.max_dynamic[self.name] = int(value)

    def __call__(self, grid, block, args, shared_mem: int = 0):
        where = f"{self.module.path.name}:{self.name}"
        info = self.module.entries[self.name]
        grid = (grid,) if isinstance(grid, int) else tuple(grid)
        block = (block,) if isinstance(block, int) else tuple(block)
        if not (1 <= len(grid) <= 3 and 1 <= len(block) <= 3):
            raise ValueError(f"{where}: grid {grid} / block {block} must have 1 to 3 dimensions")
        if any(int(g) < 1 for g in grid) or any(int(b) < 1 for b in block):
            raise ValueError(f"{where}: grid {grid} and block {block} must be positive")
        threads = int(np.prod(block))
        if threads > 1024:
            raise ValueError(f"{where}: block {block} has {threads} threads (> 1024)")
        req = info["reqntid"]
        if req is not None and tuple(block) + (1,) * (3 - len(block)) != req:
            raise ValueError(f"{where}: block {block} but .reqntid {req}")
        if not (0 <= int(shared_mem) <= 227 * 1024):
            raise ValueError(f"{where}: shared_mem {shared_mem} out of range")
        if int(shared_mem) > self.max_dynamic_shared_size_bytes:
            raise ValueError(f"{where}: shared_mem {shared_mem} exceeds max_dynamic_shared_size_bytes "
                             f"{self.max_dynamic_shared_size_bytes} (raise it first, as CUDA requires)")
        params = info["params"]
        if len(args) != len(params):
            raise ValueError(f"{where}: {len(args)} arguments for {len(params)} .param")
        for i, (arg, ptype) in enumerate(zip(args, params)):
            if isinstance(arg, DryRun.ndarray):
                if ptype not in ("u64", "b64", "s64"):
                    raise ValueError(f"{where}: argument {i} is an array but .param is .{ptype}")
            elif isinstance(arg, np.generic):
                kinds = _SCALAR_KINDS.get(ptype, ())
                if type(arg) not in kinds:
                    raise ValueError(f"{where}: argument {i} is {type(arg).__name__} but .param is .{ptype}")
            else:
                raise ValueError(f"{where}: argument {i} is {type(arg).__name__}: pass an array or a numpy scalar")
        self.module.dry.log.append((self.name, grid, block, int(shared_mem)))
        return None
