"""The PTX parser: nvcc output parses; bad input fails with file:line:col and the rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from isa import PTXError, parse, parse_file
from isa.opcodes import OPCODES, Kind

ROOT = Path(__file__).resolve().parents[2]
ALL_PTX = sorted(ROOT.glob("gpusim/suite/ptx/*.ptx")) + sorted(ROOT.glob("tests/**/*.ptx"))

HEADER = ".version 9.0\n.target sm_90\n.address_size 64\n"


def kernel(body: str, params: str = ".param .u64 p") -> str:
    return HEADER + f".visible .entry k({params})\n{{\n.reg .pred %p<3>;\n.reg .b32 %r<9>;\n.reg .b64 %rd<5>;\n{body}\n}}\n"


@pytest.mark.parametrize("path", ALL_PTX, ids=lambda p: p.name)
def test_every_shipped_ptx_file_parses_and_prints_back(path):
    mod = parse_file(path)
    assert mod.kernels
    for k in mod.kernels.values():
        text = "\n".join(i.to_ptx() for i in k.instrs)
        regs = "\n".join(f".reg .{t} {n};" for n, t in k.regs.items())
        shared = "\n".join(f".{v.space} .align {v.align} .b8 {v.name}[{v.size or 16}];" for v in k.variables.values()
                           if v.space in ("shared", "local"))
        module_vars = "".join(f".{v.space} .align {v.align} .b8 {v.name}[{v.size}];\n" for v in k.variables.values()
                              if v.space in ("global", "const"))
        labels = {pc: name for name, pc in k.labels.items()}
        lines = [f"{labels[pc]}:\n{line}" if pc in labels else line for pc, line in enumerate(text.splitlines())]
        params = ", ".join(f".param .{p.ty} {p.name}" + (f"[{p.size}]" if p.ty == "b8" else "") for p in k.params)
        header = f".version {mod.version}\n.target {mod.target}\n.address_size 64\n"  # wgmma needs its sm_90a
        again = parse(header + module_vars + f".visible .entry {k.name}({params})\n{{\n{regs}\n{shared}\n"
                      + "\n".join(lines) + "\n}\n")
        k2 = again.kernels[k.name]
        assert [i.to_ptx() for i in k2.instrs] == [i.to_ptx() for i in k.instrs]


def test_nvcc_header_and_kernel_layout():
    mod = parse(kernel("ld.param.u64 %rd1, [p];\nret;", ".param .u64 p, .param .u32 n, .param .align 8 .b8 s[12]"))
    assert (mod.version, mod.target, mod.address_size) == ("9.0", "sm_90", 64)
    k = mod.kernels["k"]
    assert [(p.name, p.offset, p.size) for p in k.params] == [("p", 0, 8), ("n", 8, 4), ("s", 16, 12)]
    assert k.regs["%r8"] == "b32" and "%r9" not in k.regs
    assert k.instrs[0].spec is OPCODES["ld"] and k.instrs[0].mods == ("param",) and k.instrs[0].types == ("u64",)


@pytest.mark.parametrize("body, message", [
    ("add.s32 %r1, %r2, %r3", r"<ptx>:10:1: syntax error: unexpected '}'; expected ',' or ';' or '\|'"),
    ("tex.2d.v4.f32.f32 %r1, [%rd1];", r"<ptx>:9:1: unsupported instruction 'tex' \(in 'tex.2d.v4.f32.f32'\); run 'gpusim isa'"),
    ("add.foo.s32 %r1, %r2, %r3;", r"<ptx>:9:1: unsupported modifier .foo on 'add' \(supported: .ftz, .rm, .rn, .rp, .rz, .sat\)"),
    ("popc.f32 %r1, %r2;", r"<ptx>:9:1: type .f32 is not supported by 'popc' \(supported: .b32, .b64\)"),
    ("add.s32 %r1, %r2;", r"<ptx>:9:1: 'add.s32' takes 3 operands, got 2"),
    ("add.s32 %r1, %r2, %q7;", r"<ptx>:9:19: undeclared register %q7 \(declare it with .reg\)"),
    ("bra.uni $L_nowhere;", r"<ptx>:9:1: branch to undefined label '\$L_nowhere'"),
    ("@%r1 bra $L_x;\n$L_x: ret;", r"<ptx>:9:2: %r1 is a .b32 register, not a predicate"),
    ("fma.f32 %r1, %r2, %r3, %r4;", r"<ptx>:9:1: 'fma.f32' needs exactly one of .rm/.rn/.rp/.rz"),
    ("ld.shared.u32 %r1, [nothere];", r"<ptx>:9:1: unknown symbol 'nothere'"),
])
def test_bad_instructions_name_line_column_and_rule(body, message):
    with pytest.raises(PTXError, match=message):
        parse(kernel(body))


def test_error_shows_the_source_line_and_a_caret():
    with pytest.raises(PTXError) as info:
        parse(kernel("add.s32 %r1, %r2, %q7;"), "mine.ptx")
    assert str(info.value).splitlines()[1:] == ["    add.s32 %r1, %r2, %q7;", "                      ^"]
    assert (info.value.file, info.value.line, info.value.column) == ("mine.ptx", 9, 19)


def test_device_functions_are_rejected_with_advice():
    text = HEADER + ".visible .func f()\n{\nret;\n}\n"
    with pytest.raises(PTXError, match=r"<ptx>:4:10: syntax error: device functions \(.func / call\) are not supported"):
        parse(text)


def test_missing_version_and_unreadable_file(tmp_path):
    with pytest.raises(PTXError, match=r"missing .version directive"):
        parse(".target sm_90\n.address_size 64\n")
    with pytest.raises(PTXError, match=r"nope.ptx:0:0: cannot read PTX file"):
        parse_file(tmp_path / "nope.ptx")


def test_module_level_local_variables_are_rejected():
    with pytest.raises(PTXError, match=r"module-level .local variables are not supported \('g'\)"):
        parse(HEADER + ".local .align 4 .u32 g;\n")


def test_opcode_table_rows_are_complete():
    for name, spec in OPCODES.items():
        assert spec.name == name and spec.doc and spec.n_operands
        if spec.kind is Kind.ALU:
            assert spec.fn is not None and spec.sig is not None, name
        assert spec.unit if not callable(spec.unit) else True
