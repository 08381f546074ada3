"""What nvcc -ptx emits for ordinary CUDA code parses as the PTX ISA defines it: module
.global/.const variables with initialisers, scoped register blocks (inline assembly),
WARP_SZ, the reserved shared-memory specials; unsupported instructions are refused with
one line naming the instruction, whatever their operand syntax."""

from __future__ import annotations

import numpy as np
import pytest

from isa import PTXError, parse
from isa.ir import Imm, Reg, Special

HEADER = ".version 9.0\n.target sm_90\n.address_size 64\n"


def kernel(body: str, before: str = "") -> str:
    return (HEADER + before + ".visible .entry k(.param .u64 p)\n{\n.reg .pred %p<3>;\n.reg .b32 %r<9>;\n"
            ".reg .b64 %rd<5>;\n.reg .f32 %f<5>;\n" + body + "\n}\n")


def test_module_variables_with_initialisers_as_nvcc_writes_them():
    mod = parse(HEADER + ".const .align 4 .b8 w[12] = {0, 0, 128, 63, 0, 0, 0, 64};\n"
                ".global .align 4 .f32 s = 0f40200000;\n"
                ".visible .global .align 8 .u64 big[2] = {18446744073709551615, 0x10};\n"
                ".global .align 4 .s32 neg[3] = {-1, 2};\n"
                ".global .align 8 .f64 d = 0d3FF0000000000000;\n"
                ".extern .global .align 4 .u32 ext[4];\n"
                ".visible .entry k()\n{\nret;\n}\n")
    g = mod.globals
    assert np.frombuffer(g["w"].init, np.float32).tolist() == [1.0, 2.0, 0.0]
    assert np.frombuffer(g["s"].init, np.float32).tolist() == [2.5]
    assert np.frombuffer(g["big"].init, np.uint64).tolist() == [2**64 - 1, 16]
    assert np.frombuffer(g["neg"].init, np.int32).tolist() == [-1, 2, 0]
    assert np.frombuffer(g["d"].init, np.float64).tolist() == [1.0]
    assert (g["ext"].size, g["ext"].init, g["ext"].space) == (16, None, "global")
    assert (g["w"].space, g["w"].align, g["w"].size) == ("const", 4, 12)


@pytest.mark.parametrize("decl, message", [
    (".global .u32 a[2] = {1, 2, 3};", r"initialiser of 'a' has 3 values for 2 elements"),
    (".global .u64 a = generic(b);", r"initialiser value 'generic\(b\)' of 'a' is not supported"),
    (".global .f32 a = 0d3FF0000000000000;", r"float literal '0d3FF0000000000000' does not match the type .f32"),
    (".extern .const .b8 a[];", r"unsized array 'a' must be 'extern .shared'.*gpusim loads one module without linking"),
    (".local .u32 a;", r"module-level .local variables are not supported \('a'\)"),
    (".global .u32 a;\n.const .u32 a;", r"module variable 'a' is declared twice"),
])
def test_bad_module_variables_name_the_rule(decl, message):
    with pytest.raises(PTXError, match=message):
        parse(HEADER + decl + "\n.visible .entry k()\n{\nret;\n}\n")


def test_kernels_see_the_module_variables_they_use():
    mod = parse(kernel("ld.const.f32 %f1, [w+4];\nmov.u64 %rd1, g;\nret;",
                       ".const .align 4 .b8 w[8];\n.global .align 4 .u32 g;\n.global .align 4 .u32 unused;\n"))
    k = mod.kernels["k"]
    assert set(k.variables) == {"w", "g"} and k.variables["w"] is mod.globals["w"]
    assert k.static_shared_bytes == 0 and k.local_bytes == 0


def test_scoped_register_blocks_shadow_and_end():
    # The inline-assembly pattern of cooperative groups: registers without '%', in a block.
    mod = parse(kernel("{\n .reg .u32 start;\n .reg .b32 %r1;\n mov.u32 start, %reserved_smem_offset_1;\n"
                       " mov.u32 %r1, start;\n {\n .reg .u32 start;\n add.u32 start, %r1, WARP_SZ;\n }\n"
                       " add.u32 %r2, start, 1;\n}\nmov.u32 %r1, 7;\nret;"))
    ins = mod.kernels["k"].instrs
    outer, inner = ins[0].operands[0].name, ins[2].operands[0].name
    assert outer != inner and outer.startswith("start$") and inner.startswith("start$")
    assert ins[0].operands[1] == Special("reserved_smem_offset_1")
    assert ins[1].operands[0].name == ins[2].operands[1].name != "%r1"    # the block's own %r1
    assert ins[2].operands[2] == Imm(32, "WARP_SZ")
    assert ins[3].operands[1].name == outer                                  # the inner 'start' went out of scope
    assert ins[4].operands[0] == Reg("%r1")                                  # the kernel's %r1 again


def test_a_block_predicate_without_percent_guards_instructions():
    # inline assembly as CUDA code writes it: { .reg .pred p; setp ... p, ...; @p ...; @!p ...; }
    mod = parse(kernel("{\n.reg .pred p;\nsetp.ge.u32 p, %r1, %r2;\n@p sub.u32 %r1, %r1, %r2;\n"
                       "@!p add.u32 %r1, %r1, 100;\n}\nret;"))
    setp, sub, add = mod.kernels["k"].instrs[:3]
    assert setp.operands[0].name.startswith("p$") and sub.guard == Reg(setp.operands[0].name, False)
    assert add.guard == Reg(setp.operands[0].name, True)
    with pytest.raises(PTXError, match=r"undeclared register q"):
        parse(kernel("@q add.u32 %r1, %r1, 1;\nret;"))


def test_a_block_register_is_unknown_after_its_block():
    with pytest.raises(PTXError, match=r"<ptx>:14:9: undeclared register %t \(declare it with .reg\)"):
        parse(kernel("{\n.reg .b32 %t;\nmov.b32 %t, 1;\n}\nmov.b32 %t, 2;\nret;"))


@pytest.mark.parametrize("line, opcode", [
    ("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd2, {%f2, %f4}];", "tex.2d.v4.f32.f32"),
    ("@%p1 tex.1d.v4.s32.s32 {%r1, %r2, %r3, %r4}, [%rd1, {%r1}];", "tex.1d.v4.s32.s32"),
    ("tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}];", "tld4.r.2d.v4.f32.f32"),
    ("suld.b.2d.v4.b32.trap {%r1, %r2, %r3, %r4}, [%rd1, {%r1, %r2}];", "suld.b.2d.v4.b32.trap"),
    ("sust.b.2d.v4.b32.trap [%rd1, {%r1, %r2}], {%r1, %r2, %r3, %r4};", "sust.b.2d.v4.b32.trap"),
    ("txq.width.b32 %r1, [%rd1];", "txq.width.b32"),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r1, %r2}], [%r3];",
     "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"),
    ("elect.sync %r1|%p1, 0xffffffff;", "elect.sync"),
    ("setmaxnreg.inc.sync.aligned.u32 240;", "setmaxnreg.inc.sync.aligned.u32"),
    ("movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;", "movmatrix.sync.aligned.m8n8.trans.b16"),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;", "mbarrier.try_wait.parity.shared::cta.b64"),
])
def test_unsupported_instructions_are_refused_in_one_line_whatever_their_operands(line, opcode):
    with pytest.raises(PTXError) as info:
        parse(kernel("mov.u32 %r1, 1;\n" + line + "\nret;"), "user.ptx")
    base = opcode.split(".")[0]
    first = str(info.value).splitlines()[0]
    col = line.index(base) + 1
    assert first == (f"user.ptx:11:{col}: unsupported instruction '{base}' (in '{opcode}'); "
                     f"run 'gpusim isa' for the supported instructions")


def test_the_first_unsupported_instruction_is_named_even_before_a_syntax_error():
    text = kernel("txq.width.b32 %r1, [%rd1];\nmov.u32 %r1, 1;\ntex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd2, {%f2, %f4}];\nret;")
    with pytest.raises(PTXError, match=r"^<ptx>:10:1: unsupported instruction 'txq'"):
        parse(text)
    with pytest.raises(PTXError, match=r"^<ptx>:11:14: syntax error: unexpected .,."):  # a real syntax error stays one
        parse(kernel("mov.u32 %r1, 1;\nadd.s32 %r1, , %r2;\nret;"))


def test_packed_16bit_types_take_no_saturation():
    with pytest.raises(PTXError, match=r"<ptx>:10:1: modifier .sat does not apply to the packed type .u16x2"):
        parse(kernel("add.sat.u16x2 %r1, %r2, %r3;\nret;"))


def test_cooperative_groups_rows_decode():
    mod = parse(kernel("bar.red.popc.u32 %r1, 0, %p1;\nbarrier.red.and.pred %p2, 1, 64, !%p1;\nbar.warp.sync -1;\n"
                       "match.all.sync.b32 %r2|%p1, %r3, -1;\nredux.sync.min.s32 %r4, %r5, %r6;\n"
                       "barrier.sync 1, 64;\ndp4a.s32.u32 %r1, %r2, %r3, %r4;\nadd.s16x2 %r1, %r2, %r3;\nret;"))
    ops = [(i.op, i.types, i.mods) for i in mod.kernels["k"].instrs[:8]]
    assert ops == [("bar.red", ("u32",), ("popc",)), ("barrier.red", ("pred",), ("and",)), ("bar.warp", (), ("sync",)),
                   ("match", ("b32",), ("all", "sync")), ("redux", ("s32",), ("sync", "min")), ("barrier", (), ("sync",)),
                   ("dp4a", ("s32", "u32"), ()), ("add", ("s16x2",), ())]
