"""What a family module launches its kernels with: the launcher and the input helpers.

Owns :class:`Launcher` (loads one PTX file with ``xp``, records the launches, builds the
:class:`~.case.CaseRun`), :func:`cdiv` and the seeded input generators
(:func:`uniform_f32`, :func:`int_f32`, :func:`u32`, :func:`pad`).

Imports numpy, the standard library and :mod:`.case` only; never gpusim's engines, never cupy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .case import PTX_DIR, CaseRun

__all__ = ["DEFAULT_DYNAMIC_SMEM", "Launcher", "cdiv", "int_f32", "pad", "u32", "uniform_f32"]


def cdiv(a: int, b: int) -> int:
    """Ceiling division: the blocks of ``b`` needed for ``a`` items."""
    return -(-a // b)


DEFAULT_DYNAMIC_SMEM = 48 * 1024  #: dynamic shared memory a kernel may use without opting in (bytes)


class Launcher:
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
        if int(shared_mem) > DEFAULT_DYNAMIC_SMEM - static and \
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


def uniform_f32(rng: np.random.Generator, n: int) -> np.ndarray:
    """n float32 in [0, 1) (multiples of 2**-24: no subnormals)."""
    return rng.random(n, dtype=np.float32)


def int_f32(rng: np.random.Generator, shape, lo: int, hi: int, scale: float = 1.0) -> np.ndarray:
    """Integers in [lo, hi] times ``scale`` (a power of two) as float32: exactly representable."""
    return (rng.integers(lo, hi + 1, size=shape).astype(np.float64) * scale).astype(np.float32)


def u32(rng: np.random.Generator, n: int) -> np.ndarray:
    """n uniform uint32 (every bit pattern)."""
    return rng.integers(0, 2**32, size=n, dtype=np.uint32)


def pad(x: np.ndarray, length: int) -> np.ndarray:
    """x followed by zeros up to ``length`` (loads past n read 0 in every kernel)."""
    out = np.zeros(length, dtype=x.dtype)
    out[: x.size] = x
    return out
