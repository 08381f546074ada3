"""The .approx special functions against H100 measurements (``tests/isa/sfu_h100.npz``).

The sample holds, per instruction variant, edge inputs (zeros, subnormals, infinities, NaNs,
range limits, the thresholds of the SASS around MUFU), seeded-random inputs and the inputs
where the model differs most, with the H100's output bits (``validation/probes/sfu_sample.py``
from ``sfu_measure.py``'s data).  ``EXPECT`` pins, per variant, how many of the sample's
results differ from the H100 and by how many units in the last place at most: a change of
the model that loses (or gains) exactness fails here.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from isa import fp, sfu
from validation.probekit import load_probe

_SAMPLE = load_probe("sfu_sample")

_DATA = np.load(pathlib.Path(__file__).with_name("sfu_h100.npz"))

#: op -> (differing results in the sample, max ulp among them); ops that are bit-exact on
#: every measured input have (0, 0).
EXPECT = {
    "rcp": (0, 0), "rcpf": (0, 0), "ex2": (0, 0), "ex2f": (0, 0),
    "ex2h": (0, 0), "ex2h2": (0, 0), "ex2bf": (0, 0),
    "rsq": (0, 0), "rsqf": (0, 0), "sqrt": (0, 0), "sqrtf": (0, 0),
    "lg2": (42, 2048), "lg2f": (314, 2048),           # 2048 ulp: results near 0 (x near 1)
    "sin": (394, 15872), "sinf": (555, 15872),        # near 0: |t| < 2**-8 (segment 0)
    "cos": (306, 15872), "cosf": (313, 15872),
    "tanh": (1548, 134), "tanhh": (822, 1), "tanhbf": (367, 1),   # float64 tanh, not MUFU
}


def _run(op, x):
    """gpusim's bits for the probe's variant ``op`` (``validation/probes/sfu_sample.py``'s model,
    which made the committed sample)."""
    return _SAMPLE.model(op, x)


def _width(op):
    return 16 if op in ("ex2h", "ex2bf", "tanhh", "tanhbf") else 32


@pytest.mark.parametrize("op", sorted(EXPECT))
def test_against_h100(op):
    x, y = _DATA[op + ".x"], _DATA[op + ".y"]
    got = _run(op, x)
    if op == "ex2h2":
        lo = _SAMPLE.ulp_distance(got & 0xFFFF, y & 0xFFFF, 16)
        hi = _SAMPLE.ulp_distance(got >> 16, y >> 16, 16)
        d = np.maximum(lo, hi)
    else:
        d = _SAMPLE.ulp_distance(got, y, _width(op))
    n_diff, max_ulp = EXPECT[op]
    assert (int(np.count_nonzero(d)), int(d.max())) == (n_diff, max_ulp), op


def test_sample_covers_every_variant():
    ops = {k[:-2] for k in _DATA.files}
    assert ops == set(EXPECT)
    assert all(len(_DATA[op + ".x"]) >= 1500 for op in ops)


def _f32(*bits):
    return np.array(bits, dtype=np.uint32)


def test_mufu_special_values():
    nan = sfu.CANONICAL_NAN
    pinf, ninf, pz, nz = 0x7F800000, 0xFF800000, 0, 0x80000000
    sub, nsub = 0x00000001, 0x807FFFFF
    ins = _f32(pz, nz, sub, nsub, pinf, ninf, 0x7FC00000, 0xBF800000)
    assert sfu.rcp(ins).tolist() == [pinf, ninf, pinf, ninf, pz, nz, nan, 0xBF800000]
    assert sfu.rsq(ins).tolist() == [pinf, ninf, pinf, ninf, pz, nan, nan, nan]
    assert sfu.sqrt(ins).tolist() == [pz, nz, pz, nz, pinf, nan, nan, nan]
    assert sfu.lg2(ins).tolist() == [ninf, ninf, ninf, ninf, pinf, nan, nan, nan]
    assert sfu.ex2(ins).tolist() == [0x3F800000] * 4 + [pinf, pz, nan, 0x3F000000]


def test_mufu_exact_points():
    # exact powers of two stay exact; ex2 of a negative integer too (not one's complemented)
    assert sfu.rcp(_f32(0x40000000, 0x3F800000)).tolist() == [0x3F000000, 0x3F800000]
    assert sfu.rsq(_f32(0x40800000)).tolist() == [0x3F000000]
    assert sfu.sqrt(_f32(0x40800000)).tolist() == [0x40000000]
    assert sfu.lg2(_f32(0x41000000, 0x3F800000)).tolist() == [0x40400000, 0]
    assert sfu.ex2(_f32(0xC2FC0000, 0x42FE0000, 0x43000000)).tolist() == [0x00800000, 0x7F000000,
                                                                          0x7F800000]
    # ex2 of -126.5 is below 2**-126: MUFU flushes it; ex2.approx.f32 (no .ftz) halves the
    # operand and squares the result, so the subnormal survives
    assert sfu.ex2(_f32(0xC2FD0000)).tolist() == [0]
    assert fp.ex2(np.float32(-126.5)) > 0
    assert fp.ex2(np.float32(-126.5), ftz=True) == 0


def test_wrappers_scale_subnormals():
    # rcp.approx.f32 of the smallest subnormal overflows to inf; of 2**127 gives 2**-127
    # (subnormal, through the 0.25 scale); .ftz flushes both
    tiny = np.uint32(1).view(np.float32)
    assert fp.rcp(tiny, "approx") == np.inf
    assert fp.rcp(np.float32(2.0 ** 127), "approx") == np.float32(2.0 ** -127)
    assert fp.rcp(np.float32(2.0 ** 127), "approx", ftz=True) == 0
    assert fp.sqrt(tiny, "approx") == np.float32(2.0 ** -74.5)
    assert fp.lg2(tiny) == np.float32(-149.0)
    assert fp.lg2(tiny, ftz=True) == -np.inf
