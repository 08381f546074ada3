"""Property tests of ``isa/intops.py`` against an exact Python-int reference.

Each reference below is written from the PTX ISA 9.0 pseudo-code with unbounded Python
integers: wrap-around with masks, truncating (not floor) division, full 2n-bit products
for ``.hi``/``.wide``, and bit-by-bit loops for popc/clz/brev/bfind/bfe/bfi/prmt/shf.
Inputs mix edge values (0, 1, -1, INT_MIN, INT_MAX, UINT_MAX, shift amounts 0/31/32/33/
2**32-1, ...) with arbitrary values, on whole lanes (arrays of 0..10 elements).
Machine-specific cases (x/0, x%0, 64-bit bfe/bfi with pos/len > 255) use the values
measured on an H100 (``validation/probes/int_edge_cases.h100.json``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]


def _load_intops():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        from isa import intops
    except Exception:  # a sibling module of the isa package is unfinished: load ours alone
        spec = importlib.util.spec_from_file_location("_intops_alone", ROOT / "isa" / "intops.py")
        intops = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(intops)
    return intops


I = _load_intops()

# Any numpy warning (overflow, divide by zero, invalid: all RuntimeWarning) fails the test.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

FAST = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])

DT = {"s16": np.int16, "u16": np.uint16, "b16": np.uint16,
      "s32": np.int32, "u32": np.uint32, "b32": np.uint32,
      "s64": np.int64, "u64": np.uint64, "b64": np.uint64}
INT_TYPES = ["s16", "u16", "s32", "u32", "s64", "u64"]
SIGNED = ["s16", "s32", "s64"]


def nbits(ty):
    return int(ty[1:])


def is_signed(ty):
    return ty[0] == "s"


def lo_hi(ty):
    n = nbits(ty)
    return (-(1 << (n - 1)), (1 << (n - 1)) - 1) if is_signed(ty) else (0, (1 << n) - 1)


def wrap(v, ty):
    """Python int reduced modulo 2**n into ty's value range."""
    n = nbits(ty)
    v &= (1 << n) - 1
    if is_signed(ty) and v >> (n - 1):
        v -= 1 << n
    return v


def ubits(v, ty):
    return v & ((1 << nbits(ty)) - 1)


def bit(v, i):
    return (v >> i) & 1 if i >= 0 else 0


def edges(ty):
    lo, hi = lo_hi(ty)
    base = {0, 1, 2, 7, lo, hi, lo + 1, hi - 1, wrap(-1, ty), wrap(-7, ty), wrap(1 << (nbits(ty) - 1), ty)}
    return sorted(base)


def vals(ty):
    lo, hi = lo_hi(ty)
    return st.one_of(st.sampled_from(edges(ty)), st.integers(lo, hi))


U32_EDGES = [0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 255, 256, 257,
             (1 << 31), (1 << 32) - 1]
amounts = st.one_of(st.sampled_from(U32_EDGES), st.integers(0, (1 << 32) - 1))
small_u32 = st.one_of(st.sampled_from(U32_EDGES), st.integers(0, 300), st.integers(0, (1 << 32) - 1))


def lanes(*strats):
    return st.lists(st.tuples(*strats), min_size=0, max_size=10)


def cols(rows, *tys):
    """Column arrays of a list of row tuples (each column with its PTX type's dtype)."""
    return [np.array([r[k] for r in rows], dtype=DT[t]) for k, t in enumerate(tys)]


def check(got, want, dtype):
    assert isinstance(got, np.ndarray)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == (len(want),)
    assert got.tolist() == list(want), (got.tolist(), list(want))


# ------------------------------------------------------------------ references

def ref_div(a, b, ty):
    if b == 0:
        return wrap(-1, ty)  # measured on H100: all bits set
    q = abs(a) // abs(b)
    return wrap(q if (a < 0) == (b < 0) else -q, ty)


def ref_rem(a, b, ty):
    if b == 0:
        return wrap(-1, ty)  # measured on H100: all bits set, not a
    q = abs(a) // abs(b)
    q = q if (a < 0) == (b < 0) else -q
    return wrap(a - q * b, ty)


def sext24(v, ty):
    v &= 0xFFFFFF
    return v - (1 << 24) if is_signed(ty) and v & 0x800000 else v


def clamp_s32(v):
    return max(-(1 << 31), min((1 << 31) - 1, v))


def ref_popc(v, n):
    return sum(bit(v, i) for i in range(n))


def ref_clz(v, n):
    k = 0
    for i in range(n - 1, -1, -1):
        if bit(v, i):
            break
        k += 1
    return k


def ref_brev(v, n):
    return sum(bit(v, i) << (n - 1 - i) for i in range(n))


def ref_bfind(a, ty, shiftamt):
    n = nbits(ty)
    msb = n - 1
    u = ubits(a, ty)
    if is_signed(ty) and bit(u, msb):
        u = ~u & ((1 << n) - 1)
    d = 0xFFFFFFFF
    for i in range(msb, -1, -1):
        if bit(u, i):
            d = i
            break
    if shiftamt and d != 0xFFFFFFFF:
        d = msb - d
    return d


def _pos_len(pos, ln, n):
    # manual: & 0xff; measured H100: 64-bit forms use the whole u32 value
    return (pos & 0xFF, ln & 0xFF) if n == 32 else (pos, ln)


def ref_bfe(a, pos, ln, ty):
    n = nbits(ty)
    msb = n - 1
    u = ubits(a, ty)
    pos, ln = _pos_len(pos, ln, n)
    sbit = 0 if (not is_signed(ty) or ln == 0) else bit(u, min(pos + ln - 1, msb))
    d = 0
    for i in range(n):
        d |= (bit(u, pos + i) if (i < ln and pos + i <= msb) else sbit) << i
    return wrap(d, ty)


def ref_bfi(a, b, pos, ln, ty):
    n = nbits(ty)
    pos, ln = _pos_len(pos, ln, n)
    f = ubits(b, ty)
    i = 0
    while i < ln and pos + i <= n - 1:
        f = (f & ~(1 << (pos + i))) | (bit(a, i) << (pos + i))
        i += 1
    return f


PRMT_TABLE = {  # manual's table: c[1:0] -> (d.b3, d.b2, d.b1, d.b0)
    "f4e": [(3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)],
    "b4e": [(5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)],
    "rc8": [(0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)],
    "ecl": [(3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)],
    "ecr": [(0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)],
    "rc16": [(1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)],
}


def ref_prmt(a, b, c, mode):
    src = (b << 32) | a
    d = 0
    for k in range(4):
        if mode is None:
            ctl = (c >> (4 * k)) & 0xF
            sel, sign = ctl & 7, ctl >> 3
        else:
            sel, sign = PRMT_TABLE[mode][c & 3][3 - k], 0
        byte = [bit(src, 8 * sel + j) for j in range(8)]
        if sign:
            byte = [byte[7]] * 8
        for j in range(8):
            d |= byte[j] << (8 * k + j)
    return d


def ref_shf(a, b, c, direction, mode):
    n = min(c, 32) if mode == "clamp" else c & 31
    src = (b << 32) | a
    if direction == "l":  # upper word of src << n
        return sum(bit(src, 32 + i - n) << i for i in range(32))
    return sum((bit(src, i + n) if i + n < 64 else 0) << i for i in range(32))


# ------------------------------------------------------------------ arithmetic

@pytest.mark.parametrize("ty", INT_TYPES)
@FAST
@given(data=st.data())
def test_add_sub_wrap(ty, data):
    rows = data.draw(lanes(vals(ty), vals(ty)))
    a, b = cols(rows, ty, ty)
    check(I.add(a, b, ty), [wrap(x + y, ty) for x, y in rows], DT[ty])
    check(I.sub(a, b, ty), [wrap(x - y, ty) for x, y in rows], DT[ty])


@FAST
@given(rows=lanes(vals("s32"), vals("s32")))
def test_add_sub_sat_s32(rows):
    a, b = cols(rows, "s32", "s32")
    check(I.add(a, b, "s32", sat=True), [clamp_s32(x + y) for x, y in rows], np.int32)
    check(I.sub(a, b, "s32", sat=True), [clamp_s32(x - y) for x, y in rows], np.int32)


@pytest.mark.parametrize("ty", INT_TYPES)
@FAST
@given(data=st.data())
def test_mul_lo_hi_wide(ty, data):
    rows = data.draw(lanes(vals(ty), vals(ty)))
    a, b = cols(rows, ty, ty)
    n = nbits(ty)
    check(I.mul(a, b, ty, "lo"), [wrap(x * y, ty) for x, y in rows], DT[ty])
    check(I.mul(a, b, ty, "hi"), [wrap((x * y) >> n, ty) for x, y in rows], DT[ty])
    if n < 64:
        wide = ty[0] + str(2 * n)
        check(I.mul(a, b, ty, "wide"), [x * y for x, y in rows], DT[wide])


@pytest.mark.parametrize("ty", ["s32", "u32", "s64", "u64"])
@FAST
@given(data=st.data())
def test_mad(ty, data):
    rows = data.draw(lanes(vals(ty), vals(ty), vals(ty)))
    a, b, c = cols(rows, ty, ty, ty)
    n = nbits(ty)
    check(I.mad(a, b, c, ty, "lo"), [wrap(x * y + z, ty) for x, y, z in rows], DT[ty])
    check(I.mad(a, b, c, ty, "hi"), [wrap(((x * y) >> n) + z, ty) for x, y, z in rows], DT[ty])
    if ty == "s32":
        check(I.mad(a, b, c, ty, "hi", sat=True),
              [clamp_s32(((x * y) >> 32) + z) for x, y, z in rows], np.int32)
    if n == 32:
        wide = ty[0] + "64"
        rows_w = data.draw(lanes(vals(ty), vals(ty), vals(wide)))
        a, b, c = cols(rows_w, ty, ty, wide)
        check(I.mad(a, b, c, ty, "wide"), [wrap(x * y + z, wide) for x, y, z in rows_w], DT[wide])


M24 = [0, 1, 0x7FFFFF, 0x800000, 0xFFFFFF, 0x1000000, 0x80000000, 0xFFFFFFFF, 0x7FFFFFFF]


@pytest.mark.parametrize("ty", ["s32", "u32"])
@FAST
@given(data=st.data())
def test_mul24_mad24(ty, data):
    v = st.one_of(st.sampled_from([wrap(x, ty) for x in M24]), vals(ty))
    rows = data.draw(lanes(v, v, vals(ty)))
    a, b, c = cols(rows, ty, ty, ty)
    t = [sext24(x, ty) * sext24(y, ty) for x, y, _ in rows]
    check(I.mul24(a, b, ty, "lo"), [wrap(p, ty) for p in t], DT[ty])
    check(I.mul24(a, b, ty, "hi"), [wrap(p >> 16, ty) for p in t], DT[ty])
    check(I.mad24(a, b, c, ty, "lo"), [wrap(p + z, ty) for p, (_, _, z) in zip(t, rows)], DT[ty])
    check(I.mad24(a, b, c, ty, "hi"), [wrap((p >> 16) + z, ty) for p, (_, _, z) in zip(t, rows)],
          DT[ty])
    if ty == "s32":
        check(I.mad24(a, b, c, ty, "hi", sat=True),
              [clamp_s32(wrap(p >> 16, ty) + z) for p, (_, _, z) in zip(t, rows)], np.int32)


@pytest.mark.parametrize("ty", INT_TYPES)
@FAST
@given(data=st.data())
def test_sad(ty, data):
    rows = data.draw(lanes(vals(ty), vals(ty), vals(ty)))
    a, b, c = cols(rows, ty, ty, ty)
    check(I.sad(a, b, c, ty), [wrap(z + abs(x - y), ty) for x, y, z in rows], DT[ty])


@pytest.mark.parametrize("ty", INT_TYPES)
@FAST
@given(data=st.data())
def test_div_rem(ty, data):
    divisors = st.one_of(st.sampled_from([0, 1, wrap(-1, ty), 2, wrap(-2, ty), lo_hi(ty)[0]]), vals(ty))
    rows = data.draw(lanes(vals(ty), divisors))
    a, b = cols(rows, ty, ty)
    check(I.div(a, b, ty), [ref_div(x, y, ty) for x, y in rows], DT[ty])
    check(I.rem(a, b, ty), [ref_rem(x, y, ty) for x, y in rows], DT[ty])


@pytest.mark.parametrize("ty", INT_TYPES)
def test_div_rem_edge_cross_product(ty):
    rows = [(x, y) for x in edges(ty) for y in edges(ty)]
    a, b = cols(rows, ty, ty)
    check(I.div(a, b, ty), [ref_div(x, y, ty) for x, y in rows], DT[ty])
    check(I.rem(a, b, ty), [ref_rem(x, y, ty) for x, y in rows], DT[ty])


@pytest.mark.parametrize("ty", SIGNED)
def test_machine_specific_division_values(ty):
    lo, hi = lo_hi(ty)
    x = np.array([0, 1, -1, 7, lo, hi], dtype=DT[ty])
    zero = np.zeros_like(x)
    assert I.div(x, zero, ty).tolist() == [-1] * 6
    assert I.rem(x, zero, ty).tolist() == [-1] * 6
    m1 = np.array([lo], dtype=DT[ty])
    assert I.div(m1, np.array([-1], dtype=DT[ty]), ty).tolist() == [lo]
    assert I.rem(m1, np.array([-1], dtype=DT[ty]), ty).tolist() == [0]
    u = "u" + ty[1:]
    ux = np.array([0, 1, 7, 2**nbits(u) - 1], dtype=DT[u])
    assert I.div(ux, np.zeros_like(ux), u).tolist() == [2**nbits(u) - 1] * 4
    assert I.rem(ux, np.zeros_like(ux), u).tolist() == [2**nbits(u) - 1] * 4


@pytest.mark.parametrize("ty", SIGNED)
@FAST
@given(data=st.data())
def test_abs_neg(ty, data):
    rows = data.draw(lanes(vals(ty)))
    (a,) = cols(rows, ty)
    check(I.absolute(a, ty), [wrap(abs(x), ty) for (x,) in rows], DT[ty])
    check(I.negate(a, ty), [wrap(-x, ty) for (x,) in rows], DT[ty])


@pytest.mark.parametrize("ty", INT_TYPES)
@FAST
@given(data=st.data())
def test_min_max(ty, data):
    rows = data.draw(lanes(vals(ty), vals(ty)))
    a, b = cols(rows, ty, ty)
    check(I.minimum(a, b, ty), [min(x, y) for x, y in rows], DT[ty])
    check(I.maximum(a, b, ty), [max(x, y) for x, y in rows], DT[ty])
    if is_signed(ty):
        check(I.minimum(a, b, ty, relu=True), [max(0, min(x, y)) for x, y in rows], DT[ty])
        check(I.maximum(a, b, ty, relu=True), [max(0, x, y) for x, y in rows], DT[ty])


# ------------------------------------------------------------------ bit manipulation

@pytest.mark.parametrize("ty", ["b16", "b32", "b64"])
@FAST
@given(data=st.data())
def test_popc_clz_brev(ty, data):
    rows = data.draw(lanes(vals("u" + ty[1:])))
    (a,) = cols(rows, ty)
    n = nbits(ty)
    check(I.popc(a, ty), [ref_popc(x, n) for (x,) in rows], np.uint32)
    check(I.clz(a, ty), [ref_clz(x, n) for (x,) in rows], np.uint32)
    check(I.brev(a, ty), [ref_brev(x, n) for (x,) in rows], DT[ty])


@pytest.mark.parametrize("ty", ["u32", "s32", "u64", "s64"])
@FAST
@given(data=st.data())
def test_bfind(ty, data):
    rows = data.draw(lanes(vals(ty)))
    (a,) = cols(rows, ty)
    check(I.bfind(a, ty), [ref_bfind(x, ty, False) for (x,) in rows], np.uint32)
    check(I.bfind(a, ty, shiftamt=True), [ref_bfind(x, ty, True) for (x,) in rows], np.uint32)


@pytest.mark.parametrize("ty", ["u32", "s32", "u64", "s64"])
@FAST
@given(data=st.data())
def test_bfe(ty, data):
    rows = data.draw(lanes(vals(ty), small_u32, small_u32))
    a, p, ln = cols(rows, ty, "u32", "u32")
    check(I.bfe(a, p, ln, ty), [ref_bfe(x, q, m, ty) for x, q, m in rows], DT[ty])


@pytest.mark.parametrize("ty", ["b32", "b64"])
@FAST
@given(data=st.data())
def test_bfi(ty, data):
    u = "u" + ty[1:]
    rows = data.draw(lanes(vals(u), vals(u), small_u32, small_u32))
    a, b, p, ln = cols(rows, ty, ty, "u32", "u32")
    check(I.bfi(a, b, p, ln, ty), [ref_bfi(x, y, q, m, ty) for x, y, q, m in rows], DT[ty])


def test_bfe_bfi_position_length_grid():
    grid = [(p, m) for p in U32_EDGES for m in U32_EDGES]
    for ty, a in (("u32", 0x9ABCDEF0), ("s32", -0x65432110), ("u64", 0xFEDCBA9876543210),
                  ("s64", -0x123456789ABCDEF0)):
        rows = [(a, p, m) for p, m in grid]
        x, p, m = cols(rows, ty, "u32", "u32")
        check(I.bfe(x, p, m, ty), [ref_bfe(*r, ty) for r in rows], DT[ty])
    for ty, a, b in (("b32", 0x12345678, 0x9ABCDEF0), ("b64", 2**64 - 1, 0x0123456789ABCDEF)):
        rows = [(a, b, p, m) for p, m in grid]
        x, y, p, m = cols(rows, ty, ty, "u32", "u32")
        check(I.bfi(x, y, p, m, ty), [ref_bfi(*r, ty) for r in rows], DT[ty])


@pytest.mark.parametrize("mode", [None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
@FAST
@given(data=st.data())
def test_prmt(mode, data):
    sel = st.one_of(st.sampled_from([0, 1, 2, 3, 0x3210, 0x7654, 0x8888, 0xFFFF, 0xFFFFFFFF]),
                    st.integers(0, (1 << 32) - 1))
    rows = data.draw(lanes(vals("u32"), vals("u32"), sel))
    a, b, c = cols(rows, "b32", "b32", "b32")
    check(I.prmt(a, b, c, mode), [ref_prmt(x, y, z, mode) for x, y, z in rows], np.uint32)


def test_prmt_documented_example():
    # cub::PRMT documentation example: a=0x03020100, b=0x07060504, index=0x7531 -> 0x07050301
    out = I.prmt(np.array([0x03020100], np.uint32), np.array([0x07060504], np.uint32),
                 np.array([0x7531], np.uint32))
    assert out.tolist() == [0x07050301]


# ------------------------------------------------------------------ logic and shift

@pytest.mark.parametrize("ty", ["b16", "u16", "s16", "b32", "u32", "s32", "b64", "u64", "s64"])
@FAST
@given(data=st.data())
def test_shl_shr(ty, data):
    rows = data.draw(lanes(vals(ty), amounts))
    a, s = cols(rows, ty, "u32")
    n = nbits(ty)
    check(I.shl(a, s, ty), [wrap(x << k, ty) if k < n else 0 for x, k in rows], DT[ty])
    # Python's >> on a signed value is arithmetic and fills with the sign for any k
    check(I.shr(a, s, ty), [wrap(x >> k, ty) for x, k in rows], DT[ty])


@pytest.mark.parametrize("direction", ["l", "r"])
@pytest.mark.parametrize("mode", ["clamp", "wrap"])
@FAST
@given(data=st.data())
def test_shf(direction, mode, data):
    rows = data.draw(lanes(vals("u32"), vals("u32"), amounts))
    a, b, c = cols(rows, "b32", "b32", "u32")
    check(I.shf(a, b, c, direction, mode), [ref_shf(x, y, z, direction, mode) for x, y, z in rows],
          np.uint32)


@pytest.mark.parametrize("ty", ["b16", "b32", "b64"])
@FAST
@given(data=st.data())
def test_logic(ty, data):
    u = "u" + ty[1:]
    rows = data.draw(lanes(vals(u), vals(u)))
    a, b = cols(rows, ty, ty)
    check(I.bit_and(a, b, ty), [x & y for x, y in rows], DT[ty])
    check(I.bit_or(a, b), [x | y for x, y in rows], DT[ty])
    check(I.bit_xor(a, b, ty), [x ^ y for x, y in rows], DT[ty])
    check(I.bit_not(a, ty), [ubits(~x, ty) for x, _ in rows], DT[ty])
    check(I.bit_not(a), [ubits(~x, ty) for x, _ in rows], DT[ty])
    check(I.cnot(a, ty), [1 if x == 0 else 0 for x, _ in rows], DT[ty])
    check(I.cnot(a), [1 if x == 0 else 0 for x, _ in rows], DT[ty])


@FAST
@given(rows=lanes(st.booleans(), st.booleans()))
def test_logic_on_predicates(rows):
    p = np.array([r[0] for r in rows], dtype=bool)
    q = np.array([r[1] for r in rows], dtype=bool)
    check(I.bit_and(p, q), [x and y for x, y in rows], np.bool_)
    check(I.bit_or(p, q, "pred"), [x or y for x, y in rows], np.bool_)
    check(I.bit_xor(p, q), [x != y for x, y in rows], np.bool_)
    check(I.bit_not(p), [not x for x, _ in rows], np.bool_)
    check(I.bit_not(p, "pred"), [not x for x, _ in rows], np.bool_)
    check(I.cnot(p), [not x for x, _ in rows], np.bool_)


# ------------------------------------------------------------------ setp / selp

OPS = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
       "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}
UOPS = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


@pytest.mark.parametrize("ty", INT_TYPES + ["b32"])
@FAST
@given(data=st.data())
def test_compare(ty, data):
    rows = data.draw(lanes(vals(ty), vals(ty)))
    a, b = cols(rows, ty, ty)
    for op, f in OPS.items():
        check(I.compare(op, a, b, ty), [f(x, y) for x, y in rows], np.bool_)
    for op, base in UOPS.items():  # unsigned comparison of the bit patterns, whatever ty
        check(I.compare(op, a, b, ty), [OPS[base](ubits(x, ty), ubits(y, ty)) for x, y in rows],
              np.bool_)


@pytest.mark.parametrize("ty", ["s16", "u32", "s64", "b64"])
@FAST
@given(data=st.data())
def test_selp(ty, data):
    rows = data.draw(lanes(vals(ty), vals(ty), st.booleans()))
    a, b = cols(rows, ty, ty)
    p = np.array([r[2] for r in rows], dtype=bool)
    check(I.selp(a, b, p), [x if c else y for x, y, c in rows], DT[ty])


# ------------------------------------------------------------------ calling conventions

def test_numpy_scalars_give_0d_arrays_of_the_result_dtype():
    r = I.add(np.int32(2**31 - 1), np.int32(1), "s32")
    assert isinstance(r, np.ndarray) and r.shape == () and r.dtype == np.int32 and int(r) == -(2**31)
    r = I.div(np.int64(-(2**63)), np.int64(-1), "s64")
    assert r.shape == () and int(r) == -(2**63)
    r = I.mul(np.uint64(2**64 - 1), np.uint64(2**64 - 1), "u64", "hi")
    assert r.dtype == np.uint64 and int(r) == 2**64 - 2
    r = I.mul(np.int32(-5), np.int32(3), "s32", "wide")
    assert r.dtype == np.int64 and int(r) == -15
    assert I.popc(np.uint64(2**64 - 1), "b64").dtype == np.uint32
    assert int(I.shl(np.uint32(1), np.uint32(2**32 - 1), "b32")) == 0
    assert int(I.shr(np.int16(-4), np.uint32(40), "s16")) == -1
    r = I.compare("lo", np.int32(-1), np.int32(1), "s32")  # 0xFFFFFFFF is not lower than 1
    assert r.dtype == np.bool_ and not bool(r)


def test_lanes_broadcast_against_a_scalar():
    a = np.array([1, 2, 3], np.uint32)
    assert I.shl(a, np.uint32(4), "b32").tolist() == [16, 32, 48]
    assert I.add(a, np.uint32(2**32 - 1), "u32").tolist() == [0, 1, 2]


def test_empty_lanes():
    e32 = np.array([], np.int32)
    eu = np.array([], np.uint32)
    assert I.div(e32, e32, "s32").shape == (0,)
    assert I.mul(e32, e32, "s32", "wide").dtype == np.int64
    assert I.mul(np.array([], np.uint64), np.array([], np.uint64), "u64", "hi").shape == (0,)
    assert I.prmt(eu, eu, eu, "ecl").shape == (0,)
    assert I.shf(eu, eu, eu, "l", "clamp").shape == (0,)
    assert I.bfe(e32, eu, eu, "s32").shape == (0,)
    assert I.bfind(np.array([], np.int64), "s64").dtype == np.uint32
    assert I.compare("lt", e32, e32, "s32").dtype == np.bool_


def test_results_are_new_arrays():
    a = np.array([1, 2, 3], np.uint32)
    b = np.array([4, 5, 6], np.uint32)
    for r in (I.absolute(a, "u32"), I.selp(a, b, np.array([True] * 3)), I.bit_and(a, a),
              I.shl(a, np.uint32(0), "b32"), I.minimum(a, a, "u32"), I.bfi(a, b, 0, 0, "b32")):
        assert not np.shares_memory(r, a) and not np.shares_memory(r, b)
    r = I.add(a, np.uint32(0), "u32")
    r[0] = 99
    assert a[0] == 1


def test_undefined_forms_are_rejected():
    x = np.array([1], np.int32)
    with pytest.raises(ValueError):
        I.mul(x, x, "s32", "middle")
    with pytest.raises(ValueError):
        I.mul(np.array([1], np.int64), np.array([1], np.int64), "s64", "wide")
    with pytest.raises(ValueError):
        I.add(x, x, "s64", sat=True)
    with pytest.raises(ValueError):
        I.prmt(x, x, x, "xyz")
    with pytest.raises(ValueError):
        I.compare("foo", x, x, "s32")
