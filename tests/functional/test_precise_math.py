"""nvcc's PTX without fast-math (``validation/probes/precise_math/precise_math.ptx``, unmodified: libdevice's
software ``sinf``/``cosf`` with the large-argument reduction, ``tanhf``, ``powf``, ``erfcf``, ``expf``/``logf``,
IEEE division and square root, mul+add contracted as ptxas contracts them) runs in gpusim on the inputs an
H200 ran (``precise_math.h200.npz``, made by ``validation/probes/precise_math.py gpu``), and every output is
the GPU's bit for bit: 8,192 call and put prices and 65,536 transcendental results. The call price needs
``isa/contract.py``'s slow-path rule (an IEEE reciprocal between its two products: fusing the first instead of
the second, 5,896 prices differed by 1-56 ulp).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from validation.probekit import load_probe

PROBE = load_probe("precise_math")
NPZ = Path(PROBE.PTX).parent / "precise_math.h200.npz"


@pytest.fixture(scope="module")
def runs():
    gpu = np.load(NPZ)
    with gpusim.Device("h100"):
        return gpu, PROBE.run(gpusim)


@pytest.mark.parametrize("name", ["S", "X", "T", "x"])
def test_the_committed_run_used_the_probes_inputs(runs, name):
    gpu, sim = runs
    assert gpu[name].dtype == np.float32 and np.array_equal(gpu[name].view(np.uint32), sim[name].view(np.uint32))


@pytest.mark.parametrize("name", PROBE.OUTPUTS)
def test_outputs_equal_the_gpus_bit_for_bit(runs, name):
    gpu, sim = runs
    assert sim[name].shape == gpu[name].shape
    assert PROBE.differing(gpu[name], sim[name]).size == 0


def test_the_inputs_reach_the_slow_paths(runs):
    # |x| beyond 2^20 (sinf/cosf's Payne-Hanek reduction, the local-memory table loop), subnormals,
    # infinities and NaN among the inputs; option prices that cancel to near zero
    gpu, _ = runs
    x = gpu["x"]
    assert (np.isfinite(x) & (np.abs(x) > 2.0 ** 20)).sum() > 800
    assert np.isinf(x).any() and np.isnan(x).any() and ((x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)).any()
    assert (np.abs(gpu["call"]) < 1e-3).sum() > 100
