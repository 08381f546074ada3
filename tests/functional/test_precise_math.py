"""nvcc's PTX without fast-math (``validation/probes/precise_math/precise_math.ptx``, unmodified: libdevice's
software ``sinf``/``cosf`` with the large-argument reduction, ``tanhf``, ``powf``, IEEE division and square
root, mul+add contracted as ptxas contracts them) runs in gpusim on ``validation/probes/precise_math.py``'s
8,192 inputs, and each single-function output lies within the CUDA C++ Programming Guide's maximum ulp error
for it (Mathematical Functions appendix, single-precision table: ``sinf``, ``cosf``, ``tanhf`` 2 ulp,
``powf`` 4 ulp, each from the correctly rounded result; so at most that + 0.5 ulp from the exact value,
which float64 numpy stands for here). The GPU's own outputs for the same PTX are not committed yet: the
probe's ``gpu`` mode makes them. ``tests/isa/test_contract.py`` checks the contraction rule against
ptxas's SASS for this PTX too.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from validation.probekit import load_probe

PROBE = load_probe("precise_math")

#: output column of ``transcend`` -> (float64 reference of x, the guide's maximum ulp error)
SINGLE = {0: (np.sin, 2), 1: (np.cos, 2), 2: (lambda x: np.abs(x) ** 0.75, 4), 5: (np.tanh, 2)}


@pytest.fixture(scope="module")
def outputs():
    with gpusim.Device("h100"):
        return PROBE.run(gpusim)


@pytest.mark.parametrize("column", sorted(SINGLE))
def test_software_paths_within_the_guides_ulp_bound(outputs, column):
    x = outputs["x"].astype(np.float64)
    got = outputs["transcend"].reshape(-1, 8)[:, column]
    ref_fn, bound = SINGLE[column]
    with np.errstate(invalid="ignore", over="ignore"):
        ref = ref_fn(x)
    finite = np.isfinite(ref) & (np.abs(ref) < np.finfo(np.float32).max)
    assert finite.sum() >= 8180                                   # all but the infinities and NaN
    assert np.isfinite(got[finite]).all()
    ulp = np.spacing(np.abs(ref[finite]).astype(np.float32)).astype(np.float64)
    err = np.abs(got[finite].astype(np.float64) - ref[finite]) / ulp
    assert err.max() <= bound + 0.5
    # NaN in, NaN out; sin and cos of an infinity are NaN as in C
    assert np.isnan(got[np.isnan(x)]).all()


def test_the_large_arguments_take_the_slow_reduction(outputs):
    # |x| up to 2^128 among the inputs: sinf's Payne-Hanek path (the local-memory table loop in the PTX)
    x = outputs["x"]
    big = np.isfinite(x) & (np.abs(x) > 2.0 ** 20)
    assert big.sum() > 800
    got = outputs["transcend"].reshape(-1, 8)[big, 0].astype(np.float64)
    ref = np.sin(x[big].astype(np.float64))
    ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    assert (np.abs(got - ref) / ulp).max() <= 2.5


def test_option_prices_follow_the_formula(outputs):
    # Black-Scholes against float64 with the same cumulative-normal polynomial: the float32 kernel to 2e-5
    S, X, T = (outputs[k].astype(np.float64) for k in ("S", "X", "T"))
    R, V = float(PROBE.R), float(PROBE.V)

    def cnd(d):
        k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
        c = 0.3989422804014327 * np.exp(-0.5 * d * d) * (k * (0.31938153 + k * (-0.356563782 + k * (
            1.781477937 + k * (-1.821255978 + k * 1.330274429)))))
        return np.where(d > 0, 1.0 - c, c)

    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * np.sqrt(T))
    d2 = d1 - V * np.sqrt(T)
    call = S * cnd(d1) - X * np.exp(-R * T) * cnd(d2)
    put = X * np.exp(-R * T) * (1.0 - cnd(d2)) - S * (1.0 - cnd(d1))
    assert np.allclose(outputs["call"], call, rtol=2e-5, atol=2e-4)
    assert np.allclose(outputs["put"], put, rtol=2e-5, atol=2e-4)
