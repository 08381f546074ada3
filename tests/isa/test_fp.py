"""Tests of ``isa/fp.py`` against an exact reference and against H100 measurements.

The reference (``ref_round``) is written here independently of the module: the exact result
of an operation is a :class:`fractions.Fraction`, and it is rounded to f16/bf16/f32/f64 in
rn/rz/rm/rp with subnormals, overflow (inf, or the largest finite value in the directed
modes that round toward zero) and signed zeros handled from first principles.  Hypothesis
draws bit patterns (every class of finite value, operands with nearby exponents so that
sums cancel and round, fma addends that nearly cancel the product) and every lane of the
vectorised result is compared bit for bit.

``H100_ROWS`` are results measured on an NVIDIA H100 (sm_90) by running each instruction as
inline PTX through CuPy; they pin the results the PTX ISA leaves unspecified (NaN bit
patterns, where ``.ftz`` decides a result is subnormal, the ``.ftz.f64`` approximations).
No GPU is needed to run these tests.
"""

from __future__ import annotations

import importlib.util
import math
import sys
import warnings
from fractions import Fraction
from math import isqrt
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]


def _load_fp():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        from isa import fp
    except ImportError:  # a sibling module of the isa package is unfinished: load ours alone
        spec = importlib.util.spec_from_file_location("_fp_alone", ROOT / "isa" / "fp.py")
        fp = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fp)
    return fp


fp = _load_fp()

# --------------------------------------------------------------------------------------
# Formats, conversions between bit patterns, Fractions and arrays
# --------------------------------------------------------------------------------------

#  name: (precision p incl. hidden bit, exponent bits, width, numpy dtype, uint dtype)
FMT = {
    "f16": (11, 5, 16, np.float16, np.uint16),
    "bf16": (8, 8, 16, np.uint16, np.uint16),
    "f32": (24, 8, 32, np.float32, np.uint32),
    "f64": (53, 11, 64, np.float64, np.uint64),
}
MODES = ("rn", "rz", "rm", "rp")
INTS = {"s8": np.int8, "u8": np.uint8, "s16": np.int16, "u16": np.uint16,
        "s32": np.int32, "u32": np.uint32, "s64": np.int64, "u64": np.uint64}

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.data_too_large])


def arr(bits, ty):
    """Typed array from a list of bit patterns."""
    p, eb, w, dt, ut = FMT[ty]
    u = np.array(bits, dtype=np.uint64).astype(ut)
    return u if ty == "bf16" else u.view(dt)


def bits_of(x, ty):
    """Bit patterns (Python ints) of a typed array."""
    p, eb, w, dt, ut = FMT[ty]
    x = np.asarray(x)
    u = x.astype(np.uint16) if ty == "bf16" else x.view(ut)
    return [int(v) for v in u.reshape(-1)]


def frac(b, ty):
    """Exact value of a finite bit pattern."""
    p, eb, w, dt, ut = FMT[ty]
    bias = (1 << (eb - 1)) - 1
    s = b >> (w - 1)
    e = (b >> (p - 1)) & ((1 << eb) - 1)
    m = b & ((1 << (p - 1)) - 1)
    assert e != (1 << eb) - 1, "not finite"
    v = Fraction(m, 1 << (p - 1)) * Fraction(2) ** (1 - bias) if e == 0 else \
        Fraction((1 << (p - 1)) + m, 1 << (p - 1)) * Fraction(2) ** (e - bias)
    return -v if s else v


def value(b, ty):
    """Exact value of a non-NaN bit pattern (infinities as float infinities)."""
    p, eb, w, dt, ut = FMT[ty]
    if ((b >> (p - 1)) & ((1 << eb) - 1)) == (1 << eb) - 1:
        return -math.inf if b >> (w - 1) else math.inf
    return frac(b, ty)


def signbit(b, ty):
    return (b >> (FMT[ty][2] - 1)) & 1


def is_nan_bits(b, ty):
    p, eb, w, dt, ut = FMT[ty]
    return (b & ((1 << (w - 1)) - 1)) > (((1 << eb) - 1) << (p - 1))


def floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > a else e


def ref_round(v: Fraction, ty: str, mode: str, zero_neg=False, above=False) -> int:
    """Bits of ``v`` correctly rounded to ``ty`` in ``mode``.

    ``zero_neg``: sign of an exact zero.  ``above``: the true value is ``v + eps`` for an
    infinitesimal eps > 0 (used for irrational square roots, where ``v`` is a truncation).
    """
    p, eb, w, dt, ut = FMT[ty]
    bias = (1 << (eb - 1)) - 1
    emin, emax = 1 - bias, bias
    sign = 1 << (w - 1)
    if v == 0 and not above:
        return sign if zero_neg else 0
    neg = v < 0
    a = -v if neg else v
    e = floor_log2(a)
    q = max(e, emin) - p + 1                      # exponent of the quantum
    sc = a / Fraction(2) ** q
    n, rem = divmod(sc.numerator, sc.denominator)
    rem = Fraction(rem, sc.denominator)
    half = Fraction(1, 2)
    if above:   # magnitude is a + eps (v > 0 only is used)
        gt, eq, inexact = rem >= half, False, True
    else:
        gt, eq, inexact = rem > half, rem == half, rem != 0
    if mode == "rn":
        up = gt or (eq and n % 2 == 1)
    elif mode == "rz":
        up = False
    elif mode == "rp":
        up = inexact and not neg
    else:
        up = inexact and neg
    n += up
    inf_mag = ((1 << eb) - 1) << (p - 1)
    if n == 0:
        mag = 0
    else:
        val = Fraction(n) * Fraction(2) ** q
        e2 = floor_log2(val)
        if e2 > emax:
            to_inf = mode == "rn" or (mode == "rp" and not neg) or (mode == "rm" and neg)
            mag = inf_mag if to_inf else inf_mag - 1
        elif e2 < emin:
            mag = n
        else:
            m = val / Fraction(2) ** (e2 - p + 1)
            mag = ((e2 + bias) << (p - 1)) | (int(m) - (1 << (p - 1)))
    return mag | (sign if neg else 0)


def ref_sum_zero_neg(xb, yb, ty, mode):
    """IEEE 754 6.3: sign of an exact zero sum x + y."""
    if frac(xb, ty) == 0 and frac(yb, ty) == 0 and signbit(xb, ty) == signbit(yb, ty):
        return bool(signbit(xb, ty))
    return mode == "rm"


def ref_sqrt(v: Fraction, ty: str, mode: str) -> int:
    if v == 0:
        return 0
    k = 700                                       # >= 60 bits below the last f64 subnormal
    t = v * Fraction(4) ** k
    ti = t.numerator // t.denominator
    s = isqrt(ti)
    exact = s * s == ti and t.denominator == 1
    return ref_round(Fraction(s, 2 ** k), ty, mode, above=not exact)


# --------------------------------------------------------------------------------------
# Strategies: hypothesis draws flat integers (fast to generate and to shrink); they are
# shaped here into values of every class -- zeros, subnormals, the largest exponents, values
# near 1, significands with few bits (ties, exact cancellation), operands with nearby
# exponents (cancellation and rounding in sums), fma addends close to -(a*b).
# --------------------------------------------------------------------------------------

def shape(ty, r, ctl):
    """A finite bit pattern from raw bits ``r`` and a control byte ``ctl``."""
    p, eb, w, dt, ut = FMT[ty]
    top, bias = (1 << eb) - 2, (1 << (eb - 1)) - 1
    s, e, m = r >> (w - 1), (r >> (p - 1)) & ((1 << eb) - 1), r & ((1 << (p - 1)) - 1)
    k = ctl % 8
    if k == 4:
        e = 0
    elif k == 5:
        e = top - (ctl >> 3) % 2
    elif k == 6:
        m &= ~((1 << max(p - 5, 0)) - 1)
    elif k == 7:
        e = bias + (ctl >> 3) % 5 - 2
    if e > top:
        e = top - (e & 1)
    return (s << (w - 1)) | (e << (p - 1)) | m


def with_exponent_near(ty, a, b, ctl):
    """``b`` with its exponent moved within p + 2 of ``a``'s."""
    p, eb, w, dt, ut = FMT[ty]
    ea = (a >> (p - 1)) & ((1 << eb) - 1)
    e = min(max(ea + ctl % (2 * p + 5) - (p + 2), 0), (1 << eb) - 2)
    return (b & ~(((1 << eb) - 1) << (p - 1))) | (e << (p - 1))


def raw(ty):
    return st.integers(0, (1 << FMT[ty][2]) - 1)


CTL = st.integers(0, 255)


def values(ty):
    return st.tuples(raw(ty), CTL).map(lambda t: shape(ty, *t))


def _pair(ty, ra, rb, ca, cb, near):
    a, b = shape(ty, ra, ca), shape(ty, rb, cb)
    if near % 2:
        b = with_exponent_near(ty, a, b, near >> 1)
    return a, b


def pairs(ty, n=24):
    one = st.tuples(raw(ty), raw(ty), CTL, CTL, st.integers(0, 511)).map(lambda t: _pair(ty, *t))
    return st.lists(one, min_size=1, max_size=n)


def _triple(ty, ra, rb, rc, ca, cb, cc, near, kind):
    a, b = _pair(ty, ra, rb, ca, cb, near)
    p, eb, w, dt, ut = FMT[ty]
    if kind % 3 == 0:
        c = shape(ty, rc, cc)
    elif kind % 3 == 1:
        c = with_exponent_near(ty, a, shape(ty, rc, cc), near >> 2)
    else:                                         # -RN(a*b), nudged by a few ulps
        c = ref_round(-(frac(a, ty) * frac(b, ty)), ty, "rn")
        sign, mag = c & (1 << (w - 1)), c & ((1 << (w - 1)) - 1)
        inf_mag = ((1 << eb) - 1) << (p - 1)
        c = shape(ty, rc, cc) if mag >= inf_mag else sign | min(max(mag + cc % 5 - 2, 0), inf_mag - 1)
    return a, b, c


def triples(ty, n=20):
    one = st.tuples(raw(ty), raw(ty), raw(ty), CTL, CTL, CTL, st.integers(0, 1023),
                    st.integers(0, 2)).map(lambda t: _triple(ty, *t))
    return st.lists(one, min_size=1, max_size=n)


TYPES = ("f32", "f64", "f16", "bf16")

# --------------------------------------------------------------------------------------
# add / sub / mul / fma / div / sqrt / rcp against the exact reference, every mode
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("ty", TYPES)
@settings(max_examples=40, **SETTINGS)
@given(data=st.data())
def test_add_sub_exact(ty, data):
    ps = data.draw(pairs(ty))
    a, b = arr([x for x, _ in ps], ty), arr([y for _, y in ps], ty)
    sgn = 1 << (FMT[ty][2] - 1)
    for mode in MODES:
        got_add = bits_of(fp.add(a, b, mode, ty=ty), ty)
        got_sub = bits_of(fp.sub(a, b, mode, ty=ty), ty)
        for i, (x, y) in enumerate(ps):
            for got, yy in ((got_add[i], y), (got_sub[i], y ^ sgn)):
                v = frac(x, ty) + frac(yy, ty)
                want = ref_round(v, ty, mode, zero_neg=v == 0 and ref_sum_zero_neg(x, yy, ty, mode))
                assert got == want, (mode, hex(x), hex(yy), hex(got), hex(want))


@pytest.mark.parametrize("ty", TYPES)
@settings(max_examples=40, **SETTINGS)
@given(data=st.data())
def test_mul_exact(ty, data):
    ps = data.draw(pairs(ty))
    a, b = arr([x for x, _ in ps], ty), arr([y for _, y in ps], ty)
    exact = [frac(x, ty) * frac(y, ty) for x, y in ps]
    for mode in MODES:
        got = bits_of(fp.mul(a, b, mode, ty=ty), ty)
        for g, v, (x, y) in zip(got, exact, ps):
            want = ref_round(v, ty, mode, zero_neg=bool(signbit(x, ty) ^ signbit(y, ty)))
            assert g == want, (mode, hex(x), hex(y), hex(g), hex(want))


@pytest.mark.parametrize("ty", TYPES)
@settings(max_examples=40, **SETTINGS)
@given(data=st.data())
def test_fma_exact(ty, data):
    ts = data.draw(triples(ty))
    a, b, c = (arr([t[i] for t in ts], ty) for i in range(3))
    for mode in MODES:
        got = bits_of(fp.fma(a, b, c, mode, ty=ty), ty)
        for g, (x, y, z) in zip(got, ts):
            prod = frac(x, ty) * frac(y, ty)
            v = prod + frac(z, ty)
            zn = False
            if v == 0:
                ps_ = signbit(x, ty) ^ signbit(y, ty)
                zn = bool(ps_) if prod == 0 and frac(z, ty) == 0 and ps_ == signbit(z, ty) else mode == "rm"
            want = ref_round(v, ty, mode, zero_neg=zn)
            assert g == want, (mode, hex(x), hex(y), hex(z), hex(g), hex(want))


@pytest.mark.parametrize("ty", TYPES)
@settings(max_examples=40, **SETTINGS)
@given(data=st.data())
def test_div_exact(ty, data):
    ps = [(x, y) for x, y in data.draw(pairs(ty)) if frac(y, ty) != 0]
    if not ps:
        return
    a, b = arr([x for x, _ in ps], ty), arr([y for _, y in ps], ty)
    exact = [frac(x, ty) / frac(y, ty) for x, y in ps]
    for mode in MODES:
        got = bits_of(fp.div(a, b, mode, ty=ty), ty)
        for g, v, (x, y) in zip(got, exact, ps):
            want = ref_round(v, ty, mode, zero_neg=bool(signbit(x, ty) ^ signbit(y, ty)))
            assert g == want, (mode, hex(x), hex(y), hex(g), hex(want))


@pytest.mark.parametrize("ty", TYPES)
@settings(max_examples=15, **SETTINGS)
@given(data=st.data())
def test_sqrt_rcp_exact(ty, data):
    xs = [x & ((1 << (FMT[ty][2] - 1)) - 1) for x in data.draw(st.lists(values(ty), min_size=1, max_size=24))]
    x = arr(xs, ty)
    for mode in MODES:
        got = bits_of(fp.sqrt(x, mode, ty=ty), ty)
        for g, xb in zip(got, xs):
            want = ref_sqrt(frac(xb, ty), ty, mode)
            assert g == want, (mode, hex(xb), hex(g), hex(want))
        got = bits_of(fp.rcp(x, mode, ty=ty), ty)
        for g, xb in zip(got, xs):
            if frac(xb, ty) != 0:
                assert g == ref_round(1 / frac(xb, ty), ty, mode), (mode, hex(xb))


# --------------------------------------------------------------------------------------
# cvt
# --------------------------------------------------------------------------------------

def ref_float_to_int(v, irnd, ity):
    info = np.iinfo(INTS[ity])
    r = {"rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil, "rni": round}[irnd](v)
    return min(max(r, int(info.min)), int(info.max))


@pytest.mark.parametrize("src", ["f16", "bf16", "f32", "f64"])
@settings(max_examples=10, **SETTINGS)
@given(data=st.data())
def test_cvt_float_to_int(src, data):
    xs = data.draw(st.lists(st.one_of(values(src), st.integers(0, 50).map(
        lambda k: ref_round(Fraction(k, 2) - 12, src, "rn"))), min_size=1, max_size=24))
    for irnd in ("rni", "rzi", "rmi", "rpi"):
        for ity in INTS:
            got = fp.cvt(arr(xs, src), ity, src, irnd)
            assert got.dtype == INTS[ity]
            for g, x in zip(got.tolist(), xs):
                assert g == ref_float_to_int(frac(x, src), irnd, ity), (irnd, ity, hex(x), g)


@pytest.mark.parametrize("ity", list(INTS))
@settings(max_examples=8, **SETTINGS)
@given(data=st.data())
def test_cvt_int_to_float(ity, data):
    info = np.iinfo(INTS[ity])
    small = st.integers(0, 12).flatmap(lambda k: st.integers(0, 4095).map(lambda m: m << k))
    vals = data.draw(st.lists(st.one_of(st.integers(int(info.min), int(info.max)),
                                        small.filter(lambda v: v <= info.max),
                                        st.sampled_from([int(info.min), int(info.max), 0, 1])),
                              min_size=1, max_size=24))
    x = np.array(vals, dtype=INTS[ity])
    for ty in FMT:
        for mode in MODES:
            got = bits_of(fp.cvt(x, ty, ity, mode), ty)
            for g, v in zip(got, vals):
                assert g == ref_round(Fraction(v), ty, mode), (ty, mode, v, hex(g))


NARROW = [("f64", "f32"), ("f32", "f16"), ("f32", "bf16"), ("f64", "f16"), ("f64", "bf16"),
          ("f16", "bf16"), ("bf16", "f16")]


@pytest.mark.parametrize("src,dst", NARROW)
@settings(max_examples=12, **SETTINGS)
@given(data=st.data())
def test_cvt_float_narrowing(src, dst, data):
    xs = data.draw(st.lists(values(src), min_size=1, max_size=32))
    for mode in MODES:
        got = bits_of(fp.cvt(arr(xs, src), dst, src, mode), dst)
        for g, x in zip(got, xs):
            want = ref_round(frac(x, src), dst, mode, zero_neg=bool(signbit(x, src)))
            assert g == want, (mode, hex(x), hex(g), hex(want))


@pytest.mark.parametrize("src,dst", [("f16", "f32"), ("bf16", "f32"), ("f32", "f64"), ("f16", "f64")])
@settings(max_examples=10, **SETTINGS)
@given(data=st.data())
def test_cvt_float_widening_exact(src, dst, data):
    xs = data.draw(st.lists(values(src), min_size=1, max_size=32))
    got = bits_of(fp.cvt(arr(xs, src), dst, src), dst)
    for g, x in zip(got, xs):
        assert frac(g, dst) == frac(x, src) and signbit(g, dst) == signbit(x, src)


@pytest.mark.parametrize("ty", ["f16", "bf16", "f32", "f64"])
@settings(max_examples=10, **SETTINGS)
@given(data=st.data())
def test_cvt_round_to_integral(ty, data):
    xs = data.draw(st.lists(values(ty), min_size=1, max_size=32))
    for irnd, f in (("rni", round), ("rzi", math.trunc), ("rmi", math.floor), ("rpi", math.ceil)):
        got = bits_of(fp.cvt(arr(xs, ty), ty, ty, irnd), ty)
        for g, x in zip(got, xs):
            assert frac(g, ty) == f(frac(x, ty)), (irnd, hex(x), hex(g))
            assert signbit(g, ty) == signbit(x, ty)          # roundToIntegral keeps the sign


def test_cvt_int_to_int_wrap_and_sat():
    x = np.array([-129, -128, -1, 0, 127, 128, 255, 256, 70000, -70000], dtype=np.int32)
    assert fp.cvt(x, "s8", "s32").tolist() == [127, -128, -1, 0, 127, -128, -1, 0, 112, -112]
    assert fp.cvt(x, "s8", "s32", sat=True).tolist() == [-128, -128, -1, 0, 127, 127, 127, 127, 127, -128]
    assert fp.cvt(x, "u8", "s32", sat=True).tolist() == [0, 0, 0, 0, 127, 128, 255, 255, 255, 0]
    assert fp.cvt(x, "u16", "s32").tolist() == [v % 65536 for v in x.tolist()]
    assert fp.cvt(x, "s64", "s32").tolist() == x.tolist()                       # sign-extends
    assert fp.cvt(x.astype(np.int8), "u32", "s8").tolist() == [v % 2 ** 32 for v in x.astype(np.int8).tolist()]
    big = np.array([2 ** 64 - 1, 2 ** 63, 5], dtype=np.uint64)
    assert fp.cvt(big, "s64", "u64", sat=True).tolist() == [2 ** 63 - 1, 2 ** 63 - 1, 5]
    assert fp.cvt(big, "s64", "u64").tolist() == [-1, -(2 ** 63), 5]
    assert fp.cvt(np.array([-5, 7], np.int64), "u64", "s64", sat=True).tolist() == [0, 7]


def test_cvt_float_to_int_nan_inf():
    """9.7.9.21: NaN -> 0 unless the source is f64 or the destination is 64-bit, then
    1 << (width - 1); infinities and out-of-range values saturate."""
    vals = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30], np.float32)
    halfs = np.array([np.nan, np.inf, -np.inf, 65504, -65504], np.float16)
    assert fp.cvt(vals, "s32", "f32", "rzi").tolist() == [0, 2 ** 31 - 1, -2 ** 31, 2 ** 31 - 1, -2 ** 31]
    assert fp.cvt(vals, "u32", "f32", "rni").tolist() == [0, 2 ** 32 - 1, 0, 2 ** 32 - 1, 0]
    assert fp.cvt(vals, "s64", "f32", "rzi").tolist()[0] == -2 ** 63
    assert fp.cvt(vals, "u64", "f32", "rzi").tolist()[0] == 2 ** 63
    assert fp.cvt(vals.astype(np.float64), "s32", "f64", "rzi").tolist()[0] == -2 ** 31
    assert fp.cvt(vals.astype(np.float64), "u16", "f64", "rzi").tolist()[0] == 2 ** 15
    assert fp.cvt(halfs, "s16", "f16", "rzi").tolist() == [0, 32767, -32768, 32767, -32768]
    assert fp.cvt(vals.astype(np.float64), "u64", "f64", "rpi").tolist()[1:] == [2 ** 64 - 1, 0, 2 ** 64 - 1, 0]


def test_cvt_regressions_required():
    """cvt.rzi.s32.f32 of NaN/1e10/-1e10 and cvt.rni.s32.f32 ties to even."""
    r = fp.cvt(np.array([np.nan, 1e10, -1e10], np.float32), "s32", "f32", "rzi")
    assert r.dtype == np.int32 and r.tolist() == [0, 2147483647, -2147483648]
    r = fp.cvt(np.array([2.5, 3.5, -2.5, 0.5, -0.5, 1.5], np.float32), "s32", "f32", "rni")
    assert r.tolist() == [2, 4, -2, 0, 0, 2]


def test_cvt_rn_is_one_rounding():
    """Halfway-plus-a-little f64 values: going through f32 first would land exactly on the
    f16/bf16 midpoint and then round to even (the wrong way)."""
    v = np.array([1 + 2.0 ** -11 + 2.0 ** -40, -(1 + 2.0 ** -11 + 2.0 ** -40)])
    assert bits_of(fp.cvt(v, "f16", "f64", "rn"), "f16") == [0x3C01, 0xBC01]
    w = np.array([1 + 2.0 ** -8 + 2.0 ** -30, -(1 + 2.0 ** -8 + 2.0 ** -30), 1 + 2.0 ** -8])
    assert fp.cvt(w, "bf16", "f64", "rn").tolist() == [0x3F81, 0xBF81, 0x3F80]
    assert bits_of(fp.cvt(w[:1].astype(np.float32), "bf16", "f32", "rn"), "bf16") == [0x3F80]


def test_cvt_int64_directed_rounding():
    """2**63 - 1 and 2**64 - 1 are not float64 values: the directed modes need the exact
    integer difference, which plain numpy (rn only) loses."""
    x = np.array([2 ** 63 - 1, -(2 ** 63) + 1, 2 ** 53 + 1], np.int64)
    assert fp.cvt(x, "f64", "s64", "rz").tolist() == [float(2 ** 63 - 1024), float(-(2 ** 63) + 1024), float(2 ** 53)]
    assert fp.cvt(x, "f64", "s64", "rp").tolist() == [2.0 ** 63, float(-(2 ** 63) + 1024), float(2 ** 53 + 2)]
    assert fp.cvt(x, "f32", "s64", "rm").tolist() == [float(2 ** 63 - 2 ** 39), -(2.0 ** 63), 2.0 ** 53]
    u = np.array([2 ** 64 - 1], np.uint64)
    assert fp.cvt(u, "f64", "u64", "rz").tolist() == [float(2 ** 64 - 2048)]
    assert fp.cvt(u, "f64", "u64", "rn").tolist() == [2.0 ** 64]


def test_cvt_ftz_and_sat():
    sub = np.float32(1e-40)
    assert fp.cvt(np.array([sub, -sub]), "f64", "f32", ftz=True).view(np.uint64).tolist() == [0, 1 << 63]
    assert fp.cvt(np.array([sub]), "f64", "f32").tolist() == [float(sub)]
    assert fp.cvt(np.array([sub]), "s32", "f32", "rpi", ftz=True).tolist() == [0]
    assert fp.cvt(np.array([sub]), "s32", "f32", "rpi").tolist() == [1]
    v = fp.cvt(np.array([-0.5, 0.25, 7.0, np.nan, -0.0], np.float64), "f32", "f64", "rn", sat=True)
    assert bits_of(v, "f32") == [0, 0x3E800000, 0x3F800000, 0, 0]
    # f16 result of an f32 subnormal source: .ftz flushes the f32 input only
    assert bits_of(fp.cvt(np.array([sub]), "f16", "f32", "rn", ftz=True), "f16") == [0]


# --------------------------------------------------------------------------------------
# min / max / compare / abs / neg on special values
# --------------------------------------------------------------------------------------

SPECIAL = {
    "f32": [0x0, 0x80000000, 0x1, 0x80000001, 0x7F800000, 0xFF800000, 0x3F800000, 0xBF800000,
            0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FC00005, 0x007FFFFF, 0x00800000, 0x7F7FFFFF],
    "f64": [0x0, 0x8000000000000000, 0x1, 0x7FF0000000000000, 0xFFF0000000000000,
            0x3FF0000000000000, 0xBFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000005,
            0x7FF0000000000001],
    "f16": [0x0, 0x8000, 0x1, 0x7C00, 0xFC00, 0x3C00, 0xBC00, 0x7E00, 0xFE01, 0x7C01, 0x03FF],
    "bf16": [0x0, 0x8000, 0x1, 0x7F80, 0xFF80, 0x3F80, 0xBF80, 0x7FC0, 0xFFC1, 0x7F81],
}
CANON = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF}


def ref_minmax(x, y, ty, is_min, nan):
    """9.7.3.11-12 / 9.7.4.7-8, with the NaN the H100 returns."""
    xn, yn = is_nan_bits(x, ty), is_nan_bits(y, ty)
    if xn and yn or (nan and (xn or yn)):
        if ty == "f64":                       # H100: b, quieted
            nb = y if yn else x
            return nb | (1 << 51)
        return CANON[ty]
    if xn:
        return y
    if yn:
        return x
    fx, fy = value(x, ty), value(y, ty)
    if fx == fy:                               # only +-0 differ: -0.0 < +0.0
        sx, sy = signbit(x, ty), signbit(y, ty)
        if is_min:
            return x if sx >= sy else y
        return x if sx <= sy else y
    return (x if fx < fy else y) if is_min else (x if fx > fy else y)


@pytest.mark.parametrize("ty", ["f16", "bf16", "f32", "f64"])
def test_min_max_specials(ty):
    sp = SPECIAL[ty]
    xs = [x for x in sp for _ in sp]
    ys = [y for _ in sp for y in sp]
    for is_min, f in ((True, fp.minimum), (False, fp.maximum)):
        for nan in ((False, True) if ty != "f64" else (False,)):
            got = bits_of(f(arr(xs, ty), arr(ys, ty), nan=nan, ty=ty), ty)
            for g, x, y in zip(got, xs, ys):
                assert g == ref_minmax(x, y, ty, is_min, nan), (is_min, nan, hex(x), hex(y), hex(g))


CMP_REF = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
}


@pytest.mark.parametrize("ty", ["f16", "bf16", "f32", "f64"])
def test_compare_specials(ty):
    """9.3.1.2: ordered ops are false with a NaN operand (ne too), unordered ops true."""
    sp = SPECIAL[ty]
    xs = [x for x in sp for _ in sp]
    ys = [y for _ in sp for y in sp]
    def val(b):
        return value(b, ty)

    for op in list(CMP_REF) + [o + "u" for o in CMP_REF] + ["num", "nan"]:
        got = fp.compare(op, arr(xs, ty), arr(ys, ty), ty=ty)
        assert got.dtype == bool
        for g, x, y in zip(got.tolist(), xs, ys):
            unord = is_nan_bits(x, ty) or is_nan_bits(y, ty)
            if op == "num":
                want = not unord
            elif op == "nan":
                want = unord
            elif op.endswith("u"):
                want = unord or CMP_REF[op[:-1]](val(x), val(y))
            else:
                want = not unord and CMP_REF[op](val(x), val(y))
            assert g == want, (op, hex(x), hex(y))


@pytest.mark.parametrize("ty", ["f16", "bf16", "f32", "f64"])
def test_abs_neg_specials(ty):
    sp = SPECIAL[ty]
    w = FMT[ty][2]
    s = 1 << (w - 1)
    a = bits_of(fp.absolute(arr(sp, ty), ty=ty), ty)
    n = bits_of(fp.negate(arr(sp, ty), ty=ty), ty)
    for x, ga, gn in zip(sp, a, n):
        if is_nan_bits(x, ty):
            # f64: passed through quieted (abs: 9.7.3.9; neg: as the H100 does); else canonical
            want = x | (1 << 51) if ty == "f64" else CANON[ty]
            assert ga == want and gn == want, (hex(x), hex(ga), hex(gn))
        else:
            assert ga == x & (s - 1) and gn == x ^ s
    # .ftz: a subnormal becomes a zero of the same sign before the sign operation
    if ty in ("f16", "f32"):
        sub = 1 | s
        assert bits_of(fp.absolute(arr([sub], ty), ftz=True, ty=ty), ty) == [0]
        assert bits_of(fp.negate(arr([sub], ty), ftz=True, ty=ty), ty) == [0]


# --------------------------------------------------------------------------------------
# Required regressions
# --------------------------------------------------------------------------------------

def test_fma_f32_tie_where_naive_float64_double_rounds():
    """a*b = 1 + 2**-11 + 2**-24 is exactly halfway between two f32 numbers; c = 2**-60 puts
    the exact sum just above the midpoint, but float64 rounds that sum back onto the
    midpoint, and the second rounding (ties to even) then goes down."""
    a = np.array([1 + 2.0 ** -12], np.float32)
    b = a.copy()
    c = np.array([2.0 ** -60], np.float32)
    exact = Fraction(float(a[0])) * Fraction(float(b[0])) + Fraction(float(c[0]))
    want = ref_round(exact, "f32", "rn")
    assert want == 0x3F801001                                  # 1 + 2**-11 + 2**-23
    naive = (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)
    assert bits_of(naive, "f32") == [0x3F801000]               # double rounding: wrong
    assert bits_of(fp.fma(a, b, c, "rn"), "f32") == [want]
    assert bits_of(fp.fma(a, b, -c, "rn"), "f32") == [0x3F801000]
    assert bits_of(fp.fma(a, b, c, "rz"), "f32") == [0x3F801000]
    assert bits_of(fp.fma(a, b, c, "rp"), "f32") == [0x3F801001]


def test_fma_f64_beyond_double_double():
    """f64 fma needs the exact 106-bit product: a*b - RN(a*b) is the product's error."""
    a = np.array([1 + 2.0 ** -30, 0.1, 1e308], np.float64)
    b = np.array([1 - 2.0 ** -30, 10.0, 10.0], np.float64)
    with np.errstate(over="ignore"):
        c = -(a * b)
    got = fp.fma(a, b, c, "rn")
    for g, x, y, z in zip(got.tolist(), a.tolist(), b.tolist(), c.tolist()):
        assert math.isinf(z) or g == float(Fraction(x) * Fraction(y) + Fraction(z))
    assert got.tolist()[0] == -(2.0 ** -60)
    assert bits_of(fp.fma(a[2:], b[2:], np.array([-np.inf]), "rz"), "f64") == [0xFFF0000000000000]
    # overflowing product plus finite addend: inf under rn, the largest finite value under rz
    big = np.array([1e300])
    assert fp.fma(big, big, np.array([-1.0]), "rn").tolist() == [math.inf]
    assert fp.fma(big, big, np.array([-1.0]), "rz").tolist() == [np.finfo(np.float64).max]


@pytest.mark.parametrize("ty", ["f16", "f32", "f64"])
def test_fma_tiny_addend_is_a_sticky_bit(ty):
    """An exactly representable product plus an addend far below its last bit: only the
    addend's sign decides the directed roundings (f64: addend more than 64 bits below the
    106-bit product, the integer path's sticky case)."""
    dt = FMT[ty][3]
    tiny = {"f16": 2.0 ** -24, "f32": 2.0 ** -140, "f64": 2.0 ** -900}[ty]
    a = np.array([1.5, 1.5, -1.5, -1.5], dt)
    b = np.array([1.5, 1.5, 1.5, 1.5], dt)
    c = np.array([tiny, -tiny, tiny, -tiny], dt)
    up = np.nextafter(dt(2.25), dt(np.inf))
    dn = np.nextafter(dt(2.25), dt(0))
    assert fp.fma(a, b, c, "rn", ty=ty).tolist() == [2.25, 2.25, -2.25, -2.25]
    assert fp.fma(a, b, c, "rz", ty=ty).tolist() == [2.25, dn, -dn, -2.25]
    assert fp.fma(a, b, c, "rp", ty=ty).tolist() == [up, 2.25, -dn, -2.25]
    assert fp.fma(a, b, c, "rm", ty=ty).tolist() == [2.25, dn, -2.25, -up]


def test_canonical_nan_f32_and_nan_sources():
    a = np.array([np.inf, 0.0, -1.0, np.nan], np.float32)
    b = np.array([-np.inf, np.inf, 0.0, 1.0], np.float32)
    assert bits_of(fp.add(a, b), "f32")[0] == 0x7FFFFFFF
    assert bits_of(fp.mul(a, b), "f32")[1] == 0x7FFFFFFF
    assert bits_of(fp.sqrt(a, "rn"), "f32")[2] == 0x7FFFFFFF
    assert bits_of(fp.div(a, b, "rz"), "f32")[3] == 0x7FFFFFFF
    payload = np.array([0xFFC00123], np.uint32).view(np.float32)
    assert bits_of(fp.fma(payload, payload, payload, "rm"), "f32") == [0x7FFFFFFF]
    assert bits_of(fp.add(np.array([np.inf], np.float16), np.array([-np.inf], np.float16), ty="f16"), "f16") == [0x7FFF]
    # f64: NaN operands propagate quieted (priority b, a for add); created NaN is 0xFFF8...
    x = np.array([0x7FF0000000000001, 0x7FF0000000000000], np.uint64).view(np.float64)
    y = np.array([0x7FF8000000000002, 0xFFF0000000000000], np.uint64).view(np.float64)
    assert bits_of(fp.add(x, y), "f64") == [0x7FF8000000000002, 0xFFF8000000000000]
    assert bits_of(fp.div(x, y), "f64")[0] == 0x7FF8000000000001


def test_add_near_largest_finite_f64():
    """Found by hypothesis: Knuth's TwoSum overflows in s - x here although the sum is
    finite; the exact sum is halfway between two doubles, so rz needs the exact residual."""
    x = arr([0x7FD0000000000003, 0x7FEFFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF], "f64")
    y = arr([0xFFEFFFFFFFFFFFFF, 0x7CA0000000000000, 0x7C90000000000000], "f64")
    assert bits_of(fp.add(x, y, "rz"), "f64") == [0xFFE7FFFFFFFFFFFD, 0x7FEFFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF]
    # max + 2**970 is exactly the overflow threshold 2**1024 * (1 - 2**-54): rn gives inf
    assert bits_of(fp.add(x, y, "rn"), "f64") == [0xFFE7FFFFFFFFFFFE, 0x7FF0000000000000, 0x7FF0000000000000]
    assert bits_of(fp.add(x, y, "rp"), "f64") == [0xFFE7FFFFFFFFFFFD, 0x7FF0000000000000, 0x7FF0000000000000]
    for xb, yb in zip(bits_of(x, "f64"), bits_of(y, "f64")):
        for mode in MODES:
            want = ref_round(frac(xb, "f64") + frac(yb, "f64"), "f64", mode)
            assert bits_of(fp.add(arr([xb], "f64"), arr([yb], "f64"), mode), "f64") == [want]


def test_sat_and_rm_zero():
    one = np.float32(1)
    assert bits_of(fp.add(np.array([one]), np.array([-one]), "rm"), "f32") == [0x80000000]
    assert bits_of(fp.add(np.array([one]), np.array([-one]), "rn"), "f32") == [0]
    assert bits_of(fp.sub(np.array([-0.0], np.float32), np.array([0.0], np.float32), "rn"), "f32") == [0x80000000]
    r = fp.add(np.array([0.75, -0.0, np.nan, -3.0], np.float32), np.array([0.5, -0.0, 1.0, 1.0], np.float32), sat=True)
    assert bits_of(r, "f32") == [0x3F800000, 0, 0, 0]
    r = fp.fma(np.array([0.5], np.float16), np.array([0.5], np.float16), np.array([0.5], np.float16), sat=True, ty="f16")
    assert r.tolist() == [0.75]


def test_ftz_tininess_after_rounding():
    """H100: .ftz flushes a result that is below 2**emin after rounding to p bits with an
    unbounded exponent (products that round up to 2**-126 from exactly-p-bit values still
    flush; sums a hair below 2**-126 that round up do not)."""
    f = np.float32
    x = np.array([0x3F000000], np.uint32).view(f)         # 0.5
    y = np.array([0x00FFFFFF], np.uint32).view(f)         # (2 - 2**-23) * 2**-126
    assert bits_of(fp.mul(x, y, "rn"), "f32") == [0x00800000]
    assert bits_of(fp.mul(x, y, "rn", ftz=True), "f32") == [0]
    t = np.array([0x00800000], np.uint32).view(f)
    assert bits_of(fp.fma(t, t, -t, "rn", ftz=True), "f32") == [0x80800000]
    assert bits_of(fp.fma(t, t, -t, "rz", ftz=True), "f32") == [0x80000000]
    assert bits_of(fp.mul(np.array([1e-40], f), np.array([1.0], f), "rn", ftz=True), "f32") == [0]   # input flush


def test_div_approx_pinned_range():
    """9.7.3.8: div.approx.f32 with 2**126 < |b| < 2**128 gives NaN for infinite a, else a
    sign-preserving zero (div.full does not)."""
    big = np.float32(2.0 ** 127)
    a = np.array([big, -1.0, np.inf, 1.0], np.float32)
    b = np.array([big, big, big, 2.0], np.float32)
    assert bits_of(fp.div(a, b, "approx"), "f32") == [0, 0x80000000, 0x7FFFFFFF, 0x3F000000]
    assert fp.div(a, b, "full").tolist()[:2] == [1.0, -(2.0 ** -127)]


APPROX_SPECIAL = [
    # (function, input, expected) -- the manual's special-value tables (9.7.3.13-22, 9.7.4.9-10)
    (lambda x: fp.ex2(x), [-np.inf, -0.0, 0.0, np.inf], [0.0, 1.0, 1.0, np.inf]),
    (lambda x: fp.lg2(x), [-np.inf, -1.0, -0.0, 0.0, np.inf], [np.nan, np.nan, -np.inf, -np.inf, np.inf]),
    (lambda x: fp.sin(x), [-np.inf, -0.0, 0.0, np.inf], [np.nan, -0.0, 0.0, np.nan]),
    (lambda x: fp.cos(x), [-np.inf, -0.0, 0.0, np.inf], [np.nan, 1.0, 1.0, np.nan]),
    (lambda x: fp.tanh(x), [-np.inf, -0.0, 0.0, np.inf, 1e-40], [-1.0, -0.0, 0.0, 1.0, 1e-40]),
    (lambda x: fp.rsqrt(x), [-np.inf, -1.0, -0.0, 0.0, np.inf], [np.nan, np.nan, -np.inf, np.inf, 0.0]),
    (lambda x: fp.sqrt(x, "approx"), [-np.inf, -1.0, -0.0, 0.0, np.inf], [np.nan, np.nan, -0.0, 0.0, np.inf]),
    (lambda x: fp.rcp(x, "approx"), [-np.inf, -0.0, 0.0, np.inf], [-0.0, -np.inf, np.inf, 0.0]),
]


@pytest.mark.parametrize("case", range(len(APPROX_SPECIAL)))
def test_approx_special_values(case):
    f, xs, want = APPROX_SPECIAL[case]
    got = f(np.array(xs, np.float32))
    assert got.dtype == np.float32
    wb = bits_of(np.array(want, np.float32), "f32")
    wb = [0x7FFFFFFF if math.isnan(w) else b for w, b in zip(want, wb)]
    assert bits_of(got, "f32") == wb


@settings(max_examples=30, **SETTINGS)
@given(st.lists(st.floats(-100.0, 100.0, width=32), min_size=1, max_size=32))
def test_approx_within_manual_bounds(xs):
    """The .approx forms (the H100's algorithms, isa/sfu.py) stay inside the manual's bounds."""
    x = np.array(xs, np.float32)
    xd = x.astype(np.float64)
    e = fp.ex2(x).astype(np.float64)
    assert np.all(np.abs(e - np.exp2(xd)) <= 2 * np.spacing(np.exp2(xd).astype(np.float32)).astype(np.float64))
    s = fp.sin(x).astype(np.float64)
    bound = np.where(np.abs(xd) <= 2 * np.pi, 2.0 ** -20.5, 2.0 ** -14.7)
    assert np.all(np.abs(s - np.sin(xd)) <= bound)
    t = fp.tanh(x).astype(np.float64)
    assert np.all(np.abs(t - np.tanh(xd)) <= 2.0 ** -11 * np.abs(np.tanh(xd)) + 1e-45)
    pos = np.abs(xd) + 0.5
    lg = fp.lg2(pos.astype(np.float32)).astype(np.float64)
    ref = np.log2(pos.astype(np.float32).astype(np.float64))
    assert np.all(np.abs(lg - ref) <= np.maximum(2.0 ** -22, 2.0 ** -22 * np.abs(ref)))


# --------------------------------------------------------------------------------------
# Results measured on an NVIDIA H100 (sm_90): inline PTX through CuPy
# --------------------------------------------------------------------------------------

H100_ROWS = [
    # instruction, operand bits, result bits
    ("add.rn.f64", (0x7ff8000000000000, 0xfff8000000000000), 0xfff8000000000000),
    ("add.rn.f64", (0x7ff0000000000000, 0xfff0000000000000), 0xfff8000000000000),
    ("sub.rn.f64", (0x7ff8000000000005, 0xfff0000000000003), 0xfff8000000000003),
    ("mul.rn.f64", (0x0, 0x7ff0000000000000), 0xfff8000000000000),
    ("mul.rn.f64", (0x7ff0000000000001, 0x7ff8000000000005), 0x7ff8000000000005),
    ("fma.rn.f64", (0x0, 0x7ff8000000000000, 0xfff8000000000000), 0x7ff8000000000000),
    ("fma.rn.f64", (0x7ff8000000000000, 0x0, 0x7ff0000000000001), 0x7ff8000000000001),
    ("fma.rn.f64", (0x7ff8000000000005, 0x3ff0000000000000, 0x3ff0000000000000), 0x7ff8000000000005),
    ("div.rn.f64", (0x7ff8000000000000, 0xfff8000000000000), 0x7ff8000000000000),
    ("div.rn.f64", (0x0, 0x8000000000000000), 0xfff8000000000000),
    ("sqrt.rn.f64", (0x8000000000000001,), 0xfff8000000000000),
    ("min.f64", (0x7ff8000000000000, 0x7ff0000000000001), 0x7ff8000000000001),
    ("max.f64", (0x3ff0000000000000, 0xfff0000000000003), 0x3ff0000000000000),
    ("abs.f64", (0xfff0000000000003,), 0xfff8000000000003),
    ("neg.f64", (0x7ff8000000000000,), 0x7ff8000000000000),
    ("neg.f64", (0x7ff0000000000001,), 0x7ff8000000000001),
    ("add.rm.f32", (0x3f800000, 0xbf800000), 0x80000000),
    ("add.rn.sat.f32", (0x80000000, 0x80000000), 0x0),
    ("add.rn.sat.f32", (0x7fc00000, 0x0), 0x0),
    ("min.f32", (0x80000000, 0x0), 0x80000000),
    ("max.f32", (0x80000000, 0x0), 0x0),
    ("min.f32", (0x7fc00005, 0xff800003), 0x7fffffff),
    ("min.f32", (0x3f800000, 0x7fc00000), 0x3f800000),
    ("min.NaN.f32", (0x3f800000, 0x7fc00000), 0x7fffffff),
    ("abs.f32", (0xff800003,), 0x7fffffff),
    ("neg.f32", (0x7fc00005,), 0x7fffffff),
    ("abs.ftz.f32", (0x80000001,), 0x0),
    ("mul.rn.f32", (0x3f000000, 0x00ffffff), 0x00800000),
    ("mul.rn.ftz.f32", (0x3f000000, 0x00ffffff), 0x0),
    ("mul.rp.ftz.f32", (0x3f000000, 0x00ffffff), 0x0),
    ("fma.rn.ftz.f32", (0x800000, 0x800000, 0x80800000), 0x80800000),
    ("fma.rp.ftz.f32", (0x80800000, 0x800000, 0x800000), 0x800000),
    ("div.rm.ftz.f32", (0x80800000, 0x3f800001), 0x80000000),
    ("div.rn.ftz.f32", (0x00ffffff, 0x40000000), 0x0),
    ("mul.rn.ftz.f16", (0x666, 0xb900), 0x8400),
    ("mul.rn.ftz.f16", (0x3800, 0x7ff), 0x0),
    ("add.rn.f16", (0x7c00, 0xfc00), 0x7fff),
    ("fma.rn.bf16", (0x7f80, 0x0, 0x3f80), 0x7fff),
    ("min.NaN.bf16", (0x3f80, 0xff83), 0x7fff),
    ("min.bf16", (0x7fc5, 0xff83), 0x7fff),
    ("neg.bf16", (0x7fc5,), 0x7fff),
    ("cvt.f64.f16", (0x7c01,), 0x7ff8040000000000),
    ("cvt.f32.bf16", (0x7f81,), 0x7f810000),
    ("cvt.ftz.f32.bf16", (0x7f81,), 0x7fffffff),
    ("cvt.f32.f16", (0x7e05,), 0x7fffffff),
    ("cvt.rn.f16.f32", (0x7fc00005,), 0x7fff),
    ("cvt.rn.f32.f64", (0xfff8000000000000,), 0xffc00000),
    ("cvt.rn.bf16.f64", (0x7ff0000000000001,), 0x7fc0),
    ("cvt.f64.f32", (0x7f800001,), 0x7ff8000020000000),
    ("cvt.ftz.f64.f32", (0xffc00000,), 0x7fffffffe0000000),
    ("cvt.rni.f64.f64", (0x7ff0000000000001,), 0x7ff8000000000001),
    ("cvt.rni.f32.f32", (0x7fc00005,), 0x7fffffff),
    ("cvt.rzi.s32.f64", (0x7ff8000000000000,), 0xffffffff80000000),
    ("cvt.rzi.s64.f32", (0x7fc00000,), 0x8000000000000000),
    ("cvt.rzi.u16.f64", (0xfff8000000000000,), 0x8000),
    ("cvt.rzi.s32.f16", (0x7e00,), 0x0),
    ("cvt.rzi.s16.f32", (0x7fc00000,), 0x0),
    ("rcp.approx.ftz.f64", (0x1,), 0x7ff0000000000000),
    ("rcp.approx.ftz.f64", (0x7fefffffffffffff,), 0x0),
    ("rcp.approx.ftz.f64", (0x7ff0000000000001,), 0x0),
    ("rcp.approx.ftz.f64", (0xfff8000000000000,), 0x7fffffff00000000),
    ("rcp.approx.ftz.f64", (0x3fe0000000000000,), 0x4000000000000000),
    ("rcp.approx.ftz.f64", (0x1fffffffffffff,), 0x7fc0000000000000),
    ("rsqrt.approx.ftz.f64", (0x8010000000000000,), 0x7fffffff00000000),
    ("rsqrt.approx.ftz.f64", (0xfffffffffffff,), 0x7ff0000000000000),
    ("rsqrt.approx.ftz.f64", (0x4000000000000000,), 0x3fe6a09e00000000),
    ("rsqrt.approx.ftz.f64", (0x1fffffffffffff,), 0x5fd6a09e00000000),
    ("rsqrt.approx.f64", (0x8000000000000001,), 0xfff8000000000000),
    ("ex2.approx.f32", (0xff800000,), 0x0),
    ("lg2.approx.f32", (0x80000000,), 0xff800000),
    ("lg2.approx.f32", (0xbf800000,), 0x7fffffff),
    ("sin.approx.f32", (0x80000000,), 0x80000000),
    ("cos.approx.f32", (0x7f800000,), 0x7fffffff),
    ("tanh.approx.f32", (0xff800000,), 0xbf800000),
    ("tanh.approx.f32", (0x80000001,), 0x80000001),
    ("rsqrt.approx.f32", (0x80000000,), 0xff800000),
    ("sqrt.approx.f32", (0x80000000,), 0x80000000),
    ("rcp.approx.f32", (0xff800000,), 0x80000000),
    ("div.approx.f32", (0x7f800000, 0x7f7fffff), 0x7fffffff),
    ("div.approx.f32", (0x7f7fffff, 0x7f7fffff), 0x0),
    ("div.full.f32", (0x7f7fffff, 0x7f7fffff), 0x3f800000),
    ("ex2.approx.ftz.bf16", (0x8001,), 0x3f80),
    ("tanh.approx.bf16", (0x7fc0,), 0x7fff),
]


def simulate(ptx: str, operand_bits):
    """Run one PTX instruction spelt as in ``H100_ROWS`` on one lane through ``isa.fp``;
    returns the result's bits."""
    parts = ptx.split(".")
    op = parts[0]
    if op == "cvt":
        dst, src = parts[-2], parts[-1]
        mods = parts[1:-2]
        rnd = next((m for m in mods if m in MODES + ("rni", "rzi", "rmi", "rpi")), None)
        x = arr([operand_bits[0]], src)
        r = fp.cvt(x, dst, src, rnd, sat="sat" in mods, ftz="ftz" in mods)
        if dst in FMT:
            return bits_of(r, dst)[0]
        return int(r.astype(np.int64).tolist()[0]) % (1 << 64)
    ty, mods = parts[-1], parts[1:-1]
    xs = [arr([b], ty) for b in operand_bits]
    ftz, sat = "ftz" in mods, "sat" in mods
    rnd = next((m for m in mods if m in MODES), "rn")
    if op in ("add", "sub", "mul", "fma"):
        r = getattr(fp, op)(*xs, rnd, ftz, sat, ty=ty)
    elif op == "div":
        mode = "approx" if "approx" in mods else "full" if "full" in mods else rnd
        r = fp.div(*xs, mode, ftz, ty=ty)
    elif op in ("rcp", "sqrt"):
        r = getattr(fp, op)(*xs, "approx" if "approx" in mods else rnd, ftz=ftz, ty=ty)
    elif op in ("min", "max"):
        r = (fp.minimum if op == "min" else fp.maximum)(*xs, nan="NaN" in mods, ty=ty, ftz=ftz)
    elif op in ("abs", "neg"):
        r = (fp.absolute if op == "abs" else fp.negate)(*xs, ftz=ftz, ty=ty)
    elif op in ("rsqrt", "ex2"):
        r = getattr(fp, op)(*xs, ftz=ftz, ty=ty)
    elif op in ("lg2", "sin", "cos"):
        r = getattr(fp, op)(*xs, ftz=ftz)
    elif op == "tanh":
        r = fp.tanh(*xs, ty=ty)
    else:
        raise AssertionError(ptx)
    return bits_of(r, ty)[0]


@pytest.mark.parametrize("row", H100_ROWS, ids=[f"{r[0]}-{i}" for i, r in enumerate(H100_ROWS)])
def test_h100_measured(row):
    ptx, ins, want = row
    assert simulate(ptx, ins) == want


# --------------------------------------------------------------------------------------
# Conventions: dtypes, shapes, no warnings, no exceptions on any value
# --------------------------------------------------------------------------------------

def test_shapes_dtypes_and_no_warnings():
    with np.errstate(all="ignore"):
        vals = {"f32": np.array([0, -0.0, 1e-45, np.inf, -np.inf, np.nan, 3e38, -7.5], np.float32)}
        vals["f64"] = vals["f32"].astype(np.float64)
        vals["f16"] = vals["f32"].astype(np.float16)
        vals["bf16"] = (vals["f32"].view(np.uint32) >> 16).astype(np.uint16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for ty, x in vals.items():
            dt = x.dtype
            for f in (lambda a, b, ty=ty: fp.add(a, b, "rp", ty=ty), lambda a, b, ty=ty: fp.sub(a, b, "rm", True, True, ty=ty),
                      lambda a, b, ty=ty: fp.mul(a, b, "rz", ty=ty), lambda a, b, ty=ty: fp.fma(a, b, a, "rn", ty=ty),
                      lambda a, b, ty=ty: fp.div(a, b, "rz", ty=ty), lambda a, b, ty=ty: fp.minimum(a, b, ty=ty),
                      lambda a, b, ty=ty: fp.maximum(a, b, True, ty=ty)):
                assert f(x, x[::-1]).dtype == dt and f(x, x[::-1]).shape == x.shape
                assert f(x[:0], x[:0]).shape == (0,)
                r = f(x[6], x[7])
                assert isinstance(r, np.ndarray) and r.shape == () and r.dtype == dt
            assert fp.compare("leu", x, x, ty=ty).dtype == bool
            for f in (lambda a, ty=ty: fp.sqrt(a, "rp", ty=ty), lambda a, ty=ty: fp.rcp(a, "approx", ty=ty),
                      lambda a, ty=ty: fp.absolute(a, ty=ty), lambda a, ty=ty: fp.negate(a, ty=ty),
                      lambda a, ty=ty: fp.flush_subnormal(a, ty=ty), lambda a, ty=ty: fp.cvt(a, "s8", ty, "rni"),
                      lambda a, ty=ty: fp.cvt(a, "u64", ty, "rpi"), lambda a, ty=ty: fp.cvt(a, "f16", ty, "rz")):
                f(x)
                assert f(x[:0]).shape == (0,)
            if ty != "f64":
                fp.ex2(x, ty=ty)
                fp.tanh(x, ty=ty)
            else:
                fp.rsqrt(x)
                fp.rsqrt(x, ftz=True)
        for f in (fp.lg2, fp.sin, fp.cos):
            assert f(vals["f32"]).dtype == np.float32
        ints = np.array([-1, 0, 1, 2 ** 31 - 1], np.int64)
        for ty in FMT:
            for m in MODES:
                assert fp.cvt(ints, ty, "s64", m).dtype == FMT[ty][3]


def test_flush_subnormal():
    x = np.array([1e-40, -1e-40, 1e-30, -0.0, np.inf], np.float32)
    assert bits_of(fp.flush_subnormal(x), "f32") == [0, 0x80000000] + bits_of(x[2:], "f32")
    h = np.array([0x0001, 0x8040, 0x0400, 0x7E00], np.uint16)      # as bf16 bits
    assert fp.flush_subnormal(h, ty="bf16").tolist() == [0, 0x8000, 0x0400, 0x7E00]
    assert bits_of(fp.flush_subnormal(h.view(np.float16)), "f16") == [0, 0x8000, 0x0400, 0x7E00]
