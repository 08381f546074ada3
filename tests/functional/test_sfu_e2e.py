"""Fast-math kernels end to end: ``validation/probes/sfu_e2e/sfu_e2e.ptx`` / ``sfu_e2e_ftz.ptx`` (nvcc
-ptx -use_fast_math, unmodified: every .approx special function and div.approx) run in gpusim on
the inputs the H100 ran (``validation/probes/sfu_e2e/sfu_e2e.h100.npz``, from ``validation/probes/sfu_e2e.py``).

div.approx reproduces the H100 on every input.  The special functions are modelled from the
H100's measurements (isa/sfu.py) but not all bit for bit (tanh not at all; sin near 0), so
``EXPECT`` pins how many outputs differ and by how many ulps at most; the option prices are
checked against the H100's to 5e-5 as well.  They differ in 1 of 8192 calls (2 ulp, lg2) since
``isa/contract.py`` leaves a ``mul`` whose product has another reader unfused, as ptxas does
(three ``sub.f32`` of ``black_scholes``; fused, 1246 calls and 600 puts differed, up to 7744 ulp
where a price cancels to near zero). ``tests/isa/test_contract.py`` checks the rule against
ptxas on this PTX too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from validation.probekit import load_probe

_SAMPLE = load_probe("sfu_sample")  # its ulp_distance: sign-magnitude order, NaN vs NaN 0

ROOT = Path(__file__).resolve().parents[2]
PROBES = ROOT / "validation" / "probes" / "sfu_e2e"
NPZ = PROBES / "sfu_e2e.h100.npz"

#: (tag, output) -> (outputs differing from the H100, max ulp)
EXPECT = {
    ("ftz", "call"): (1, 2), ("ftz", "put"): (0, 0), ("ftz", "transcend"): (6527, 124),
    ("ftz", "div"): (0, 0),
    ("noftz", "call"): (1, 2), ("noftz", "put"): (0, 0), ("noftz", "transcend"): (6527, 124),
    ("noftz", "div"): (0, 0),
}


@pytest.fixture(scope="module")
def runs():
    gpu = np.load(NPZ)
    n = len(gpu["S"])                      # 8192 options; 8176 wide inputs + 16 special ones
    got = {}
    with gpusim.Device("h100"):
        for tag, ptx in (("ftz", "sfu_e2e_ftz.ptx"), ("noftz", "sfu_e2e.ptx")):
            mod = gpusim.RawModule(path=str(PROBES / ptx))
            S, X, T = (gpusim.asarray(gpu[k]) for k in ("S", "X", "T"))
            call, put = gpusim.zeros(n, np.float32), gpusim.zeros(n, np.float32)
            mod.get_function("black_scholes")((n // 256,), (256,), (call, put, S, X, T, np.float32(0.02),
                                                                    np.float32(0.30), np.int32(n)))
            tr = gpusim.zeros(8 * n, np.float32)
            mod.get_function("transcend")((n // 256,), (256,), (tr, gpusim.asarray(gpu["x"]), np.int32(n)))
            dv = gpusim.zeros(2 * n, np.float32)
            mod.get_function("div_approx")((n // 256,), (256,), (dv, gpusim.asarray(gpu["a"]),
                                                                 gpusim.asarray(gpu["b"]), np.int32(n)))
            got[tag] = dict(call=call.get(), put=put.get(), transcend=tr.get(), div=dv.get())
    return gpu, got


@pytest.mark.parametrize("key", sorted(EXPECT))
def test_matches_h100(runs, key):
    gpu, got = runs
    tag, out = key
    d = _SAMPLE.ulp_distance(got[tag][out].view(np.uint32), gpu[f"{tag}/{out}"].view(np.uint32))
    assert (int(np.count_nonzero(d)), int(d.max())) == EXPECT[key]


@pytest.mark.parametrize("tag", ["ftz", "noftz"])
def test_option_prices_close(runs, tag):
    gpu, got = runs
    for out in ("call", "put"):
        ref = gpu[f"{tag}/{out}"].astype(np.float64)
        assert np.allclose(got[tag][out], ref, rtol=5e-5, atol=1e-5)
