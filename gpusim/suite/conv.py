"""1D convolution family: ``cuda/conv.cu`` -> ``ptx/conv.ptx``.

Owns the conv1d cases and their oracle (the kernel's summation order). Imports numpy, the
standard library and the suite's own core (:mod:`.case`, :mod:`.launch`) only: never gpusim's
engines, never cupy.
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .launch import Launcher, cdiv, uniform_f32


def _conv_oracle(x: np.ndarray) -> np.ndarray:
    r = np.float32(0.0) + x[:-2]          # result = 0.0f; result += input[idx + i] ...
    r = r + x[1:-1]
    r = r + x[2:]
    return r / np.float32(3.0)            # div.rn.f32: correctly rounded, as numpy's


def _conv_run(kernel: str):
    def run(xp, n, rng):
        x = uniform_f32(rng, n + 2)
        L = Launcher(xp, "conv.ptx")
        d_in = L.upload("input", x)
        d_out = xp.zeros(n, np.float32)
        L(kernel, (cdiv(n, 128),), (128,), (np.int32(n), d_in, d_out))
        return L.result({"output": d_out.get()}, {"output": _conv_oracle(x)})
    return run


_M = 2**20


#: this family's cases, in suite order (all launch ``conv.ptx``)
CASE_LIST: list[Case] = [
    Case("conv1d_naive", "conv", "conv.ptx", "conv1d_naive", _M, 1000, _conv_run("conv1d_naive"),
         "1D 3-point convolution, three global loads per output", n_means="outputs (input has n+2)"),
    Case("conv1d_shared", "conv", "conv.ptx", "conv1d_shared", _M, 1000, _conv_run("conv1d_shared"),
         "1D convolution staging block + halo in shared memory (__syncthreads)",
         n_means="outputs (input has n+2)"),
]
