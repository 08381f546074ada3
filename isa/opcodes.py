"""THE opcode table: one row per PTX instruction gpusim supports.

Owns: for every opcode, the types and modifiers it accepts, the number of
operands, the execution kind, the timing unit class, the lane-vectorised
semantics (for arithmetic/logic rows) and a one-line description. The parser
validates instructions against it, the functional engine executes from it,
the timing engine routes by ``unit``, and ``gpusim isa`` prints it.

Imports only numpy and the pure semantics modules :mod:`isa.fp`, :mod:`isa.half` and
:mod:`isa.intops` (the tensor cores' :mod:`isa.mma` is called by the engine's MMA handler).
Source of every rule: PTX ISA 9.0 (chapter 9, "Instruction Set"); section numbers are in each
row's doc.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable

import numpy as np

from isa import fp, half, intops
from isa.types import TYPES

__all__ = ["Kind", "OpSpec", "OPCODES", "REFUSED", "lookup", "rounding", "int_rounding"]


class Kind(str, Enum):
    """How the functional engine executes a row."""

    ALU = "alu"          # d = fn(sources); registers/immediates only
    MOV = "mov"          # moves incl. special registers, symbols, vector pack/unpack
    LD = "ld"
    ST = "st"
    ATOM = "atom"        # atom (returns old value) and red (no destination)
    CVTA = "cvta"
    BRA = "bra"
    EXIT = "exit"
    BAR = "bar"
    FENCE = "fence"      # ordering only: a no-op in a sequentially consistent simulator
    SHFL = "shfl"
    VOTE = "vote"
    ACTIVEMASK = "activemask"
    MMA = "mma"          # warp-collective matrix multiply-accumulate (tensor cores)
    CPASYNC = "cp.async"  # cp.async copies and their commit/wait groups (gpusim/functional/asyncops.py)
    WGMMA = "wgmma"      # warpgroup-collective wgmma.mma_async (gpusim/functional/asyncops.py)


INT = frozenset({"s16", "s32", "s64", "u16", "u32", "u64"})
SINT = frozenset({"s16", "s32", "s64"})
BITS = frozenset({"b16", "b32", "b64"})
FLT = frozenset({"f16", "bf16", "f32", "f64"})
F32 = frozenset({"f32"})
F32_64 = frozenset({"f32", "f64"})
ALL = INT | BITS | FLT | {"s8", "u8", "b8", "pred"}
ROUND = frozenset({"rn", "rz", "rm", "rp"})
IROUND = frozenset({"rni", "rzi", "rmi", "rpi"})
CMP = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
                 "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"})
BOOLOP = frozenset({"and", "or", "xor"})
SPACES = frozenset({"global", "shared", "local", "param", "const", "shared::cta", "param::entry"})
SCOPES = frozenset({"cta", "cluster", "gpu", "sys"})
MEM_ORDER = frozenset({"weak", "volatile", "relaxed", "acquire", "release", "acq_rel", "sc"})
CACHE_OPS = frozenset({"ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc"})
ATOM_OPS = frozenset({"add", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec"})


def _is_float(ty: str | None) -> bool:
    return ty is not None and TYPES[ty].kind == "f"


def rounding(ins, default: str = "rn") -> str:
    """The IEEE rounding modifier of ``ins`` (``rn``/``rz``/``rm``/``rp``)."""
    for r in ("rn", "rz", "rm", "rp"):
        if r in ins.mods:
            return r
    return default


def int_rounding(ins) -> str | None:
    """The integer rounding modifier of ``ins`` (``rni``...), or ``None``."""
    for r in ("rni", "rzi", "rmi", "rpi"):
        if r in ins.mods:
            return r
    return None


_WIDE = {"s16": "s32", "u16": "u32", "s32": "s64", "u32": "u64"}


def _same(n: int):
    """Signature: destination and ``n`` sources all of the instruction type."""
    return lambda i: ((i.ty,), (i.ty,) * n)


def _unit_arith(i) -> str:
    if i.ty == "f64":
        return "fp64"
    return "fma" if _is_float(i.ty) else "alu"


def _unit_mul(i) -> str:
    """Integer multiplies become IMAD/IMAD.WIDE/IMAD.HI, which issue to their own pipe (sm_86
    and sm_90: the FMA-heavy pipe, 16 lanes per sub-partition; see the configs' ``imad``)."""
    if i.ty == "f64":
        return "fp64"
    return "fma" if _is_float(i.ty) else "imad"


def _unit_ld(i) -> str:
    # ptxas turns ld.param/ld.const into constant-bank operands (c[0x0][...]) of ALU
    # instructions or ULDC/LDC: no load/store pipe, no memory latency.
    return "alu" if i.has("param") or i.has("const") or i.has("param::entry") else "lsu"


@dataclass(frozen=True, slots=True)
class OpSpec:
    """One row of the opcode table.

    Attributes:
        name: the base opcode (first component of the mnemonic).
        kind: how the functional engine executes it (:class:`Kind`).
        unit: timing unit class, a name (``"alu"``, ``"fma"``, ``"imad"``, ``"fp64"``,
            ``"sfu"``, ``"lsu"``, ``"shfl"``, ``"branch"``, ``"sync"``, ``"tensor"``) or a function of
            the instruction returning one; latencies are in the GPU config,
            keyed by these names.
        types: accepted type suffixes.
        n_types: how many type suffixes the mnemonic carries (``cvt``: 2).
        mods: accepted non-type modifiers (``"L1::"``/``"L2::"`` prefixes are
            accepted as cache hints wherever ``"hints"`` is listed).
        n_operands: accepted operand counts.
        fn: lane-vectorised semantics for ``Kind.ALU`` rows:
            ``fn(instr, *sources) -> ndarray`` (or a tuple for two results).
        sig: ``sig(instr) -> (destination types, source types)`` for ALU rows.
        required: modifier groups of which exactly one must be present.
        doc: one line, with the PTX ISA section.
        check: ``check(types, mods, n_operands) -> str | None``: a rule the generic checks cannot
            express (which type combinations exist); the parser reports the returned message.
    """

    name: str
    kind: Kind
    unit: str | Callable
    types: frozenset[str]
    n_operands: tuple[int, ...]
    doc: str
    mods: frozenset[str] = frozenset()
    n_types: tuple[int, ...] = (1,)
    fn: Callable | None = None
    sig: Callable | None = None
    required: tuple[frozenset[str], ...] = ()
    check: Callable | None = None

    def unit_of(self, ins) -> str:
        """The timing unit class of ``ins``."""
        return self.unit(ins) if callable(self.unit) else self.unit


# ---------------------------------------------------------------- semantics
FX2 = frozenset(half.PACKED)
X2 = frozenset({"u16x2", "s16x2"}) | FX2
_HALF_OF = {"u16x2": "u16", "s16x2": "s16", **half.PACKED}


def _halves(f):
    """Lift a 16-bit operation to the packed ``.u16x2``/``.s16x2``/``.f16x2``/``.bf16x2``
    types: each 16-bit half is computed on its own (PTX ISA 9.0 §9.7.1, §9.7.4: "operates on
    each half"; element 0 is the lower half)."""
    def fn(i, *xs):
        if i.ty not in X2:
            return f(i, *xs)
        half_ty = _HALF_OF[i.ty]
        dt = TYPES[half_ty].dtype
        out = np.zeros(xs[0].shape, np.uint32)
        for sh in (0, 16):
            parts = [((x.astype(np.uint32) >> np.uint32(sh)) & np.uint32(0xFFFF)).astype(np.uint16).view(dt) for x in xs]
            r = f(_HalfIns(i, half_ty), *parts)
            out |= (np.asarray(r).view(np.uint16).astype(np.uint32)) << np.uint32(sh)
        return out
    return fn


class _HalfIns:
    """``ins`` seen with the type of one half of a packed type (for :func:`_halves`)."""

    def __init__(self, ins, ty: str):
        self._ins, self.ty, self.types = ins, ty, (ty,)

    def has(self, mod: str) -> bool:
        return self._ins.has(mod)

    @property
    def mods(self):
        return self._ins.mods


def _dp(i, a, b, c):
    """``dp4a``/``dp2a.lo/.hi``: c plus the dot product of a's bytes (dp2a: 16-bit halves) with
    b's bytes, each signed or unsigned by its type; wraps modulo 2^32 (PTX ISA 9.0 §9.7.1.23-24)."""
    ta, tb = i.types
    def field(x, shift, width, signed):
        v = (x.astype(np.int64) >> shift) & ((1 << width) - 1)
        return np.where(v >> (width - 1) & 1, v - (1 << width), v) if signed else v
    acc = c.astype(np.int64)
    if i.op == "dp4a":
        for k in range(4):
            acc = acc + field(a, 8 * k, 8, ta == "s32") * field(b, 8 * k, 8, tb == "s32")
    else:
        base = 2 if i.has("hi") else 0
        for k in range(2):
            acc = acc + field(a, 16 * k, 16, ta == "s32") * field(b, 8 * (base + k), 8, tb == "s32")
    res = (acc & 0xFFFFFFFF).astype(np.uint32)
    return res.view(np.int32) if "s32" in i.types else res


def _dp_sig(i):
    d = "s32" if "s32" in i.types else "u32"
    return (d,), ("u32", "u32", d)


def _testp(i, a):
    bits = np.dtype(f"u{TYPES[i.ty].size}")
    u = np.asarray(a).view(bits)
    width = 8 * bits.itemsize
    mant_bits = 23 if width == 32 else 52
    mag = u & bits.type((1 << (width - 1)) - 1)
    inf = bits.type(((1 << (width - 1 - mant_bits)) - 1) << mant_bits)
    test = next(m for m in ("finite", "infinite", "number", "notanumber", "normal", "subnormal") if i.has(m))
    return {"finite": mag < inf, "infinite": mag == inf, "number": mag <= inf, "notanumber": mag > inf,
            "normal": (mag < inf) & (mag >= bits.type(1 << mant_bits)),
            "subnormal": (mag > 0) & (mag < bits.type(1 << mant_bits))}[test]


def _copysign(i, a, b):
    bits = np.dtype(f"u{TYPES[i.ty].size}")
    sign = bits.type(1 << (8 * bits.itemsize - 1))
    return ((np.asarray(b).view(bits) & ~sign) | (np.asarray(a).view(bits) & sign)).view(TYPES[i.ty].dtype)


def _add(i, a, b):
    if _is_float(i.ty):
        return fp.add(a, b, rounding(i), i.has("ftz"), i.has("sat"), ty=i.ty)
    return intops.add(a, b, i.ty, sat=i.has("sat"))


def contracted(i, a, b, c):
    """An ``add``/``sub`` that ptxas fused with its ``mul`` (:class:`isa.ir.Contraction`):
    ``fma(±a, b, ±c)``, rounded once to nearest even, with the instruction's ``.ftz``."""
    k = i.contract
    return fp.fma(-a if k.neg_product else a, b, -c if k.neg_c else c, "rn", i.has("ftz"), False, ty=i.ty)


def _sub(i, a, b):
    if _is_float(i.ty):
        return fp.sub(a, b, rounding(i), i.has("ftz"), i.has("sat"), ty=i.ty)
    return intops.sub(a, b, i.ty, sat=i.has("sat"))


def _int_mode(i) -> str:
    for m in ("lo", "hi", "wide"):
        if i.has(m):
            return m
    return "lo"


def _mul(i, a, b):
    if _is_float(i.ty):
        return fp.mul(a, b, rounding(i), i.has("ftz"), i.has("sat"), ty=i.ty)
    return intops.mul(a, b, i.ty, _int_mode(i))


def _mad(i, a, b, c):
    if _is_float(i.ty):
        return fp.fma(a, b, c, rounding(i), i.has("ftz"), i.has("sat"), ty=i.ty)
    return intops.mad(a, b, c, i.ty, _int_mode(i), sat=i.has("sat"))


def _fma(i, a, b, c):
    r = fp.fma(a, b, c, rounding(i), i.has("ftz"), i.has("sat"), ty=i.ty)
    return half.relu(r, i.ty) if i.has("relu") else r


def _mul_sig(i):
    if i.has("wide"):
        return (_WIDE[i.ty],), (i.ty, i.ty)
    return (i.ty,), (i.ty, i.ty)


def _mad_sig(i):
    if i.has("wide"):
        return (_WIDE[i.ty],), (i.ty, i.ty, _WIDE[i.ty])
    return (i.ty,), (i.ty,) * 3


def _div(i, a, b):
    if not _is_float(i.ty):
        return intops.div(a, b, i.ty)
    mode = "approx" if i.has("approx") else "full" if i.has("full") else rounding(i)
    return fp.div(a, b, mode, i.has("ftz"), ty=i.ty)


def _minmax(f_fp, f_int):
    def fn(i, a, b):
        if _is_float(i.ty):
            return f_fp(a, b, nan=i.has("NaN"), ty=i.ty, ftz=i.has("ftz"))
        return f_int(a, b, i.ty, relu=i.has("relu"))
    return fn


def _unary(f_fp, f_int):
    def fn(i, a):
        if _is_float(i.ty):
            return f_fp(a, ftz=i.has("ftz"), ty=i.ty)
        return f_int(a, i.ty)
    return fn


def _sfu(f, with_mode: bool):
    def fn(i, a):
        if with_mode:
            mode = "approx" if i.has("approx") else rounding(i)
            return f(a, mode, ftz=i.has("ftz"), ty=i.ty)
        return f(a, ftz=i.has("ftz"), ty=i.ty)
    return fn


def _cmp_op(i) -> str:
    return next(m for m in i.mods if m in CMP)


def _compare(i, a, b):
    op = _cmp_op(i)
    return fp.compare(op, a, b, ty=i.ty) if _is_float(i.ty) else intops.compare(op, a, b, i.ty)


def _boolop(i):
    return next((m for m in i.mods if m in BOOLOP), None)


def _setp(i, a, b, c=None):
    if i.ty in FX2:
        return _compare_halves(i, a, b, c)
    t = _compare(i, a, b)
    f = ~t
    op = _boolop(i)
    if op is not None:
        comb = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[op]
        t, f = comb(t, c), comb(f, c)
    return t, f


def _compare_halves(i, a, b, c=None):
    """``setp``/``set`` on ``.f16x2``/``.bf16x2``: (lower-half result, upper-half result), each
    combined with ``c`` by the BOOLOP if one is given (PTX ISA 9.0 §9.7.5.1-2: ``setp ... p|q``
    gives p for the lower halves and q for the upper halves)."""
    ht = half.PACKED[i.ty]
    (alo, ahi), (blo, bhi) = half.split(a, ht), half.split(b, ht)
    op = _cmp_op(i)
    lo = fp.compare(op, alo, blo, ty=ht, ftz=i.has("ftz"))
    hi = fp.compare(op, ahi, bhi, ty=ht, ftz=i.has("ftz"))
    bop = _boolop(i)
    if bop is not None:
        comb = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[bop]
        lo, hi = comb(lo, c), comb(hi, c)
    return lo, hi


def _setp_sig(i):
    src = (i.ty, i.ty, "pred") if _boolop(i) else (i.ty, i.ty)
    return ("pred", "pred"), src


def _set(i, a, b, c=None):
    dst = i.types[0]
    if i.ty in FX2:      # per half: 1.0 / 0.0 into .f16x2/.bf16x2, 0xFFFF / 0 into .u32/.s32 (9.7.5.1)
        lo, hi = _compare_halves(i, a, b, c)
        if dst in FX2:
            ht = half.PACKED[dst]
            one, zero = half.one(ht), np.zeros((), TYPES[ht].dtype)
            return half.join(np.where(lo, one, zero).astype(TYPES[ht].dtype), np.where(hi, one, zero).astype(TYPES[ht].dtype))
        res = np.where(lo, np.uint32(0xFFFF), np.uint32(0)) | np.where(hi, np.uint32(0xFFFF0000), np.uint32(0))
        return res.astype(np.uint32).view(TYPES[dst].dtype)
    t, _ = _setp(i, a, b, c)
    if dst in ("f16", "bf16", "f32"):
        return np.where(t, half.one(dst), np.zeros((), TYPES[dst].dtype))
    return np.where(t, np.uint32(0xFFFFFFFF), np.uint32(0)).view(TYPES[dst].dtype)


def _set_sig(i):
    src = (i.types[1], i.types[1], "pred") if _boolop(i) else (i.types[1],) * 2
    return (i.types[0],), src


def _cvt(i, a, b=None):
    dst, src = i.types
    rnd = int_rounding(i) or next((r for r in ("rn", "rz", "rm", "rp") if i.has(r)), None)
    if dst in FX2:       # cvt.rn{.relu}.f16x2.f32 d, a, b: a -> upper half, b -> lower half
        return half.cvt_pack(a, b, dst, rnd or "rn", i.has("relu"))
    r = fp.cvt(a, dst, src, rnd=rnd, sat=i.has("sat"), ftz=i.has("ftz"))
    return half.relu(r, dst) if i.has("relu") and dst in ("f16", "bf16") else r


def _cvt_check(types, mods, n_operands) -> str | None:
    if (n_operands == 3) != (types[0] in FX2):
        return "cvt takes three operands (d, a, b) exactly when it packs two f32 into .f16x2/.bf16x2"
    if types[0] in FX2 and types[1] != "f32":
        return f"cvt to .{types[0]} converts from .f32 only"
    return None


def _cvt_sig(i):
    if i.types[0] in FX2:
        return (i.types[0],), ("f32", "f32")
    return (i.types[0],), (i.types[1],)


def _shift(f):
    return lambda i, a, b: f(a, b, i.ty)


def _logic(f):
    def fn(i, *xs):
        return f(*xs)
    return fn


def _lop3(i, a, b, c, lut):
    lut = int(np.asarray(lut).reshape(-1)[0]) & 0xFF
    out = np.zeros_like(a)
    for k in range(8):
        if lut >> k & 1:
            x = a if k & 4 else ~a
            y = b if k & 2 else ~b
            z = c if k & 1 else ~c
            out |= x & y & z
    return out


def _count_sig(i):
    return ("u32",), (i.ty,)


def _shf(i, a, b, c):
    return intops.shf(a, b, c, "l" if i.has("l") else "r", "clamp" if i.has("clamp") else "wrap")


def _prmt(i, a, b, c):
    mode = next((m for m in i.mods if m in {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"}), None)
    return intops.prmt(a, b, c, mode)


def _bfind(i, a):
    return intops.bfind(a, i.ty, shiftamt=i.has("shiftamt"))


#: The mma.sync type combinations supported (d, a, b, c), PTX ISA 9.0 §9.7.14.5.14.
MMA_TYPES = {("f32", "f16", "f16", "f32"): ("f32", "f16"), ("f32", "bf16", "bf16", "f32"): ("f32", "bf16"),
             ("f16", "f16", "f16", "f16"): ("f16", "f16")}


def _mma_check(types, mods, n_operands) -> str | None:
    if tuple(types) not in MMA_TYPES:
        return (f"mma type combination .{'.'.join(types)} is not supported (supported: "
                + ", ".join("." + ".".join(t) for t in MMA_TYPES) + ")")
    return None


def _ldmatrix_check(types, mods, n_operands) -> str | None:
    if "x1" not in mods and "x2" not in mods and "x4" not in mods:
        return "ldmatrix needs one of .x1/.x2/.x4"
    return None


def _cp_async_check(types, mods, n_operands) -> str | None:
    if n_operands == 5 and "L2::cache_hint" not in mods:
        return "cp.async with five operands needs .L2::cache_hint (its last operand is the cache policy)"
    return None


#: wgmma.mma_async shapes (PTX ISA 9.0 "wgmma.mma_async": .m64nNk16 for f16/bf16 inputs, N = 8 .. 256 by 8).
WGMMA_SHAPES = frozenset(f"m64n{n}k16" for n in range(8, 257, 8))
#: Accepted (dtype, atype, btype) of wgmma.mma_async.
WGMMA_TYPES = (("f32", "f16", "f16"), ("f16", "f16", "f16"), ("f32", "bf16", "bf16"))


def _wgmma_check(types, mods, n_operands) -> str | None:
    if tuple(types) not in WGMMA_TYPES:
        return (f"wgmma.mma_async type combination .{'.'.join(types)} is not supported (supported: "
                + ", ".join("." + ".".join(t) for t in WGMMA_TYPES) + ")")
    return None


def _stmatrix_check(types, mods, n_operands) -> str | None:
    if "x1" not in mods and "x2" not in mods and "x4" not in mods:
        return "stmatrix needs one of .x1/.x2/.x4"
    return None


# ---------------------------------------------------------------- the table
_R = ROUND | {"ftz", "sat"}
_ROWS = [
    # Integer and floating-point arithmetic (PTX 9.7.1, 9.7.3, 9.7.4)
    OpSpec("add", Kind.ALU, _unit_arith, INT | FLT | X2, (3,),
           "d = a + b; integers wrap, floats round once; .u16x2/.s16x2 per 16-bit half (9.7.1.1, 9.7.3.1)",
           mods=_R, fn=_halves(_add), sig=_same(2)),
    OpSpec("sub", Kind.ALU, _unit_arith, INT | FLT | FX2, (3,), "d = a - b; .f16x2/.bf16x2 per half (9.7.1.2, 9.7.3.2, 9.7.4.2)",
           mods=_R, fn=_halves(_sub), sig=_same(2)),
    OpSpec("mul", Kind.ALU, _unit_mul, INT | FLT | FX2, (3,),
           "d = a * b; .lo/.hi/.wide halves of the integer product; .f16x2/.bf16x2 per half (9.7.1.3, 9.7.3.3, 9.7.4.3)",
           mods=_R | {"lo", "hi", "wide"}, fn=_halves(_mul), sig=_mul_sig),
    OpSpec("mad", Kind.ALU, _unit_mul, INT | FLT, (4,), "d = a * b + c; the float form rounds once (9.7.1.4, 9.7.3.5)",
           mods=_R | {"lo", "hi", "wide"}, fn=_mad, sig=_mad_sig),
    OpSpec("fma", Kind.ALU, _unit_mul, FLT | FX2, (4,),
           "d = a * b + c rounded once; .relu (f16, bf16) clamps negatives to +0 (9.7.3.4, 9.7.4.4)",
           mods=_R | {"relu"}, fn=_halves(_fma), sig=_same(3), required=(ROUND,)),
    OpSpec("mul24", Kind.ALU, "imad", frozenset({"s32", "u32"}), (3,), "d = low/high 32 bits of 24x24-bit product (9.7.1.5)",
           mods=frozenset({"lo", "hi"}), fn=lambda i, a, b: intops.mul24(a, b, i.ty, _int_mode(i)), sig=_same(2)),
    OpSpec("mad24", Kind.ALU, "imad", frozenset({"s32", "u32"}), (4,), "d = 24x24-bit product + c (9.7.1.6)",
           mods=frozenset({"lo", "hi", "sat"}), fn=lambda i, a, b, c: intops.mad24(a, b, c, i.ty, _int_mode(i), sat=i.has("sat")), sig=_same(3)),
    OpSpec("sad", Kind.ALU, "alu", INT, (4,), "d = |a - b| + c (9.7.1.7)", fn=lambda i, a, b, c: intops.sad(a, b, c, i.ty), sig=_same(3)),
    OpSpec("div", Kind.ALU, "sfu", INT | FLT, (3,), "d = a / b; integers truncate toward zero (9.7.1.8, 9.7.3.6)",
           mods=ROUND | {"ftz", "approx", "full"}, fn=_div, sig=_same(2)),
    OpSpec("rem", Kind.ALU, "sfu", INT, (3,), "d = a % b with the sign of a (9.7.1.9)",
           fn=lambda i, a, b: intops.rem(a, b, i.ty), sig=_same(2)),
    OpSpec("abs", Kind.ALU, _unit_arith, SINT | FLT | FX2, (2,), "d = |a| (9.7.1.10, 9.7.3.7, 9.7.4.6)",
           mods=frozenset({"ftz"}), fn=_halves(_unary(fp.absolute, intops.absolute)), sig=_same(1)),
    OpSpec("neg", Kind.ALU, _unit_arith, SINT | FLT | FX2, (2,), "d = -a (9.7.1.11, 9.7.3.8, 9.7.4.5)",
           mods=frozenset({"ftz"}), fn=_halves(_unary(fp.negate, intops.negate)), sig=_same(1)),
    OpSpec("min", Kind.ALU, _unit_arith, INT | FLT | X2, (3,), "d = min(a, b); float NaN rules of 9.7.3.9 (9.7.1.12)",
           mods=frozenset({"ftz", "NaN", "relu"}), fn=_halves(_minmax(fp.minimum, intops.minimum)), sig=_same(2)),
    OpSpec("max", Kind.ALU, _unit_arith, INT | FLT | X2, (3,), "d = max(a, b) (9.7.1.13, 9.7.3.10)",
           mods=frozenset({"ftz", "NaN", "relu"}), fn=_halves(_minmax(fp.maximum, intops.maximum)), sig=_same(2)),
    OpSpec("dp4a", Kind.ALU, "alu", frozenset({"u32", "s32"}), (4,),
           "d = c + the dot product of the four bytes of a and b (9.7.1.23)", n_types=(2,), fn=_dp, sig=_dp_sig),
    OpSpec("dp2a", Kind.ALU, "alu", frozenset({"u32", "s32"}), (4,),
           "d = c + the two 16-bit halves of a times bytes 0-1 (.lo) or 2-3 (.hi) of b (9.7.1.24)",
           mods=frozenset({"lo", "hi"}), n_types=(2,), fn=_dp, sig=_dp_sig, required=(frozenset({"lo", "hi"}),)),
    OpSpec("popc", Kind.ALU, "alu", frozenset({"b32", "b64"}), (2,), "d = number of set bits (9.7.1.14)",
           fn=lambda i, a: intops.popc(a, i.ty), sig=_count_sig),
    OpSpec("clz", Kind.ALU, "alu", frozenset({"b32", "b64"}), (2,), "d = count of leading zeros (9.7.1.15)",
           fn=lambda i, a: intops.clz(a, i.ty), sig=_count_sig),
    OpSpec("bfind", Kind.ALU, "alu", frozenset({"u32", "s32", "u64", "s64"}), (2,), "d = position of the most significant non-sign bit (9.7.1.16)",
           mods=frozenset({"shiftamt"}), fn=_bfind, sig=_count_sig),
    OpSpec("brev", Kind.ALU, "alu", frozenset({"b32", "b64"}), (2,), "d = a with bits reversed (9.7.1.18)",
           fn=lambda i, a: intops.brev(a, i.ty), sig=_same(1)),
    OpSpec("bfe", Kind.ALU, "alu", frozenset({"u32", "s32", "u64", "s64"}), (4,), "d = bit field of a at position b, length c (9.7.1.19)",
           fn=lambda i, a, b, c: intops.bfe(a, b, c, i.ty), sig=lambda i: ((i.ty,), (i.ty, "u32", "u32"))),
    OpSpec("bfi", Kind.ALU, "alu", frozenset({"b32", "b64"}), (5,), "d = b with a inserted at position c, length d (9.7.1.20)",
           fn=lambda i, a, b, c, d: intops.bfi(a, b, c, d, i.ty), sig=lambda i: ((i.ty,), (i.ty, i.ty, "u32", "u32"))),
    # Floating-point special functions (PTX 9.7.3)
    OpSpec("rcp", Kind.ALU, "sfu", FLT, (2,), "d = 1 / a (9.7.3.11)", mods=ROUND | {"ftz", "approx"},
           fn=_sfu(fp.rcp, True), sig=_same(1)),
    OpSpec("sqrt", Kind.ALU, "sfu", FLT, (2,), "d = sqrt(a) (9.7.3.13)", mods=ROUND | {"ftz", "approx"},
           fn=_sfu(fp.sqrt, True), sig=_same(1)),
    OpSpec("rsqrt", Kind.ALU, "sfu", F32_64, (2,), "d = 1 / sqrt(a), approximate (9.7.3.14)", mods=frozenset({"ftz", "approx"}),
           fn=_sfu(fp.rsqrt, False), sig=_same(1), required=(frozenset({"approx"}),)),
    OpSpec("sin", Kind.ALU, "sfu", F32, (2,), "d = sin(a), approximate (9.7.3.16)", mods=frozenset({"ftz", "approx"}),
           fn=lambda i, a: fp.sin(a, ftz=i.has("ftz")), sig=_same(1), required=(frozenset({"approx"}),)),
    OpSpec("cos", Kind.ALU, "sfu", F32, (2,), "d = cos(a), approximate (9.7.3.17)", mods=frozenset({"ftz", "approx"}),
           fn=lambda i, a: fp.cos(a, ftz=i.has("ftz")), sig=_same(1), required=(frozenset({"approx"}),)),
    OpSpec("lg2", Kind.ALU, "sfu", F32, (2,), "d = log2(a), approximate (9.7.3.18)", mods=frozenset({"ftz", "approx"}),
           fn=lambda i, a: fp.lg2(a, ftz=i.has("ftz")), sig=_same(1), required=(frozenset({"approx"}),)),
    OpSpec("ex2", Kind.ALU, "sfu", frozenset({"f32", "f16", "bf16"}), (2,), "d = 2**a, approximate (9.7.3.19)", mods=frozenset({"ftz", "approx"}),
           fn=_sfu(fp.ex2, False), sig=_same(1), required=(frozenset({"approx"}),)),
    OpSpec("tanh", Kind.ALU, "sfu", frozenset({"f32", "f16", "bf16"}), (2,), "d = tanh(a), approximate (9.7.3.20)", mods=frozenset({"approx"}),
           fn=lambda i, a: fp.tanh(a, ty=i.ty), sig=_same(1), required=(frozenset({"approx"}),)),
    OpSpec("testp", Kind.ALU, "alu", F32_64, (2,),
           "p = a is finite/infinite/number/notanumber/normal/subnormal (9.7.3.11)",
           mods=frozenset({"finite", "infinite", "number", "notanumber", "normal", "subnormal"}), fn=_testp,
           sig=lambda i: (("pred",), (i.ty,)),
           required=(frozenset({"finite", "infinite", "number", "notanumber", "normal", "subnormal"}),)),
    OpSpec("copysign", Kind.ALU, "alu", F32_64, (3,), "d = b with the sign bit of a (9.7.3.12)",
           fn=_copysign, sig=_same(2)),
    # Comparison and selection (PTX 9.7.6)
    OpSpec("setp", Kind.ALU, _unit_arith, INT | BITS | FLT | FX2, (3, 4),
           "p = a CMP b [BOOLOP c]; '|q' receives the complement; .f16x2/.bf16x2: p lower halves, q upper (9.7.6.2, 9.7.5.2)",
           mods=CMP | BOOLOP | {"ftz"}, fn=_setp, sig=_setp_sig, required=(CMP,)),
    OpSpec("set", Kind.ALU, _unit_arith, INT | BITS | FLT | FX2, (3, 4),
           "d = a CMP b ? all-ones (or 1.0) : 0; .f16x2/.bf16x2 sources per half (9.7.6.1, 9.7.5.1)",
           mods=CMP | BOOLOP | {"ftz"}, n_types=(2,), fn=_set, sig=_set_sig, required=(CMP,)),
    OpSpec("selp", Kind.ALU, "alu", INT | BITS | FLT, (4,), "d = c ? a : b (9.7.6.3)",
           fn=lambda i, a, b, c: intops.selp(a, b, c), sig=lambda i: ((i.ty,), (i.ty, i.ty, "pred"))),
    # Logic and shift (PTX 9.7.8)
    OpSpec("and", Kind.ALU, "alu", BITS | {"pred"}, (3,), "d = a & b (9.7.8.1)", fn=_logic(intops.bit_and), sig=_same(2)),
    OpSpec("or", Kind.ALU, "alu", BITS | {"pred"}, (3,), "d = a | b (9.7.8.2)", fn=_logic(intops.bit_or), sig=_same(2)),
    OpSpec("xor", Kind.ALU, "alu", BITS | {"pred"}, (3,), "d = a ^ b (9.7.8.3)", fn=_logic(intops.bit_xor), sig=_same(2)),
    OpSpec("not", Kind.ALU, "alu", BITS | {"pred"}, (2,), "d = ~a (9.7.8.4)", fn=_logic(intops.bit_not), sig=_same(1)),
    OpSpec("cnot", Kind.ALU, "alu", BITS, (2,), "d = (a == 0) ? 1 : 0 (9.7.8.5)", fn=_logic(intops.cnot), sig=_same(1)),
    OpSpec("lop3", Kind.ALU, "alu", frozenset({"b32"}), (5,), "d = any 3-input logic function given by an 8-bit truth table (9.7.8.6)",
           fn=_lop3, sig=lambda i: (("b32",), ("b32", "b32", "b32", "b32"))),
    OpSpec("shf", Kind.ALU, "alu", frozenset({"b32"}), (4,), "funnel shift of the 64-bit pair {b, a} (9.7.8.7)",
           mods=frozenset({"l", "r", "clamp", "wrap"}), fn=_shf, sig=lambda i: (("b32",), ("b32", "b32", "u32")),
           required=(frozenset({"l", "r"}), frozenset({"clamp", "wrap"}))),
    OpSpec("shl", Kind.ALU, "alu", BITS, (3,), "d = a << b; amounts past the width give 0 (9.7.8.8)",
           fn=_shift(intops.shl), sig=lambda i: ((i.ty,), (i.ty, "u32"))),
    OpSpec("shr", Kind.ALU, "alu", BITS | INT, (3,), "d = a >> b; signed types fill with the sign (9.7.8.9)",
           fn=_shift(intops.shr), sig=lambda i: ((i.ty,), (i.ty, "u32"))),
    OpSpec("prmt", Kind.ALU, "alu", frozenset({"b32"}), (4,), "d = bytes of {b, a} selected by c (9.7.9.7)",
           mods=frozenset({"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"}), fn=_prmt, sig=_same(3)),
    # Data movement and conversion (PTX 9.7.9)
    OpSpec("cvt", Kind.ALU, lambda i: "fp64" if "f64" in i.types else "alu", (ALL - {"pred"}) | FX2, (2, 3),
           "d = a converted between types, with rounding and saturation; cvt.rn.f16x2.f32 d, a, b packs two (9.7.9.21)",
           mods=ROUND | IROUND | {"ftz", "sat", "relu"}, n_types=(2,), fn=_cvt, sig=_cvt_sig, check=_cvt_check),
    OpSpec("mov", Kind.MOV, "alu", ALL, (2,), "d = a: register, immediate, special register, variable address; packs/unpacks vectors (9.7.9.1)"),
    OpSpec("cvta", Kind.CVTA, "alu", frozenset({"u32", "u64"}), (2,), "convert between generic and state-space addresses (9.7.9.19)",
           mods=frozenset({"to", "global", "shared", "local", "const", "param", "shared::cta"}),
           required=(frozenset({"global", "shared", "local", "const", "param", "shared::cta"}),)),
    OpSpec("ld", Kind.LD, _unit_ld, ALL, (2,), "d = memory[a]; .v2/.v4 load vectors (9.7.9.8)",
           mods=SPACES | SCOPES | MEM_ORDER | CACHE_OPS | {"v2", "v4", "hints"}),
    OpSpec("st", Kind.ST, "lsu", ALL - {"pred"}, (2,), "memory[a] = b (9.7.9.10)",
           mods=SPACES | SCOPES | MEM_ORDER | CACHE_OPS | {"v2", "v4", "hints"}),
    OpSpec("atom", Kind.ATOM, "lsu", INT | BITS | F32_64 | {"f16", "bf16"}, (3, 4), "d = old memory[a]; memory[a] = op(old, b[, c]) atomically (9.7.13.5)",
           mods=frozenset({"global", "shared", "shared::cta"}) | SCOPES | MEM_ORDER | ATOM_OPS | {"noftz"}, required=(ATOM_OPS,)),
    OpSpec("red", Kind.ATOM, "lsu", INT | BITS | F32_64 | {"f16", "bf16"}, (2,), "memory[a] = op(memory[a], b) atomically, no result (9.7.13.6)",
           mods=frozenset({"global", "shared", "shared::cta"}) | SCOPES | MEM_ORDER | ATOM_OPS | {"noftz"}, required=(ATOM_OPS,)),
    # Control flow (PTX 9.7.10)
    OpSpec("bra", Kind.BRA, "branch", frozenset(), (1,), "jump to a label; .uni promises a warp-uniform target (9.7.10.2)",
           mods=frozenset({"uni"}), n_types=(0,)),
    OpSpec("ret", Kind.EXIT, "branch", frozenset(), (0,), "return from the kernel: the thread exits (9.7.10.7)",
           mods=frozenset({"uni"}), n_types=(0,)),
    OpSpec("exit", Kind.EXIT, "branch", frozenset(), (0,), "the thread exits (9.7.10.8)", n_types=(0,)),
    # Synchronisation and warp-level (PTX 9.7.13, 9.7.9.6, 9.7.13.9)
    OpSpec("bar", Kind.BAR, "sync", frozenset(), (1, 2), "CTA barrier: waits until every live thread of the block arrives (9.7.13.1)",
           mods=frozenset({"sync", "aligned"}), n_types=(0,), required=(frozenset({"sync"}),)),
    OpSpec("barrier", Kind.BAR, "sync", frozenset(), (1, 2), "CTA barrier, the sm_70+ spelling of bar.sync (9.7.13.1)",
           mods=frozenset({"sync", "aligned"}), n_types=(0,), required=(frozenset({"sync"}),)),
    OpSpec("bar.red", Kind.BAR, "sync", frozenset({"u32", "pred"}), (3, 4),
           "CTA barrier that also reduces a predicate over the arriving threads: .popc.u32 counts, .and/.or.pred (9.7.13.1)",
           mods=frozenset({"popc", "and", "or", "aligned"}), required=(frozenset({"popc", "and", "or"}),)),
    OpSpec("barrier.red", Kind.BAR, "sync", frozenset({"u32", "pred"}), (3, 4),
           "barrier.red: the sm_70+ spelling of bar.red (9.7.13.1)",
           mods=frozenset({"popc", "and", "or", "aligned"}), required=(frozenset({"popc", "and", "or"}),)),
    OpSpec("bar.warp", Kind.FENCE, "sync", frozenset(), (1,),
           "bar.warp.sync membermask: warp barrier; the lanes of a warp at one PC run together in gpusim (9.7.13.2)",
           mods=frozenset({"sync"}), n_types=(0,), required=(frozenset({"sync"}),)),
    OpSpec("match", Kind.VOTE, "alu", frozenset({"b32", "b64"}), (3,),
           "d = lanes of membermask whose a equals this lane's (.any), or membermask if all equal (.all, |p) (9.7.13.8)",
           mods=frozenset({"sync", "any", "all"}), required=(frozenset({"sync"}), frozenset({"any", "all"}))),
    OpSpec("redux", Kind.VOTE, "alu", frozenset({"u32", "s32", "b32"}), (3,),
           "d = add/min/max (.u32/.s32) or and/or/xor (.b32) of a over the lanes of membermask (9.7.13.12)",
           mods=frozenset({"sync", "add", "min", "max", "and", "or", "xor"}),
           required=(frozenset({"sync"}), frozenset({"add", "min", "max", "and", "or", "xor"}))),
    OpSpec("nanosleep", Kind.FENCE, "sync", frozenset({"u32"}), (1,),
           "suspend the thread for up to a bound in ns; gpusim does not wait (9.7.13.11)"),
    OpSpec("trap", Kind.FENCE, "branch", frozenset(), (0,),
           "abort the kernel with an error: the launch fails naming the thread (9.7.19.4)", n_types=(0,)),
    OpSpec("prefetch", Kind.FENCE, "lsu", frozenset(), (1,),
           "prefetch a line into a cache level; no effect on results, not timed (9.7.9.15)",
           mods=frozenset({"global", "local", "L1", "L2", "tensormap"}) | {"hints"}, n_types=(0,)),
    OpSpec("membar", Kind.FENCE, "sync", frozenset(), (0,), "memory barrier; ordering only (9.7.13.4)",
           mods=frozenset({"cta", "gl", "sys"}), n_types=(0,)),
    OpSpec("fence", Kind.FENCE, "sync", frozenset(), (0,), "memory fence; ordering only (9.7.13.4)",
           mods=frozenset({"sc", "acq_rel", "cta", "cluster", "gpu", "sys"}), n_types=(0,)),
    OpSpec("shfl", Kind.SHFL, "shfl", frozenset({"b32"}), (5,), "d = a from another lane of the warp; p = source lane in range (9.7.9.6)",
           mods=frozenset({"sync", "up", "down", "bfly", "idx"}), required=(frozenset({"sync"}), frozenset({"up", "down", "bfly", "idx"}))),
    OpSpec("vote", Kind.VOTE, "alu", frozenset({"pred", "b32"}), (3,), "all/any/uni of a predicate over the warp, or its ballot (9.7.13.9)",
           mods=frozenset({"sync", "all", "any", "uni", "ballot"}), required=(frozenset({"sync"}), frozenset({"all", "any", "uni", "ballot"}))),
    # Tensor cores (PTX 9.7.14.5)
    OpSpec("mma", Kind.MMA, "tensor", frozenset({"f32", "f16", "bf16"}), (4,),
           "warp-collective D = A * B + C, m16n8k16 .row.col, f16/bf16 inputs, f32 or f16 accumulators, "
           "H100 tensor-core rounding (9.7.14.5.14)",
           mods=frozenset({"sync", "aligned", "m16n8k16", "row", "col"}), n_types=(4,),
           required=(frozenset({"sync"}), frozenset({"aligned"}), frozenset({"m16n8k16"}), frozenset({"row"}),
                     frozenset({"col"})), check=_mma_check),
    OpSpec("ldmatrix", Kind.LD, "lsu", frozenset({"b16"}), (2,),
           "warp-collective load of one, two or four 8x8 b16 matrices from shared memory into mma fragments (9.7.14.5.15)",
           mods=frozenset({"sync", "aligned", "m8n8", "x1", "x2", "x4", "trans", "shared", "shared::cta"}),
           required=(frozenset({"sync"}), frozenset({"aligned"}), frozenset({"m8n8"}), frozenset({"x1", "x2", "x4"})),
           check=_ldmatrix_check),
    OpSpec("stmatrix", Kind.ST, "lsu", frozenset({"b16"}), (2,),
           "warp-collective store of one, two or four 8x8 b16 matrices from mma fragments to shared memory, "
           "the inverse of ldmatrix (PTX ISA 9.0 stmatrix)",
           mods=frozenset({"sync", "aligned", "m8n8", "x1", "x2", "x4", "trans", "shared", "shared::cta"}),
           required=(frozenset({"sync"}), frozenset({"aligned"}), frozenset({"m8n8"}), frozenset({"x1", "x2", "x4"})),
           check=_stmatrix_check),
    # Asynchronous copies (PTX ISA 9.0 cp.async, cp.async.commit_group, cp.async.wait_group)
    OpSpec("cp.async", Kind.CPASYNC, "lsu", frozenset(), (3, 4, 5),
           "asynchronous copy of 4, 8 or 16 bytes global -> shared; src-size bytes copied and the rest zero-filled, "
           "or all zero with ignore-src; gpusim copies at issue (PTX ISA 9.0 cp.async)",
           mods=frozenset({"ca", "cg", "shared", "shared::cta", "global", "hints"}), n_types=(0,),
           required=(frozenset({"ca", "cg"}), frozenset({"shared", "shared::cta"}), frozenset({"global"})),
           check=_cp_async_check),
    OpSpec("cp.async.commit_group", Kind.CPASYNC, "lsu", frozenset(), (0,),
           "close the thread's pending cp.async copies into a group (PTX ISA 9.0 cp.async.commit_group)", n_types=(0,)),
    OpSpec("cp.async.wait_group", Kind.CPASYNC, "lsu", frozenset(), (1,),
           "wait until at most N of the thread's most recent cp.async groups are pending (PTX ISA 9.0 cp.async.wait_group)",
           n_types=(0,)),
    OpSpec("cp.async.wait_all", Kind.CPASYNC, "lsu", frozenset(), (0,),
           "wait for all of the thread's cp.async copies (PTX ISA 9.0 cp.async.wait_group)", n_types=(0,)),
    # Warpgroup tensor cores, sm_90a (PTX ISA 9.0 wgmma)
    OpSpec("wgmma.mma_async", Kind.WGMMA, "tensor", frozenset({"f32", "f16", "bf16"}), (7, 8),
           "warpgroup-collective D = A * B (+ D if scale-d), m64nNk16, A and B from shared-memory descriptors "
           "(A also from registers), f32/f16 accumulators; gpusim runs it when the 4 warps are at it together "
           "(PTX ISA 9.0 wgmma.mma_async)",
           mods=frozenset({"sync", "aligned"}) | WGMMA_SHAPES, n_types=(3,),
           required=(frozenset({"sync"}), frozenset({"aligned"}), WGMMA_SHAPES), check=_wgmma_check),
    OpSpec("wgmma.fence", Kind.FENCE, "sync", frozenset(), (0,),
           "order register accesses before the following wgmma.mma_async; ordering only (PTX ISA 9.0 wgmma.fence)",
           mods=frozenset({"sync", "aligned"}), n_types=(0,), required=(frozenset({"sync"}), frozenset({"aligned"}))),
    OpSpec("wgmma.commit_group", Kind.FENCE, "sync", frozenset(), (0,),
           "close the warpgroup's pending wgmma.mma_async into a group (PTX ISA 9.0 wgmma.commit_group)",
           mods=frozenset({"sync", "aligned"}), n_types=(0,), required=(frozenset({"sync"}), frozenset({"aligned"}))),
    OpSpec("wgmma.wait_group", Kind.FENCE, "sync", frozenset(), (1,),
           "wait until at most N wgmma groups are pending; gpusim's wgmma results are ready at issue "
           "(PTX ISA 9.0 wgmma.wait_group)",
           mods=frozenset({"sync", "aligned"}), n_types=(0,), required=(frozenset({"sync"}), frozenset({"aligned"}))),
    OpSpec("fence.proxy.async", Kind.FENCE, "sync", frozenset(), (0,),
           "order generic-proxy accesses with async-proxy ones (wgmma, TMA); ordering only (PTX ISA 9.0 membar/fence)",
           mods=frozenset({"global", "shared", "shared::cta", "shared::cluster"}), n_types=(0,)),
    OpSpec("activemask", Kind.ACTIVEMASK, "alu", frozenset({"b32"}), (1,), "d = mask of the lanes executing this instruction (9.7.13.10)"),
]

OPCODES: dict[str, OpSpec] = {row.name: row for row in _ROWS}

#: What gpusim refuses at load time, one line each (the parser's message is
#: "unsupported instruction 'X' (in 'X.mods'); run 'gpusim isa' ..." with the file and line,
#: whatever the operand syntax); ``gpusim isa`` and docs/isa.md list these.
REFUSED: tuple[tuple[str, str], ...] = (
    ("tex, tld4, txq", "texture fetches and queries (texture objects are not modelled)"),
    ("suld, sust, sured, suq", "surface loads, stores, reductions and queries"),
    ("cp.async.bulk(.tensor), cp.reduce.async.bulk, mbarrier", "bulk asynchronous copies, TMA and their barriers "
                                                                "(cp.async with commit/wait groups is supported)"),
    ("movmatrix, wgmma with .sp/.satfinite or 8-bit/tf32 types", "matrix transposes in registers and the other "
                                                                   "wgmma forms (f16/bf16 wgmma.mma_async, mma.sync "
                                                                   "m16n8k16, ldmatrix and stmatrix are supported)"),
    ("call, .func", "device functions and calls: printf (vprintf), assert (__assertfail), __device__ "
                    "functions nvcc did not inline"),
    ("isspacep, elect, griddepcontrol, setmaxnreg, multimem, ...", "every other opcode not in this table"),
)


def lookup(name: str) -> OpSpec | None:
    """The table row of base opcode ``name``, or ``None`` if unsupported."""
    return OPCODES.get(name)
