"""Models of the H100's multi-function unit (MUFU): the bits of the ``.approx`` special functions.

ptxas turns each PTX ``.approx`` special function into one ``MUFU`` instruction, in the
non-``.ftz`` forms with a few ordinary instructions around it (``isa/fp.py`` models those
with its exact ``mul``/``add``; the SASS is in ``validation/probes/sfu_measure.py``'s output).
This module models the ``MUFU`` operations themselves, lane-vectorised, on float32 bit
patterns (``np.uint32`` arrays in and out).

The unit is a table-driven quadratic interpolator (Oberman & Siu, "A high-performance
area-efficient multifunction interpolator", ARITH 2005): the top bits of the reduced
argument select a segment, and the remaining 16 or 17 bits ``x`` give
``q = C0 + C1*x + C2*sq(x)``, where the squarer is truncated: ``sq(x)`` sums only the
partial products ``x_a x_b 2**(a+b)`` with ``a + b >= THR`` (16 for rcp, 18 for the others)
and is shifted right by ``THR + 1``.  The result is ``floor(q + 1/2)`` in units of:

=============  ==========================================================================
function       reduction, segments, units
=============  ==========================================================================
``rcp``        ``1/1.m``: 128 segments (top 7 mantissa bits), units of 2**-24
``rsq``        ``1/sqrt(1.m * 2**(e & 1))``: 64 segments each for [1, 2) and [2, 4)
               (top 6 mantissa bits, the exponent's parity above), units of 2**-24
``sqrt``       ``sqrt(1.m * 2**(e & 1))``: as rsq, units of 2**-23
``ex2``        ``|x|`` is truncated to fixed point with 23 fraction bits, a negative
               operand's one's-complemented (integers excepted); ``2**frac`` from 64
               segments in units of 2**-23, scaled by ``2**floor``
``lg2``        ``log2(1.m)`` in fixed point (units of 2**-36) from 64 segments; the
               result is ``e + that``, rounded toward zero to float32
``sin cos``    the operand ``t`` (turns) is truncated to fixed point with 25 fraction
               bits; the quadrant picks +-S of the remaining 23 bits or of their one's
               complement, S from 64 segments in units of 2**-37, rounded to nearest
=============  ==========================================================================

MUFU flushes subnormal operands and results to sign-preserving zero (the ``.ftz``
behaviour; the non-``.ftz`` PTX forms scale around it).  NaN operands give the canonical
NaN ``0x7fffffff``.

The coefficients (``isa/sfu_tables.py``, 64-128 segments x 3 float64 per function) are the
per-segment minimax solutions of "every measured H100 output is ``floor(q + 1/2)``", fitted
to every float32 of whole binades (``validation/probes/sfu_measure.py`` measures,
``validation/probes/sfu_fit.py`` fits).  rcp and ex2 reproduce every measured output; the
others a measured fraction (``isa/fp.py``'s table), as the unit truncates inside beyond
what is modelled here (lg2: the product ``C2*sq`` itself).  Sources: the paper above; PTX
ISA 9.0 sections 9.7.3.13-22 (special values); the measurements.

Dependencies: numpy only.
"""

from __future__ import annotations

import base64

import numpy as np

from isa import sfu_tables

__all__ = ["rcp", "rsq", "sqrt", "ex2", "lg2", "sin", "cos", "CANONICAL_NAN"]

#: The NaN every MUFU operation returns for a NaN (or invalid) operand.
CANONICAL_NAN = 0x7FFFFFFF

_U32 = np.uint32
_I64 = np.int64
_CACHE: dict = {}


def _table(name):
    t = _CACHE.get(name)
    if t is None:
        raw = base64.b64decode("".join(sfu_tables._B64[name]))
        t = _CACHE[name] = np.frombuffer(raw, dtype="<f8").reshape(-1, 3)
    return t


def _trunc_sq(xl, thr):
    """Truncated square of the in-segment argument ``xl`` (int64, <= 17 bits): the sum of the
    partial products ``x_a * x_b * 2**(a+b)`` with ``a + b >= thr`` (the squarer of the
    interpolator drops the others), shifted right by ``thr + 1``."""
    s = np.zeros_like(xl)
    for a in range(17):
        k = max(thr - a, 0)
        s += ((xl >> a) & 1) * (((xl >> k) << k) << a)
    return s >> (thr + 1)


def _interp(name, seg, xl):
    """``floor(c0 + c1*u + c2*j + 1/2)`` of segment ``seg`` (int64) at the in-segment
    argument ``xl`` (int64, at most 17 bits): ``u = xl * 2**-17`` and ``j`` the truncated
    square of ``xl``; float64 throughout (exact to far below 1/2 unit)."""
    c = _table(name)[seg]
    thr = sfu_tables._THR[name]
    u = xl.astype(np.float64) * 2.0 ** -17
    j = _trunc_sq(xl, thr).astype(np.float64) * 2.0 ** (thr - 33)
    return np.floor(c[..., 0] + u * c[..., 1] + j * c[..., 2] + 0.5).astype(_I64)


def _split(bits):
    b = np.asarray(bits, dtype=_U32)
    sign = (b & _U32(0x80000000)).astype(_I64)
    E = ((b >> _U32(23)) & _U32(0xFF)).astype(_I64)
    m = (b & _U32(0x7FFFFF)).astype(_I64)
    return b, sign, E, m


def _compose(sign, E_out, Y):
    """float32 bits of ``Y * 2**(E_out - 127 - 23)`` for a significand ``Y`` in
    [2**23, 2**24] (int64), with the sign; results below 2**-126 flush to zero, results
    at or above 2**128 become infinity."""
    v = (E_out << 23) + (Y - (1 << 23))
    v = np.where(v < (1 << 23), 0, np.where(v >= (0xFF << 23), 0xFF << 23, v))
    return (v | sign).astype(_U32)


def rcp(bits):
    """MUFU.RCP: float32 bits -> bits of ``1/x`` (subnormal operands are zeros, subnormal
    results flush to zero; 1/+-0 = +-inf, 1/+-inf = +-0, NaN -> 0x7fffffff)."""
    b, sign, E, m = _split(bits)
    Y = np.where(m == 0, 1 << 24, _interp("rcp", m >> 16, m & 0xFFFF))
    out = _compose(sign, 253 - E, Y)
    out = np.where(E == 0, (sign | 0x7F800000).astype(_U32), out)
    out = np.where(E == 0xFF, np.where(m == 0, sign.astype(_U32), _U32(CANONICAL_NAN)), out)
    return out.astype(_U32)


def _rsq_sqrt(bits, name):
    b, sign, E, m = _split(bits)
    e = E - 127
    p = e & 1
    h = (e - p) >> 1
    Y = _interp(name, (p << 6) | (m >> 17), m & 0x1FFFF)   # 64 segments each for [1,2), [2,4)
    exact = (m == 0) & (p == 0)
    if name == "rsq":
        Y = np.where(exact, 1 << 24, Y)
        return sign, E, m, _compose(sign, 126 - h, Y)
    Y = np.where(exact, 1 << 23, Y)
    return sign, E, m, _compose(sign, 127 + h, Y)


def rsq(bits):
    """MUFU.RSQ: float32 bits -> bits of ``1/sqrt(x)`` (+-0 and subnormals -> +-inf,
    +inf -> +0, negative numbers, -inf and NaN -> 0x7fffffff)."""
    sign, E, m, out = _rsq_sqrt(bits, "rsq")
    out = np.where(E == 0, (sign | 0x7F800000).astype(_U32), out)
    out = np.where((E == 0xFF) & (m == 0) & (sign == 0), _U32(0), out)
    out = np.where(((sign != 0) & (E != 0)) | ((E == 0xFF) & (m != 0)), _U32(CANONICAL_NAN), out)
    return out.astype(_U32)


def sqrt(bits):
    """MUFU.SQRT: float32 bits -> bits of ``sqrt(x)`` (+-0 and subnormals -> +-0,
    +inf -> +inf, negative numbers, -inf and NaN -> 0x7fffffff)."""
    sign, E, m, out = _rsq_sqrt(bits, "sqrt")
    out = np.where(E == 0, sign.astype(_U32), out)
    out = np.where((E == 0xFF) & (m == 0) & (sign == 0), _U32(0x7F800000), out)
    out = np.where(((sign != 0) & (E != 0)) | ((E == 0xFF) & (m != 0)), _U32(CANONICAL_NAN), out)
    return out.astype(_U32)


def ex2(bits):
    """MUFU.EX2: float32 bits -> bits of ``2**x``.  The magnitude of the operand is
    truncated to fixed point with 23 fraction bits, ``F``; a negative operand becomes the
    one's complement ``-F - 1`` (not ``-F``: 2**x comes out about 0.7 units of 2**-23 low),
    except that integers stay exact (``-F``);
    ``2**frac`` is interpolated, scaled by ``2**floor``.  Subnormal operands give 1.0, results
    below 2**-126 flush to +0, ``x >= 128`` gives +inf, -inf -> +0, NaN -> 0x7fffffff."""
    with np.errstate(all="ignore"):
        b, sign, E, m = _split(bits)
        ax = np.abs(b.view(np.float32).astype(np.float64))
        ax = np.where((E == 0) | (E == 0xFF), 0.0, np.minimum(ax, 256.0))
        F = np.floor(ax * float(1 << 23)).astype(_I64)
        low = F & ((1 << 23) - 1)
        F = np.where((sign != 0) & (E != 0), np.where(low == 0, -F, ~F), F)   # negative
        i = F >> 23
        f = F & ((1 << 23) - 1)
        Y = np.where(f == 0, 1 << 23, _interp("ex2", f >> 17, f & 0x1FFFF))
        out = _compose(np.zeros_like(sign), 127 + i, Y)
        out = np.where(E == 0xFF, np.where(m != 0, _U32(CANONICAL_NAN),
                                           np.where(sign != 0, _U32(0), _U32(0x7F800000))), out)
        return out.astype(_U32)


#: lg2's fixed-point grid: log2(1.m) is a multiple of 2**-LG2_FRAC before e is added.
LG2_FRAC = 36


def lg2(bits):
    """MUFU.LG2: float32 bits -> bits of ``log2(x)``: ``e + P * 2**-36`` rounded toward zero,
    ``P`` the fixed-point ``log2(1.m)``.  +-0 and subnormals -> -inf, +inf -> +inf,
    negative numbers, -inf and NaN -> 0x7fffffff."""
    with np.errstate(all="ignore"):
        b, sign, E, m = _split(bits)
        e = E - 127
        P = np.where(m == 0, 0, _interp("lg2", m >> 17, m & 0x1FFFF))
        v = e.astype(np.float64) + P.astype(np.float64) * 2.0 ** -LG2_FRAC    # exact
        r = v.astype(np.float32)
        out = r.view(_U32) - (np.abs(r.astype(np.float64)) > np.abs(v)).astype(_U32)
        out = np.where(E == 0, _U32(0xFF800000), out)
        out = np.where((E == 0xFF) & (m == 0) & (sign == 0), _U32(0x7F800000), out)
        out = np.where(((sign != 0) & (E != 0)) | ((E == 0xFF) & (m != 0)), _U32(CANONICAL_NAN),
                       out)
        return out.astype(_U32)


#: sin/cos fixed-point grid: S(r) values are multiples of 2**-SIN_FRAC before rounding.
SIN_FRAC = 37
#: The FMUL.RZ constant ptxas multiplies by before MUFU.SIN/COS: 1/(2 pi) as float32.
SIN_SCALE = 0x3E22F983


def _sincos(bits, quarter):
    with np.errstate(all="ignore"):
        b, sign, E, m = _split(bits)
        M = m | (1 << 23)
        sh = E - 127 + 2                                  # |t| * 2**25 = M * 2**sh
        k = np.where(sh >= 0, M << np.clip(sh, 0, 40), M >> np.clip(-sh, 0, 63))
        k = np.where(E == 0, 0, k) & ((1 << 25) - 1)
        q = ((k >> 23) + quarter) & 3
        r = k & ((1 << 23) - 1)
        odd = (q & 1) == 1
        r = np.where(odd, ((1 << 23) - 1) - r, r)         # odd quadrants: one's complement
        P = np.where(r == 0, 0, _interp("sin", r >> 17, r & 0x1FFFF))
        v = (P.astype(np.float64) * 2.0 ** -SIN_FRAC).astype(np.float32).view(_U32)
        neg = (q >= 2) ^ ((sign != 0) & (quarter == 0))
        out = v | np.where(neg, _U32(0x80000000), _U32(0))
        out = np.where(E == 0xFF, _U32(CANONICAL_NAN), out)
        return out.astype(_U32)


def sin(bits):
    """MUFU.SIN: float32 bits of ``t`` (turns: ptxas multiplies the radians by 1/(2 pi)
    first) -> bits of ``sin(2 pi t)``.  ``|t|`` is truncated to fixed point with 25 fraction
    bits (``k``); with ``r = k mod 2**23`` the quadrant ``k >> 23`` picks ``+-S(r)`` or
    ``+-S(2**23 - 1 - r)`` (the one's complement, not ``2**23 - r``: sin(pi) is +0), ``S``
    interpolated in units of 2**-37 and rounded to nearest; odd in ``t``.
    Subnormal ``t`` is zero; +-inf and NaN -> 0x7fffffff."""
    return _sincos(bits, 0)


def cos(bits):
    """MUFU.COS: as :func:`sin`, one quadrant on (``k + 2**23``), even in ``t``."""
    return _sincos(bits, 1)
