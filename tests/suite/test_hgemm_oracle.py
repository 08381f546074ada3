"""The HGEMM case's oracle (gpusim/suite/hgemm.py, numpy only) is the measured tensor-core
arithmetic of isa/mma.py: both agree on the H100's own mma outputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpusim.suite.hgemm import hgemm_oracle, tensor_core_step

NPZ = Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100" / "tensor_core" / "tensor_core_numerics.h100.npz"


@pytest.mark.parametrize("name", ["normal", "wide", "cancel", "sparse", "tiny_c"])
def test_tensor_core_step_reproduces_the_h100_mma(name):
    with np.load(NPZ) as d:
        A, Bt, C, D = (d[f"mma_f32_f16/{name}/{k}"] for k in ("A", "Bt", "C", "D"))
    for t in range(0, A.shape[0], 37):           # every 37th tile: 16 x 8 outputs each
        got = tensor_core_step(C[t], A[t].view(np.float16), Bt[t].view(np.float16).T)
        assert got.tobytes() == D[t].tobytes(), (name, t)


def test_hgemm_oracle_is_not_the_correctly_rounded_product():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    got = hgemm_oracle(a, b)
    exact = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    differ = np.count_nonzero(got != exact)
    assert differ > got.size // 2                 # truncating each k step shows in most elements (3291 of 4096)...
    assert np.max(np.abs(got - exact)) < 1e-6 * np.max(np.abs(exact))      # ...but only in the last bits
