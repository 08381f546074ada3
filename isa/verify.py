"""The load-time verifier: ptxas's rules on a parsed :class:`isa.ir.Module`.

Owns: the checks that need the whole decoded instruction (its type suffixes, its operands and
the registers' declared types) rather than one token, run by :func:`isa.parser.parse` on every
module it builds, so every load path (``RawModule(path=/code=)``, the front ends, the CLI) gets
them. Each rule raises :class:`isa.errors.PTXError` with the file, line and column and the rule
broken, worded like ptxas's message where ptxas has one. The rules (PTX ISA 9.0; where the ISA is
silent, what ptxas 13.0 does, measured with the mutants of ``benchmarks/ptx_mutants.py``):

* header: the ``.version`` is one that exists (1.0-1.5, 2.0-2.3, 3.0-3.2, 4.0-4.3, 5.0-5.1,
  6.0-6.5, 7.0-7.8, 8.0-8.8, 9.0; ``.address_size`` needs 2.3), the ``.target`` is a known one and
  the version is new enough for it (§11.1.2-3, "PTX ISA Version" / "Target ISA" tables: sm_90
  needs 7.8, sm_90a 8.0, ...);
* instruction/target pairs: an instruction or modifier newer than the ``.target`` (``shfl`` needs
  sm_30, ``cp.async`` and ``redux`` sm_80, ``stmatrix`` and ``add.bf16`` sm_90, ``wgmma`` sm_90a);
* operand types (§6.4 "Operand Type Information" and the ld/st/cvt "Operand Size Exceeding
  Instruction-Type Size" rules): a register operand is compatible with the instruction type when
  the types are equal, or of one size and one of them is a bit-size type, or both integers;
  ``ld``/``st``/``cvt`` data operands may be wider for bit-size and integer types (and bit-size
  registers for float types); predicates only with ``.pred``; immediates: integers for integer,
  bit-size and predicate types, float literals for ``.f32``/``.f64`` (and ``.bN`` of their size),
  none for ``.f16``/``.bf16`` types (ptxas: "Arguments mismatch for instruction 'X'");
* special registers: only ``mov``/``cvt`` read them, none is written, ``%tid``-like vectors need
  a component and scalars take none, and the type fits (``%clock64`` is 64-bit);
* vectors: ``ld``/``st`` ``.v2``/``.v4`` take as many registers, of one size (ptxas: "Argument
  vector size mismatch", "Illegal vector size", "Incompatible elements of vector expression");
  ``mov`` packs 2 or 4 equal registers into a bit-size type of their total size;
* state spaces and addresses: one state space per instruction, an address register of integer or
  bit-size type, a symbol in an address of the instruction's space (kernel parameters: ``.param``),
  no stores to kernel parameters or ``.const``;
* duplicated modifiers (``.nc.nc``, ``.lo.lo``) and barrier numbers 0-15.

Imports only the standard library and the rest of :mod:`isa` (not :mod:`isa.parser`, which calls
this module).
"""

from __future__ import annotations

import re
from typing import Callable

from isa.errors import PTXError
from isa.ir import Addr, Imm, Instr, Kernel, Module, PredPair, Reg, Special, Sym, Vec
from isa.opcodes import Kind
from isa.types import TYPES

__all__ = ["verify", "PTX_VERSIONS", "TARGET_MIN_VERSION"]

#: PTX ISA versions ptxas 13.0 knows (major -> highest minor).
PTX_VERSIONS = {1: 5, 2: 3, 3: 2, 4: 3, 5: 1, 6: 5, 7: 8, 8: 8, 9: 0}

#: The oldest PTX ISA version of each ``.target`` (PTX ISA 9.0 §11.1.3 and its release notes;
#: the values are the ones ptxas 13.0 applies: "PTX .version 7.0 does not support .target sm_90").
TARGET_MIN_VERSION = {
    "sm_10": (1, 0), "sm_11": (1, 0), "sm_12": (1, 2), "sm_13": (1, 2), "sm_20": (2, 0), "sm_21": (2, 0),
    "sm_30": (3, 0), "sm_32": (4, 0), "sm_35": (3, 1), "sm_37": (4, 1), "sm_50": (4, 0), "sm_52": (4, 1),
    "sm_53": (4, 2), "sm_60": (5, 0), "sm_61": (5, 0), "sm_62": (5, 0), "sm_70": (5, 1), "sm_72": (6, 1),
    "sm_75": (6, 3), "sm_80": (7, 0), "sm_86": (7, 1), "sm_87": (7, 4), "sm_88": (7, 3), "sm_89": (7, 8),
    "sm_90": (7, 8), "sm_90a": (8, 0), "sm_100": (8, 6), "sm_100a": (8, 6), "sm_100f": (8, 8),
    "sm_103": (8, 8), "sm_103a": (8, 8), "sm_103f": (8, 8), "sm_110": (9, 0), "sm_110a": (9, 0),
    "sm_110f": (9, 0), "sm_120": (8, 7), "sm_120a": (8, 7), "sm_120f": (8, 8), "sm_121": (8, 8),
    "sm_121a": (8, 8), "sm_121f": (8, 8),
}

_SPACES = {"global": "global", "shared": "shared", "shared::cta": "shared", "shared::cluster": "shared",
           "local": "local", "param": "param", "param::entry": "param", "const": "const"}

#: Special registers: (component required, accepted type sizes in bits). PTX ISA 9.0 chapter 10:
#: %tid/%ntid/%ctaid/%nctaid are .v4.u32 (mov.u16 of a component is the legacy 16-bit form), most
#: others .u32, %clock64/%globaltimer .u64; %gridid is .u64 (ptxas also takes 16/32-bit moves).
_VEC_SPECIALS = frozenset({"tid", "ntid", "ctaid", "nctaid"})
_SPECIAL_BITS = {"clock64": (64,), "globaltimer": (64,), "gridid": (16, 32, 64)}

_KIND_NAME = {"s": "signed integer", "u": "unsigned integer", "b": "bit-size", "f": "floating-point",
              "pred": "predicate"}


# ---------------------------------------------------------------------- type rules
def _strict(r: str, t: str) -> bool:
    """A register of type ``r`` as an operand of instruction type ``t`` (PTX ISA 9.0 §6.4:
    equal types; one size and one a bit-size type; one size and both integers)."""
    if r == t:
        return True
    rt, tt = TYPES[r], TYPES[t]
    if rt.kind == "pred" or tt.kind == "pred" or rt.bits != tt.bits:
        return False
    if rt.kind == "b" or tt.kind == "b":
        return True
    return rt.kind in "su" and tt.kind in "su"


def _relaxed(r: str, t: str) -> bool:
    """``ld``/``st``/``cvt`` data operands (PTX ISA 9.0 §6.4.1.1 "Operand Size Exceeding
    Instruction-Type Size"): bit-size and integer instruction types take registers at least as
    wide (bit-size types also float registers), float types their own type or a bit-size register
    at least as wide; ``.bf16`` only a ``.b16`` register."""
    if r == t:
        return True
    rt, tt = TYPES[r], TYPES[t]
    if rt.kind == "pred" or tt.kind == "pred" or rt.bits < tt.bits:
        return False
    if tt.kind in "su":
        return rt.kind in "bsu"
    if tt.kind == "b":
        return True
    if t in ("bf16", "bf16x2"):
        return rt.kind == "b" and rt.bits == tt.bits
    return rt.kind == "b"


_STRICT = {(r, t): _strict(r, t) for r in TYPES for t in TYPES}
_RELAXED = {(r, t): _relaxed(r, t) for r in TYPES for t in TYPES}


def _imm_ok(imm: Imm, t: str) -> bool:
    """An immediate as an operand of type ``t``: integer literals for integer, bit-size and
    predicate types; float literals (``1.5``, ``0f...``, ``0d...``) for ``.f32``/``.f64`` and for
    bit-size types of the literal's size; no immediate for the 16-bit and packed float types."""
    tt = TYPES[t]
    is_float = imm.bits_of is not None or isinstance(imm.value, float)
    if not is_float:
        return tt.kind != "f"
    if tt.kind == "f":
        return t in ("f32", "f64")
    if tt.kind == "b":
        return (32 if imm.bits_of == "f32" else 64) == tt.bits
    return False


def _type_words(t: str, relaxed: bool = False) -> str:
    tt = TYPES[t]
    if tt.kind == "pred":
        return "a .pred register"
    if relaxed and tt.kind in "sub":
        return f"a {_KIND_NAME[tt.kind] if tt.kind == 'f' else 'integer or bit-size'} register of at least {tt.bits} bits"
    if tt.kind == "f":
        return f"a .{t} or .b{tt.bits} register"
    if tt.kind == "b":
        return f"a {tt.bits}-bit register"
    return f"a {tt.bits}-bit integer or bit-size register"


# ---------------------------------------------------------------------- instruction/target pairs
_F16 = frozenset({"f16", "f16x2"})
_BF16 = frozenset({"bf16", "bf16x2"})
_SCOPES = frozenset({"cta", "gpu", "sys", "cluster"})
_ORDERS = frozenset({"acquire", "release", "relaxed", "acq_rel"})


def _target_need(ins: Instr) -> tuple[int, str] | None:
    """(lowest sm number, what needs it) for ``ins``, or None (PTX ISA 9.0 "Target ISA notes" of
    each instruction; the thresholds are ptxas 13.0's)."""
    op, ty, types, mods = ins.op, ins.ty, ins.types, ins.mods
    tys = set(types)
    if op in ("add", "sub", "mul", "fma", "set", "setp") and tys & _BF16 and op != "fma":
        return 90, f"{op}.{ty}"
    if op in ("add", "sub", "min", "max") and tys & {"u16x2", "s16x2"}:
        return 90, f"{op}.{ty}"
    if op == "stmatrix":
        return 90, "stmatrix"
    if op == "fence.proxy.async":
        return 90, "fence.proxy.async"
    if op == "cvt" and types[0] in _BF16 and types[1] == "f64":
        return 90, "cvt with .bf16.f64"
    if op in ("cp.async", "cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all", "redux"):
        return 80, op
    if op == "mma" or tys & _BF16 or (op == "cvt" and types[0] in _F16 | _BF16 and ins.types[0].endswith("x2")):
        return 80, op if op == "mma" else f"{op}.{'.'.join(types)}"
    if op in ("min", "max") and tys & _F16 or "NaN" in mods or "relu" in mods:
        return 80, f"{op}.{'.'.join(types)}" + (".NaN" if "NaN" in mods else ".relu" if "relu" in mods else "")
    if op in ("ldmatrix", "tanh") or (op == "ex2" and tys & _F16):
        return 75, op
    if op in ("match", "nanosleep") or (op in ("ld", "st", "atom", "red") and set(mods) & _ORDERS):
        return 70, op if op in ("match", "nanosleep") else "." + next(m for m in mods if m in _ORDERS)
    if op in ("dp4a", "dp2a"):
        return 61, op
    if op in ("atom", "red") and (ty == "f64" or set(mods) & _SCOPES):
        return 60, f"{op}.{ty}" if ty == "f64" else "scopes on atomic operations"
    if tys & _F16 and op not in ("ld", "st", "mov", "cvt", "selp"):
        return 53, "f16 arithmetic and compare instructions"
    if (op == "ld" and "nc" in mods) or op == "shf":
        return 32, "ld.nc" if op == "ld" else "shf"
    if op in ("shfl", "activemask", "bar.warp", "barrier", "barrier.red") or (op == "vote" and "sync" in mods):
        return 30, op
    return None


def _mixed_vector(tys: list[str]) -> bool:
    """True if a vector's registers are of types ptxas refuses to mix: a float, an integer and a
    .pred register, any two of them (a bit-size register goes with any type)."""
    kinds = {TYPES[t].kind if TYPES[t].kind in ("f", "pred", "b") else "i" for t in tys}
    kinds.discard("b")
    return len(kinds) > 1


# ---------------------------------------------------------------------- modifiers against types
_ROUND = frozenset({"rn", "rz", "rm", "rp"})
_IROUND = frozenset({"rni", "rzi", "rmi", "rpi"})
_CMP_OF_KIND = {"s": frozenset({"eq", "ne", "lt", "le", "gt", "ge"}),
                "u": frozenset({"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"}),
                "b": frozenset({"eq", "ne"}),
                "f": frozenset({"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
                                "num", "nan"})}
_ARITH = frozenset({"add", "sub", "mul", "mad", "fma", "div", "rcp", "sqrt", "min", "max", "abs", "neg"})


def _modifier_rule(ins: Instr) -> str | None:
    """Which modifiers an instruction's type allows (PTX ISA 9.0 §9.7.1-9.7.3, §9.7.6, §9.7.9.21:
    rounding only on float arithmetic, integer rounding only in cvt to or within floats, .lo/.hi/
    .wide only on integer mul/mad, .sat on .s32 add/sub/mad.hi and float, .ftz only on .f32 and
    half types; the compare operators of each type); the message, worded like ptxas's, or None."""
    op, mods = ins.op, set(ins.mods)
    if op in ("setp", "set"):
        t = ins.types[-1]
        kind = TYPES[t].kind
        cmp = next((m for m in ins.mods if m in _CMP_OF_KIND["f"] | _CMP_OF_KIND["u"]), None)
        if cmp is not None and cmp not in _CMP_OF_KIND.get(kind, ()):
            return (f"Mismatch between instruction type and comparison qualifier: .{cmp} does not compare .{t} "
                    f"(.{t} takes {', '.join('.' + c for c in sorted(_CMP_OF_KIND[kind]))})")
        if len(ins.operands) == 4 and not mods & {"and", "or", "xor"}:
            return f"Boolean operation is required for instruction '{op}' (.and/.or/.xor) with a fourth operand"
        return None
    if op == "cvt":
        return _cvt_rule(ins)
    if op not in _ARITH:
        return None
    t = ins.ty
    kind = TYPES[t].kind
    if kind in "sub":
        if mods & _ROUND or mods & _IROUND:
            return f"Illegal rounding modifier for instruction '{op}' (.{t} is an integer type)"
        for m in ("ftz", "approx", "full", "NaN"):
            if m in mods:
                return f"Illegal modifier '.{m}' for instruction '{op}' (.{t} is an integer type)"
        if op in ("mul", "mad"):
            n = len(mods & {"lo", "hi", "wide"})
            if n != 1:
                return f"Unexpected instruction types specified for '{op}': integer {op} needs one of .lo, .hi, .wide"
            if "wide" in mods and TYPES[t].bits not in (16, 32):
                return f"Unexpected instruction types specified for '{op}.wide': .wide takes .16- and 32-bit types"
        if "sat" in mods:
            if op == "mad" and "hi" not in mods:
                return f"Illegal modifier '.sat' for instruction 'mad.{'lo' if 'lo' in mods else 'wide'}'"
            if op not in ("add", "sub", "mad") or t != "s32":
                return f"Modifier '.sat' does not apply to '.{t}' type"
        if "relu" in mods and t not in ("s32", "s16x2"):
            return f"Illegal modifier '.relu' for instruction '{op}' with type '.{t}'"
        return None
    # floating-point types
    if mods & {"lo", "hi", "wide"}:
        m = next(x for x in ("lo", "hi", "wide") if x in mods)
        return f"Unexpected instruction types specified for '{op}.{m}' (.{m} takes integer types)"
    if mods & _IROUND:
        return f"Illegal rounding modifier for instruction '{op}' (.rni/.rzi/.rmi/.rpi belong to cvt)"
    if t == "f64":
        for m in ("ftz", "sat"):
            if m in mods and not (m == "ftz" and op == "rcp" and "approx" in mods) and op not in ("min", "max"):
                return f"Illegal modifier '.{m}' for instruction '{op}' (.f64)"
        if "approx" in mods and op in ("sqrt", "div"):
            return f"Illegal modifier '.approx' for instruction '{op}' (.f64)"
        if op == "rcp" and "approx" in mods and "ftz" not in mods:
            return "'.ftz' modifier required for instruction 'rcp.approx.f64'"
        if op == "div" and "full" in mods:
            return "Unexpected instruction types specified for 'div.full' (.full takes .f32)"
    if op in ("mad", "fma") and not mods & _ROUND and t in ("f32", "f64"):
        return f"Rounding modifier required for instruction '{op}' (.rn, .rz, .rm or .rp)"
    if op in ("div", "rcp", "sqrt") and t in ("f32", "f64") and not mods & (_ROUND | {"approx", "full"}):
        return f"Rounding modifier or '.approx' modifier required for instruction '{op}'"
    if op == "neg" and "sat" in mods:
        return "Illegal modifier '.sat' for instruction 'neg'"
    return None


#: The types of each atom/red operation (PTX ISA 9.0 §9.7.13.5).
_ATOM_TYPES = {"add": frozenset({"u32", "s32", "u64", "f32", "f64", "f16", "bf16", "f16x2", "bf16x2"}),
               "min": frozenset({"u32", "s32", "u64", "s64", "f16", "bf16", "f16x2", "bf16x2"}),
               "max": frozenset({"u32", "s32", "u64", "s64", "f16", "bf16", "f16x2", "bf16x2"}),
               "and": frozenset({"b32", "b64"}), "or": frozenset({"b32", "b64"}), "xor": frozenset({"b32", "b64"}),
               "exch": frozenset({"b32", "b64", "b128"}), "cas": frozenset({"b16", "b32", "b64", "b128"}),
               "inc": frozenset({"u32"}), "dec": frozenset({"u32"})}


def _type_rule(ins: Instr) -> str | None:
    """Instruction types ptxas refuses beyond the opcode table's lists (PTX ISA 9.0 §9.7.9.8-10,
    §9.7.9.21, §9.7.13.5): ld/st of .pred/.f16/.bf16, cvt of bit-size types, atom/red types per
    operation."""
    op = ins.op
    if op in ("ld", "st") and ins.ty in ("pred", "f16", "bf16"):
        return f"Unexpected instruction types specified for '{op}' (.{ins.ty}: use .b16 for 16-bit floats)"
    if op == "cvt" and any(TYPES[t].kind == "b" for t in ins.types):
        return f"Unexpected instruction types specified for 'cvt' (cvt.{'.'.join(ins.types)}: no bit-size types)"
    if op in ("atom", "red"):
        aop = next((m for m in ins.mods if m in _ATOM_TYPES), None)
        if aop is not None and ins.ty not in _ATOM_TYPES[aop]:
            return (f"Unexpected instruction types specified for '{op}' (.{aop} takes "
                    f"{', '.join('.' + t for t in sorted(_ATOM_TYPES[aop]))}, not .{ins.ty})")
    return None


def _cvt_rule(ins: Instr) -> str | None:
    """cvt's rounding rules (PTX ISA 9.0 §9.7.9.21): float -> narrower float and integer ->
    float need .rn/.rz/.rm/.rp; float -> integer needs .rni/.rzi/.rmi/.rpi; float -> float of the
    same size may take an integer rounding; widening and integer -> integer take none."""
    d, a = ins.types
    mods = set(ins.mods)
    dk, ak = TYPES[d].kind, TYPES[a].kind
    fr, ir = mods & _ROUND, mods & _IROUND
    if dk == "f" and d.endswith("x2"):
        return None  # the f32 pair -> f16x2/bf16x2 pack (cvt's check in the opcode table)
    if dk == "f" and ak != "f":
        need, bad = "rounding", ir
    elif dk != "f" and ak == "f":
        need, bad = "integer rounding", fr
    elif dk == "f" and ak == "f":
        if TYPES[d].bits < TYPES[a].bits or (d == "bf16" and a != "bf16") or (d == "f16" and a == "bf16"):
            need, bad = "rounding", ir
        elif d == a:
            need, bad = None, fr
        else:
            need, bad = None, fr | ir
    else:
        need, bad = None, fr | ir
    if bad:
        return f"Illegal rounding modifier for instruction 'cvt' (.{'.'.join(sorted(bad))} in cvt.{d}.{a})"
    if need == "rounding" and not fr:
        return f"Rounding modifier required for instruction 'cvt' (cvt.{d}.{a} takes .rn, .rz, .rm or .rp)"
    if need == "integer rounding" and not ir:
        return f"Rounding modifier required for instruction 'cvt' (cvt.{d}.{a} takes .rni, .rzi, .rmi or .rpi)"
    return None


# ---------------------------------------------------------------------- the verifier
class _Verifier:
    def __init__(self, mod: Module, note: Callable | None):
        self.mod = mod
        self.note = note
        self.lines = mod.source_lines
        self.target = mod.target
        m = re.match(r"sm_(\d+)", mod.target or "")
        self.sm = int(m.group(1)) if m else 0

    # -------------------------------------------------------------- errors
    def _fail(self, ins: Instr, reason: str, operand: int | None = None) -> PTXError:
        line, col = ins.loc.line, ins.loc.column
        src = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        if operand is not None and src is not None:
            col = _operand_col(src, col, ins.mnemonic, operand) or col
        if self.note is not None:
            reason += self.note(self.mod.files, ins.src)
        return PTXError(self.mod.path, line, col, reason, src)

    def _directive(self, name: str, reason: str) -> PTXError:
        for no, ln in enumerate(self.lines, 1):
            k = ln.find(name)
            if k >= 0 and ln[:k].strip() == "":
                return PTXError(self.mod.path, no, k + 1, reason, ln)
        return PTXError(self.mod.path, 1, 1, reason)

    # -------------------------------------------------------------- header
    def header(self) -> None:
        ver = self.mod.version
        try:
            major, minor = (int(x) for x in ver.split("."))
        except ValueError:
            raise self._directive(".version", f"malformed .version {ver!r}") from None
        if minor > PTX_VERSIONS.get(major, -1):
            raise self._directive(".version", f"Unsupported .version {ver} (ptxas 13.0 and gpusim know PTX ISA 1.0-1.5, "
                                              f"2.0-2.3, 3.0-3.2, 4.0-4.3, 5.0-5.1, 6.0-6.5, 7.0-7.8, 8.0-8.8 and 9.0)")
        if (major, minor) < (2, 3):
            raise self._directive(".address_size", f"Feature '.address_size directive' requires PTX ISA .version 2.3 "
                                                   f"or later (the module says .version {ver})")
        need = TARGET_MIN_VERSION.get(self.target)
        if need is None:
            raise self._directive(".target", f"Unsupported .target {self.target!r} (known: sm_10 ... sm_90, sm_90a, "
                                             f"sm_100/103/110/120/121 with a/f variants)")
        if (major, minor) < need:
            raise self._directive(".version", f"PTX .version {ver} does not support .target {self.target} (it needs "
                                              f".version {need[0]}.{need[1]} or later)")

    # -------------------------------------------------------------- instructions
    def kernel(self, k: Kernel) -> None:
        params = {p.name for p in k.params}
        for ins in k.instrs:
            self.instr(k, ins, params)

    def instr(self, k: Kernel, ins: Instr, params: set[str]) -> None:
        self.target_pair(ins)
        self.modifiers(ins)
        why = _modifier_rule(ins) or _type_rule(ins)
        if why:
            raise self._fail(ins, why)
        kind = ins.spec.kind
        ops = ins.operands
        for i, op in enumerate(ops):
            if isinstance(op, Special):
                self.special(ins, op, i)
            elif isinstance(op, Addr) and kind not in (Kind.LD, Kind.ST, Kind.ATOM, Kind.CPASYNC, Kind.FENCE):
                raise self._fail(ins, f"Arguments mismatch for instruction '{ins.op}': an address [...] is not an "
                                      f"operand of {ins.op}", i)
            elif isinstance(op, Imm) and op.text[:3].lower() in ("-0f", "-0d"):
                raise self._fail(ins, f"Parsing error near '{op.text[1:]}': syntax error (a 0f/0d float literal "
                                      f"takes no sign: write the negated bits)", i)
            elif isinstance(op, Vec):
                tys = [k.regs[r.name] for r in op.items if r is not None]
                if _mixed_vector(tys):
                    raise self._fail(ins, f"Vector with elements of different types are not allowed in {ins.op} "
                                          f"instruction ({op})", i)
                sizes = {TYPES[t].bits for t in tys if t != "pred"}  # ptxas lets a .pred into mma's vectors
                if len(sizes) > 1:
                    raise self._fail(ins, f"Incompatible elements of vector expression {op}: the registers differ "
                                          f"in size", i)
            elif isinstance(op, Addr) and isinstance(op.base, Reg) and k.regs[op.base.name] in ("b32", "u32", "s32") \
                    and self.mod.address_size == 64 and not set(ins.mods) & {"shared", "shared::cta", "shared::cluster",
                                                                               "local", "const", "param", "param::entry"} \
                    and ins.op not in ("cp.async", "ldmatrix", "stmatrix"):
                raise self._fail(ins, f"Program uses 32-bit address on line {ins.loc.line} which is conflicting with "
                                      f".address_size 64: {op.base.name.split('$')[0]} is a 32-bit register addressing "
                                      f"{'global' if 'global' in ins.mods else 'generic'} memory (ptxas: 32-bit "
                                      f"addressing is not supported); use a 64-bit register", i)
        sig = ins.spec.sig
        if kind is Kind.ALU and sig is not None:
            try:
                dsts, srcs = sig(ins)
            except (KeyError, IndexError, ValueError):
                raise self._fail(ins, f"Unexpected instruction types specified for '{ins.op}' "
                                      f"({ins.mnemonic})") from None
            relaxed = ins.op == "cvt"
            self.dest(k, ins, 0, dsts, relaxed)
            for i, (op, t) in enumerate(zip(ops[1:], srcs), 1):
                if ins.op == "lop3" and i == 4:
                    if not isinstance(op, Imm):
                        raise self._fail(ins, "Arguments mismatch for instruction 'lop3': the truth table (operand 4) "
                                              "must be an immediate", i)
                    continue
                self.value(k, ins, i, op, t, relaxed)
                if isinstance(op, Imm) and i >= (2 if ins.op == "bfe" else 3) and ins.op in ("bfe", "bfi") \
                        and not 0 <= int(op.value) <= 255:
                    raise self._fail(ins, f"Argument {i} of instruction '{ins.op}': value '{op}' out of range, "
                                          f"expected to be in range [0..255]", i)
        elif kind is Kind.MOV:
            self.mov(k, ins)
        elif kind in (Kind.LD, Kind.ST) and ins.op in ("ld", "st"):
            self.memory_modifiers(ins)
            self.ldst(k, ins, params)
        elif kind is Kind.ATOM:
            self.memory_modifiers(ins)
            t = ins.ty
            dst = ins.op == "atom"
            if dst:
                self.dest(k, ins, 0, (t,), False)
            self.address(k, ins, 1 if dst else 0, params)
            for i in range(2 if dst else 1, len(ops)):
                self.value(k, ins, i, ops[i], t, False)
        elif kind is Kind.CVTA:
            self.dest(k, ins, 0, (ins.ty,), False)
            if not isinstance(ops[1], Sym):
                self.value(k, ins, 1, ops[1], ins.ty, False)
        elif kind is Kind.SHFL:
            self.dest(k, ins, 0, ("b32", "pred"), False)
            for i in range(1, 5):
                self.value(k, ins, i, ops[i], "b32", False)
        elif kind is Kind.VOTE:
            self.vote(k, ins)
        elif kind is Kind.BAR:
            self.bar(k, ins)
        elif kind is Kind.ACTIVEMASK:
            self.dest(k, ins, 0, ("b32",), False)
        elif ins.op in ("nanosleep", "bar.warp"):
            self.value(k, ins, 0, ops[0], "u32" if ins.op == "nanosleep" else "b32", False)
        elif kind is Kind.MMA:
            f32 = ins.types[0] == "f32"
            for i, (n, t) in enumerate(((4 if f32 else 2, "f32" if f32 else "b32"), (4, "b32"), (2, "b32"),
                                        (4 if ins.types[3] == "f32" else 2, "f32" if ins.types[3] == "f32" else "b32"))):
                self.vector(k, ins, i, n, t)
        elif ins.op in ("ldmatrix", "stmatrix"):
            n = 4 if "x4" in ins.mods else 2 if "x2" in ins.mods else 1
            i = 0 if ins.op == "ldmatrix" else 1
            self.vector(k, ins, i, n, "b32", allow_scalar=n == 1)
            self.address(k, ins, 1 - i, params)
        elif ins.op == "wgmma.mma_async":
            shape = next(m for m in ins.mods if m.startswith("m64n"))
            nn = int(shape[4:shape.index("k")])
            f32 = ins.types[0] == "f32"
            self.vector(k, ins, 0, nn // 2 if f32 else nn // 4, "f32" if f32 else "b32")
            if isinstance(ops[1], Vec):
                self.vector(k, ins, 1, 4, "b32")
            else:
                self.value(k, ins, 1, ops[1], "b64", False)
            self.value(k, ins, 2, ops[2], "b64", False)
            self.value(k, ins, 3, ops[3], "pred", False)
            for i in range(4, len(ops)):
                if not isinstance(ops[i], Imm):
                    raise self._fail(ins, f"Arguments mismatch for instruction 'wgmma.mma_async': operand {i} "
                                          f"(imm-scale/imm-trans) must be an immediate", i)
        elif ins.op == "cp.async":
            for i in (0, 1):
                if not isinstance(ops[i], Addr):
                    raise self._fail(ins, f"Arguments mismatch for instruction 'cp.async': operand {i} must be an "
                                          f"address [...]", i)
                self.address(k, ins, i, params, spaces=False)
            size = ops[2]
            if not isinstance(size, Imm) or size.value not in ((16,) if "cg" in ins.mods else (4, 8, 16)):
                raise self._fail(ins, f"Arguments mismatch for instruction 'cp.async': cp-size {size} must be "
                                      f"{'16 with .cg' if 'cg' in ins.mods else '4, 8 or 16'}", 2)
            for i in range(3, len(ops)):  # src-size (.u32) or ignore-src (.pred), then the cache policy
                pred = i == 3 and isinstance(ops[i], Reg) and k.regs[ops[i].name] == "pred"
                self.value(k, ins, i, ops[i], "pred" if pred else "u32" if i == 3 else "b64", False)

    def target_pair(self, ins: Instr) -> None:
        if ins.op.startswith("wgmma"):
            if self.target != "sm_90a":
                raise self._fail(ins, f"Instruction '{ins.op}' not supported on .target '{self.target}' (wgmma exists "
                                      f"on sm_90a only)")
            return
        need = _target_need(ins)
        if need is not None and self.sm < need[0]:
            raise self._fail(ins, f"Feature '{need[1]}' requires .target sm_{need[0]} or higher (the module's .target "
                                  f"is {self.target})")

    def modifiers(self, ins: Instr) -> None:
        mods = ins.mods
        if len(set(mods)) != len(mods):
            dup = next(m for m in mods if mods.count(m) > 1)
            if dup == "aligned":
                raise self._fail(ins, f"Multiple .aligned modifiers specified in '{ins.mnemonic}'")
            if dup != "sync":  # ptxas takes .sync twice (bar.sync.sync, wgmma.mma_async.sync.sync)
                raise self._fail(ins, f"Duplicate .{dup} modifier in '{ins.mnemonic}'")
        if len(set(ins.types)) != len(ins.types) and ins.spec.n_types == (1,):
            raise self._fail(ins, f"Unexpected instruction types specified for '{ins.op}' ({ins.mnemonic})")
        spaces = [m for m in mods if m in _SPACES]
        if len(spaces) > 1 and ins.op not in ("cp.async", "cvta"):
            raise self._fail(ins, f"Unexpected number of state spaces specified in instruction '{ins.op}': "
                                  f"{', '.join('.' + s for s in spaces)} (one state space per instruction)")

    # -------------------------------------------------------------- operands
    def _reg_type(self, k: Kernel, r: Reg) -> str:
        return k.regs[r.name]

    def dest(self, k: Kernel, ins: Instr, i: int, dsts: tuple, relaxed: bool) -> None:
        op = ins.operands[i]
        if isinstance(op, PredPair):
            if len(dsts) < 2:
                raise self._fail(ins, f"Arguments mismatch for instruction '{ins.op}': it has one destination, "
                                      f"not a pair {op}", i)
            if op.first is not None:
                self.reg(k, ins, i, op.first, dsts[0], relaxed)
            self.reg(k, ins, i, op.second, dsts[1], relaxed)
        elif isinstance(op, Reg):
            self.reg(k, ins, i, op, dsts[0], relaxed)
        elif isinstance(op, Special):
            raise self._fail(ins, f"Read-only special register cannot be destination argument ({op})", i)
        elif op is None:
            return
        else:
            raise self._fail(ins, f"Result register required for instruction '{ins.op}' (operand {i} is {op})", i)

    def reg(self, k: Kernel, ins: Instr, i: int, r: Reg, t: str, relaxed: bool) -> None:
        rt = self._reg_type(k, r)
        if not (_RELAXED if relaxed else _STRICT)[rt, t]:
            raise self._fail(ins, f"Arguments mismatch for instruction '{ins.op}': {r.name.split('$')[0]} is a .{rt} "
                                  f"register; operand {i} of {ins.mnemonic} needs {_type_words(t, relaxed)}", i)

    def value(self, k: Kernel, ins: Instr, i: int, op, t: str, relaxed: bool) -> None:
        if isinstance(op, Reg):
            self.reg(k, ins, i, op, t, relaxed)
        elif isinstance(op, Imm):
            if not _imm_ok(op, t):
                what = "a float literal" if (op.bits_of or isinstance(op.value, float)) else "an integer literal"
                raise self._fail(ins, f"Arguments mismatch for instruction '{ins.op}': {op} is {what}; operand {i} of "
                                      f"{ins.mnemonic} is .{t}", i)
        elif isinstance(op, Vec):
            raise self._fail(ins, f"Arguments mismatch for instruction '{ins.op}': a vector {op} is not an operand "
                                  f"of {ins.mnemonic}", i)
        elif isinstance(op, PredPair):
            raise self._fail(ins, f"Arguments mismatch for instruction '{ins.op}': {op} is only a destination", i)

    def special(self, ins: Instr, sp: Special, i: int) -> None:
        name, comp = sp.name, sp.comp
        if name.startswith("reserved_smem") and self.sm < 80:
            raise self._fail(ins, f"Feature '%{name}' requires .target sm_80 or higher", i)
        if name in _VEC_SPECIALS:
            if comp is None:
                raise self._fail(ins, f"Argument vector size mismatch for instruction '{ins.op}': %{name} is a .v4 "
                                      f"special register; read one component (%{name}.x, .y, .z or .w)", i)
        elif comp is not None:
            raise self._fail(ins, f"Unknown field '.{comp}' (%{name} is a scalar special register)", i)
        if i == 0 and ins.op in ("mov", "cvt"):
            raise self._fail(ins, f"Read-only special register cannot be destination argument ({sp})", i)
        if ins.op not in ("mov", "cvt"):
            raise self._fail(ins, f"Special register argument not allowed for instruction '{ins.op}' ({sp}): read it "
                                  f"into a register with mov first", i)
        t = ins.types[-1]
        tt = TYPES[t]
        bits = _SPECIAL_BITS.get(name, (16, 32) if name in _VEC_SPECIALS else (32,))
        if tt.kind not in "bsu" or tt.bits not in bits:
            raise self._fail(ins, f"Arguments mismatch for instruction '{ins.op}': {sp} is a "
                                  f"{'64' if 64 in bits and len(bits) == 1 else '32'}-bit special register, not .{t}", i)

    def vector(self, k: Kernel, ins: Instr, i: int, n: int, t: str, allow_scalar: bool = False) -> None:
        """Operand ``i`` is a vector of ``n`` registers compatible with ``t``."""
        v = ins.operands[i]
        if not isinstance(v, Vec):
            if allow_scalar and isinstance(v, Reg):
                self.reg(k, ins, i, v, t, False)
                return
            raise self._fail(ins, f"Argument vector size mismatch for instruction '{ins.op}': operand {i} must be "
                                  f"a vector of {n} registers {{...}}, not {v}", i)
        m = len(v.items)
        if m != n:
            if m & (m - 1):
                raise self._fail(ins, f"Illegal vector size: {m} (operand {i} of {ins.op} takes {n} registers)", i)
            raise self._fail(ins, f"Argument vector size mismatch for instruction '{ins.op}': operand {i} takes "
                                  f"{n} registers, {v} has {m}", i)
        for r in v.items:
            if r is not None and k.regs[r.name] != "pred":
                self.reg(k, ins, i, r, t, False)

    def memory_modifiers(self, ins: Instr) -> None:
        """ld/st/atom/red modifier combinations (PTX ISA 9.0 §9.7.9.8-10, §8 memory consistency):
        a scope needs a memory order and an order a scope (ld/st), ``.volatile`` takes neither,
        ``.nc`` is for ``ld.global``, one cache operator, ld's are .ca/.cg/.cs/.lu/.cv and st's
        .wb/.cg/.cs/.wt, and no cache operator beside a memory order."""
        mods = set(ins.mods)
        op = ins.op
        scope = mods & _SCOPES
        order = mods & (_ORDERS | {"sc"})
        if op in ("ld", "st"):
            if scope and not order:
                raise self._fail(ins, f"Modifier '.{min(scope)}' requires memory order with '{op}' instruction")
            if order and not scope:
                raise self._fail(ins, f"Modifier '.{min(order)}' requires scope with '{op}' instruction")
        if "volatile" in mods and (scope or "nc" in mods):
            raise self._fail(ins, f"Modifier '.volatile' cannot be combined with modifier "
                                  f"'.{min(scope) if scope else 'nc'}'")
        cache = mods & {"ca", "cg", "cs", "lu", "cv", "wb", "wt"}
        if op in ("ld", "st"):
            if len(cache) > 1:
                raise self._fail(ins, "Multiple cache operation modifiers specified")
            bad = cache - ({"ca", "cg", "cs", "lu", "cv"} if op == "ld" else {"wb", "cg", "cs", "wt"})
            if bad:
                raise self._fail(ins, f"Illegal modifier '.{min(bad)}' for instruction '{op}'")
            if cache and order:
                raise self._fail(ins, f"Modifier '.{min(order)}' cannot be combined with modifier '.{min(cache)}'")
        if "nc" in mods and "global" not in mods:
            raise self._fail(ins, "Modifier '.nc' requires .global space")
        for sp in ("local", "const", "param"):
            if "volatile" in mods and sp in mods:
                raise self._fail(ins, f"Modifier '.volatile' cannot be applied to '.{sp}' space")

    def mov(self, k: Kernel, ins: Instr) -> None:
        d, a = ins.operands
        t = ins.ty
        if isinstance(d, Vec):
            self.pack(k, ins, 0, d, t)
        else:
            self.dest(k, ins, 0, (t,), False)
        if isinstance(a, Vec):
            self.pack(k, ins, 1, a, t)
        elif isinstance(a, Sym):
            if TYPES[t].kind not in "bsu" or TYPES[t].bits < 32:
                raise self._fail(ins, f"Arguments mismatch for instruction 'mov': the address of {a} needs a 32- or "
                                      f"64-bit integer type, not .{t}", 1)
        elif not isinstance(a, Special):
            self.value(k, ins, 1, a, t, False)

    def pack(self, k: Kernel, ins: Instr, i: int, v: Vec, t: str) -> None:
        """``mov.bN {a, b[, c, d]}, x`` / ``mov.bN x, {...}``: 2 or 4 registers of one size
        making up the N bits (PTX ISA 9.0 §9.7.9.1)."""
        n = len(v.items)
        if n not in (2, 4):
            raise self._fail(ins, (f"Illegal vector size: {n}" if n > 1 else
                                   f"Arguments mismatch for instruction 'mov': a 1-element vector {v}") +
                             " (mov packs and unpacks 2 or 4 registers)", i)
        sizes = {TYPES[self._reg_type(k, r)].bits for r in v.items if r is not None}
        if len(sizes) > 1 or any(self._reg_type(k, r) == "pred" for r in v.items if r is not None):
            raise self._fail(ins, f"Incompatible elements of vector expression {v}: the registers differ in size", i)
        bits = sizes.pop() if sizes else TYPES[t].bits // n
        if TYPES[t].kind != "b" or bits * n != TYPES[t].bits:
            raise self._fail(ins, f"Arguments mismatch for instruction 'mov': {n} x {bits}-bit registers {v} do not "
                                  f"make a .{t} (use the bit-size type .b{bits * n})", i)

    def ldst(self, k: Kernel, ins: Instr, params: set[str]) -> None:
        is_ld = ins.op == "ld"
        t = ins.ty
        n = 4 if "v4" in ins.mods else 2 if "v2" in ins.mods else 1
        di, ai = (0, 1) if is_ld else (1, 0)
        data, addr = ins.operands[di], ins.operands[ai]
        self.address(k, ins, ai, params)
        if isinstance(data, Vec):
            m = len(data.items)
            if m != n:
                if m not in (1, 2, 4):
                    raise self._fail(ins, f"Illegal vector size: {m} (vectors have 2 or 4 elements)", di)
                raise self._fail(ins, f"Argument vector size mismatch for instruction '{ins.op}': {ins.mnemonic} "
                                      f"moves {n} element{'s' if n > 1 else ''}, the vector {data} has {m}", di)
            sizes = set()
            first = True
            for r in data.items:
                if r is None or k.regs[r.name] == "pred":  # ptxas lets a .pred beside bit-size registers
                    continue
                if first:  # ptxas types the vector by its first register; the others must fit it
                    self.reg(k, ins, di, r, t, True)
                    first = False
                sizes.add(TYPES[self._reg_type(k, r)].bits)
            if len(sizes) > 1:
                raise self._fail(ins, f"Incompatible elements of vector expression {data}: the registers differ "
                                      f"in size", di)
        elif n > 1:
            raise self._fail(ins, (f"Result vector expected: {ins.mnemonic} loads {n} elements into {{...}}" if is_ld
                                   else f"Argument vector size mismatch for instruction 'st': {ins.mnemonic} stores "
                                        f"{n} elements from {{...}}"), di)
        elif is_ld:
            self.dest(k, ins, di, (t,), True)
        else:
            self.value(k, ins, di, data, t, True)
        if not is_ld:
            space = next((_SPACES[m] for m in ins.mods if m in _SPACES), None)
            sym = addr.base.name if isinstance(addr, Addr) and isinstance(addr.base, Sym) else None
            if sym in params or space == "param":
                raise self._fail(ins, f"Illegal to write to function input parameter '{sym or addr}' (kernel "
                                      f"parameters are read-only)", ai)
            if space == "const" or (sym is not None and sym in k.variables and k.variables[sym].space == "const"):
                raise self._fail(ins, "State space incorrect for instruction 'st': .const memory is read-only", ai)

    def address(self, k: Kernel, ins: Instr, i: int, params: set[str], spaces: bool = True) -> None:
        a = ins.operands[i]
        if not isinstance(a, Addr):
            raise self._fail(ins, f"Arguments mismatch for instruction '{ins.op}': operand {i} must be an address "
                                  f"[...], not {a}", i)
        base = a.base
        space = next((_SPACES[m] for m in ins.mods if m in _SPACES), None)
        if isinstance(base, Reg):
            rt = self._reg_type(k, base)
            if TYPES[rt].kind not in "bsu":
                raise self._fail(ins, f"Illegal to use symbol '{base.name.split('$')[0]}' of type .{rt} as address "
                                      f"operand. Use integer or bit only.", i)
        elif isinstance(base, Sym) and spaces:
            if base.name in params:
                sym_space = "param"
            elif base.name in k.variables:
                sym_space = k.variables[base.name].space
            else:
                return  # the parser reports unknown symbols
            if sym_space != space and not (space is None and sym_space != "param"):
                raise self._fail(ins, f"State space mismatch between instruction and address in instruction "
                                      f"'{ins.op}': {base.name} is in .{sym_space}, {ins.mnemonic} addresses "
                                      f"{'.' + space if space else 'generic memory'}", i)

    def vote(self, k: Kernel, ins: Instr) -> None:
        ops = ins.operands
        if ins.op == "vote":
            ballot = "ballot" in ins.mods
            self.dest(k, ins, 0, ("b32" if ballot else "pred",), False)
            if isinstance(ops[1], Reg) or isinstance(ops[1], Imm):
                self.value(k, ins, 1, ops[1], "pred", False)
            self.value(k, ins, 2, ops[2], "b32", False)
        elif ins.op == "match":
            self.dest(k, ins, 0, ("b32", "pred"), False)
            self.value(k, ins, 1, ops[1], ins.ty, False)
            self.value(k, ins, 2, ops[2], "b32", False)
        elif ins.op == "redux":
            self.dest(k, ins, 0, (ins.ty,), False)
            self.value(k, ins, 1, ops[1], ins.ty, False)
            self.value(k, ins, 2, ops[2], "b32", False)

    def bar(self, k: Kernel, ins: Instr) -> None:
        ops = ins.operands
        red = ins.op.endswith(".red")
        first = 1 if red else 0
        if red:
            self.dest(k, ins, 0, (ins.ty,), False)
        for i in range(first, len(ops)):
            op = ops[i]
            if red and i == len(ops) - 1:
                self.value(k, ins, i, op, "pred", False)
                continue
            self.value(k, ins, i, op, "u32", False)
            if i == first and isinstance(op, Imm) and not (0 <= int(op.value) <= 15):
                raise self._fail(ins, f"Barrier number '{op}' out of range, expected to be in range [0..15]", i)


def _operand_col(line: str, mnemonic_col: int, mnemonic: str, index: int) -> int | None:
    """The 1-based column of operand ``index`` of the instruction whose mnemonic starts at
    ``mnemonic_col`` of ``line`` (operands split at top-level commas), or None."""
    pos = mnemonic_col - 1 + len(mnemonic)
    depth, k, start = 0, 0, None
    while pos < len(line):
        c = line[pos]
        if c == ";" and depth == 0:
            break
        if start is None and not c.isspace():
            if k == index:
                return pos + 1
            start = pos
        if c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        elif c == "," and depth == 0:
            k, start = k + 1, None
        pos += 1
    return None


def verify(mod: Module, note: Callable | None = None) -> None:
    """Check ``mod`` against ptxas's rules (see the module docstring); ``note(files, src)`` adds
    the source position of the ``.loc`` line to an instruction's message. Raises
    :class:`PTXError` at the first rule broken."""
    v = _Verifier(mod, note)
    v.header()
    for k in mod.kernels.values():
        for p in k.params:
            if p.name in mod.kernels and p.name != k.name:  # ptxas 13.0 crashes on it (exit status -11)
                raise PTXError(mod.path, k.loc.line, k.loc.column, f"Inconsistent redefinition of variable {p.name!r} "
                                                                   f"(a parameter of {k.name!r} and another kernel)")
        v.kernel(k)
        for ins in k.instrs:
            target = ins.operands[0] if ins.spec.kind is Kind.BRA else None
            if isinstance(target, Sym) and target.name in mod.kernels and target.name != k.name \
                    and mod.kernels[target.name].loc.line < ins.loc.line:  # another kernel, declared before
                raise v._fail(ins, f"Label expected for argument 0 of instruction 'bra' ({ins.operands[0]} names a "
                                   f"kernel)", 0)
