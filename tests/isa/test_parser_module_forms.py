"""Module-level forms that compilers other than nvcc write (Triton 3.6's PTX): kernel pointer
parameters with ``.ptr .space .align``, DWARF ``.section .debug_*`` blocks, ``.file`` entries with
timestamp and size, and ``.loc`` lines that errors translate into the compiler's source line."""

from __future__ import annotations

import pytest

from isa import PTXError, parse

HEADER = ".version 8.7\n.target sm_90a\n.address_size 64\n"
TRITON_PARAMS = ("\t.param .u64 .ptr .global .align 1 k_param_0,\n\t.param .u32 k_param_1,\n"
                 "\t.param .u64 .ptr .global .align 16 k_param_2,\n\t.param .u64 .ptr .align 8 k_param_3")
DWARF = """\t.section\t.debug_abbrev
\t{
.b8 1                                   // Abbreviation Code
.b8 17                                  // DW_TAG_compile_unit
\t}
\t.section\t.debug_info
\t{
.b32 35                                 // Length of Unit
.b32 .debug_abbrev                      // Offset Into Abbrev. Section
.b64 $L__func_begin0
.b32 .debug_line                        // DW_AT_stmt_list
\t}
\t.section\t.debug_macinfo\t{\t}
"""


def module(body: str, params: str = TRITON_PARAMS, tail: str = "") -> str:
    return (HEADER + f".visible .entry k(\n{params}\n)\n.reqntid 128\n{{\n\t.reg .b32 \t%r<9>;\n\t.reg .b64 \t%rd<5>;\n"
            f"$L__func_begin0:\n{body}\n\tret;\n}}\n" + tail)


def test_triton_parameters_sections_and_files_parse():
    text = module("\t.loc\t1 7 24\n\tld.param.b64 \t%rd1, [k_param_0];",
                  tail='\t.file\t1 "/src/kern.py", 1700000000, 1234\n' + DWARF)
    mod = parse(text)
    k = mod.kernels["k"]
    # .ptr's .align is the pointee's alignment: the parameters keep the natural layout of .u64/.u32
    assert [(p.name, p.ty, p.offset, p.size) for p in k.params] == [
        ("k_param_0", "u64", 0, 8), ("k_param_1", "u32", 8, 4), ("k_param_2", "u64", 16, 8), ("k_param_3", "u64", 24, 8)]
    assert mod.files == {1: "/src/kern.py"}
    assert k.instrs[0].src == (1, 7, 24)


@pytest.mark.parametrize("param, message", [
    (".param .u64 .ptr .param .align 1 q", r"\.ptr takes the state space \.const, \.global, \.local or \.shared, not \.param"),
    (".param .u64 .ptr .global .align 3 q", r"\.ptr \.align 3 is not a power of two"),
    (".param .f32 .ptr .global .align 4 q", r"\.ptr applies to \.u32 and \.u64 parameters only, not \.f32"),
])
def test_bad_pointer_attributes_are_named(param, message):
    with pytest.raises(PTXError, match=r"<ptx>:5:\d+: parameter 'q': " + message):
        parse(module("", param))


@pytest.mark.parametrize("body", [
    "\t.loc\t1 12 17\n\tgriddepcontrol.wait;",             # the grammar reads it; the opcode table lacks it
    "\t.loc\t1 12 17\n\tfoo.bar.u32 %r1, [%rd1 + 4], {%r2, %r3};",  # read after a syntax error
])
def test_unsupported_instruction_names_the_source_line_from_loc(body):
    """The .file table comes after the kernel (as Triton writes it), yet the error names the .py line."""
    with pytest.raises(PTXError) as info:
        parse(module("\t.loc\t1 5 0\n\tmov.u32 %r1, %tid.x;\n" + body, tail='\t.file\t1 "/src/kern.py"\n' + DWARF),
              "kern.ptx")
    err = info.value
    assert (err.file, err.line) == ("kern.ptx", 18)  # the instruction after the second .loc
    assert "unsupported instruction" in err.reason and err.reason.endswith("(source: /src/kern.py:12:17, from .loc)")


def test_without_loc_the_message_is_unchanged():
    with pytest.raises(PTXError) as info:
        parse(module("\tgriddepcontrol.wait;"))
    assert info.value.reason == ("unsupported instruction 'griddepcontrol' (in 'griddepcontrol.wait'); "
                                 "run 'gpusim isa' for the supported instructions")
