"""Lane-vectorised, bit-exact semantics of the PTX floating-point instructions.

What this module owns
---------------------
The value semantics of PTX floating-point arithmetic ``add sub mul fma mad div rcp sqrt``,
the ``.approx`` special functions ``rsqrt ex2 lg2 sin cos tanh`` (and ``div/rcp/sqrt.approx``,
``div.full``), ``min max abs neg``, floating-point ``setp`` comparisons and every scalar form
of ``cvt`` between the types ``s8 u8 s16 u16 s32 u32 s64 u64 f16 bf16 f32 f64``.

Every function works on all lanes at once: operands are numpy arrays (any shape, length 0
included; they are broadcast together) or numpy scalars, and the result is a new numpy array
of the result dtype (0-d when every operand is 0-d).  There are no per-element Python loops.
No function raises or emits a numpy warning for any operand *value*; a mode or type string
the ISA does not define raises :class:`ValueError` (a programming error of the caller).

Types: ``f16`` is ``np.float16``, ``f32`` ``np.float32``, ``f64`` ``np.float64`` and
``bf16`` is ``np.uint16`` holding the raw bfloat16 bits (numpy has no bfloat16).  The type is
taken from the operand dtype (``uint16`` means ``bf16``) unless ``ty=`` names it.

Dependencies: numpy only (no simpy, no cupy).

Exactness
---------
Every operation with an IEEE rounding modifier (``.rn .rz .rm .rp``) is correctly rounded in
every mode, subnormals, overflow (to infinity or to the largest finite value, depending on the
direction) and the signs of exact zeros included:

* The exact result is reduced to an integer significand ``M`` (at least p+1 bits), a binary
  exponent and a *sticky* bit (is anything non-zero below ``M``), and one integer rounding
  routine (:func:`_round_int`) rounds that to the destination format.  That routine is the
  only place where rounding happens.
* ``add/sub`` (all types): the float64 sum ``s`` and its exact error ``t`` (Fast2Sum with
  the operands ordered by magnitude, error-free whenever ``s`` does not overflow; f64 sums
  that overflow are recomputed on halved operands, which is exact because they are then
  >= 2**1022).  ``s`` is the
  round-to-nearest value of the exact sum and ``sign(t)`` says on which side the exact sum
  lies, which is all a directed mode needs.  For round-to-nearest alone, rounding the
  float64 sum/product/quotient/root of two f32 (or f16, bf16) values once more to f32 would
  already be correct, because float64 has p' = 53 >= 2p + 2 = 50 bits (Figueroa: double
  rounding is innocuous for one basic operation when p' >= 2p + 2); f32 ``mul`` is even exact
  in float64 (24 + 24 = 48 <= 53 bits).  Directed modes need the residual, which is why the
  residual's sign is always carried.
* ``mul.f64``: the exact 106-bit product of the two 53-bit integer significands, computed
  with 32-bit limbs in uint64.
* ``fma`` f32/f16/bf16: ``a*b`` is exact in float64 (at most 48 bits), then TwoSum as above:
  one rounding.  Rounding the float64 value ``a*b + c`` instead double-rounds in rare ties
  (see the tests for a constructed case).  ``fma.f64``: the exact product (106 bits) and the
  aligned addend are added in a 256-bit integer (four uint64 limbs); an addend (or product)
  more than 64 bits below the other's last bit only contributes its sign, as a sticky bit.
* ``div``/``rcp``: the float64 quotient of the normalised 53-bit significands is the
  round-to-nearest quotient; the sign of the exact remainder ``A*2**k - q*B`` (128-bit integer
  products) says on which side the exact quotient lies.  ``sqrt`` likewise compares the
  operand with ``r*r`` exactly.
* int -> float conversions: the float64 value plus the sign of the exact integer difference.

PTX ISA 9.0 references (``docs.nvidia.com/cuda/parallel-thread-execution``)
-------------------------------------------------------------------------
* 9.7.3 Floating-Point Instructions (intro: ``.ftz``, ``.sat``, NaN payloads), 9.7.3.3 add,
  9.7.3.4 sub, 9.7.3.5 mul, 9.7.3.6 fma, 9.7.3.7 mad, 9.7.3.8 div, 9.7.3.9 abs, 9.7.3.10 neg,
  9.7.3.11 min, 9.7.3.12 max, 9.7.3.13 rcp, 9.7.3.14 rcp.approx.ftz.f64, 9.7.3.15 sqrt,
  9.7.3.16 rsqrt, 9.7.3.18 sin, 9.7.3.19 cos, 9.7.3.20 lg2, 9.7.3.21 ex2, 9.7.3.22 tanh.
* 9.7.4 Half Precision Floating-Point Instructions: 9.7.4.1 add, .2 sub, .3 mul, .4 fma,
  .5 neg, .6 abs, .7 min, .8 max, .9 tanh, .10 ex2 (f16 and bf16).
* 9.3.1.2 Floating Point Comparisons (ordered / unordered / num / nan), used by setp.
* 9.7.9.21 Data Movement and Conversion Instructions: cvt (integer and float rounding
  modifiers, saturation, NaN -> integer rules, ``.ftz``).

Rules the manual states and this module implements
--------------------------------------------------
* ``.ftz`` flushes subnormal inputs and results to sign-preserving zero.  The manual defines
  it for f32 instructions, for the f16 half-precision instructions (9.7.4: ``add.ftz.f16``
  ...) and for ``ex2.approx.ftz.bf16``; here ``ftz=True`` flushes for f16, bf16 and f32 and
  is ignored for f64 arithmetic (which has no ``.ftz``).  The manual does not say whether a
  result is "subnormal" before or after rounding; an H100 flushes a result that is tiny
  *after rounding to the destination precision with an unbounded exponent* (IEEE tininess
  after rounding): ``mul.rn.ftz.f32(0.5, 0x00FFFFFF)`` = +0.0 although it rounds to 2**-126,
  but ``fma.rn.ftz.f32(2**-126, 2**-126, -2**-126)`` = -2**-126.  That rule is implemented.
* ``.sat`` clamps the result to [0.0, 1.0]; NaN results (and -0.0) become +0.0 (9.7.3, 9.7.4).
* ``.rm`` exact zero sums are -0.0 (IEEE 754 section 6.3; confirmed on an H100).
* ``min``/``max`` (9.7.3.11-12, 9.7.4.7-8): one NaN operand -> the other operand, both NaN ->
  NaN, ``.NaN`` -> canonical NaN if either is NaN, and -0.0 < +0.0.
* ``abs``/``neg`` (9.7.3.9-10, 9.7.4.5-6): sign-bit operations on non-NaN values.
* cvt float -> integer: the result is clamped to the destination range by default ("For
  float-to-integer conversions, the result is clamped to the destination range by default");
  NaN gives 0 if the source is not f64 and the destination is not s64/u64, otherwise
  ``1 << (width - 1)`` (9.7.9.21; the H100 agrees).

NaN results (the manual leaves them unspecified; pinned to an NVIDIA H100, sm_90)
-------------------------------------------------------------------------------
9.7.3: "NaN payloads are supported for double-precision instructions ... Single-precision
instructions return an unspecified NaN"; 9.7.4: "Half-precision instructions return an
unspecified NaN"; 9.7.3.9-10 "For abs.f64, NaN input is passed through unchanged", other
abs/neg NaNs "unspecified".  Measured on an H100 (probe: one inline-PTX instruction per
kernel through CuPy; 654 instruction variants, each on special-value grids plus 40000-200000
random operands of every class, compared bit for bit with this module):

* f32 results: always the canonical NaN ``0x7FFFFFFF`` (arithmetic, special functions,
  min/max, abs, neg, ``cvt`` to f32 except from f64 and ``cvt.f32.bf16``); f16 and bf16
  results: ``0x7FFF``.  (``NAN_BITS``.)
* f64 results: a NaN operand is returned quieted (bit 51 set), sign and payload kept.  If
  several operands are NaN the winner is b, then a for ``add sub mul min max``; b, c, a for
  ``fma``; a, b for ``div``.  ``abs.f64`` and ``neg.f64`` of a NaN return it quieted and
  unchanged in sign.  A NaN created from non-NaN operands (inf - inf, 0 * inf, 0/0,
  sqrt(-x)) is ``F64_DEFAULT_NAN = 0xFFF8000000000000``.
* ``cvt`` from or to f64 keeps sign and leading payload bits and sets the quiet bit (with
  ``.ftz``, an f32 NaN source first becomes ``0x7FFFFFFF``); ``cvt.f32.bf16`` without ``.ftz``
  shifts the bits unchanged; every other float -> float ``cvt`` gives the canonical NaN.
* ``rcp/rsqrt.approx.ftz.f64``: ``0x7FFFFFFF00000000`` (as the manual states).

Every exactly specified instruction variant (all modes of add/sub/mul/fma/div/rcp/sqrt for
f32 and f64, rn for f16/bf16, ``.ftz``, ``.sat``, min/max/abs/neg, setp, and every scalar
cvt form ptxas accepts) reproduced the H100 bit for bit: 586 variants, 92 million lanes in
the last run.  ptxas (CUDA 13) rejects cvt between bf16 and s8/u8 and the rm/rp forms of
cvt between bf16 and s16/u16; this module still defines them by the general rule.

The ``.approx`` instructions: the H100's algorithms
---------------------------------------------------
``div/rcp/sqrt/rsqrt/ex2/lg2/sin/cos.approx.f32`` (both ``.ftz`` forms) and
``ex2.approx.f16/.f16x2/.ftz.bf16`` are computed as ptxas compiles them for sm_90: one MUFU
operation (:mod:`isa.sfu`, the H100's interpolator with coefficient tables fitted to
exhaustive measurements) plus the ordinary instructions ptxas puts around it (the functions
below say which).  ``tanh`` (f32, f16, bf16), ``rsqrt.approx.f64`` and the f64 ``.ftz``
reciprocals are still computed accurately in float64 and rounded to nearest.  The manual's
bounds and special values, and the agreement with an H100 measured over every input of
``validation/probes/sfu_measure.py`` (whole binades, edge values and a grid over all bit
patterns; per variant in ``validation/probes/sfu_h100_summary.json``):

=========================  ==========================================  ==========================
instruction                maximum error stated by the PTX ISA 9.0     special values (exact)
=========================  ==========================================  ==========================
div.approx.f32             2 ulp for ``|b|`` in [2**-126, 2**126];     IEEE (x/0 = inf, 0/0 =
                           for 2**126 < ``|b|`` < 2**128 the result    NaN, ...)
                           is pinned: NaN if ``a`` is inf, else a
                           sign-preserving zero (implemented)
div.full.f32               2 ulp across the full range (computed as    IEEE
                           the H100's SASS: scaled a * MUFU.RCP(b))
rcp.approx.f32             1 ulp across the full range                 -Inf->-0, -0->-Inf,
                                                                       +0->+Inf, +Inf->+0
rcp.approx.ftz.f64         "gross approximation" from the upper 32     subnormal->+-Inf,
                           bits (low 32 result bits zero); here 99%    NaN->0x7fffffff00000000
                           equal to an H100, else 1 unit of bit 32
sqrt.approx.f32            relative 2**-23                             -Inf,-normal->NaN,
                                                                       -0->-0, +Inf->+Inf
rsqrt.approx.f32           relative 2**-22.9                           -Inf,-normal->NaN,
                                                                       -0->-Inf, +0->+Inf,
                                                                       +Inf->+0
rsqrt.approx.f64           not stated (emulated in software)           as rsqrt.f32
rsqrt.approx.ftz.f64       as rcp.approx.ftz.f64 (98% equal)           +-subnormal->+-Inf,
                                                                       NaN,-x->0x7fffffff00000000
ex2.approx.f32             2 ulp from the correctly rounded result     -Inf->+0, +-0->+1,
                                                                       +Inf->+Inf
ex2.approx.f16             relative 2**-9.9                            as ex2.f32
ex2.approx.ftz.bf16        relative 2**-7                              as ex2.f32, +-subnormal
                                                                       ->+1 (always flushes)
lg2.approx.f32             absolute 2**-22 for x in (0.5, 2),          -Inf,-normal->NaN,
                           relative 2**-22 elsewhere                   +-0->-Inf, +Inf->+Inf
sin.approx.f32             absolute 2**-20.5 on [-2pi, 2pi],           +-Inf->NaN, +-0->+-0
                           2**-14.7 on [-100pi, 100pi], no bound
                           outside
cos.approx.f32             as sin                                      +-Inf->NaN, +-0->+1
tanh.approx.f32            relative 2**-11                             -Inf->-1, +Inf->+1,
                                                                       +-0->+-0, subnormals
                                                                       pass through
tanh.approx.f16 / .bf16    absolute 2**-10.987 / 2**-8                 as tanh.f32
=========================  ==========================================  ==========================

Measured against the H100 (results identical / largest difference; NaN = NaN):

====================  ===============  =========  =====================
instruction           inputs measured  identical  max ulp
====================  ===============  =========  =====================
rcp.approx.ftz.f32    9,712,353        100 %      0
rcp.approx.f32        275,169          100 %      0
ex2.approx.ftz.f32    113,171,852      100 %      0
ex2.approx.f32        275,169          100 %      0
ex2.approx.f16        340,705          100 %      0
ex2.approx.f16x2      340,705          100 %      0
ex2.approx.ftz.bf16   340,705          100 %      0
sqrt.approx.ftz.f32   18,100,961       100 %      0
sqrt.approx.f32       275,169          100 %      0
rsqrt.approx.ftz.f32  18,100,961       100 %      0
rsqrt.approx.f32      275,169          100 %      0
lg2.approx.ftz.f32    37,674,380       99.9705 %  2,048 (abs 2**-17.0)
lg2.approx.f32        275,169          99.9847 %  2,048 (abs 2**-17.0)
sin.approx.ftz.f32    83,624,350       84.1 %     15,872 (abs 2**-24.0)
sin.approx.f32        275,169          94.1 %     15,872 (abs 2**-24.0)
cos.approx.ftz.f32    83,624,350       99.5182 %  15,872 (abs 2**-24.0)
cos.approx.f32        275,169          99.6079 %  15,872 (abs 2**-24.0)
tanh.approx.f32       107,579,447      17.5 %     134 (abs 2**-16.9)
tanh.approx.f16       340,705          77.8 %     1
tanh.approx.bf16      340,705          96.8 %     1
====================  ===============  =========  =====================

``rcp`` (and ``div.approx``, which is ``a * MUFU.RCP(b)``: every one of 2 x 8192 probed pairs
identical), ``rsqrt``, ``sqrt``, ``ex2`` and ``ex2.f16/.bf16`` reproduce the H100 on every
measured input.  The lg2 mismatches are single units of the interpolator's last place (for x
near 1 that can be up to 2048 ulp of a result near 0); sin/cos differ mostly for
|t| < 2**-8 turns (segment 0 of the table; absolute difference at most 2**-24).  The "abs"
column is the largest absolute difference.  tanh is still the float64 tanh rounded to
nearest.
"""

from __future__ import annotations

import numpy as np

from isa import sfu

__all__ = [
    "add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt", "rsqrt",
    "ex2", "lg2", "sin", "cos", "tanh",
    "minimum", "maximum", "absolute", "negate", "compare", "cvt",
    "flush_subnormal", "NAN_BITS", "F64_DEFAULT_NAN",
]

# --------------------------------------------------------------------------------------
# Formats
# --------------------------------------------------------------------------------------

_U64 = np.uint64
_ONE = np.uint64(1)


class _Fmt:
    """Binary interchange format: precision p (hidden bit included), exponent range."""

    __slots__ = ("name", "p", "emin", "emax", "bias", "width", "dtype", "utype",
                 "inf_mag", "max_mag", "tiny")

    def __init__(self, name, p, ebits, width, dtype, utype):
        self.name = name
        self.p = p
        self.bias = (1 << (ebits - 1)) - 1
        self.emax = self.bias
        self.emin = 1 - self.bias
        self.width = width
        self.dtype = np.dtype(dtype)
        self.utype = np.dtype(utype)
        self.inf_mag = ((1 << ebits) - 1) << (p - 1)
        self.max_mag = self.inf_mag - 1
        self.tiny = 2.0 ** self.emin          # smallest normal


_FMTS = {
    "f16": _Fmt("f16", 11, 5, 16, np.float16, np.uint16),
    "bf16": _Fmt("bf16", 8, 8, 16, np.uint16, np.uint16),
    "f32": _Fmt("f32", 24, 8, 32, np.float32, np.uint32),
    "f64": _Fmt("f64", 53, 11, 64, np.float64, np.uint64),
}

#: Bits of the NaN an H100 returns when an f16/bf16/f32 instruction produces a NaN, whatever
#: the operands (9.7.3 / 9.7.4 say "unspecified NaN"); also the "canonical NaN" of
#: ``min/max.NaN``.  For f64: the NaN created from non-NaN operands (see F64_DEFAULT_NAN).
NAN_BITS = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0xFFF8000000000000}
#: f64 NaN an H100 creates from non-NaN operands (inf - inf, 0 * inf, 0/0, sqrt(-1), ...).
#: f64 NaN operands are propagated instead: quieted (bit 51 set), sign and payload kept.
F64_DEFAULT_NAN = 0xFFF8000000000000
_F64_QUIET = 0x0008000000000000

_DTYPE_TY = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
             np.dtype(np.float64): "f64", np.dtype(np.uint16): "bf16"}

_FRND = ("rn", "rz", "rm", "rp")
_IRND = ("rni", "rzi", "rmi", "rpi")

_INTS = {
    "s8": (np.int8, 8, True), "u8": (np.uint8, 8, False),
    "s16": (np.int16, 16, True), "u16": (np.uint16, 16, False),
    "s32": (np.int32, 32, True), "u32": (np.uint32, 32, False),
    "s64": (np.int64, 64, True), "u64": (np.uint64, 64, False),
}


def _fmt_of(ty, *arrays) -> _Fmt:
    if ty is None:
        for a in arrays:
            t = _DTYPE_TY.get(np.asarray(a).dtype)
            if t is not None:
                ty = t
                break
        else:
            raise ValueError("cannot infer the float type of dtype %r; pass ty="
                             % (np.asarray(arrays[0]).dtype,))
    ty = str(ty).lstrip(".")
    if ty not in _FMTS:
        raise ValueError(f"not a PTX float type: {ty!r}")
    return _FMTS[ty]


def _check_rnd(rnd, allowed=_FRND):
    if rnd not in allowed:
        raise ValueError(f"rounding mode {rnd!r} not in {allowed}")
    return rnd


def _prep(fmt: _Fmt, *xs):
    """Operands as arrays of the format's dtype, broadcast together."""
    arrs = [np.asarray(x) for x in xs]
    arrs = [a if a.dtype == fmt.dtype else a.astype(fmt.dtype) for a in arrs]
    if len(arrs) > 1:
        arrs = [np.array(a) for a in np.broadcast_arrays(*arrs)]
    return arrs


def _to_bits(x, fmt: _Fmt):
    """Raw bits of typed values as uint64."""
    if fmt.name == "bf16":
        return np.asarray(x).astype(np.uint16).astype(_U64)
    return np.asarray(x, dtype=fmt.dtype).view(fmt.utype).astype(_U64)


def _from_bits(bits, fmt: _Fmt):
    """Typed array from uint64 bits."""
    b = np.asarray(bits, dtype=_U64).astype(fmt.utype)
    if fmt.name == "bf16":
        return b
    return b.view(fmt.dtype)


def _to_f64(x, fmt: _Fmt):
    """Exact float64 value of typed values (NaN payloads are not kept)."""
    x = np.asarray(x)
    if fmt.name == "bf16":
        return (x.astype(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


def _bits_to_f64(bits, fmt: _Fmt):
    return _to_f64(_from_bits(bits, fmt), fmt)


def _flush64(x, fmt: _Fmt, on=True):
    """Flush float64 values that are subnormal in ``fmt`` to sign-preserving zero."""
    if not on:
        return x
    sub = (np.abs(x) < fmt.tiny) & (x != 0)
    return np.where(sub, np.copysign(0.0, x), x)


def _flush_bits(bits, fmt: _Fmt, on=True):
    """Flush subnormal encodings (exponent field 0, fraction != 0) to signed zero."""
    if not on:
        return bits
    mag_mask = _U64((1 << (fmt.width - 1)) - 1)
    frac_mask = _U64((1 << (fmt.p - 1)) - 1)
    mag = bits & mag_mask
    sub = (mag != 0) & (mag <= frac_mask)
    return np.where(sub, bits & ~mag_mask, bits)


def _sat_bits(bits, fmt: _Fmt, on=True):
    """``.sat``: clamp to [0.0, 1.0]; NaN and every value <= 0 (-0.0 included) -> +0.0."""
    if not on:
        return bits
    v = _bits_to_f64(bits, fmt)
    one = _U64(((fmt.bias) << (fmt.p - 1)))
    out = np.where(v > 1.0, one, bits)
    return np.where(np.isnan(v) | (v <= 0.0), _U64(0), out)


def _sign_bit(fmt):
    return _U64(1 << (fmt.width - 1))


# --------------------------------------------------------------------------------------
# Integer helpers (uint64 limbs)
# --------------------------------------------------------------------------------------

def _bitlen64(x):
    """Bit length of uint64 values (0 for 0), as int64."""
    x = np.asarray(x, dtype=_U64)
    hi = (x >> _U64(32)).astype(np.float64)
    lo = (x & _U64(0xFFFFFFFF)).astype(np.float64)
    bh = np.frexp(hi)[1].astype(np.int64)
    bl = np.frexp(lo)[1].astype(np.int64)
    return np.where(hi != 0, bh + 32, bl)


def _mul64x64(a, b):
    """Full 128-bit product of uint64 arrays: (hi, lo)."""
    m32 = _U64(0xFFFFFFFF)
    s32 = _U64(32)
    a0, a1 = a & m32, a >> s32
    b0, b1 = b & m32, b >> s32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> s32) + (p01 & m32) + (p10 & m32)
    lo = (p00 & m32) | ((mid & m32) << s32)
    hi = p11 + (p01 >> s32) + (p10 >> s32) + (mid >> s32)
    return hi, lo


def _shl128(x, sh):
    """(hi, lo) of uint64 ``x`` shifted left by ``sh`` (0 <= sh <= 64), exact."""
    sh = np.asarray(sh, dtype=np.int64)
    s = np.clip(sh, 0, 63).astype(_U64)
    lo = np.where(sh >= 64, _U64(0), x << s)
    r = np.clip(64 - sh, 1, 63).astype(_U64)
    hi = np.where(sh <= 0, _U64(0), np.where(sh >= 64, x, x >> r))
    return hi, lo


def _cmp128(ah, al, bh, bl):
    """Sign (-1, 0, 1) of the 128-bit difference a - b."""
    return np.where(ah > bh, 1, np.where(ah < bh, -1,
                    np.where(al > bl, 1, np.where(al < bl, -1, 0)))).astype(np.int8)


def _frexp_int(x):
    """|x| = M * 2**E with M a 53-bit integer (2**52 <= M < 2**53), for finite x != 0.

    Zeros (and anything non-finite, which callers mask out) give M = 0.
    """
    ax = np.abs(np.where(np.isfinite(x), x, 0.0))
    m, e = np.frexp(ax)
    M = (m * 9007199254740992.0).astype(_U64)       # m * 2**53, exact
    return M, e.astype(np.int64) - 53


# --------------------------------------------------------------------------------------
# The rounding core
# --------------------------------------------------------------------------------------

def _round_int(neg, M, sticky, E, fmt: _Fmt, rnd: str, ftz=False):
    """Round the magnitude (M + d) * 2**E, 0 <= d < 1 (d > 0 iff ``sticky``), to ``fmt``.

    ``neg`` is the sign.  Precondition: either ``sticky`` is False, or M has at least
    p + 1 significant bits, or the value lies far below the format's smallest subnormal
    (then only its sign and non-zeroness matter).  Returns the result's bits as uint64.
    Handles subnormal results, overflow (to inf or to the largest finite value depending on
    the direction) and zeros (sign = ``neg``).  ``ftz``: a *tiny* result becomes a zero of
    sign ``neg``, where tiny means "below the smallest normal number after rounding to p bits
    with an unbounded exponent" (IEEE 754 tininess after rounding), which is what an H100
    does: ``mul.rn.ftz.f32(0.5, 0x00FFFFFF)`` (exact (1-2**-24)*2**-126, p bits) is +0.0
    although it rounds to the normal 2**-126, while ``fma.rn.ftz.f32(2**-126, 2**-126,
    -2**-126)`` (exact -(2**-126 - 2**-252)) is -2**-126.
    """
    neg = np.asarray(neg, dtype=bool)
    M = np.asarray(M, dtype=_U64)
    sticky = np.asarray(sticky, dtype=bool)
    E = np.asarray(E, dtype=np.int64)
    p, emin, emax = fmt.p, fmt.emin, fmt.emax
    L = _bitlen64(M)
    e = np.where(M == 0, E - 1, E + L - 1)       # floor(log2(value)) (M = 0: value < 2**E)
    ec = np.minimum(e, emax + 2)
    Q = np.maximum(ec, emin) - (p - 1)           # exponent of the destination quantum
    k = Q - E                                    # bits of M below the quantum
    kc = np.clip(k, 1, 63).astype(_U64)
    n = M >> kc
    rem = M & ((_ONE << kc) - _ONE)
    half = _ONE << (kc - _ONE)
    gt = (rem > half) | ((rem == half) & sticky)
    eq = (rem == half) & ~sticky
    inexact = (rem != 0) | sticky
    big = k >= 64                                # whole value below half a quantum
    n = np.where(big, _U64(0), n)
    gt = gt & ~big
    eq = eq & ~big
    inexact = np.where(big, (M != 0) | sticky, inexact)
    small = k <= 0                               # M exact and coarser than the quantum
    ks = np.clip(-k, 0, 63).astype(_U64)
    n = np.where(small, M << ks, n)
    gt = gt & ~small
    eq = eq & ~small
    inexact = np.where(small, sticky, inexact)
    if rnd == "rn":
        up = gt | (eq & ((n & _ONE) == _ONE))
    elif rnd == "rna":
        up = gt | eq
    elif rnd == "rz":
        up = np.zeros_like(gt)
    elif rnd == "rp":
        up = inexact & ~neg
    elif rnd == "rm":
        up = inexact & neg
    else:
        raise ValueError(f"rounding mode {rnd!r}")
    n = n + up.astype(_U64)
    bexp = (np.maximum(ec, emin) + (fmt.bias - 1)).astype(_U64)
    mag = (bexp << _U64(p - 1)) + n
    inf_mag = _U64(fmt.inf_mag)
    ovf = (e > emax) | (mag >= inf_mag)
    if rnd in ("rn", "rna"):
        to_inf = np.ones_like(neg)
    elif rnd == "rz":
        to_inf = np.zeros_like(neg)
    elif rnd == "rp":
        to_inf = ~neg
    else:
        to_inf = neg
    mag = np.where(ovf, np.where(to_inf, inf_mag, inf_mag - _ONE), mag)
    if ftz:
        # carry to 2**emin when rounding at the normal quantum (k = L - p) for e == emin - 1
        ku = L - p
        kuc = np.clip(ku, 1, 63).astype(_U64)
        nu = M >> kuc
        remu = M & ((_ONE << kuc) - _ONE)
        halfu = _ONE << (kuc - _ONE)
        gtu = (remu > halfu) | ((remu == halfu) & sticky)
        equ = (remu == halfu) & ~sticky
        inexu = (remu != 0) | sticky
        if rnd == "rn":
            upu = gtu | (equ & ((nu & _ONE) == _ONE))
        elif rnd == "rna":
            upu = gtu | equ
        elif rnd == "rz":
            upu = np.zeros_like(gtu)
        elif rnd == "rp":
            upu = inexu & ~neg
        else:
            upu = inexu & neg
        carry = (ku >= 1) & ((nu + upu.astype(_U64)) >= _U64(1 << p))
        tiny = (e < emin) & ~((e == emin - 1) & carry)
        mag = np.where(tiny, _U64(0), mag)
    return mag | (neg.astype(_U64) << _U64(fmt.width - 1))


def _round_f64(hi, s, scale, fmt: _Fmt, rnd: str, ftz=False):
    """Round v * 2**scale to ``fmt``, where v is given by the finite float64 ``hi`` and
    ``s`` = sign(v - hi) in {-1, 0, 1}.

    Requires hi = RN(v) in float64 or |v - hi| < ulp(hi) / 4 (then no rounding boundary of
    any format lies strictly between hi and v except those the 2 guard bits resolve).
    ``hi == 0`` with ``s != 0`` means "a non-zero value of sign s below every format".
    """
    hi = np.asarray(hi, dtype=np.float64)
    s = np.asarray(s).astype(np.int8)
    scale = np.asarray(scale, dtype=np.int64)
    zero = hi == 0
    neg = np.where(zero, np.where(s != 0, s < 0, np.signbit(hi)), np.signbit(hi))
    smag = np.where(np.signbit(hi), -s, s)
    mant, ex = _frexp_int(hi)
    M = (mant << _U64(2)) - (smag < 0).astype(_U64)
    sticky = smag != 0
    E = ex - 2 + scale
    M = np.where(zero, (s != 0).astype(_U64), M)
    sticky = np.where(zero, False, sticky)
    E = np.where(zero, np.int64(-4000), E)
    return _round_int(neg, M, sticky, E, fmt, rnd, ftz)


def _round_exact64(x, fmt: _Fmt, rnd: str, ftz=False):
    """Round float64 values (exact values, any class) to ``fmt`` bits; NaN -> NAN_BITS."""
    x = np.asarray(x, dtype=np.float64)
    fin = np.isfinite(x)
    bits = _round_f64(np.where(fin, x, 0.0), np.zeros(x.shape, np.int8), 0, fmt, rnd, ftz)
    inf = _U64(fmt.inf_mag) | np.where(np.signbit(x), _sign_bit(fmt), _U64(0))
    bits = np.where(np.isinf(x), inf, bits)
    return np.where(np.isnan(x), _U64(NAN_BITS[fmt.name]), bits)


def _rn_fast(v, fmt: _Fmt):
    """Bits of RN(v) in ``fmt`` for float64 ``v`` (NaN lanes: anything), by casting.

    Used only where ``v`` is the float64 round-to-nearest result of ONE basic operation
    (+ - * / sqrt) on ``fmt`` values and no ``.ftz`` applies: then rounding ``v`` again to p
    bits equals rounding the exact result once, because 53 >= 2p + 2 (Figueroa 1995); for
    subnormal results the callers guarantee ``v`` is exact.  bf16 goes through f32 (also
    >= 2*8 + 2 bits) and rounds the low 16 bits to nearest even -- which is NOT a correct
    rounding of an arbitrary float64 (f64 -> f32 -> bf16 double-rounds), so conversions and
    the approximations call this for f16/f32/f64 only (numpy's f64 -> f16 cast rounds once).
    """
    if fmt.name == "f64":
        return v.view(_U64)
    if fmt.name == "f16":
        return v.astype(np.float16).view(np.uint16).astype(_U64)
    b = v.astype(np.float32).view(np.uint32).astype(_U64)
    if fmt.name == "f32":
        return b
    r = (b + _U64(0x7FFF) + ((b >> _U64(16)) & _ONE)) >> _U64(16)
    return np.where(np.isnan(v), _U64(NAN_BITS["bf16"]), r)


# --------------------------------------------------------------------------------------
# NaN results
# --------------------------------------------------------------------------------------

def _nan_bits(fmt: _Fmt, *operands):
    """The NaN an instruction returns (see NAN_BITS).  For f64 the first NaN among
    ``operands`` -- given in the instruction's propagation priority, measured on an H100:
    add/sub/mul (b, a), fma (b, c, a), div (a, b) -- quieted, else F64_DEFAULT_NAN."""
    if fmt.name != "f64":
        return _U64(NAN_BITS[fmt.name])
    out = _U64(F64_DEFAULT_NAN)
    for op in reversed(operands):
        b = _to_bits(op, fmt)
        out = np.where(_isnan_bits(b, fmt), b | _U64(_F64_QUIET), out)
    return out


def _isnan_bits(bits, fmt: _Fmt):
    return (bits & _U64((1 << (fmt.width - 1)) - 1)) > _U64(fmt.inf_mag)


# --------------------------------------------------------------------------------------
# Exact cores on float64 values
# --------------------------------------------------------------------------------------

def _two_sum(x, y):
    """s = RN(x + y) and the exact error t = x + y - s (Fast2Sum on the operands ordered by
    magnitude: z = s - big is exact, so no intermediate overflows while s is finite --
    Knuth's branch-free TwoSum can overflow in s - x next to the largest finite value)."""
    swap = np.abs(x) < np.abs(y)
    big = np.where(swap, y, x)
    small = np.where(swap, x, y)
    s = big + small
    t = small - (s - big)
    return s, t


def _add_bits(x, y, fmt: _Fmt, rnd: str, ftz=False):
    """Correctly rounded x + y (float64 operands exactly representing fmt values, or an
    exact float64 product for fma) in ``fmt``.  NaN lanes are left to the caller."""
    fin = np.isfinite(x) & np.isfinite(y)
    xf = np.where(fin, x, 0.0)
    yf = np.where(fin, y, 0.0)
    s, t = _two_sum(xf, yf)
    ovf = ~np.isfinite(s)
    if np.any(ovf):                              # f64 only: both operands are >= 2**1022
        s2, t2 = _two_sum(xf * 0.5, yf * 0.5)
        s = np.where(ovf, s2, s)
        t = np.where(ovf, t2, t)
    scale = np.where(ovf, 1, 0)
    bits = _round_f64(s, np.sign(t), scale, fmt, rnd, ftz)
    # exact zero: like-signed zeros keep their sign, otherwise +0 (-0 under .rm)
    zero = (s == 0) & (t == 0)
    same = (x == 0) & (y == 0) & (np.signbit(x) == np.signbit(y))
    zneg = np.where(same, np.signbit(x), rnd == "rm")
    bits = np.where(zero, np.where(zneg, _sign_bit(fmt), _U64(0)), bits)
    # infinities (exact): an infinite operand, or both with the same sign
    raw = x + y
    inf = _U64(fmt.inf_mag) | np.where(np.signbit(raw), _sign_bit(fmt), _U64(0))
    return np.where(~fin & np.isinf(raw), inf, bits)


def _mul64_bits(x, y, rnd):
    """Correctly rounded f64 product (finite lanes; zeros and infinities handled)."""
    fmt = _FMTS["f64"]
    fin = np.isfinite(x) & np.isfinite(y) & (x != 0) & (y != 0)
    Mx, Ex = _frexp_int(np.where(fin, x, 1.0))
    My, Ey = _frexp_int(np.where(fin, y, 1.0))
    ph, pl = _mul64x64(Mx, My)                   # 2**104 <= P < 2**106
    top = (ph >> _U64(41)) != 0                  # P >= 2**105
    r = np.where(top, 44, 43)                    # keep 62 (or 63) bits: P >> r
    ru = r.astype(_U64)
    M = (ph << (_U64(64) - ru)) | (pl >> ru)
    sticky = (pl & ((_ONE << ru) - _ONE)) != 0
    neg = np.signbit(x) ^ np.signbit(y)
    bits = _round_int(neg, M, sticky, Ex + Ey + r, fmt, rnd)
    raw = np.where(fin, 0.0, x * y)              # zeros, infinities, NaN: exact in numpy
    return np.where(fin, bits, _round_exact64(raw, fmt, rnd))


def _div_parts(x, y):
    """For finite non-zero x, y: (q, s, scale) with x/y = (q + (tiny of sign s)) * 2**scale,
    q = RN(x/y scaled to [0.5, 2))."""
    Mx, Ex = _frexp_int(x)
    My, Ey = _frexp_int(y)
    q = Mx.astype(np.float64) / My.astype(np.float64)     # RN of Mx/My, in (0.5, 2)
    Mq, Eq = _frexp_int(q)                                  # q = Mq * 2**Eq, Eq in {-53,-52}
    lh, ll = _shl128(Mx, -Eq)                               # Mx * 2**-Eq
    rh, rl = _mul64x64(Mq, My)                              # Mq * My
    s = _cmp128(lh, ll, rh, rl)                             # sign(Mx/My - q)
    neg = np.signbit(x) ^ np.signbit(y)
    q = np.where(neg, -q, q)
    s = np.where(neg, -s, s)
    return q, s, Ex - Ey


def _div_bits(x, y, fmt: _Fmt, rnd: str, ftz=False):
    """Correctly rounded x / y in ``fmt`` (NaN lanes left to the caller)."""
    fin = np.isfinite(x) & np.isfinite(y) & (x != 0) & (y != 0)
    q, s, sc = _div_parts(np.where(fin, x, 1.0), np.where(fin, y, 1.0))
    bits = _round_f64(q, s, sc, fmt, rnd, ftz)
    raw = x / y                                  # zeros / infinities: exact IEEE results
    return np.where(fin, bits, _round_exact64(raw, fmt, rnd))


def _sqrt_bits(x, fmt: _Fmt, rnd: str, ftz=False):
    """Correctly rounded sqrt(x) in ``fmt`` (negative -> NaN, +-0 -> +-0, +inf -> +inf)."""
    pos = np.isfinite(x) & (x > 0)
    M, E = _frexp_int(np.where(pos, x, 1.0))
    odd = (E & 1) == 1
    M2 = np.where(odd, M << _ONE, M)             # x = M2 * 2**E2, E2 even
    E2 = np.where(odd, E - 1, E)
    r = np.sqrt(M2.astype(np.float64))           # RN(sqrt(M2)), in [2**26, 2**27)
    Mr, Er = _frexp_int(r)                       # Er == -26
    lh, ll = _shl128(M2, -2 * Er)                # M2 * 2**52
    rh, rl = _mul64x64(Mr, Mr)
    s = _cmp128(lh, ll, rh, rl)
    bits = _round_f64(r, s, E2 // 2, fmt, rnd, ftz)
    with np.errstate(all="ignore"):
        raw = np.sqrt(x)
    return np.where(pos, bits, _round_exact64(raw, fmt, rnd))


def _fma64_bits(x, y, z, rnd):
    """Correctly rounded f64 x*y + z, one rounding, via a 256-bit integer sum."""
    fmt = _FMTS["f64"]
    shape = x.shape
    x, y, z = x.ravel(), y.ravel(), z.ravel()
    fin = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
    gen = fin & (x != 0) & (y != 0)              # product non-zero: the integer path
    xs = np.where(gen, x, 1.0)
    ys = np.where(gen, y, 1.0)
    zs = np.where(gen, z, 0.0)
    Mx, Ex = _frexp_int(xs)
    My, Ey = _frexp_int(ys)
    Mz, Ez = _frexp_int(zs)
    ph, pl = _mul64x64(Mx, My)
    Ep = Ex + Ey
    sp = np.signbit(xs) ^ np.signbit(ys)
    sz = np.signbit(zs)
    zz = Mz == 0
    d = np.where(zz, 0, Ez - Ep)                 # addend LSB relative to product LSB
    big = d > 138                                # product below the addend's LSB: sticky
    small = d < -64                              # addend below the product's LSB: sticky
    mid = ~big & ~small
    n = x.shape
    zero = np.zeros(n, _U64)
    # frame A: product at bit 64 (unit 2**(Ep - 64)), addend shifted by d + 64
    sh = np.clip(d + 64, 0, 255)
    j = sh // 64
    bit = (sh % 64).astype(_U64)
    lo_part = Mz << bit
    hi_part = np.where(bit == 0, _U64(0), Mz >> (_U64(64) - np.maximum(bit, _ONE)))
    zl = [np.where(j == i, lo_part, zero) + np.where(j + 1 == i, hi_part, zero) for i in range(4)]
    one = np.ones(n, _U64)
    zl = [np.where(mid, zl[i], np.where(small & ~zz, one if i == 0 else zero, zero))
          for i in range(4)]
    pa = [zero, pl, ph, zero]
    # frame B (big): addend at bit 64 (unit 2**(Ez - 64)), product as a sticky 1
    pa = [np.where(big, one if i == 0 else zero, pa[i]) for i in range(4)]
    zl = [np.where(big, Mz if i == 1 else zero, zl[i]) for i in range(4)]
    base = np.where(big, Ez - 64, Ep - 64)
    # signed sum of the two 256-bit magnitudes
    cmp = np.zeros(n, np.int8)
    for i in (3, 2, 1, 0):
        cmp = np.where(cmp == 0, np.where(pa[i] > zl[i], 1, np.where(pa[i] < zl[i], -1, 0)), cmp)
    same = sp == sz
    big_first = cmp >= 0
    u = [np.where(big_first | same, pa[i], zl[i]) for i in range(4)]
    v = [np.where(big_first | same, zl[i], pa[i]) for i in range(4)]
    res = []
    carry = np.zeros(n, bool)
    borrow = np.zeros(n, bool)
    for i in range(4):
        ssum = u[i] + v[i]
        c1 = ssum < u[i]
        ssum2 = ssum + carry.astype(_U64)
        c2 = ssum2 < ssum
        diff = u[i] - v[i] - borrow.astype(_U64)
        b2 = (u[i] < v[i]) | ((u[i] == v[i]) & borrow)
        res.append(np.where(same, ssum2, diff))
        carry = c1 | c2
        borrow = b2
    neg = np.where(same, sp, np.where(big_first, sp, sz))
    # normalise: top 62 bits and a sticky bit
    L = np.zeros(n, np.int64)
    for i in range(4):
        bl = _bitlen64(res[i])
        L = np.where(res[i] != 0, 64 * i + bl, L)
    r = np.maximum(L - 62, 0)
    jj = r // 64
    bb = (r % 64).astype(_U64)
    limbs = np.stack(res + [zero])               # (5, n)
    lo_l = np.take_along_axis(limbs, jj[None, :], 0)[0]
    hi_l = np.take_along_axis(limbs, (jj + 1)[None, :], 0)[0]
    M = (lo_l >> bb) | np.where(bb == 0, _U64(0), hi_l << (_U64(64) - np.maximum(bb, _ONE)))
    M = M & _U64((1 << 63) - 1)
    sticky = (lo_l & ((_ONE << bb) - _ONE)) != 0
    for i in range(4):
        sticky = sticky | ((i < jj) & (res[i] != 0))
    exact_zero = L == 0
    bits = _round_int(neg, M, sticky, base + r, fmt, rnd)
    bits = np.where(exact_zero, np.where(rnd == "rm", _sign_bit(fmt), _U64(0)), bits)
    # product exactly zero: result is z (or a signed zero by the IEEE sum rule)
    p0 = np.where(np.isfinite(x) & np.isfinite(y), x * y, 0.0)   # a signed zero where used
    zb = _add_bits(p0, z, fmt, rnd)
    # non-finite operands
    pinf = (np.isinf(x) & (y != 0)) | (np.isinf(y) & (x != 0))
    pinf = pinf & ~np.isnan(x) & ~np.isnan(y)
    psign = np.signbit(x) ^ np.signbit(y)
    inf_bits = _U64(fmt.inf_mag)
    nf = np.where(pinf, inf_bits | np.where(psign, _sign_bit(fmt), _U64(0)),
                  inf_bits | np.where(np.signbit(z), _sign_bit(fmt), _U64(0)))
    out = np.where(gen, bits, np.where(fin, zb, nf))
    return out.reshape(shape)


#: Per format: (low bits of a float64 below the format's last bit, the pattern of a rounding
#: midpoint there (1 followed by zeros), magnitude mask, smallest normal's bits, infinity's bits).
_FAST_FMA = {"f32": ((1 << 29) - 1, 1 << 28, np.uint32(0x7FFFFFFF), np.uint32(0x00800000), np.uint32(0x7F800000)),
             "f16": ((1 << 42) - 1, 1 << 41, np.uint16(0x7FFF), np.uint16(0x0400), np.uint16(0x7C00))}


def _fma_rn_fast(a, b, c, fmt: _Fmt):
    """``fma.rn`` without ``.ftz`` for f32 or f16 operands ``a, b, c`` (arrays of one shape, the
    format's dtype): the result (that dtype, NaN results canonical), the same bits as the general
    path (``_add_bits`` of the exact product), in fewer passes over the lanes.

    ``p = a * b`` is exact in float64 (at most 2 * 24 bits, |p| <= 2**256, never below 2**-298)
    and ``s = RN64(p + c)``.  Rounding ``s`` once more to the p-bit format (numpy's float64 ->
    float32 / float16 casts: one rounding to nearest-even, overflowing to infinity) gives the
    correctly rounded ``p + c`` except where ``s`` is a rounding midpoint of the format and
    ``s != p + c`` (the double-rounding ties).  A midpoint between normal numbers is a float64
    whose low 53 - p bits are 1 followed by zeros (the overflow threshold 2**128 - 2**103 too);
    those lanes, lanes whose result is subnormal, zero or the smallest normal (midpoints of the
    subnormal grid lie elsewhere) and NaN lanes are redone, except exact zeros (``s == 0``:
    exact, with IEEE's sum sign rule): TwoSum's exact error ``t = p + c - s`` (Knuth; exact, no
    overflow at these magnitudes), then ``s`` rounded to odd at 53 bits (``s`` itself if
    ``t == 0`` or its last bit is 1, else its neighbour on ``t``'s side), whose rounding to
    nearest-even in the p-bit format equals rounding the exact sum once because 53 >= p + 2
    (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
    rounding to odd", IEEE TC 2008: every value and rounding midpoint of the format, subnormal
    ones included, has at most p + 1 significant bits, so it is a float64 with an even last bit
    and never lies strictly between the exact sum and its round-to-odd value).  NaN: exactly
    where ``s`` is NaN (NaN operands, ``inf * 0``, ``inf - inf``: the product never overflows),
    as the canonical NaN; infinite ``s`` keeps its sign.
    """
    if a.ndim == 0:
        return _fma_rn_fast(a[None], b[None], c[None], fmt).reshape(())
    x = a.astype(np.float64)
    x *= b
    x += c                                           # s = RN64(a * b + c), a * b exact
    s = x
    r = s.astype(fmt.dtype)
    low, mid, mag_mask, tiny, inf = _FAST_FMA[fmt.name]
    redo = (s.view(np.int64) & low) == mid           # a midpoint of the format's normal grid
    m = r.view(fmt.utype) & mag_mask
    redo |= m <= tiny                                # subnormal, zero or the smallest normal
    redo |= m > inf                                  # NaN
    idx = np.flatnonzero(redo)
    if idx.size:
        s = s[idx]
        nz = s != 0
        if not nz.all():
            idx, s = idx[nz], s[nz]
    if idx.size:
        p = a[idx].astype(np.float64) * b[idx]
        z = c[idx].astype(np.float64)
        bb = s - p
        t = (p - (s - bb)) + (z - bb)
        j = s.view(np.int64)
        even = (j & 1) == 0
        tp, tn = t > 0, t < 0                        # (t is NaN for infinite s: neither)
        neg = np.signbit(s)
        j = j + (even & np.where(neg, tn, tp))       # towards larger magnitude
        j -= even & np.where(neg, tp, tn)
        rr = j.view(np.float64).astype(fmt.dtype)
        rr.view(fmt.utype)[np.isnan(s)] = NAN_BITS[fmt.name]
        r[idx] = rr
    return r


def _f64_nan_mask_fma(x, y, z):
    pinf = (np.isinf(x) & (y != 0)) | (np.isinf(y) & (x != 0))
    zero_inf = (np.isinf(x) & (y == 0)) | (np.isinf(y) & (x == 0))
    psign = np.signbit(x) ^ np.signbit(y)
    cancel = pinf & np.isinf(z) & (psign != np.signbit(z))
    return np.isnan(x) | np.isnan(y) | np.isnan(z) | zero_inf | cancel


# --------------------------------------------------------------------------------------
# Public API: arithmetic
# --------------------------------------------------------------------------------------

def add(a, b, rnd="rn", ftz=False, sat=False, ty=None):
    """``add{.rnd}{.ftz}{.sat}.type d, a, b`` -- correctly rounded sum.

    PTX ISA 9.0 sections 9.7.3.3 (f32, f64) and 9.7.4.1 (f16, bf16: ``.rn`` only in PTX,
    every mode accepted here).  Operands: arrays (broadcast) of the type's dtype; result:
    same dtype.  ``rnd``: ``"rn"`` (ties to even), ``"rz"``, ``"rm"``, ``"rp"``.  An exact
    zero sum is +0.0 (-0.0 under ``.rm``) unless both operands are zeros of one sign (IEEE
    754 section 6.3).  ``ftz`` flushes subnormal inputs and results; ``sat`` clamps to
    [0, 1] with NaN -> +0.0.  NaN results: see the module docstring.
    """
    fmt = _fmt_of(ty, a)
    _check_rnd(rnd)
    with np.errstate(all="ignore"):
        a, b = _prep(fmt, a, b)
        x = _flush64(_to_f64(a, fmt), fmt, ftz and fmt.name != "f64")
        y = _flush64(_to_f64(b, fmt), fmt, ftz and fmt.name != "f64")
        if rnd == "rn" and not (ftz and fmt.name != "f64"):
            bits = _rn_fast(x + y, fmt)          # sums of subnormal size are exact in f64
        else:
            bits = _add_bits(x, y, fmt, rnd, ftz and fmt.name != "f64")
        isnan = np.isnan(x) | np.isnan(y) | (np.isinf(x) & np.isinf(y) & (np.signbit(x) != np.signbit(y)))
        bits = np.where(isnan, _nan_bits(fmt, b, a), bits)
        bits = _flush_bits(bits, fmt, ftz and fmt.name != "f64")
        bits = _sat_bits(bits, fmt, sat)
        return _from_bits(bits, fmt)


def sub(a, b, rnd="rn", ftz=False, sat=False, ty=None):
    """``sub{.rnd}{.ftz}{.sat}.type d, a, b`` -- correctly rounded ``a - b``.

    PTX ISA 9.0 sections 9.7.3.4 and 9.7.4.2.  Same conventions as :func:`add`; computed
    exactly as ``a + (-b)`` (so ``x - x`` is +0.0, or -0.0 under ``.rm``).
    """
    fmt = _fmt_of(ty, a)
    _check_rnd(rnd)
    with np.errstate(all="ignore"):
        a, b = _prep(fmt, a, b)
        x = _flush64(_to_f64(a, fmt), fmt, ftz and fmt.name != "f64")
        y = -_flush64(_to_f64(b, fmt), fmt, ftz and fmt.name != "f64")
        if rnd == "rn" and not (ftz and fmt.name != "f64"):
            bits = _rn_fast(x + y, fmt)          # sums of subnormal size are exact in f64
        else:
            bits = _add_bits(x, y, fmt, rnd, ftz and fmt.name != "f64")
        isnan = np.isnan(x) | np.isnan(y) | (np.isinf(x) & np.isinf(y) & (np.signbit(x) != np.signbit(y)))
        bits = np.where(isnan, _nan_bits(fmt, b, a), bits)
        bits = _flush_bits(bits, fmt, ftz and fmt.name != "f64")
        bits = _sat_bits(bits, fmt, sat)
        return _from_bits(bits, fmt)


def mul(a, b, rnd="rn", ftz=False, sat=False, ty=None):
    """``mul{.rnd}{.ftz}{.sat}.type d, a, b`` -- correctly rounded product.

    PTX ISA 9.0 sections 9.7.3.5 and 9.7.4.3.  f16/bf16/f32 products are exact in float64
    and rounded once; f64 uses the exact 106-bit integer product.  Conventions as
    :func:`add`; the sign of a zero product is the XOR of the operand signs.
    """
    fmt = _fmt_of(ty, a)
    _check_rnd(rnd)
    with np.errstate(all="ignore"):
        a, b = _prep(fmt, a, b)
        f = ftz and fmt.name != "f64"
        x = _flush64(_to_f64(a, fmt), fmt, f)
        y = _flush64(_to_f64(b, fmt), fmt, f)
        if rnd == "rn" and not f:
            bits = _rn_fast(x * y, fmt)          # f16/bf16/f32 products are exact in f64
        elif fmt.name == "f64":
            bits = _mul64_bits(x, y, rnd)
        else:
            bits = _round_exact64(x * y, fmt, rnd, f)
        isnan = np.isnan(x * y)
        bits = np.where(isnan, _nan_bits(fmt, b, a), bits)
        bits = _flush_bits(bits, fmt, f)
        bits = _sat_bits(bits, fmt, sat)
        return _from_bits(bits, fmt)


def fma(a, b, c, rnd="rn", ftz=False, sat=False, ty=None):
    """``fma.rnd{.ftz}{.sat}.type d, a, b, c`` (and ``mad.rnd``) -- ``a*b + c`` rounded once.

    PTX ISA 9.0 sections 9.7.3.6 ("computes the product of a and b to infinite precision and
    then adds c to this product, again in infinite precision. The resulting value is then
    rounded ... using the rounding mode specified by .rnd"), 9.7.3.7 mad (``mad.{f32,f64}``
    is the same as ``fma``) and 9.7.4.4 (f16, bf16).  Operands broadcast; result of the
    operand dtype.  Zero results follow the IEEE sum rule applied to (a*b) + c.
    """
    fmt = _fmt_of(ty, a)
    _check_rnd(rnd)
    with np.errstate(all="ignore"):
        f = ftz and fmt.name != "f64"
        if rnd == "rn" and not f and fmt.name in ("f32", "f16"):
            ops = [np.asarray(v) for v in (a, b, c)]
            if any(v.dtype != fmt.dtype or v.shape != ops[0].shape for v in ops):
                ops = _prep(fmt, *ops)           # (the fast path only reads its operands: no copies needed)
            r = _fma_rn_fast(*ops, fmt)
            return _from_bits(_sat_bits(_to_bits(r, fmt), fmt), fmt) if sat else r
        a, b, c = _prep(fmt, a, b, c)
        x = _flush64(_to_f64(a, fmt), fmt, f)
        y = _flush64(_to_f64(b, fmt), fmt, f)
        z = _flush64(_to_f64(c, fmt), fmt, f)
        isnan = _f64_nan_mask_fma(x, y, z)
        if fmt.name == "f64":
            bits = _fma64_bits(x, y, z, rnd)
        else:
            p = x * y                            # exact: at most 2 * 24 bits
            bits = _add_bits(p, z, fmt, rnd, f)
        bits = np.where(isnan, _nan_bits(fmt, b, c, a), bits)
        bits = _flush_bits(bits, fmt, f)
        bits = _sat_bits(bits, fmt, sat)
        return _from_bits(bits, fmt)


mad = fma


def div(a, b, mode="rn", ftz=False, ty=None):
    """``div.{rn,rz,rm,rp,full,approx}{.ftz}.type d, a, b`` -- ``a / b``.

    PTX ISA 9.0 section 9.7.3.8.  ``mode`` rn/rz/rm/rp: correctly rounded (f32 and f64).
    ``"full"`` (``div.full.f32``, max 2 ulp) is computed as the H100 does (see ``_div_full_f32``):
    operands scaled into MUFU.RCP's range, then ``a * MUFU.RCP(b)``.
    ``"approx"`` (``div.approx.f32``, max 2 ulp for |b| in [2**-126, 2**126]) is computed as
    the H100 does, ``a * MUFU.RCP(b)`` (see ``_div_approx_f32``), which also gives the range the
    manual pins: for 2**126 < |b| < 2**128 the result is NaN if ``a`` is infinite, otherwise a
    zero with the sign of the quotient.  Division by zero,
    inf/inf, 0/0 and NaN operands follow IEEE 754.  ``ftz`` flushes subnormal inputs and
    results (f32/f16).  Operands: arrays of the type's dtype, broadcast; result: same dtype.
    """
    fmt = _fmt_of(ty, a)
    if mode not in _FRND + ("full", "approx"):
        raise ValueError(f"div mode {mode!r}")
    if mode == "approx" and fmt.name == "f32":
        return _div_approx_f32(a, b, ftz)
    if mode == "full" and fmt.name == "f32":
        return _div_full_f32(a, b, ftz)
    rnd = mode if mode in _FRND else "rn"
    with np.errstate(all="ignore"):
        a, b = _prep(fmt, a, b)
        f = ftz and fmt.name != "f64"
        x = _flush64(_to_f64(a, fmt), fmt, f)
        y = _flush64(_to_f64(b, fmt), fmt, f)
        q = x / y
        tiny = (np.abs(q) < fmt.tiny) & (q != 0)
        if rnd == "rn" and not f and (fmt.name == "f64" or not np.any(tiny)):
            bits = _rn_fast(q, fmt)
        else:
            bits = _div_bits(x, y, fmt, rnd, f)
        isnan = np.isnan(q)
        if mode == "approx" and fmt.name == "f32":
            pin = np.isfinite(y) & (np.abs(y) > 2.0 ** 126)
            zero = np.where(np.signbit(x) ^ np.signbit(y), _sign_bit(fmt), _U64(0))
            bits = np.where(pin, zero, bits)
            isnan = isnan | (pin & np.isinf(x))
        bits = np.where(isnan, _nan_bits(fmt, a, b), bits)
        bits = _flush_bits(bits, fmt, f)
        return _from_bits(bits, fmt)


def rcp(a, mode="rn", ftz=False, ty=None):
    """``rcp.{rn,rz,rm,rp,approx}{.ftz}.type d, a`` -- ``1 / a``.

    PTX ISA 9.0 sections 9.7.3.13 and 9.7.3.14.  rn/rz/rm/rp: correctly rounded (IEEE:
    1/+-0 = +-inf, 1/+-inf = +-0).  ``"approx"`` for f32 (``rcp.approx.f32``, max 1 ulp) is
    computed as the H100 does: MUFU.RCP (:func:`isa.sfu.rcp`), without ``.ftz`` between two
    FMULs by a power of two for tiny and huge operands; its special-value table is the IEEE
    one.  For
    f64, ``"approx"`` is ``rcp.approx.ftz.f64``: the reciprocal of the upper 32 bits of
    ``a`` (low word ignored) with the low 32 result bits zero; subnormal inputs give +-inf,
    subnormal results flush to zero, and NaN inputs give ``0x7fffffff00000000`` (9.7.3.14).
    The manual only calls it a "gross approximation" (no bound); the upper word here is the
    float64 reciprocal's upper word, rounded up when the discarded part is >= 0.93 of its last
    unit, which matched 99.1% of 200000 probed H100 results (the rest differ by one unit of
    bit 32).
    """
    fmt = _fmt_of(ty, a)
    if mode not in _FRND + ("approx",):
        raise ValueError(f"rcp mode {mode!r}")
    if fmt.name == "f64" and mode == "approx":
        with np.errstate(all="ignore"):
            (a,) = _prep(fmt, a)
            hi = _to_bits(a, fmt) & _U64(0xFFFFFFFF00000000)
            x = hi.view(np.float64)
            x = np.where((np.abs(x) < 2.0 ** -1022), np.copysign(0.0, x), x)
            r = 1.0 / x
            r = np.where(np.abs(r) < 2.0 ** -1022, np.copysign(0.0, r), r)
            return _upper_word(r, np.isnan(x), _RCP64_UP_AT)
    if mode == "approx" and fmt.name == "f32":
        return _rcp_approx_f32(a, ftz)
    one = np.ones((), dtype=fmt.dtype) if fmt.name != "bf16" else np.uint16(0x3F80)
    return div(one, a, mode if mode in _FRND else "rn", ftz, ty=fmt.name)


#: rcp/rsqrt.approx.ftz.f64 ("gross approximation", no bound in the manual): the H100 result
#: is the upper word of the exact value, plus one unit when the discarded fraction is large.
#: Rounding up at >= 0.93 (rcp) / 0.96 (rsqrt) of a unit reproduced 99.1% / 98.3% of 200000
#: probed H100 results (the rest differ by one unit of bit 32); truncation alone ~96%.
_RCP64_UP_AT = 0xEE147AE2
_RSQRT64_UP_AT = 0xF5C28F5C


def _upper_word(r, nan, up_at=0x80000000):
    """f64 ``r`` reduced to its upper 32 bits (low word zero), rounding the magnitude up when
    the discarded low word is >= ``up_at``; finite values never round to inf here; ``nan``
    lanes -> 0x7fffffff00000000 (9.7.3.14/17)."""
    rb = r.view(_U64)
    fin = np.isfinite(r)
    up = (rb + _U64((1 << 32) - up_at)) & _U64(0xFFFFFFFF00000000)
    keep_fin = fin & ((up & _U64(0x7FF0000000000000)) != _U64(0x7FF0000000000000))
    rb = np.where(keep_fin, up, np.where(fin, rb & _U64(0xFFFFFFFF00000000), rb))
    rb = np.where(nan | np.isnan(r), _U64(0x7FFFFFFF00000000), rb)
    return rb.view(np.float64)


def sqrt(a, mode="rn", ftz=False, ty=None):
    """``sqrt.{rn,rz,rm,rp,approx}{.ftz}.type d, a`` -- square root.

    PTX ISA 9.0 section 9.7.3.15.  rn/rz/rm/rp: correctly rounded.  ``"approx"``
    (``sqrt.approx.f32``, relative error 2**-23) is computed as the H100 does: MUFU.SQRT
    (:func:`isa.sfu.sqrt`), without ``.ftz`` with a subnormal operand scaled by 2**24 and the
    result by 2**-12.
    Special values: -inf and negative numbers -> NaN, -0.0 -> -0.0, +0.0 -> +0.0,
    +inf -> +inf.  ``ftz`` flushes subnormal inputs and results.
    """
    fmt = _fmt_of(ty, a)
    if mode not in _FRND + ("approx",):
        raise ValueError(f"sqrt mode {mode!r}")
    if mode == "approx" and fmt.name == "f32":
        return _mufu_scaled(sfu.sqrt, a, ftz, 2.0 ** 24, 2.0 ** -12)
    rnd = mode if mode in _FRND else "rn"
    with np.errstate(all="ignore"):
        (a,) = _prep(fmt, a)
        f = ftz and fmt.name != "f64"
        x = _flush64(_to_f64(a, fmt), fmt, f)
        if rnd == "rn" and not f:              # roots of these formats are never subnormal
            bits = _rn_fast(np.sqrt(x), fmt)
        else:
            bits = _sqrt_bits(x, fmt, rnd, f)
        isnan = np.isnan(x) | (x < 0)
        bits = np.where(isnan, _nan_bits(fmt, a), bits)
        bits = _flush_bits(bits, fmt, f)
        return _from_bits(bits, fmt)


# --------------------------------------------------------------------------------------
# Public API: .approx special functions
# --------------------------------------------------------------------------------------

def _mufu(fn, x):
    """One MUFU operation (``isa/sfu.py``) on float32 values: float32 in, float32 out."""
    return np.asarray(fn(np.asarray(x, dtype=np.float32).view(np.uint32))).view(np.float32)


def _as_f32(a):
    (a,) = _prep(_FMTS["f32"], a)
    return np.asarray(a, dtype=np.float32)


def _mufu_scaled(fn, a, ftz, pre, post, post_add=False):
    """``MUFU fn`` alone (``.ftz``), or, without ``.ftz``, the SASS ptxas wraps around it
    (sqrt, rsqrt, lg2): ``FSETP.GEU |x|, 2**-126``; below it (subnormals and zeros, not NaN)
    ``x * pre`` before and ``r * post`` (``r + post`` for lg2) after, as non-``.ftz`` FMUL
    (FADD) rounded to nearest.  Returns float32 (0-d for a 0-d operand)."""
    x = _as_f32(a)
    if ftz:
        return _mufu(fn, x)
    with np.errstate(all="ignore"):
        small = np.abs(x) < np.float32(2.0 ** -126)
        r = _mufu(fn, np.where(small, mul(x, np.float32(pre)), x))
        fix = add(r, np.float32(post)) if post_add else mul(r, np.float32(post))
        return np.asarray(np.where(small, fix, r), dtype=np.float32)


def _rcp_approx_f32(a, ftz):
    """``rcp.approx{.ftz}.f32``: MUFU.RCP, without ``.ftz`` between two FMULs by a scale
    that is 2**24 for ``|x| < 2**-126``, 0.25 for ``|x| > 2**126`` and 1 otherwise (the SASS
    ptxas emits: FSETP.GEU/FSETP.GT, FSEL, FMUL, MUFU.RCP, FMUL)."""
    x = _as_f32(a)
    if ftz:
        return _mufu(sfu.rcp, x)
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        scale = np.where(ax > np.float32(2.0 ** 126), np.float32(0.25),
                         np.where(ax < np.float32(2.0 ** -126), np.float32(2.0 ** 24),
                                  np.float32(1.0))).astype(np.float32)
        return np.asarray(mul(scale, _mufu(sfu.rcp, mul(x, scale))), dtype=np.float32)


def _div_approx_f32(a, b, ftz):
    """``div.approx{.ftz}.f32`` as ptxas compiles it: ``.ftz``: ``FMUL.FTZ a, MUFU.RCP(b)``;
    without: for ``|b| < 2**-126`` (not NaN) both operands are first multiplied by 2**24,
    then ``FMUL a, MUFU.RCP(b)`` (non-``.ftz``).  For 2**126 < |b| the reciprocal is subnormal
    and MUFU flushes it, giving the zero (NaN for infinite ``a``) the manual pins."""
    x, y = _as_f32(a), _as_f32(b)
    with np.errstate(all="ignore"):
        if ftz:
            return np.asarray(mul(x, _mufu(sfu.rcp, y), ftz=True), dtype=np.float32)
        small = np.abs(y) < np.float32(2.0 ** -126)
        s = np.float32(2.0 ** 24)
        x = np.where(small, mul(x, s), x)
        y = np.where(small, mul(y, s), y)
        return np.asarray(mul(x, _mufu(sfu.rcp, y)), dtype=np.float32)


def _div_full_f32(a, b, ftz):
    """``div.full{.ftz}.f32`` as ptxas 13.0 compiles it for sm_90 (read from the SASS of a one-instruction
    kernel): for ``|b| > 2**126`` both operands are first multiplied by 0.25, and without ``.ftz``, for
    ``|b| < 2**-126`` (not NaN) by 2**24 (FSETP.GT / FSETP.GEU, predicated FMULs), then
    ``FMUL a, MUFU.RCP(b)``; with ``.ftz`` every FMUL is FMUL.FTZ and there is no subnormal step.
    Checked on the H100 by Triton's softmax and layer norm (validation/reports/h100/frontends/triton),
    whose ``div.full.f32`` results were 1-2 ulp off the correctly rounded quotient."""
    x, y = _as_f32(a), _as_f32(b)
    with np.errstate(all="ignore"):
        ay = np.abs(y)
        big = ay > np.float32(2.0 ** 126)
        x = np.where(big, mul(x, np.float32(0.25), ftz=ftz), x)
        y = np.where(big, mul(y, np.float32(0.25), ftz=ftz), y)
        if not ftz:
            small = ay < np.float32(2.0 ** -126)
            x = np.where(small, mul(x, np.float32(2.0 ** 24)), x)
            y = np.where(small, mul(y, np.float32(2.0 ** 24)), y)
        return np.asarray(mul(x, _mufu(sfu.rcp, y), ftz=ftz), dtype=np.float32)


def _ex2_approx_f32(a, ftz):
    """``ex2.approx{.ftz}.f32``: MUFU.EX2; without ``.ftz``, for ``x < -126`` (not NaN) the
    operand is halved and the result squared (FMUL, non-``.ftz``, so subnormal results
    survive)."""
    x = _as_f32(a)
    if ftz:
        return _mufu(sfu.ex2, x)
    with np.errstate(all="ignore"):
        low = x < np.float32(-126.0)
        r = _mufu(sfu.ex2, np.where(low, mul(x, np.float32(0.5)), x))
        return np.asarray(np.where(low, mul(r, r), r), dtype=np.float32)


def _approx(a, fmt, fn, ftz, special):
    """Evaluate ``fn`` in float64 on finite inputs, round to nearest, then apply the exact
    special-value rules ``special(x) -> (mask, float64 value)``."""
    (a,) = _prep(fmt, a)
    x = _flush64(_to_f64(a, fmt), fmt, ftz)
    v = fn(x)
    for mask, val in special(x):                 # exact special values, in float64
        v = np.where(mask, val, v)
    if ftz or fmt.name == "bf16":
        bits = _round_exact64(v, fmt, "rn", ftz)
    else:
        bits = np.where(np.isnan(v), _U64(NAN_BITS[fmt.name]), _rn_fast(v, fmt))
    bits = np.where(np.isnan(x), _nan_bits(fmt, a), bits)
    bits = _flush_bits(bits, fmt, ftz)
    return _from_bits(bits, fmt)


def rsqrt(a, ftz=False, ty=None):
    """``rsqrt.approx{.ftz}.type d, a`` -- ``1/sqrt(a)``, approximate (f32, f64).

    PTX ISA 9.0 section 9.7.3.16: maximum relative error 2**-22.9 for f32 (f64: emulated, no
    bound stated).  f32: computed as the H100 does, MUFU.RSQ (:func:`isa.sfu.rsq`), without
    ``.ftz`` with a subnormal operand scaled by 2**24 and the result by 2**12; f64: the
    float64 ``1/sqrt`` rounded to nearest.  Special values:
    -inf and negative numbers -> NaN, -0.0 -> -inf, +0.0 -> +inf, +inf -> +0.0.
    f64 with ``ftz=True`` is ``rsqrt.approx.ftz.f64`` (9.7.3.17): computed from the upper 32
    bits of ``a`` only, the low 32 result bits are zero, subnormal inputs give +-inf, and NaN
    or negative inputs give ``0x7fffffff00000000``; the upper word is that of the float64
    ``1/sqrt``, rounded up when the discarded part is >= 0.96 of a unit (98.3% of 200000
    probed H100 results identical, the rest one unit of bit 32 apart).
    """
    fmt = _fmt_of(ty, a)
    if fmt.name == "f64" and ftz:                # rsqrt.approx.ftz.f64 (9.7.3.17)
        with np.errstate(all="ignore"):
            (a,) = _prep(fmt, a)
            x = (_to_bits(a, fmt) & _U64(0xFFFFFFFF00000000)).view(np.float64)
            x = np.where(np.abs(x) < 2.0 ** -1022, np.copysign(0.0, x), x)
            r = np.where(x == 0, np.copysign(np.inf, x), 1.0 / np.sqrt(x))
            return _upper_word(r, np.isnan(x) | (x < 0), _RSQRT64_UP_AT)
    if fmt.name == "f32":
        return _mufu_scaled(sfu.rsq, a, ftz, 2.0 ** 24, 2.0 ** 12)
    with np.errstate(all="ignore"):
        return _approx(a, fmt, lambda x: 1.0 / np.sqrt(x), ftz and fmt.name != "f64",
                       lambda x: [(x == 0, np.where(np.signbit(x), -np.inf, np.inf)),
                                  (x < 0, np.nan), (x == np.inf, 0.0)])


def ex2(a, ftz=False, ty=None):
    """``ex2.approx{.ftz}.type d, a`` -- ``2**a``, approximate (f32, f16, bf16).

    PTX ISA 9.0 sections 9.7.3.21 (f32: max 2 ulp from the correctly rounded result) and
    9.7.4.10 (f16: relative 2**-9.9; bf16: relative 2**-7, and only ``ex2.approx.ftz.bf16``
    exists, so bf16 always flushes subnormal inputs and results).  Computed as the H100
    does: f32 MUFU.EX2 (:func:`isa.sfu.ex2`; without ``.ftz`` an operand below -126 is halved
    and the result squared), f16/bf16 the f32 MUFU.EX2 narrowed toward zero (see
    ``_ex2_approx_half``).  Special values: -inf -> +0.0, +-0.0 -> +1.0, +inf -> +inf.
    """
    fmt = _fmt_of(ty, a)
    if fmt.name == "f32":
        return _ex2_approx_f32(a, ftz)
    if fmt.name in ("f16", "bf16"):
        return _ex2_approx_half(a, fmt)
    f = (ftz or fmt.name == "bf16") and fmt.name != "f64"
    with np.errstate(all="ignore"):
        return _approx(a, fmt, np.exp2, f,
                       lambda x: [(x == -np.inf, 0.0), (x == 0, 1.0), (x == np.inf, np.inf)])


def _ex2_approx_half(a, fmt):
    """``ex2.approx.f16`` / ``ex2.approx.ftz.bf16`` (MUFU.EX2.F16 / .BF16): the float32
    MUFU.EX2 of the operand (exactly widened), narrowed toward zero -- f16: rounded toward
    zero except that results past the largest f16 become +inf, f16 subnormal results kept;
    bf16: the upper 16 bits.  NaN -> 0x7fff.  Reproduced every one of the 65536 inputs of
    each on an H100 (``validation/probes/sfu_measure.py``)."""
    (a,) = _prep(fmt, a)
    with np.errstate(all="ignore"):
        if fmt.name == "bf16":
            x32 = (np.asarray(a, dtype=np.uint16).astype(np.uint32) << np.uint32(16))
            r = sfu.ex2(x32)
            out = (r >> np.uint32(16)).astype(np.uint16)
            return np.asarray(out)
        x32 = np.asarray(a, dtype=np.float16).astype(np.float32).view(np.uint32)
        r = sfu.ex2(x32).view(np.float32)
        h = r.astype(np.float16)
        hb = h.view(np.uint16)
        back = np.isfinite(h) & (np.abs(h.astype(np.float32)) > np.abs(r))
        hb = np.where(back, hb - np.uint16(1), hb)
        hb = np.where(np.isnan(r), np.uint16(0x7FFF), hb).astype(np.uint16)
        return np.asarray(hb).view(np.float16)


def lg2(a, ftz=False):
    """``lg2.approx{.ftz}.f32 d, a`` -- ``log2(a)``, approximate.

    PTX ISA 9.0 section 9.7.3.20: maximum absolute error 2**-22 for a in (0.5, 2), maximum
    relative error 2**-22 for other positive finite inputs.  Computed as the H100 does:
    MUFU.LG2 (:func:`isa.sfu.lg2`); without ``.ftz`` a subnormal operand is first multiplied
    by 2**24 and 24 subtracted from the result (FADD).  Special values: -inf and negative numbers -> NaN, +-0.0 -> -inf,
    +inf -> +inf.  f32 only.
    """
    return _mufu_scaled(sfu.lg2, a, ftz, 2.0 ** 24, -24.0, post_add=True)


def sin(a, ftz=False):
    """``sin.approx{.ftz}.f32 d, a`` -- sine of ``a`` radians, approximate.

    PTX ISA 9.0 section 9.7.3.18: maximum absolute error 2**-20.5 on [-2pi, 2pi] and
    2**-14.7 on [-100pi, 100pi]; no bound outside.  Computed as the H100 does: ``FMUL.RZ``
    by 1/(2 pi) to turns, then MUFU.SIN (:func:`isa.sfu.sin`: the turns truncated to
    multiples of 2**-25, so large arguments keep only a few bits).  Special values:
    +-inf -> NaN, +-0.0 -> +-0.0.
    """
    return _sincos_approx(sfu.sin, a)


def cos(a, ftz=False):
    """``cos.approx{.ftz}.f32 d, a`` -- cosine of ``a`` radians, approximate.

    PTX ISA 9.0 section 9.7.3.19: error bounds as :func:`sin`.  ``FMUL.RZ`` then MUFU.COS
    (:func:`isa.sfu.cos`).  Special values: +-inf -> NaN, +-0.0 -> +1.0.
    """
    return _sincos_approx(sfu.cos, a)


def _sincos_approx(fn, a):
    """``sin/cos.approx{.ftz}.f32``: ``FMUL.RZ t, x, 1/(2 pi)`` (float32 constant
    0x3e22f983, non-``.ftz``), then ``MUFU.SIN/COS t`` (which flushes a subnormal ``t``); the
    same SASS with and without ``.ftz``."""
    x = _as_f32(a)
    with np.errstate(all="ignore"):
        t = mul(x, np.uint32(sfu.SIN_SCALE).view(np.float32), rnd="rz")
        return _mufu(fn, t)


def tanh(a, ty=None):
    """``tanh.approx.type d, a`` -- hyperbolic tangent, approximate (f32, f16, bf16).

    PTX ISA 9.0 sections 9.7.3.22 (f32: maximum relative error 2**-11) and 9.7.4.9 (f16:
    absolute 2**-10.987, bf16: absolute 2**-8).  Subnormals are supported and pass through
    (tanh(x) rounds to x).  Special values: -inf -> -1.0, +inf -> +1.0, +-0.0 -> +-0.0.
    """
    fmt = _fmt_of(ty, a)
    with np.errstate(all="ignore"):
        return _approx(a, fmt, np.tanh, False,
                       lambda x: [(x == 0, x), (x == np.inf, 1.0), (x == -np.inf, -1.0)])


# --------------------------------------------------------------------------------------
# Public API: min / max / abs / neg / compare
# --------------------------------------------------------------------------------------

def _minmax(a, b, nan, ty, ftz, is_min):
    fmt = _fmt_of(ty, a)
    with np.errstate(all="ignore"):
        a, b = _prep(fmt, a, b)
        f = ftz and fmt.name != "f64"
        ab = _flush_bits(_to_bits(a, fmt), fmt, f)
        bb = _flush_bits(_to_bits(b, fmt), fmt, f)
        x = _bits_to_f64(ab, fmt)
        y = _bits_to_f64(bb, fmt)
        xn, yn = np.isnan(x), np.isnan(y)
        if is_min:
            pick_a = (x < y) | ((x == y) & np.signbit(x))       # -0.0 < +0.0
        else:
            pick_a = (x > y) | ((x == y) & ~np.signbit(x))
        out = np.where(pick_a, ab, bb)
        out = np.where(xn & ~yn, bb, np.where(yn & ~xn, ab, out))
        anynan = (xn | yn) if nan else (xn & yn)
        if fmt.name == "f64":                    # both NaN: b, quieted (H100); .NaN: not in PTX
            out = np.where(anynan, _nan_bits(fmt, b, a), out)
        else:
            out = np.where(anynan, _U64(NAN_BITS[fmt.name]), out)
        return _from_bits(out, fmt)


def minimum(a, b, nan=False, ty=None, ftz=False):
    """``min{.ftz}{.NaN}.type d, a, b`` (f16, bf16, f32, f64).

    PTX ISA 9.0 sections 9.7.3.11 and 9.7.4.7: if exactly one operand is NaN the result is
    the other operand; if both are NaN (or, with ``nan=True`` for ``.NaN``, if either is) the
    result is the canonical NaN (``NAN_BITS``).  -0.0 is less than +0.0.  The selected
    operand is returned bit-exactly.  ``ftz`` (extra keyword) flushes subnormal operands.
    """
    return _minmax(a, b, nan, ty, ftz, True)


def maximum(a, b, nan=False, ty=None, ftz=False):
    """``max{.ftz}{.NaN}.type d, a, b``: as :func:`minimum` with +0.0 > -0.0.

    PTX ISA 9.0 sections 9.7.3.12 and 9.7.4.8.
    """
    return _minmax(a, b, nan, ty, ftz, False)


def absolute(a, ftz=False, ty=None):
    """``abs{.ftz}.type d, a`` -- clears the sign bit.

    PTX ISA 9.0 sections 9.7.3.9 and 9.7.4.6.  "For abs.f64, NaN input is passed through
    unchanged" (sign included); for f16/bf16/f32 a NaN input "yields unspecified NaN", pinned
    to the canonical NaN (``NAN_BITS``).  ``ftz`` flushes a subnormal input to +0.0.
    """
    fmt = _fmt_of(ty, a)
    with np.errstate(all="ignore"):
        (a,) = _prep(fmt, a)
        bits = _flush_bits(_to_bits(a, fmt), fmt, ftz and fmt.name != "f64")
        mag_mask = _U64((1 << (fmt.width - 1)) - 1)
        isnan = (bits & mag_mask) > _U64(fmt.inf_mag)
        out = bits & mag_mask
        if fmt.name == "f64":                    # passed through (quieted, as an H100 does)
            out = np.where(isnan, bits | _U64(_F64_QUIET), out)
        else:
            out = np.where(isnan, _U64(NAN_BITS[fmt.name]), out)
        return _from_bits(out, fmt)


def negate(a, ftz=False, ty=None):
    """``neg{.ftz}.type d, a`` -- flips the sign bit (zeros and infinities included).

    PTX ISA 9.0 sections 9.7.3.10 and 9.7.4.5.  "NaN inputs yield an unspecified NaN":
    pinned to the canonical NaN (``NAN_BITS``) for f16/bf16/f32; an f64 NaN is returned with
    its sign flipped and payload kept.  ``ftz`` flushes a subnormal input first.
    """
    fmt = _fmt_of(ty, a)
    with np.errstate(all="ignore"):
        (a,) = _prep(fmt, a)
        bits = _flush_bits(_to_bits(a, fmt), fmt, ftz and fmt.name != "f64")
        mag_mask = _U64((1 << (fmt.width - 1)) - 1)
        isnan = (bits & mag_mask) > _U64(fmt.inf_mag)
        out = bits ^ _sign_bit(fmt)
        if fmt.name == "f64":                    # H100: the NaN quieted, sign NOT flipped
            out = np.where(isnan, bits | _U64(_F64_QUIET), out)
        else:
            out = np.where(isnan, _U64(NAN_BITS[fmt.name]), out)
        return _from_bits(out, fmt)


_CMP_OPS = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}


def compare(op, a, b, ty=None, ftz=False):
    """Floating-point comparison of ``setp.op.type`` (and ``set``) -> bool array.

    PTX ISA 9.0 section 9.3.1.2.  Ordered ``eq ne lt le gt ge``: false if either operand
    is NaN (``ne`` included).  Unordered ``equ neu ltu leu gtu geu``: true if either operand
    is NaN, else as the ordered form.  ``num``: neither is NaN; ``nan``: either is NaN.
    -0.0 equals +0.0.  ``ftz`` (extra keyword, ``setp.ftz``) flushes subnormal operands.
    """
    fmt = _fmt_of(ty, a)
    with np.errstate(all="ignore"):
        a, b = _prep(fmt, a, b)
        f = ftz and fmt.name != "f64"
        x = _flush64(_to_f64(a, fmt), fmt, f)
        y = _flush64(_to_f64(b, fmt), fmt, f)
        unord = np.asarray(np.isnan(x) | np.isnan(y))
        if op == "num":
            return np.asarray(~unord)
        if op == "nan":
            return unord
        if op in _CMP_OPS:
            return np.asarray(_CMP_OPS[op](x, y) & ~unord)
        if op.endswith("u") and op[:-1] in _CMP_OPS:
            return np.asarray(_CMP_OPS[op[:-1]](x, y) | unord)
        raise ValueError(f"float comparison {op!r}")


def flush_subnormal(x, ty=None):
    """Subnormal values of ``x`` replaced by zeros of the same sign (the ``.ftz`` rule).

    ``x``: array of a float type's dtype (``uint16`` raw bits for bf16); result: same dtype.
    Zeros, normals, infinities and NaNs (bits included) are unchanged.
    """
    fmt = _fmt_of(ty, x)
    (x,) = _prep(fmt, x)
    return _from_bits(_flush_bits(_to_bits(x, fmt), fmt), fmt)


# --------------------------------------------------------------------------------------
# Public API: cvt
# --------------------------------------------------------------------------------------

def _int_to_float_bits(x, ity, fmt, rnd):
    """Correctly rounded integer -> float conversion (bits of ``fmt``)."""
    dt, w, signed = _INTS[ity]
    x = np.asarray(x).astype(dt)
    hi = x.astype(np.float64)                    # RN (x86 cvtsi2sd); exact for <= 53 bits
    if w < 64:
        s = np.zeros(x.shape, np.int8)
    elif signed:
        big = hi >= 9.2233720368547758e18        # 2**63: x < 2**63 <= hi
        hb = np.where(big, 0.0, hi).astype(np.int64)
        s = np.where(big, -1, np.sign(x - hb)).astype(np.int8)
    else:
        big = hi >= 1.8446744073709552e19        # 2**64
        lo_half = hi < 9.2233720368547758e18
        hb = np.where(lo_half, hi, 0.0).astype(np.uint64)
        hb = np.where(lo_half | big, hb,
                      np.maximum(hi - 9.2233720368547758e18, 0.0).astype(np.uint64) + _U64(1 << 63))
        s = np.where(big, -1, np.where(x > hb, 1, np.where(x < hb, -1, 0))).astype(np.int8)
    return _round_f64(hi, s, 0, fmt, rnd)


def _float_to_int(x64, ity, src_is_f64, irnd):
    """Round to an integer in ``irnd``, clamp to the integer type, NaN per 9.7.9.21."""
    dt, w, signed = _INTS[ity]
    nan = np.isnan(x64)
    xv = np.where(nan, 0.0, x64)
    r = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[irnd](xv)
    if signed:
        lo, hi = -(2.0 ** (w - 1)), 2.0 ** (w - 1)
        inr = (r >= lo) & (r < hi)
        v = np.where(inr, r, 0.0).astype(np.int64)
        res = np.where(r >= hi, np.int64((1 << (w - 1)) - 1),
                       np.where(r < lo, np.int64(-(1 << (w - 1))), v))
        res = res.astype(dt)
    else:
        hi = 2.0 ** w
        two63 = 9.2233720368547758e18
        inr = np.where((r >= 0) & (r < hi), r, 0.0)
        top = inr >= two63
        low = np.where(top, 0.0, inr).astype(np.uint64)
        high = np.where(top, inr - two63, 0.0).astype(np.uint64) + _U64(1 << 63)
        res = np.where(r >= hi, _U64((1 << w) - 1), np.where(top, high, low))
        res = res.astype(dt)
    if not src_is_f64 and w < 64:
        nanval = np.zeros((), dt)
    else:
        nanval = np.array(1 << (w - 1), dtype=np.uint64).astype(dt)
    return np.where(nan, nanval, res).astype(dt)


def _cvt_nan_bits(x, sfmt: _Fmt, dfmt: _Fmt, ftz):
    """NaN results of float -> float cvt ("unspecified" in 9.7.9.21), as an H100 returns them:
    a conversion from or to f64 keeps the sign and the leading payload bits and sets the quiet
    bit (with ``.ftz`` an f32 source NaN is first the canonical 0x7FFFFFFF); ``cvt.f32.bf16``
    (no ``.ftz``) shifts the bits unchanged; every other pair gives the canonical NaN."""
    xb = _to_bits(x, sfmt)
    if sfmt.name == "f32" and dfmt.name == "f64" and ftz:
        xb = np.full(xb.shape, _U64(NAN_BITS["f32"]))
    if sfmt.name == "f64" or dfmt.name == "f64":
        frac = xb & _U64((1 << (sfmt.p - 1)) - 1)
        d = dfmt.p - sfmt.p
        frac = frac << _U64(d) if d >= 0 else frac >> _U64(-d)
        sign = (xb >> _U64(sfmt.width - 1)) << _U64(dfmt.width - 1)
        return sign | _U64(dfmt.inf_mag) | _U64(1 << (dfmt.p - 2)) | frac
    if sfmt.name == "bf16" and dfmt.name == "f32" and not ftz:
        return xb << _U64(16)
    return np.full(xb.shape, _U64(NAN_BITS[dfmt.name]))


def cvt(x, dst, src, rnd=None, sat=False, ftz=False):
    """``cvt{.rnd}{.ftz}{.sat}.dst.src d, a`` -- scalar conversions of PTX ISA 9.0 9.7.9.21.

    ``dst``, ``src``: ``s8 u8 s16 u16 s32 u32 s64 u64 f16 bf16 f32 f64``.  ``x`` has the
    numpy dtype of ``src`` (raw ``uint16`` bits for bf16); the result has the dtype of
    ``dst``.  ``rnd``: ``rn rz rm rp`` (float rounding) or ``rni rzi rmi rpi`` (integer
    rounding); ``None`` picks ``rn`` where the manual requires a float rounding modifier and
    ``rzi`` for float -> integer.

    * int -> int: two's-complement wrap (narrowing) or sign/zero extension (widening);
      ``sat`` clamps to the destination range.
    * float -> int: round to an integer with ``rni`` (ties to even), ``rzi``, ``rmi``,
      ``rpi``; the result is clamped to the destination range (PTX clamps by default, so
      ``sat`` changes nothing); NaN -> 0 if ``src`` is not f64 and ``dst`` is not s64/u64,
      otherwise ``1 << (width - 1)`` (the manual's rule).  ``ftz`` flushes a subnormal f32
      source to zero first.
    * int -> float: correctly rounded in rn/rz/rm/rp (64-bit integers too).
    * float -> float: narrowing (f64 -> f32/f16/bf16, f32 -> f16/bf16, f16 <-> bf16) is
      correctly rounded in rn/rz/rm/rp with overflow to inf or the largest finite value
      according to the direction; widening is exact; same type with ``rni/rzi/rmi/rpi``
      rounds to an integral value (signed zeros kept).  NaN -> the destination's canonical
      NaN.  ``ftz`` flushes f32 subnormal inputs and results ("applies only to single
      precision (.f32) inputs and results").  ``sat`` clamps to [0.0, 1.0], NaN -> +0.0.
    """
    dst = str(dst).lstrip(".")
    src = str(src).lstrip(".")
    if dst not in _INTS and dst not in _FMTS or src not in _INTS and src not in _FMTS:
        raise ValueError(f"cvt.{dst}.{src}: unsupported type")
    if rnd is not None and rnd not in _FRND + _IRND:
        raise ValueError(f"cvt rounding {rnd!r}")
    with np.errstate(all="ignore"):
        x = np.asarray(x)
        # ---------------------------------------------------------------- int -> int
        if src in _INTS and dst in _INTS:
            sdt, sw, ss = _INTS[src]
            ddt, dw, ds = _INTS[dst]
            x = x.astype(sdt)
            if sat:
                dmin = -(1 << (dw - 1)) if ds else 0
                dmax = (1 << (dw - 1)) - 1 if ds else (1 << dw) - 1
                smin = -(1 << (sw - 1)) if ss else 0
                smax = (1 << (sw - 1)) - 1 if ss else (1 << sw) - 1
                lo, hi = max(dmin, smin), min(dmax, smax)
                x = np.minimum(np.maximum(x, sdt(lo)), sdt(hi))
            return np.array(x.astype(ddt))
        # ---------------------------------------------------------------- int -> float
        if src in _INTS:
            fmt = _FMTS[dst]
            r = rnd if rnd in _FRND else ("rn" if rnd is None else rnd[:2])
            bits = _int_to_float_bits(x, src, fmt, r)
            bits = _sat_bits(bits, fmt, sat)
            return _from_bits(bits, fmt)
        sfmt = _FMTS[src]
        x = x.astype(sfmt.dtype)
        x64 = _flush64(_to_f64(x, sfmt), sfmt, ftz and src == "f32")
        # ---------------------------------------------------------------- float -> int
        if dst in _INTS:
            irnd = rnd if rnd in _IRND else ("rzi" if rnd is None else rnd + "i")
            return np.array(_float_to_int(x64, dst, src == "f64", irnd))
        # ---------------------------------------------------------------- float -> float
        dfmt = _FMTS[dst]
        fz = ftz and dst == "f32"
        if rnd in _IRND:
            f = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[rnd]
            v = f(x64)
            bits = _round_exact64(v, dfmt, "rn")
        elif rnd in (None, "rn") and not fz and dst != "bf16":
            bits = _rn_fast(x64, dfmt)           # x64 is exact: one rounding (cast)
        else:
            bits = _round_exact64(x64, dfmt, rnd if rnd in _FRND else "rn", fz)
        bits = np.where(np.isnan(x64), _cvt_nan_bits(x, sfmt, dfmt, ftz), bits)
        bits = _flush_bits(bits, dfmt, fz)
        bits = _sat_bits(bits, dfmt, sat)
        return _from_bits(bits, dfmt)
