"""Per-thread registers of a chunk of CTAs, and typed operand access.

Owns: storage of every ``.reg`` as raw bits (one numpy array of shape (T,)
per register, T = threads in the chunk), and the PTX rules for reading a
register or immediate as an instruction's operand type and writing a result
back (truncation, sign/zero extension: PTX ISA 9.0 §6.4.2 "Operand Size
Exceeding Instruction-Type Size"). Imports numpy and :mod:`isa` only.
"""

from __future__ import annotations

import struct

import numpy as np

from isa.ir import Imm, Reg
from isa.types import TYPES, raw_dtype

__all__ = ["RegisterFile", "immediate"]


def _as_type(raw: np.ndarray, reg_bits: int, ty: str) -> np.ndarray:
    """Reinterpret raw register bits as PTX type ``ty``."""
    t = TYPES[ty]
    if t.kind == "pred" or reg_bits == 1:
        return raw if t.kind == "pred" else raw.astype(t.dtype)
    if t.bits == reg_bits:
        return raw.view(t.dtype)
    if t.bits < reg_bits:  # use the low bits
        return raw.astype(raw_dtype(t.bits)).view(t.dtype)
    # wider than the register: sign- or zero-extend
    if t.is_signed:
        signed = raw.view(np.dtype(f"i{reg_bits // 8}"))
        return signed.astype(t.dtype)
    return raw.astype(raw_dtype(t.bits)).view(t.dtype)


def _to_raw(value: np.ndarray, ty: str, reg_bits: int) -> np.ndarray:
    """Convert a value of PTX type ``ty`` to raw bits of a ``reg_bits`` register."""
    t = TYPES[ty]
    if reg_bits == 1:
        return value.astype(np.bool_)
    value = np.asarray(value)
    if value.dtype != t.dtype:
        value = value.astype(t.dtype)
    if t.kind == "pred":
        return value.astype(raw_dtype(reg_bits))
    if t.bits == reg_bits:
        return value.view(raw_dtype(reg_bits))
    if t.bits > reg_bits:
        return value.view(raw_dtype(t.bits)).astype(raw_dtype(reg_bits))
    if t.is_signed:
        return value.astype(np.dtype(f"i{reg_bits // 8}")).view(raw_dtype(reg_bits))
    return value.view(raw_dtype(t.bits)).astype(raw_dtype(reg_bits))


def immediate(imm: Imm, ty: str, n: int) -> np.ndarray:
    """An immediate operand as an array of ``n`` values of PTX type ``ty``.

    Integer literals wrap to the type width; ``0f``/``0d`` literals are raw
    IEEE bits (PTX ISA 9.0 §4.5.1) converted to ``ty`` if it is another float
    type, and kept as bits for the bit type of their width (``mov.b32 %r1, 0f3F800000``,
    which LLVM writes for float constants: 0x3F800000); decimal floats are rounded to ``ty``.
    """
    t = TYPES[ty]
    v = imm.value
    if imm.bits_of is not None:
        fmt = ("<I", "<f") if imm.bits_of == "f32" else ("<Q", "<d")
        fval = struct.unpack(fmt[1], struct.pack(fmt[0], v))[0]
        width = 32 if imm.bits_of == "f32" else 64
        if t.bits == width and (ty in ("f32", "f64") or t.kind == "b"):
            return np.full(n, v, raw_dtype(t.bits)).view(t.dtype)
        v = fval
    if t.kind == "pred":
        return np.full(n, bool(v), np.bool_)
    if t.is_float:
        if ty == "bf16":
            from isa import fp
            return fp.cvt(np.full(n, float(v), np.float64), "bf16", "f64", rnd="rn")
        return np.full(n, float(v), t.dtype)
    if isinstance(v, float):
        v = int(v)
    return np.full(n, v & ((1 << t.bits) - 1), raw_dtype(t.bits)).view(t.dtype)


class RegisterFile:
    """The registers of ``n`` threads, stored as raw bits.

    Args:
        decls: register name -> PTX type of its ``.reg`` declaration.
        n: threads (lanes) in the chunk.
    """

    def __init__(self, decls: dict[str, str], n: int):
        self.n = n
        self.bits = {name: TYPES[ty].bits for name, ty in decls.items()}
        self.data = {name: np.zeros(n, raw_dtype(b)) for name, b in self.bits.items()}
        #: Per register: how many times :meth:`write` wrote it (a register whose count did not change
        #: holds the same values: callers may reuse what they computed from it).
        self.version = dict.fromkeys(self.bits, 0)

    @property
    def nbytes(self) -> int:
        """Host bytes used by the register arrays."""
        return sum(a.nbytes for a in self.data.values())

    def read(self, reg: Reg, ty: str, sel: np.ndarray | None) -> np.ndarray:
        """Register ``reg`` of lanes ``sel`` (all lanes if ``None``) as type ``ty``."""
        raw = self.data[reg.name]
        if sel is not None:
            raw = raw[sel]
        val = _as_type(raw, self.bits[reg.name], ty)
        if reg.neg:
            val = ~val
        return val

    def write(self, reg: Reg, value: np.ndarray, ty: str, sel: np.ndarray | None) -> None:
        """Write ``value`` (type ``ty``) to register ``reg`` of lanes ``sel``."""
        raw = _to_raw(value, ty, self.bits[reg.name])
        self.version[reg.name] += 1
        if sel is None:
            self.data[reg.name][...] = raw
        else:
            self.data[reg.name][sel] = raw
