"""isa/half.py and the packed half-precision rows of the opcode table: exact bits (the corpus's
half.cu recipes check the same instructions end to end against the H100)."""

from __future__ import annotations

import numpy as np

from isa import half, parse
from isa.opcodes import OPCODES


def _ins(text: str):
    src = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<9>;\n"
           ".reg .b16 %rs<9>;\n.reg .f32 %f<9>;\n.reg .pred %p<3>;\n" + text + "\nret;\n}\n")
    return parse(src).kernels["k"].instrs[0]


def _pack(lo, hi):
    return half.join(np.float16(lo), np.float16(hi))


def test_split_and_join_put_element_zero_in_the_lower_half():
    x = np.array([0x3C00BC00], np.uint32)           # upper 1.0, lower -1.0
    lo, hi = half.split(x, "f16")
    assert lo[0] == np.float16(-1.0) and hi[0] == np.float16(1.0)
    assert half.join(lo, hi)[0] == 0x3C00BC00
    blo, bhi = half.split(np.array([0x3F80C000], np.uint32), "bf16")
    assert blo[0] == 0xC000 and bhi[0] == 0x3F80


def test_relu_clamps_negatives_and_minus_zero_and_canonicalises_nan():
    x = np.array([-2.0, -0.0, 0.0, 3.5, np.nan, -np.inf], np.float16)
    got = half.relu(x, "f16").view(np.uint16)
    assert got.tolist() == [0, 0, 0, 0x4300, 0x7FFF, 0]
    b = np.array([0xBF80, 0x7FC0, 0x4000], np.uint16)
    assert half.relu(b, "bf16").tolist() == [0, 0x7FFF, 0x4000]


def test_cvt_pack_puts_a_in_the_upper_half_and_rounds():
    got = half.cvt_pack(np.float32(1.0), np.float32(65520.0), "f16x2")     # 65520 rounds to inf
    assert got == np.uint32(0x3C007C00)
    got = half.cvt_pack(np.float32(1.0 + 2 ** -9), np.float32(-3.0), "bf16x2", "rz", use_relu=True)
    assert got == np.uint32(0x3F800000)            # 1 + 2**-9 truncates to 1.0 in bf16; relu(-3) = +0


def test_packed_rows_compute_each_half_on_its_own():
    a, b, c = _pack(1.5, -2.0), _pack(2.0, 0.25), _pack(0.25, 8.0)
    fma = OPCODES["fma"].fn(_ins("fma.rn.f16x2 %r1, %r2, %r3, %r4;"), a, b, c)
    assert fma == _pack(3.25, 7.5)
    relu = OPCODES["fma"].fn(_ins("fma.rn.relu.f16x2 %r1, %r2, %r3, %r4;"), a, b, _pack(-4.0, 8.0))
    assert relu == _pack(0.0, 7.5)
    sat = OPCODES["add"].fn(_ins("add.sat.f16x2 %r1, %r2, %r3;"), a, b)
    assert sat == _pack(1.0, 0.0)
    mx = OPCODES["max"].fn(_ins("max.NaN.f16x2 %r1, %r2, %r3;"), _pack(np.nan, 1.0), _pack(2.0, -1.0))
    assert mx == np.uint32(0x3C007FFF)
    neg = OPCODES["neg"].fn(_ins("neg.bf16x2 %r1, %r2;"), np.uint32(0x3F80C000))
    assert neg == np.uint32(0xBF804000)


def test_cvt_with_three_operands_packs_and_set_writes_one_point_zero():
    ins = _ins("cvt.rn.f16x2.f32 %r1, %f1, %f2;")
    assert OPCODES["cvt"].sig(ins) == (("f16x2",), ("f32", "f32"))
    assert OPCODES["cvt"].fn(ins, np.float32(2.0), np.float32(0.5)) == np.uint32(0x40003800)
    st = _ins("set.nan.f16.f16 %rs1, %rs2, %rs3;")
    got = OPCODES["set"].fn(st, np.array([np.nan, 1.0], np.float16), np.array([1.0, 1.0], np.float16))
    assert got.view(np.uint16).tolist() == [0x3C00, 0]


def test_cvt_operand_count_must_match_the_packing_form():
    import pytest

    from isa import PTXError
    with pytest.raises(PTXError, match="three operands"):
        _ins("cvt.rn.f16.f32 %rs1, %f1, %f2;")
    with pytest.raises(PTXError, match="three operands"):
        _ins("cvt.rn.f16x2.f32 %r1, %f1;")


def test_packed_comparisons_per_half():
    a, b = _pack(1.0, np.nan), _pack(2.0, 3.0)
    setp = OPCODES["setp"].fn(_ins("setp.ltu.f16x2 %p1|%p2, %r1, %r2;"), a, b)
    assert (bool(setp[0]), bool(setp[1])) == (True, True)          # p: lower 1 < 2; q: upper NaN, unordered
    setp = OPCODES["setp"].fn(_ins("setp.lt.f16x2 %p1|%p2, %r1, %r2;"), a, b)
    assert (bool(setp[0]), bool(setp[1])) == (True, False)
    s = OPCODES["set"].fn(_ins("set.lt.u32.f16x2 %r1, %r2, %r3;"), a, b)
    assert s == np.uint32(0x0000FFFF)
    s = OPCODES["set"].fn(_ins("set.gt.bf16x2.bf16x2 %r1, %r2, %r3;"), np.uint32(0x40003F80), np.uint32(0x3F804000))
    assert s == np.uint32(0x3F800000)                                # upper 2 > 1 -> 1.0; lower 1 > 2 false
