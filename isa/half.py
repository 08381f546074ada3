"""Half-precision helpers of the PTX semantics: packed ``.f16x2``/``.bf16x2`` values, ``.relu``
and the packing ``cvt``.

Owns: how a 32-bit register holds two 16-bit floats (the lower half is element 0, PTX ISA 9.0
§5.2.1 "Packed Data Types"), the ``.relu`` clamp of the half-precision ``fma``/``cvt``
(§9.7.4.4, §9.7.9.21: "clamps the result to 0 if negative; NaN results are converted to
canonical NaN"), and ``cvt.rn{.relu}.f16x2.f32 d, a, b`` / ``cvt.rn{.relu}.bf16x2.f32``, which
convert two f32 values and pack them with ``a`` in the upper half (§9.7.9.21).  The scalar
f16/bf16 arithmetic itself (add, sub, mul, fma, min, max, neg, abs, cvt, setp) is in
:mod:`isa.fp`; the opcode table lifts it to the packed types half by half.

Types: ``f16`` values are ``np.float16``, ``bf16`` values ``np.uint16`` raw bits (as in
:mod:`isa.fp`), packed values ``np.uint32``.  Imports numpy and :mod:`isa.fp` only.
"""

from __future__ import annotations

import numpy as np

from isa import fp

__all__ = ["PACKED", "split", "join", "relu", "cvt_pack", "one"]

#: Packed float types and the type of each half.
PACKED = {"f16x2": "f16", "bf16x2": "bf16"}

_DT = {"f16": np.dtype(np.float16), "bf16": np.dtype(np.uint16)}


def split(x, half_ty: str) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` halves of packed ``uint32`` values ``x``, each as the dtype of
    ``half_ty`` (``"f16"``: float16, ``"bf16"``: uint16 bits)."""
    u = np.asarray(x).astype(np.uint32)
    lo = (u & np.uint32(0xFFFF)).astype(np.uint16)
    hi = (u >> np.uint32(16)).astype(np.uint16)
    return lo.view(_DT[half_ty]), hi.view(_DT[half_ty])


def join(lo, hi) -> np.ndarray:
    """Pack two arrays of 16-bit values (float16 or uint16 bits) into ``uint32``: ``lo`` in
    bits 0-15, ``hi`` in bits 16-31."""
    lo = np.asarray(lo).view(np.uint16).astype(np.uint32)
    hi = np.asarray(hi).view(np.uint16).astype(np.uint32)
    return lo | (hi << np.uint32(16))


def relu(x, ty: str) -> np.ndarray:
    """``.relu`` of a half-precision result (``ty``: ``"f16"`` or ``"bf16"``): negative
    values, -0.0 included, become +0.0; a NaN becomes the canonical NaN ``0x7FFF``
    (``fp.NAN_BITS``); other values are unchanged.  PTX ISA 9.0 §9.7.4.4 (fma.relu) and
    §9.7.9.21 (cvt.relu).  ``x``: array of the type's dtype; result: same dtype."""
    u = np.asarray(x).view(np.uint16)
    nan = (u & np.uint16(0x7FFF)) > np.uint16(0x7C00 if ty == "f16" else 0x7F80)
    neg = (u & np.uint16(0x8000)) != 0
    out = np.where(nan, np.uint16(fp.NAN_BITS[ty]), np.where(neg, np.uint16(0), u)).astype(np.uint16)
    return out.view(_DT[ty])


def cvt_pack(a, b, dst: str, rnd: str = "rn", use_relu: bool = False) -> np.ndarray:
    """``cvt.rnd{.relu}.f16x2.f32 d, a, b`` (``dst="f16x2"``) and ``.bf16x2.f32``: each
    float32 converted to the half type (rounded by ``rnd``, ``"rn"`` or ``"rz"``), ``a`` into
    the upper half, ``b`` into the lower half (PTX ISA 9.0 §9.7.9.21).  ``a``, ``b``: float32
    arrays (broadcast); result: ``uint32``."""
    half = PACKED[dst]
    ha = fp.cvt(np.asarray(a, np.float32), half, "f32", rnd=rnd)
    hb = fp.cvt(np.asarray(b, np.float32), half, "f32", rnd=rnd)
    if use_relu:
        ha, hb = relu(ha, half), relu(hb, half)
    return join(hb, ha)


def one(ty: str):
    """The value 1.0 of a float type as its dtype (bf16: raw bits ``0x3F80``): what ``set``
    writes for true into a float destination (PTX ISA 9.0 §9.7.6.1, §9.7.4)."""
    if ty == "bf16":
        return np.uint16(0x3F80)
    return np.dtype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[ty]).type(1.0)
