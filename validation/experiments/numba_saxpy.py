"""The Numba kernel of validation/experiments/numba_saxpy.toml: out[i] = a * x[i] + y[i]."""

from numba import cuda


@cuda.jit
def saxpy(out, x, y, a, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a * x[i] + y[i]
