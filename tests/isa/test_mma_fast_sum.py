"""isa.mma's fused dot product (``_fused_sum``: int32 truncation per k, exponents from bit fields,
round toward zero by clearing bits) against the module docstring's algorithm written out term by
term (the formulation it replaced, kept here as the reference): bit for bit, for f16 and bf16
factors, f32 and f16 accumulators, broadcast and full operands, normal, wide-exponent, tiny
(subnormal results), overflowing and special (inf, NaN) inputs."""

from __future__ import annotations

import numpy as np
import pytest

from isa import mma


def _ref_sum(a_bits, b_bits, c, kind, c_emin=-126):
    a, ea = mma._values(a_bits, kind)
    b, eb = mma._values(b_bits, kind)
    with np.errstate(all="ignore"):
        p = a * b
        nz = (a != 0) & (b != 0) & np.isfinite(p)
        ep = np.where(nz, ea + eb, mma._NONE).max(-1)
        cfin = np.isfinite(c) & (c != 0)
        _, fe = np.frexp(np.where(cfin, c, 1.0))
        ec = np.where(cfin, np.maximum(fe - 1, c_emin), mma._NONE)
        E = np.maximum(ep, ec)
        E = np.where(E == mma._NONE, 0, E)
        q = np.ldexp(1.0, E - mma.FRACTION_BITS)
        terms = np.concatenate([np.where(cfin, c, 0.0)[..., None], np.where(nz, p, 0.0)], -1)
        s = np.trunc(terms / q[..., None]).sum(-1) * q
        full = np.concatenate([c[..., None], p], -1)
        return s, ~np.isfinite(full).all(-1), full.sum(-1)


def _ref_f32(a_bits, b_bits, c, kind):
    s, special, sv = _ref_sum(a_bits, b_bits, np.asarray(c, np.float32).astype(np.float64), kind)
    with np.errstate(all="ignore"):
        r = s.astype(np.float32)
        r = np.where(np.abs(r.astype(np.float64)) > np.abs(s), np.nextafter(r, np.float32(0)), r)
        r = np.where(np.abs(s) >= 2.0 ** 128, np.copysign(np.float32(np.inf), s).astype(np.float32), r)
        r = np.where(r == 0, np.float32(0.0), r)
        r = np.where(special, sv.astype(np.float32), r)
    return np.where(np.isnan(r), np.uint32(0x7FFFFFFF), r.view(np.uint32)).astype(np.uint32)


def _ref_f16(a_bits, b_bits, c_bits):
    c64 = np.asarray(c_bits, np.uint16).view(np.float16).astype(np.float64)
    s, special, sv = _ref_sum(a_bits, b_bits, c64, "f16", -14)
    with np.errstate(all="ignore"):
        r = np.where(special, sv, s).astype(np.float16)
        r = np.where(r == 0, np.float16(0.0), r)
    return np.where(np.isnan(r), np.uint16(0x7FFF), r.view(np.uint16)).astype(np.uint16)


def _bits(rng, shape, kind, exp_range):
    """Factors: mostly normal values with exponents in exp_range, some random bit patterns."""
    e = rng.integers(*exp_range, shape)
    v = (rng.standard_normal(shape) * 2.0 ** e).astype(np.float32)
    bits = v.astype(np.float16).view(np.uint16) if kind == "f16" else (v.view(np.uint32) >> 16).astype(np.uint16)
    raw = rng.integers(0, 1 << 16, shape).astype(np.uint16)
    return np.where(rng.random(shape) < 0.03, raw, bits).astype(np.uint16)


CASES = {  # name: (factor exponents, accumulator exponents)
    "normal": ((-3, 3), (-3, 3)),
    "wide": ((-24, 15), (-149, 100)),
    "tiny": ((-75, -60), (-149, -120)),         # bf16: sums below 2**-126 (subnormal f32 results)
    "huge": ((50, 64), (100, 127)),             # bf16: sums at and past 2**128
}


@pytest.mark.parametrize("kind", ["f16", "bf16"])
@pytest.mark.parametrize("case", list(CASES))
def test_dot_f32_equals_the_term_by_term_algorithm(kind, case):
    rng = np.random.default_rng(10 * list(CASES).index(case) + (kind == "bf16"))
    fe, ce = CASES[case]
    G, M, N = 4, 16, 8
    a = _bits(rng, (G, M, 1, 16), kind, fe)
    b = _bits(rng, (G, 1, N, 16), kind, fe)
    c = (rng.standard_normal((G, M, N)) * 2.0 ** rng.integers(*ce, (G, M, N))).astype(np.float32)
    c[0, 0] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38]
    want = _ref_f32(np.broadcast_to(a, (G, M, N, 16)), np.broadcast_to(b, (G, M, N, 16)), c, kind)
    for aa, bb in ((a, b), (np.broadcast_to(a, (G, M, N, 16)), np.broadcast_to(b, (G, M, N, 16)))):
        got = mma.dot_f32(aa, bb, c, kind).view(np.uint32)
        bad = np.argwhere(got != want)
        assert bad.size == 0, f"{bad.shape[0]} differ, first at {bad[0]}"
    one = mma.dot_f32(a[1, 2, 0], b[1, 0, 3], c[1, 2, 3], kind)            # a single dot product (0-d)
    assert one.shape == () and one.view(np.uint32) == want[1, 2, 3]


@pytest.mark.parametrize("case", ["normal", "wide"])
def test_dot_f16_equals_the_term_by_term_algorithm(case):
    rng = np.random.default_rng(3 if case == "normal" else 4)
    fe, _ = CASES[case]
    a = _bits(rng, (4, 16, 1, 16), "f16", fe)
    b = _bits(rng, (4, 1, 8, 16), "f16", fe)
    c = _bits(rng, (4, 16, 8), "f16", fe)
    want = _ref_f16(np.broadcast_to(a, (4, 16, 8, 16)), np.broadcast_to(b, (4, 16, 8, 16)), c)
    assert (mma.dot_f16(a, b, c) == want).all()
