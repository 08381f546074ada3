"""``fma.rn`` (f32, f16) has a fast path (``isa.fp._fma_rn_fast``: TwoSum, round to odd at 53 bits,
one cast); it must give the bits of the general path (``_add_bits`` of the exact product, one
integer rounding) for every operand: random bits of every class, products nearly cancelled by the
addend, sums at or next to rounding midpoints, subnormal and overflowing results, zeros of both signs."""

from __future__ import annotations

import numpy as np
import pytest

from isa import fp


def _general(a, b, c, ty):
    """The general path's bits (what fp.fma computed before the fast path)."""
    fmt = fp._FMTS[ty]
    with np.errstate(all="ignore"):
        x, y, z = (fp._to_f64(v, fmt) for v in (a, b, c))
        bits = fp._add_bits(x * y, z, fmt, "rn")
        bits = np.where(fp._f64_nan_mask_fma(x, y, z), np.uint64(fp.NAN_BITS[ty]), bits)
    return bits.astype(fmt.utype)


def _operands(ty, n, rng):
    fmt = fp._FMTS[ty]
    ut, dt = fmt.utype, fmt.dtype
    raw = lambda k: rng.integers(0, 1 << fmt.width, k, dtype=np.uint64).astype(ut).view(dt)  # noqa: E731
    # 1. random bits (every class: NaN, inf, subnormal, zero)
    a, b, c = raw(n), raw(n), raw(n)
    # 2. few-bit significands (many exact ties) and an addend that (nearly) cancels the product
    e = rng.integers(-12, 12, (3, n))
    m = rng.integers(1, 64, (3, n)) * rng.choice([-1, 1], (3, n))
    a2 = np.ldexp(m[0], e[0]).astype(dt)
    b2 = np.ldexp(m[1], e[1]).astype(dt)
    with np.errstate(all="ignore"):
        p = a2.astype(np.float64) * b2.astype(np.float64)
        c2 = (-p).astype(dt)                                     # cancel to the last bits
        shift = rng.integers(-3, 3, n).astype(dt)
        c2 = np.where(rng.random(n) < 0.5, c2, (c2 * dt.type(2.0) ** shift).astype(dt))
    # 3. a product with 2p bits plus an addend one half-unit away: sums at the p-bit midpoint
    #    +- a product's low bits (the double-rounding cases of a plain float64 sum)
    a3 = raw(n)
    b3 = raw(n)
    with np.errstate(all="ignore"):
        p3 = a3.astype(np.float64) * b3.astype(np.float64)
        r3 = p3.astype(dt).astype(np.float64)
        c3 = (r3 - p3).astype(dt)                                # residual, rounded
        c3 = np.where(np.isfinite(c3), c3, dt.type(0))
    # 4. tiny operands: subnormal and underflowing results; huge: overflow
    tiny = (rng.random((3, n)) * 4 - 2) * np.float64(fmt.tiny) ** np.array([[0.5], [0.5], [1.0]])
    big = (rng.random((3, n)) * 4 - 2) * np.float64(2.0) ** (fmt.emax / 2 + 1)
    with np.errstate(all="ignore"):
        t4 = tiny.astype(dt)
        b4 = big.astype(dt)
    # 5. f32: c + h (1 - u*u), h half an ulp of c, u = k * 2**-23: the exact sum lies 2**-46 h inside
    #    the midpoint next to c, so its float64 sum IS the midpoint (a plain float64 sum then rounds
    #    to even, the wrong way for odd c); (1 + u) * h (1 - u) is an exact product of two f32
    if ty == "f32":
        ce = rng.integers(-100, 100, n)
        c5 = np.ldexp(rng.integers(1 << 23, 1 << 24, n).astype(np.float64), ce - 23) * rng.choice([-1, 1], n)
        u = rng.integers(1, 1 << 10, n) * 2.0 ** -23
        h = np.ldexp(1.0, ce - 24) * rng.choice([-1, 1], n)
        a5, b5 = 1 + u, h * (1 - u)
        # the same next to the midpoints of the subnormal grid (c subnormal, h = 2**-150)
        k = n // 4
        c5[:k] = np.ldexp(rng.integers(1 << 21, 1 << 23, k).astype(np.float64), -149) * rng.choice([-1, 1], k)
        a5[:k] = np.ldexp(1 + u[:k], -24)
        b5[:k] = np.ldexp(1 - u[:k], -126) * rng.choice([-1, 1], k)
    else:
        a5 = b5 = c5 = np.zeros(0)
    cat = lambda *xs: np.concatenate(xs).astype(dt)  # noqa: E731
    return (cat(a, a2, a3, t4[0], b4[0], a5), cat(b, b2, b3, t4[1], b4[1], b5), cat(c, c2, c3, t4[2], b4[2], c5))


def test_operands_hit_the_double_rounding_cases():
    """The f32 operands above include sums where rounding the float64 sum again is wrong."""
    a, b, c = _operands("f32", 2000, np.random.default_rng(1))
    with np.errstate(all="ignore"):
        naive = (a.astype(np.float64) * b + c).astype(np.float32).view(np.uint32)
    ok = ~np.isnan(naive.view(np.float32))
    wrong = naive != _general(a, b, c, "f32")
    assert (wrong & ok).sum() > 100
    subnormal = (naive & 0x7F800000) == 0
    assert (wrong & ok & subnormal).sum() > 20


@pytest.mark.parametrize("ty", ["f32", "f16"])
def test_fma_rn_fast_path_equals_general_path(ty):
    rng = np.random.default_rng(30 if ty == "f32" else 31)
    a, b, c = _operands(ty, 40_000, rng)
    want = _general(a, b, c, ty)
    got = fp.fma(a, b, c, "rn", ty=ty).view(fp._FMTS[ty].utype)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(a[i], b[i], c[i], hex(got[i]), hex(want[i])) for i in bad[:5]]


def test_fma_rn_fast_path_midpoint_ties():
    """Sums exactly at an f32 midpoint (ties to even) and a float64 ulp either side of it (the
    exact sum is then not a float64: round-to-odd must keep it on its side)."""
    one = np.float32(1.0)
    half_ulp = 2.0 ** -24
    # 1 + 2**-24 (midpoint between 1 and 1 + 2**-23) as 1 + 2**-24 * (1 + d): products with 2**-60 tails
    a = np.array([1 + 2.0 ** -12, 1 + 2.0 ** -12, 1 + 2.0 ** -12, 1 - 2.0 ** -12], np.float32)
    b = np.array([1 + 2.0 ** -12, 1 - 2.0 ** -12, 1 + 2.0 ** -12, 1 - 2.0 ** -12], np.float32)
    # a*b = 1 + 2**-11 + 2**-24 (ties), 1 - 2**-24, ...; c shifts the sum next to midpoints
    c = np.array([-2.0 ** -11, 2.0 ** -23, -2.0 ** -11 + 2.0 ** -23, 0], np.float32)
    want = _general(a, b, c, "f32")
    assert (fp.fma(a, b, c, "rn").view(np.uint32) == want).all()
    assert (fp.fma(-a, b, -c, "rn").view(np.uint32) == _general(-a, b, -c, "f32")).all()
    assert one + np.float32(half_ulp) == one   # (the f32 midpoint rounds to even)
