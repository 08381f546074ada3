"""PTX fundamental types: names, sizes, numpy dtypes.

Owns: the table of PTX type suffixes (``.s32``, ``.f32``, ``.pred`` ...) and how
each maps onto numpy. Source: PTX ISA 9.0, section 5.2.1 "Fundamental Types".
Imports only numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PtxType", "TYPES", "ptype", "is_type_name", "raw_dtype"]


@dataclass(frozen=True, slots=True)
class PtxType:
    """One PTX fundamental type.

    Attributes:
        name: the suffix without the dot (``"s32"``).
        kind: ``"s"`` signed int, ``"u"`` unsigned int, ``"b"`` untyped bits,
            ``"f"`` float, ``"pred"`` predicate.
        bits: width in bits (predicates: 1).
        dtype: the numpy dtype a value of this type is computed in. Untyped
            ``.bN`` types use unsigned integers; ``bf16`` is carried as its raw
            ``uint16`` bits (numpy has no bfloat16); ``f16x2``/``bf16x2`` as
            ``uint32`` bits, and so are the packed integer types ``u16x2``/``s16x2``.
    """

    name: str
    kind: str
    bits: int
    dtype: np.dtype

    @property
    def size(self) -> int:
        """Size in bytes (predicates: 1)."""
        return max(1, self.bits // 8)

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_signed(self) -> bool:
        return self.kind == "s"

    @property
    def is_int(self) -> bool:
        return self.kind in ("s", "u", "b")


def _t(name: str, kind: str, bits: int, dtype) -> PtxType:
    return PtxType(name, kind, bits, np.dtype(dtype))


TYPES: dict[str, PtxType] = {
    t.name: t
    for t in (
        _t("pred", "pred", 1, np.bool_),
        _t("s8", "s", 8, np.int8),
        _t("s16", "s", 16, np.int16),
        _t("s32", "s", 32, np.int32),
        _t("s64", "s", 64, np.int64),
        _t("u8", "u", 8, np.uint8),
        _t("u16", "u", 16, np.uint16),
        _t("u32", "u", 32, np.uint32),
        _t("u64", "u", 64, np.uint64),
        _t("b8", "b", 8, np.uint8),
        _t("b16", "b", 16, np.uint16),
        _t("b32", "b", 32, np.uint32),
        _t("b64", "b", 64, np.uint64),
        _t("f16", "f", 16, np.float16),
        _t("bf16", "f", 16, np.uint16),
        _t("f32", "f", 32, np.float32),
        _t("f64", "f", 64, np.float64),
        _t("f16x2", "f", 32, np.uint32),
        _t("bf16x2", "f", 32, np.uint32),
        _t("u16x2", "u", 32, np.uint32),  # two 16-bit lanes in one 32-bit register (add/sub/min/max, sm_90)
        _t("s16x2", "s", 32, np.uint32),
    )
}

_RAW = {1: np.dtype(np.bool_), 8: np.dtype(np.uint8), 16: np.dtype(np.uint16),
        32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}


def ptype(name: str) -> PtxType:
    """Return the :class:`PtxType` named ``name`` (no dot). Raises ``KeyError``."""
    return TYPES[name]


def is_type_name(name: str) -> bool:
    """True if ``name`` (no dot) is a PTX fundamental type suffix."""
    return name in TYPES


def raw_dtype(bits: int) -> np.dtype:
    """The unsigned numpy dtype that stores ``bits``-wide raw register bits."""
    return _RAW[bits]
