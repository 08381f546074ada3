"""Floating-point contraction as ptxas does it: ``mul`` + ``add``/``sub`` -> one fused multiply-add.

Owns: which ``add``/``sub`` instructions of a kernel ptxas computes as ``FFMA``/``DFMA``
together with the ``mul`` that feeds them (:class:`isa.ir.Contraction`), and the registers an
instruction writes and reads (:func:`written`, :func:`read`, also used by the timing engine's
sampler). PTX ISA 9.0 section
9.7.3 lets the code generator fuse ``mul`` and ``add``/``sub`` written without a rounding
modifier (``.rn`` etc. forbid it), and ptxas does: ``x * y - x`` from ``nvcc -ptx`` becomes
``DFMA R12, R6, R8, -R8``, rounded once, and the H100's bits differ from two roundings (the
corpus's ``fp64_ops``). ``tests/isa/test_contract.py`` checks the rule below against the SASS
ptxas makes of every committed PTX file.

The rule: an ``add``/``sub`` ``.f32``/``.f64`` with no rounding modifier, no ``.sat`` and no
guard, one of whose operands is the destination of a ``mul`` of the same type with no rounding
modifier, no ``.sat``, no guard and the same ``.ftz``, earlier in the same straight-line block,
with neither the product nor the multiply's sources written in between, and no other
instruction of the kernel reading the product (then ptxas keeps ``FMUL`` + ``FADD``: three
``sub.f32`` of nvcc's fast-math Black-Scholes, ``validation/probes/sfu_e2e.ptx``, whose product
also feeds a ``div.approx`` or a ``selp``; fused, 1,246 of 8,192 call prices differed from the
H100's, unfused 1). Where both operands are such products, the first is fused. An instruction
that ptxas emits with a branch or call to a software slow path (:func:`slow_path`) ends the
block as a label does: a product from before it is not fused (``validation/probes/precise_math``'s
call price, ``s * cnd(d1) - x * expRT * cnd(d2)`` with an IEEE reciprocal between the products:
ptxas fuses the second, and the first-operand rule made 5,896 of 8,192 prices differ from the
H200's by 1-56 ulp). Imports only :mod:`isa.ir` and :mod:`isa.opcodes`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from isa.ir import Addr, Contraction, Instr, PredPair, Reg, Vec
from isa.opcodes import Kind

_ROUND = ("rn", "rz", "rm", "rp")
_NO_WRITE = (Kind.ST, Kind.BRA, Kind.EXIT, Kind.BAR, Kind.FENCE)


def _plain(ins: Instr) -> bool:
    return (ins.types[:1] in (("f32",), ("f64",)) and ins.guard is None and not ins.has("sat")
            and not any(ins.has(r) for r in _ROUND))


def slow_path(ins: Instr) -> bool:
    """Whether ptxas (CUDA 13.0, sm_90) emits ``ins`` with a ``BRA``/``CALL`` to a software
    routine: ``div``/``rcp``/``sqrt`` ``.f32``/``.f64`` with an IEEE rounding modifier,
    ``rsqrt.approx.f64`` without ``.ftz``, and 16- and 64-bit integer ``div``/``rem`` (the
    approximate forms, ``div.full`` and 32-bit integer division are inline). Checked against
    ptxas's SASS by ``tests/isa/test_contract.py``."""
    ty = ins.types[0] if ins.types else None
    if ins.op in ("div", "rcp", "sqrt") and ty in ("f32", "f64"):
        return any(ins.has(r) for r in _ROUND)
    if ins.op == "rsqrt":
        return ty == "f64" and not ins.has("ftz")
    return ins.op in ("div", "rem") and ty in ("s16", "u16", "s64", "u64")


def written(ins: Instr) -> set[str]:
    """Registers ``ins`` may write (its first operand, all of a vector or predicate pair)."""
    if ins.spec.kind in _NO_WRITE or not ins.operands:
        return set()
    d = ins.operands[0]
    parts = [d] if isinstance(d, Reg) else d.items if isinstance(d, Vec) else \
        [d.first, d.second] if isinstance(d, PredPair) else []
    return {p.name for p in parts if isinstance(p, Reg)}


def read(ins: Instr) -> list[str]:
    """Registers ``ins`` reads (its sources, address bases and vector elements)."""
    out = []
    for o in ins.operands[0 if ins.spec.kind in _NO_WRITE else 1:]:
        parts = o.items if isinstance(o, Vec) else [o.base] if isinstance(o, Addr) else [o]
        out += [r.name for r in parts if isinstance(r, Reg)]
    return out


def contract(instrs: list[Instr], block_starts: set[int]) -> list[Instr]:
    """``instrs`` with every ``add``/``sub`` that ptxas fuses carrying its
    :class:`~isa.ir.Contraction`; ``block_starts``: PCs that are branch targets."""
    readers = Counter(r for ins in instrs for r in read(ins))
    out = list(instrs)
    products: dict[str, Instr] = {}   # register -> the plain mul that wrote it, in this block
    for pc, ins in enumerate(instrs):
        if pc in block_starts:
            products.clear()
        if ins.op in ("add", "sub") and _plain(ins):
            for k, src in ((1, ins.operands[1]), (2, ins.operands[2])):
                mul = products.get(src.name) if isinstance(src, Reg) else None
                if (mul is None or mul.types != ins.types or mul.has("ftz") != ins.has("ftz")
                        or readers[src.name] > 1):
                    continue
                other = ins.operands[3 - k]
                neg_product = ins.op == "sub" and k == 2
                neg_c = ins.op == "sub" and k == 1
                out[pc] = dataclasses.replace(ins, contract=Contraction(
                    mul.operands[1], mul.operands[2], other, neg_product, neg_c, mul.index))
                break
        out_regs = written(ins)
        if out_regs:
            for reg in [r for r, m in products.items() if r in out_regs
                        or any(isinstance(o, Reg) and o.name in out_regs for o in m.operands[1:])]:
                del products[reg]
        if ins.op == "mul" and _plain(ins) and isinstance(ins.operands[0], Reg) and not any(
                isinstance(o, Reg) and o.name == ins.operands[0].name for o in ins.operands[1:]):
            products[ins.operands[0].name] = ins
        if ins.spec.kind in (Kind.BRA, Kind.EXIT) or slow_path(ins):
            products.clear()
    return out
