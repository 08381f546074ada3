"""Lane-vectorised, bit-exact semantics of the PTX integer and bit-manipulation instructions.

What this module owns
---------------------
The value semantics of PTX integer arithmetic (``add sub mul mad mul24 mad24 sad div rem
abs neg min max``), bit manipulation (``popc clz bfind brev bfe bfi``), logic and shift
(``and or xor not cnot shl shr shf``), byte permute (``prmt``) and integer comparison and
selection (``setp`` / ``selp``).  Every function operates on all lanes of a warp (or any
number of lanes) at once: operands are 1-D numpy arrays of any length, including 0, or
numpy scalars, and the result is a new numpy array of the result dtype (0-d when every
operand is a scalar).  There are no per-element Python loops.

No function raises or emits a numpy warning for any operand *value* (division by zero and
``INT_MIN / -1`` included).  A ``ty``/``mode`` combination that the ISA does not define
raises :class:`ValueError`; that is a programming error in the caller, not a data value.

Type conventions (the simulator's opcode table calls these functions directly)
-----------------------------------------------------------------------------
``ty`` is a PTX type name; its numpy dtype is::

    s8 int8   u8 uint8    s16 int16  u16/b16 uint16
    s32 int32 u32/b32 uint32  s64 int64  u64/b64 uint64   pred bool

Operands of another integer dtype are reinterpreted (wrapped) to the instruction's dtype,
as a PTX register of the right size would be.  Shift amounts, bit positions and lengths are
``.u32`` operands.

Dependencies: numpy only.

Sources
-------
* NVIDIA, *PTX ISA* version 9.0 (``docs.nvidia.com/cuda/parallel-thread-execution``):
  9.7.1 Integer Arithmetic Instructions (9.7.1.1 add ... 9.7.1.20 bfi),
  9.7.6 Comparison and Selection Instructions (9.7.6.2 setp, 9.7.6.3 selp),
  9.7.8 Logic and Shift Instructions (9.7.8.1 and ... 9.7.8.9 shr),
  9.7.9.7 Data Movement and Conversion Instructions: prmt.
* Measurements on an NVIDIA H100 (sm_90; driver 580.159.04, CUDA 13.0, NVRTC 13.0 via
  CuPy 14.2) by ``validation/probes/int_edge_cases.py``; the 10,680 raw rows are in
  ``validation/probes/int_edge_cases.h100.json`` and ``tests/isa/test_intops_hw.py``
  checks every one of them against this module.  They fix what the ISA leaves
  machine-specific, and in one place they overrule the manual:

  - ``div``/``rem`` by zero return all bits set (``-1`` / ``2**n - 1``) for every
    dividend and type, the remainder included; ``INT_MIN / -1 == INT_MIN`` and
    ``INT_MIN % -1 == 0``;
  - ``bfe.u64/.s64`` and ``bfi.b64`` use the whole 32-bit position and length, not
    only bits 7..0 as the manual's pseudo-code says (the 32-bit forms do mask to 8 bits).
    This module follows the hardware.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = [
    "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem",
    "absolute", "negate", "minimum", "maximum",
    "shl", "shr", "shf",
    "bit_and", "bit_or", "bit_xor", "bit_not", "cnot",
    "popc", "clz", "brev", "bfind", "bfe", "bfi", "prmt",
    "compare", "selp",
]

# --------------------------------------------------------------------------------------
# Type table and helpers
# --------------------------------------------------------------------------------------

_TYPES = {
    # name: (dtype, bits, signed)
    "s8": (np.int8, 8, True), "u8": (np.uint8, 8, False), "b8": (np.uint8, 8, False),
    "s16": (np.int16, 16, True), "u16": (np.uint16, 16, False), "b16": (np.uint16, 16, False),
    "s32": (np.int32, 32, True), "u32": (np.uint32, 32, False), "b32": (np.uint32, 32, False),
    "s64": (np.int64, 64, True), "u64": (np.uint64, 64, False), "b64": (np.uint64, 64, False),
}
_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


class _Ty:
    """Resolved PTX integer type: dtype, width, signedness and its same-width twins."""

    __slots__ = ("name", "dt", "bits", "signed", "udt", "sdt", "umax")

    def __init__(self, name: str):
        key = name.lstrip(".")
        if key not in _TYPES:
            raise ValueError(f"unsupported PTX integer type {name!r}")
        dt, bits, signed = _TYPES[key]
        self.name = key
        self.dt = dt
        self.bits = bits
        self.signed = signed
        self.udt = _UNSIGNED[bits]
        self.sdt = _SIGNED[bits]
        self.umax = self.udt(2**bits - 1)


@functools.lru_cache(maxsize=None)
def _ty(name: str) -> _Ty:
    return _Ty(name)


def _arr(x, dt) -> np.ndarray:
    """``x`` as an ndarray of dtype ``dt``; other integer widths wrap like a register."""
    if type(x) is int:  # a Python int: reduce modulo 2**n first (NEP 50 would raise)
        bits = np.dtype(dt).itemsize * 8
        if np.dtype(dt).kind in "iu":
            return np.asarray(x & (2**bits - 1), dtype=_UNSIGNED[bits]).view(dt)
    a = np.asarray(x)
    if a.dtype != dt:
        a = a.astype(dt)
    return a


def _u(x, t: _Ty) -> np.ndarray:
    """Operand as the unsigned dtype of ``t``'s width (bit pattern preserved)."""
    return _arr(x, t.dt).view(t.udt)


def _s(x, t: _Ty) -> np.ndarray:
    """Operand as the signed dtype of ``t``'s width (bit pattern preserved)."""
    return _arr(x, t.dt).view(t.sdt)


def _out(x, dt) -> np.ndarray:
    """Final result as an ndarray of dtype ``dt`` (0-d arrays stay 0-d)."""
    r = np.asarray(x)
    if r.dtype != dt:
        same_width_ints = (r.dtype.kind in "iu" and np.dtype(dt).kind in "iu"
                           and r.dtype.itemsize == np.dtype(dt).itemsize)
        r = r.view(dt) if same_width_ints else r.astype(dt)
    return r


def _quiet(fn):
    """Run ``fn`` with every numpy floating-point/overflow warning suppressed."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return wrapper


def _wide(t: _Ty) -> _Ty:
    if t.bits == 64:
        raise ValueError(f".wide is not defined for .{t.name}")
    prefix = "s" if t.signed else "u"
    return _ty(f"{prefix}{t.bits * 2}")


def _sat_s32(x64: np.ndarray) -> np.ndarray:
    """Clamp an int64 array to the s32 range and return it as int32."""
    return np.clip(x64, np.int64(-(2**31)), np.int64(2**31 - 1)).astype(np.int32)


_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


def _mulhi_u64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """High 64 bits of the 128-bit product of two uint64 arrays (32-bit limbs)."""
    a_lo, a_hi = a & _M32, a >> _S32
    b_lo, b_hi = b & _M32, b >> _S32
    ll = a_lo * b_lo
    lh = a_lo * b_hi
    hl = a_hi * b_lo
    hh = a_hi * b_hi
    mid = (ll >> _S32) + (lh & _M32) + (hl & _M32)  # < 3 * 2**32: no overflow
    return hh + (lh >> _S32) + (hl >> _S32) + (mid >> _S32)


def _mulhi(a, b, t: _Ty) -> np.ndarray:
    """High half (bits 2n-1..n) of the full 2n-bit product, as dtype ``t.dt``."""
    if t.bits == 64:
        ua, ub = _u(a, t), _u(b, t)
        hi = _mulhi_u64(ua, ub)
        if t.signed:
            zero = np.uint64(0)
            hi = hi - np.where(_s(a, t) < 0, ub, zero) - np.where(_s(b, t) < 0, ua, zero)
        return _out(hi, t.dt)
    w = _wide(t)
    p = _arr(a, t.dt).astype(w.dt) * _arr(b, t.dt).astype(w.dt)
    return _out((p >> w.dt(t.bits)).astype(t.dt), t.dt)


def _msb_index(u: np.ndarray, bits: int) -> np.ndarray:
    """Index of the most significant 1 bit of each unsigned lane (int64; -1 for 0)."""
    x = u.astype(np.uint64)
    pos = np.zeros(x.shape, dtype=np.int64)
    s = bits // 2
    while s >= 1:
        hi = x >> np.uint64(s)
        m = hi != 0
        pos = pos + np.where(m, np.int64(s), np.int64(0))
        x = np.where(m, hi, x)
        s //= 2
    return np.where(x != 0, pos, np.int64(-1))


def _popcount(u: np.ndarray) -> np.ndarray:
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(u)
    x = u.astype(np.uint64)  # SWAR fallback for numpy < 2.0
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


# --------------------------------------------------------------------------------------
# 9.7.1 Integer arithmetic
# --------------------------------------------------------------------------------------


@_quiet
def add(a, b, ty, sat=False):
    """``add{.sat}.type d, a, b`` -- PTX ISA 9.0 section 9.7.1.1.

    ``a``, ``b``: arrays/scalars of ``ty``'s dtype (s16 u16 s32 u32 s64 u64; b types are
    accepted and behave as unsigned).  Returns ``a + b`` wrapped modulo 2**n, dtype of
    ``ty``.  ``sat=True`` (``.s32`` only) clamps to [INT32_MIN, INT32_MAX] instead.
    """
    t = _ty(ty)
    if sat:
        if t.name != "s32":
            raise ValueError("add.sat is defined for .s32 only")
        return _sat_s32(_s(a, t).astype(np.int64) + _s(b, t).astype(np.int64))
    return _out(_u(a, t) + _u(b, t), t.dt)


@_quiet
def sub(a, b, ty, sat=False):
    """``sub{.sat}.type d, a, b`` -- PTX ISA 9.0 section 9.7.1.2.

    Same dtypes as :func:`add`.  Returns ``a - b`` wrapped modulo 2**n; ``sat=True``
    (``.s32`` only) clamps to the s32 range.
    """
    t = _ty(ty)
    if sat:
        if t.name != "s32":
            raise ValueError("sub.sat is defined for .s32 only")
        return _sat_s32(_s(a, t).astype(np.int64) - _s(b, t).astype(np.int64))
    return _out(_u(a, t) - _u(b, t), t.dt)


@_quiet
def mul(a, b, ty, mode):
    """``mul.mode.type d, a, b`` -- PTX ISA 9.0 section 9.7.1.3.

    ``t = a * b`` as the exact 2n-bit product (signedness from ``ty``), then by ``mode``:

    * ``"lo"``: ``t<n-1..0>``, dtype of ``ty``;
    * ``"hi"``: ``t<2n-1..n>``, dtype of ``ty`` (64-bit types use a vectorised 128-bit
      product built from 32-bit limbs);
    * ``"wide"``: all of ``t``, for 16- and 32-bit types only; the result dtype has twice
      the width and the same signedness (s16 -> int32, u32 -> uint64, ...).
    """
    t = _ty(ty)
    mode = mode.lstrip(".")
    if mode == "lo":
        return _out(_u(a, t) * _u(b, t), t.dt)
    if mode == "hi":
        return _mulhi(a, b, t)
    if mode == "wide":
        w = _wide(t)
        return _out(_arr(a, t.dt).astype(w.dt) * _arr(b, t.dt).astype(w.dt), w.dt)
    raise ValueError(f"mul mode must be lo, hi or wide, not {mode!r}")


@_quiet
def mad(a, b, c, ty, mode, sat=False):
    """``mad.mode{.sat}.type d, a, b, c`` -- PTX ISA 9.0 section 9.7.1.4.

    ``t = a * b`` (exact 2n-bit product); ``d = t<n-1..0> + c`` (``"lo"``),
    ``d = t<2n-1..n> + c`` (``"hi"``) or ``d = t + c`` (``"wide"``, 16/32-bit types; ``c``
    and ``d`` then have the doubled dtype).  The addition wraps modulo 2**width(d).
    ``sat=True`` is defined only for ``mad.hi.sat.s32``: the sum of the high word and
    ``c`` is clamped to the s32 range.
    """
    t = _ty(ty)
    mode = mode.lstrip(".")
    if sat and not (t.name == "s32" and mode == "hi"):
        raise ValueError(".sat is defined for mad.hi.sat.s32 only")
    if mode == "lo":
        return _out(_u(a, t) * _u(b, t) + _u(c, t), t.dt)
    if mode == "hi":
        hi = _mulhi(a, b, t)
        if sat:
            return _sat_s32(hi.astype(np.int64) + _s(c, t).astype(np.int64))
        return _out(hi.view(t.udt) + _u(c, t), t.dt)
    if mode == "wide":
        w = _wide(t)
        p = _arr(a, t.dt).astype(w.dt) * _arr(b, t.dt).astype(w.dt)
        return _out(p.view(w.udt) + _u(c, w), w.dt)
    raise ValueError(f"mad mode must be lo, hi or wide, not {mode!r}")


def _t24(a, t: _Ty) -> np.ndarray:
    """Low 24 bits of a 32-bit operand as int64 (sign-extended from bit 23 for .s32)."""
    x = _u(a, t).astype(np.int64) & np.int64(0xFFFFFF)
    if t.signed:
        x = x - ((x & np.int64(0x800000)) << np.int64(1))
    return x


def _mul24_t(a, b, t: _Ty, mode: str) -> np.ndarray:
    """``t<47..16>`` (hi) or ``t<31..0>`` (lo) of the 48-bit product, as uint32."""
    if t.bits != 32:
        raise ValueError("mul24/mad24 are defined for .u32 and .s32 only")
    p = _t24(a, t) * _t24(b, t)  # |p| < 2**47: exact in int64
    if mode == "hi":
        p = p >> np.int64(16)
    elif mode != "lo":
        raise ValueError(f"mul24/mad24 mode must be hi or lo, not {mode!r}")
    return (p & np.int64(0xFFFFFFFF)).astype(np.uint32)


@_quiet
def mul24(a, b, ty, mode):
    """``mul24.mode.type d, a, b`` -- PTX ISA 9.0 section 9.7.1.5.

    ``ty`` is ``"u32"`` or ``"s32"``.  The low 24 bits of ``a`` and ``b`` (sign-extended
    from bit 23 for ``.s32``) are multiplied into a 48-bit ``t``; ``"hi"`` returns
    ``t<47..16>`` and ``"lo"`` returns ``t<31..0>``, as dtype of ``ty``.
    """
    t = _ty(ty)
    return _out(_mul24_t(a, b, t, mode.lstrip(".")), t.dt)


@_quiet
def mad24(a, b, c, ty, mode, sat=False):
    """``mad24.mode{.sat}.type d, a, b, c`` -- PTX ISA 9.0 section 9.7.1.6.

    As :func:`mul24`, then ``+ c`` (32-bit, wrapping).  ``sat=True`` is defined only for
    ``mad24.hi.sat.s32``: ``t<47..16> + c`` is clamped to the s32 range.
    """
    t = _ty(ty)
    mode = mode.lstrip(".")
    if sat and not (t.name == "s32" and mode == "hi"):
        raise ValueError(".sat is defined for mad24.hi.sat.s32 only")
    p = _mul24_t(a, b, t, mode)
    if sat:
        return _sat_s32(p.view(np.int32).astype(np.int64) + _s(c, t).astype(np.int64))
    return _out(p + _u(c, t), t.dt)


@_quiet
def sad(a, b, c, ty):
    """``sad.type d, a, b, c`` -- PTX ISA 9.0 section 9.7.1.7.

    ``d = c + ((a < b) ? b - a : a - b)`` with the comparison signed or unsigned per ``ty``
    (16/32/64-bit) and all arithmetic wrapping modulo 2**n.  Dtype of ``ty``.
    """
    t = _ty(ty)
    ua, ub = _u(a, t), _u(b, t)
    less = (_s(a, t) < _s(b, t)) if t.signed else (ua < ub)
    diff = np.where(less, ub - ua, ua - ub)
    return _out(_u(c, t) + diff, t.dt)


# Results the ISA leaves machine-specific, as measured on an NVIDIA H100 (sm_90, driver
# 580.159.04 / CUDA 13.0, NVRTC 13.0 via CuPy 14.2) by validation/probes/int_edge_cases.py;
# raw rows in validation/probes/int_edge_cases.h100.json:
#   x / 0 and x % 0 -> all bits set (2**n - 1 unsigned, -1 signed) for every x, every
#                      type (16/32/64-bit, signed and unsigned), div and rem alike;
#   INT_MIN / -1 -> INT_MIN,  INT_MIN % -1 -> 0  (two's-complement wrap).


def _divrem(a, b, t: _Ty):
    ua, ub = _u(a, t), _u(b, t)
    zero = ub == 0
    one = t.udt(1)
    if not t.signed:
        safe = np.where(zero, one, ub)
        q = np.where(zero, t.umax, ua // safe)
        r = np.where(zero, t.umax, ua % safe)
        return q, r
    sa, sb = _s(a, t), _s(b, t)
    neg_a, neg_b = sa < 0, sb < 0
    z = t.udt(0)
    mag_a = np.where(neg_a, z - ua, ua)  # |INT_MIN| = 2**(n-1) fits the unsigned type
    mag_b = np.where(neg_b, z - ub, ub)
    safe = np.where(zero, one, mag_b)
    mq, mr = mag_a // safe, mag_a % safe
    q = np.where(zero, t.umax, np.where(neg_a != neg_b, z - mq, mq))
    r = np.where(zero, t.umax, np.where(neg_a, z - mr, mr))
    return q, r


@_quiet
def div(a, b, ty):
    """``div.type d, a, b`` -- PTX ISA 9.0 section 9.7.1.8.

    Integer quotient truncated toward zero (C semantics) for s16/u16/s32/u32/s64/u64;
    dtype of ``ty``.  The ISA says "Division by zero yields an unspecified,
    machine-specific value"; the cases it leaves open return what an H100 returns (see
    ``validation/probes/int_edge_cases.h100.json``):

    * ``x / 0`` -> all bits set for every ``x``: ``2**n - 1`` unsigned, ``-1`` signed;
    * ``INT_MIN / -1`` -> ``INT_MIN`` (wraps).
    """
    t = _ty(ty)
    return _out(_divrem(a, b, t)[0], t.dt)


@_quiet
def rem(a, b, ty):
    """``rem.type d, a, b`` -- PTX ISA 9.0 section 9.7.1.9.

    Remainder of the truncating division: ``a - trunc(a / b) * b``, sign of ``a`` (C
    semantics); dtype of ``ty``.  Machine-specific cases as measured on an H100:
    ``x % 0`` -> all bits set for every ``x`` (``2**n - 1`` unsigned, ``-1`` signed; *not*
    ``x``), and ``INT_MIN % -1 -> 0``.
    """
    t = _ty(ty)
    return _out(_divrem(a, b, t)[1], t.dt)


@_quiet
def absolute(a, ty):
    """``abs.type d, a`` -- PTX ISA 9.0 section 9.7.1.10.

    ``|a|`` for s16/s32/s64, wrapping: ``abs(INT_MIN) == INT_MIN``.  For an unsigned or
    bit type the value is returned unchanged (as a new array).  Dtype of ``ty``.
    """
    t = _ty(ty)
    ua = _u(a, t)
    if not t.signed:
        return _out(ua.copy(), t.dt)
    return _out(np.where(_s(a, t) < 0, t.udt(0) - ua, ua), t.dt)


@_quiet
def negate(a, ty):
    """``neg.type d, a`` -- PTX ISA 9.0 section 9.7.1.11.

    Two's-complement negation modulo 2**n (``-INT_MIN == INT_MIN``); dtype of ``ty``.
    """
    t = _ty(ty)
    return _out(t.udt(0) - _u(a, t), t.dt)


@_quiet
def minimum(a, b, ty, relu=False):
    """``min{.relu}.type d, a, b`` -- PTX ISA 9.0 section 9.7.1.12.

    Lane-wise minimum, signed or unsigned per ``ty`` (b types compare unsigned); dtype of
    ``ty``.  ``relu=True`` (``min.relu.s16/.s32``) clamps a negative result to 0.
    """
    t = _ty(ty)
    r = np.minimum(_s(a, t), _s(b, t)) if t.signed else np.minimum(_u(a, t), _u(b, t))
    if relu:
        if not t.signed:
            raise ValueError(".relu is defined for signed types only")
        r = np.maximum(r, t.sdt(0))
    return _out(r, t.dt)


@_quiet
def maximum(a, b, ty, relu=False):
    """``max{.relu}.type d, a, b`` -- PTX ISA 9.0 section 9.7.1.13.

    Lane-wise maximum, signed or unsigned per ``ty``; dtype of ``ty``.  ``relu=True``
    (``max.relu.s16/.s32``) clamps a negative result to 0.
    """
    t = _ty(ty)
    r = np.maximum(_s(a, t), _s(b, t)) if t.signed else np.maximum(_u(a, t), _u(b, t))
    if relu:
        if not t.signed:
            raise ValueError(".relu is defined for signed types only")
        r = np.maximum(r, t.sdt(0))
    return _out(r, t.dt)


@_quiet
def popc(a, ty):
    """``popc.type d, a`` -- PTX ISA 9.0 section 9.7.1.14.

    Number of 1 bits in ``a`` (``.b32``/``.b64``; any 16-64-bit ``ty`` works).  Returns
    uint32.
    """
    t = _ty(ty)
    return _out(_popcount(_u(a, t)).astype(np.uint32), np.uint32)


@_quiet
def clz(a, ty):
    """``clz.type d, a`` -- PTX ISA 9.0 section 9.7.1.15.

    Number of leading zero bits of ``a`` (``.b32``/``.b64``), ``n`` for ``a == 0``.
    Returns uint32.
    """
    t = _ty(ty)
    msb = _msb_index(_u(a, t), t.bits)
    return _out((np.int64(t.bits - 1) - msb).astype(np.uint32), np.uint32)


@_quiet
def bfind(a, ty, shiftamt=False):
    """``bfind{.shiftamt}.type d, a`` -- PTX ISA 9.0 section 9.7.1.16.

    Bit position of the most significant non-sign bit of ``a`` (u32/u64: most significant
    1; s32/s64: most significant 0 of a negative, 1 of a non-negative value).  With
    ``shiftamt=True`` returns ``msb - position`` (the left shift that brings the bit to the
    msb).  Returns uint32, ``0xFFFFFFFF`` when no such bit exists (0, or -1 if signed).
    """
    t = _ty(ty)
    u = _u(a, t)
    if t.signed:
        u = np.where(_s(a, t) < 0, ~u, u)
    pos = _msb_index(u, t.bits)
    if shiftamt:
        val = np.int64(t.bits - 1) - pos
    else:
        val = pos
    r = np.where(pos < 0, np.int64(0xFFFFFFFF), val)
    return _out(r.astype(np.uint32), np.uint32)


def _swar_masks(bits: int):
    out = []
    s = 1
    while s < bits:
        block = (1 << s) - 1
        m = 0
        for k in range(0, bits, 2 * s):
            m |= block << k
        out.append((s, m))
        s *= 2
    return out


@_quiet
def brev(a, ty):
    """``brev.type d, a`` -- PTX ISA 9.0 section 9.7.1.18.

    Bit reversal: bit ``i`` of ``d`` is bit ``n-1-i`` of ``a`` (``.b32``/``.b64``, also
    16-bit).  Dtype of ``ty``.
    """
    t = _ty(ty)
    x = _u(a, t)
    for s, m in _swar_masks(t.bits):
        sh, mk = t.udt(s), t.udt(m)
        x = ((x >> sh) & mk) | ((x & mk) << sh)
    return _out(x, t.dt)


def _pos_len(pos, length, t: _Ty):
    """bfe/bfi position and length operands (``.u32``) as int64 arrays.

    PTX ISA 9.0 restricts both to bits 7..0 ("restricted to the 8-bit value range
    0..255").  The H100 does so for the 32-bit forms, but its 64-bit ``bfe``/``bfi`` use
    the whole 32-bit value (measured: ``bfe.u64 a, 0, 256`` returns ``a``, where the
    manual's ``len = 256 & 0xff = 0`` would give 0).  We follow the hardware.
    """
    p = _arr(pos, np.uint32).astype(np.int64)
    ln = _arr(length, np.uint32).astype(np.int64)
    if t.bits == 32:
        p, ln = p & np.int64(0xFF), ln & np.int64(0xFF)
    return p, ln


def _low_mask(length: np.ndarray, t: _Ty) -> np.ndarray:
    """Unsigned mask with the low ``length`` bits set, 0 <= length <= n (int64 input)."""
    full = length >= t.bits
    sh = np.minimum(length, t.bits - 1).astype(t.udt)
    return np.where(full, t.umax, (t.udt(1) << sh) - t.udt(1))


@_quiet
def bfe(a, pos, length, ty):
    """``bfe.type d, a, b, c`` -- PTX ISA 9.0 section 9.7.1.19.

    Extract the bit field of ``a`` (u32/s32/u64/s64) that starts at bit ``pos`` and is
    ``length`` bits long (``pos``, ``length``: ``.u32`` operands).  Bits of the field
    beyond the msb of ``a`` and all bits above the field are filled with the sign bit
    ``a[min(pos+len-1, msb)]`` (signed types, ``len > 0``) or with 0 (unsigned types or
    ``len == 0``).  Dtype of ``ty``.

    For u32/s32 only bits 7..0 of ``pos`` and ``length`` are used, as the manual says.
    For u64/s64 the whole 32-bit values are used, because that is what an H100 does
    (the manual's 0..255 restriction is not applied there; see :func:`_pos_len`).
    """
    t = _ty(ty)
    n = t.bits
    u = _u(a, t)
    p, ln = _pos_len(pos, length, t)
    inside = p < n
    shifted = np.where(inside, u >> np.minimum(p, n - 1).astype(t.udt), t.udt(0))
    taken = np.clip(np.minimum(ln, n - p), 0, n)  # bits actually read from a
    mask = _low_mask(taken, t)
    field = shifted & mask
    if t.signed:
        sb = np.minimum(p + ln - 1, n - 1)
        sbit = ((u >> np.maximum(sb, 0).astype(t.udt)) & t.udt(1)) != 0
        sbit = sbit & (ln != 0)
        field = field | np.where(sbit, ~mask, t.udt(0))
    return _out(field, t.dt)


@_quiet
def bfi(a, b, pos, length, ty):
    """``bfi.type f, a, b, c, d`` -- PTX ISA 9.0 section 9.7.1.20.

    Insert the low bits of ``a`` into ``b`` (``.b32``/``.b64``) at bit ``pos`` for
    ``length`` bits (``.u32`` operands); bits that would land beyond the msb are dropped,
    and ``len == 0`` or ``pos > msb`` returns ``b``.  Dtype of ``ty``.

    For b32 only bits 7..0 of ``pos`` and ``length`` are used, as the manual says; for
    b64 the whole 32-bit values are used, as measured on an H100 (see :func:`_pos_len`).
    """
    t = _ty(ty)
    n = t.bits
    ua, ub = _u(a, t), _u(b, t)
    p, ln = _pos_len(pos, length, t)
    taken = np.clip(np.minimum(ln, n - p), 0, n)
    ps = np.minimum(p, n - 1).astype(t.udt)
    mask = _low_mask(taken, t) << ps  # taken == 0 whenever p > msb
    return _out((ub & ~mask) | ((ua << ps) & mask), t.dt)


# --------------------------------------------------------------------------------------
# 9.7.8 Logic and shift
# --------------------------------------------------------------------------------------


def _logic_operands(a, b, ty):
    if ty is not None and ty.lstrip(".") == "pred":
        return _arr(a, np.bool_), _arr(b, np.bool_), np.bool_
    if ty is not None:
        t = _ty(ty)
        return _arr(a, t.dt), _arr(b, t.dt), t.dt
    a = np.asarray(a)
    b = _arr(b, a.dtype)
    return a, b, a.dtype


@_quiet
def bit_and(a, b, ty=None):
    """``and.type d, a, b`` -- PTX ISA 9.0 section 9.7.8.1.

    Bitwise AND for ``.b16/.b32/.b64`` (any integer ``ty``) and logical AND for ``.pred``
    (numpy bool arrays).  Without ``ty`` the dtype of ``a`` is used.  Result dtype = that.
    """
    a, b, dt = _logic_operands(a, b, ty)
    return _out(np.bitwise_and(a, b), dt)


@_quiet
def bit_or(a, b, ty=None):
    """``or.type d, a, b`` -- PTX ISA 9.0 section 9.7.8.2.  Bitwise/logical OR, as
    :func:`bit_and`."""
    a, b, dt = _logic_operands(a, b, ty)
    return _out(np.bitwise_or(a, b), dt)


@_quiet
def bit_xor(a, b, ty=None):
    """``xor.type d, a, b`` -- PTX ISA 9.0 section 9.7.8.3.  Bitwise/logical XOR, as
    :func:`bit_and`."""
    a, b, dt = _logic_operands(a, b, ty)
    return _out(np.bitwise_xor(a, b), dt)


@_quiet
def bit_not(a, ty=None):
    """``not.type d, a`` -- PTX ISA 9.0 section 9.7.8.4.

    One's complement for integer types, logical NOT for ``.pred`` (bool arrays).  Without
    ``ty`` the dtype of ``a`` is used.
    """
    if ty is not None:
        dt = np.bool_ if ty.lstrip(".") == "pred" else _ty(ty).dt
        x = _arr(a, dt)
    else:
        x = np.asarray(a)
    return _out(np.invert(x), x.dtype)


@_quiet
def cnot(a, ty=None):
    """``cnot.type d, a`` -- PTX ISA 9.0 section 9.7.8.5.

    C-style logical negation: ``d = (a == 0) ? 1 : 0`` in the dtype of ``ty``
    (``.b16/.b32/.b64``).  For ``.pred`` / bool input: ``d = not a``.  Without ``ty`` the
    dtype of ``a`` is used.
    """
    if ty is not None and ty.lstrip(".") == "pred":
        x = _arr(a, np.bool_)
        return _out(np.logical_not(x), np.bool_)
    if ty is not None:
        x = _arr(a, _ty(ty).dt)
    else:
        x = np.asarray(a)
    if x.dtype == np.bool_:
        return _out(np.logical_not(x), np.bool_)
    return _out((x == 0).astype(x.dtype), x.dtype)


@_quiet
def shl(a, amount, ty):
    """``shl.type d, a, b`` -- PTX ISA 9.0 section 9.7.8.8.

    ``a << amount`` for b16/b32/b64 (any integer ``ty``); ``amount`` is a ``.u32`` value
    and amounts >= n are clamped to n, giving 0.  Dtype of ``ty``.
    """
    t = _ty(ty)
    u = _u(a, t)
    amt = _arr(amount, np.uint32)
    sh = np.minimum(amt, np.uint32(t.bits - 1)).astype(t.udt)
    return _out(np.where(amt >= t.bits, t.udt(0), u << sh), t.dt)


@_quiet
def shr(a, amount, ty):
    """``shr.type d, a, b`` -- PTX ISA 9.0 section 9.7.8.9.

    Right shift by the ``.u32`` ``amount`` (clamped to n).  ``.s16/.s32/.s64`` shift
    arithmetically (sign fill; amounts >= n give 0 or -1), unsigned and ``.b`` types
    logically (amounts >= n give 0).  Dtype of ``ty``.
    """
    t = _ty(ty)
    amt = _arr(amount, np.uint32)
    clamp = np.minimum(amt, np.uint32(t.bits - 1))
    if t.signed:
        return _out(_s(a, t) >> clamp.astype(t.sdt), t.dt)
    u = _u(a, t)
    return _out(np.where(amt >= t.bits, t.udt(0), u >> clamp.astype(t.udt)), t.dt)


@_quiet
def shf(a, b, amount, direction, mode):
    """``shf.dir.mode.b32 d, a, b, c`` (funnel shift) -- PTX ISA 9.0 section 9.7.8.7.

    ``a``, ``b``: b32 (uint32) arrays; ``b:a`` forms a 64-bit value (``b`` = bits 63..32).
    ``amount`` (``.u32``) is clamped to 32 (``mode="clamp"``) or taken modulo 32
    (``mode="wrap"``).  ``direction="l"`` returns the upper 32 bits of the value shifted
    left, ``"r"`` the lower 32 bits of the value shifted right.  Returns uint32.
    """
    direction = direction.lstrip(".")
    mode = mode.lstrip(".")
    ua = _arr(a, np.uint32).view(np.uint32).astype(np.uint64)
    ub = _arr(b, np.uint32).view(np.uint32).astype(np.uint64)
    amt = _arr(amount, np.uint32)
    if mode == "clamp":
        n = np.minimum(amt, np.uint32(32))
    elif mode == "wrap":
        n = amt & np.uint32(31)
    else:
        raise ValueError(f"shf mode must be clamp or wrap, not {mode!r}")
    n = n.astype(np.uint64)
    v = (ub << _S32) | ua
    if direction == "l":
        r = (v << n) >> _S32
    elif direction == "r":
        r = (v >> n) & _M32
    else:
        raise ValueError(f"shf direction must be l or r, not {direction!r}")
    return _out(r.astype(np.uint32), np.uint32)


# --------------------------------------------------------------------------------------
# 9.7.9.7 prmt
# --------------------------------------------------------------------------------------

# Byte-source table of the mode forms (PTX ISA 9.0 section 9.7.9.7): for each c[1:0] the
# source byte index of d.b0, d.b1, d.b2, d.b3 (the manual lists them as b3 b2 b1 b0).
_PRMT_MODES = {
    "f4e": ((0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)),
    "b4e": ((0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)),
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
    "ecl": ((0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)),
    "ecr": ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)),
    "rc16": ((0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3)),
}


@_quiet
def prmt(a, b, c, mode=None):
    """``prmt.b32{.mode} d, a, b, c`` -- PTX ISA 9.0 section 9.7.9.7.

    Byte permute of the 8-byte source ``{b, a}`` (``a`` = bytes 0..3, ``b`` = bytes 4..7);
    all operands and the result are b32 (uint32).  Default mode (``mode=None``): nibble
    ``k`` of ``c`` selects result byte ``k``: bits 2..0 pick the source byte, bit 3 set
    replaces it by its sign (0xFF if its bit 7 is set, else 0x00).  ``mode`` in ``f4e b4e
    rc8 ecl ecr rc16``: ``c[1:0]`` picks one of four fixed byte patterns (no sign
    replication).
    """
    ua = _arr(a, np.uint32).view(np.uint32).astype(np.uint64)
    ub = _arr(b, np.uint32).view(np.uint32).astype(np.uint64)
    uc = _arr(c, np.uint32).view(np.uint32)
    src = (ub << _S32) | ua
    key = None if mode is None else mode.lstrip(".")
    result = np.zeros(np.broadcast(src, uc).shape, dtype=np.uint64)
    if not key:
        for k in range(4):
            ctl = ((uc >> np.uint32(4 * k)) & np.uint32(0xF)).astype(np.uint64)
            byte = (src >> (np.uint64(8) * (ctl & np.uint64(7)))) & np.uint64(0xFF)
            sign = (ctl & np.uint64(8)) != 0
            byte = np.where(sign, np.where(byte >= 0x80, np.uint64(0xFF), np.uint64(0)), byte)
            result = result | (byte << np.uint64(8 * k))
    else:
        if key not in _PRMT_MODES:
            raise ValueError(f"prmt mode must be one of {sorted(_PRMT_MODES)}, not {mode!r}")
        table = np.asarray(_PRMT_MODES[key], dtype=np.uint64)  # [c & 3, k]
        sel = (uc & np.uint32(3)).astype(np.intp)
        for k in range(4):
            idx = table[:, k][sel]
            byte = (src >> (np.uint64(8) * idx)) & np.uint64(0xFF)
            result = result | (byte << np.uint64(8 * k))
    return _out(result.astype(np.uint32), np.uint32)


# --------------------------------------------------------------------------------------
# 9.7.6 Comparison and selection
# --------------------------------------------------------------------------------------

_CMP = {
    "eq": np.equal, "ne": np.not_equal,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}
_UCMP = {"lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}


@_quiet
def compare(op, a, b, ty):
    """``setp.CmpOp.type p, a, b`` for integer types -- PTX ISA 9.0 section 9.7.6.2.

    ``op`` in ``eq ne lt le gt ge`` compares signed for s types and unsigned for u/b
    types; ``lo ls hi hs`` (lower, lower-or-same, higher, higher-or-same) always compare
    the operands' bit patterns as unsigned.  Returns a bool array.
    """
    t = _ty(ty)
    op = op.lstrip(".")
    if op in _UCMP:
        return _out(_UCMP[op](_u(a, t), _u(b, t)), np.bool_)
    if op in _CMP:
        if t.signed:
            return _out(_CMP[op](_s(a, t), _s(b, t)), np.bool_)
        return _out(_CMP[op](_u(a, t), _u(b, t)), np.bool_)
    raise ValueError(f"unsupported integer comparison {op!r}")


@_quiet
def selp(a, b, pred, ty=None):
    """``selp.type d, a, b, c`` -- PTX ISA 9.0 section 9.7.6.3.

    ``d = pred ? a : b`` lane-wise; ``pred`` is a bool array/scalar.  The result has the
    dtype of ``ty`` if given, else that of ``a`` (``b`` is converted to it).
    """
    if ty is not None:
        dt = np.bool_ if ty.lstrip(".") == "pred" else _ty(ty).dt
        x = _arr(a, dt)
    else:
        x = np.asarray(a)
        dt = x.dtype
    y = _arr(b, dt)
    p = _arr(pred, np.bool_)
    return _out(np.where(p, x, y), dt)
