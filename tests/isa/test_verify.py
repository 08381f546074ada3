"""The load-time verifier (isa/verify.py): the findings of issue #29, each located and worded like
ptxas, and agreement with ptxas on mutants of the project's PTX (validation/mutants.py)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from isa import PTXError, parse

ROOT = Path(__file__).resolve().parents[2]


def module(body: str, regs: str = ".reg .b32 %r<9>;\n.reg .b64 %rd<5>;", version: str = "9.0",
           target: str = "sm_90") -> str:
    """One kernel with parameter p; ``body`` starts on line 10."""
    return (f".version {version}\n.target {target}\n.address_size 64\n"
            f".visible .entry k(.param .u64 p)\n{{\n.reg .pred %p<3>;\n{regs}\n.reg .f32 %f<3>;\n{body}\nret;\n}}\n")


def rejects(text: str, line: int, column: int, phrase: str) -> PTXError:
    with pytest.raises(PTXError) as e:
        parse(text, "t.ptx")
    err = e.value
    assert (err.file, err.line, err.column) == ("t.ptx", line, column), str(err)
    assert phrase in err.reason, err.reason
    return err


# ---------------------------------------------------------------- the findings of issue #29
def test_ld_param_u64_into_a_b32_register():
    rejects(module("ld.param.u64 %r1, [p];"), 10, 14, "Arguments mismatch for instruction 'ld'")
    parse(module("ld.param.u64 %rd1, [p];"))                      # the fix: a 64-bit register
    parse(module("ld.param.u32 %rd1, [p];"))                      # ld may widen into a larger register


def test_v4_load_into_two_registers():
    err = rejects(module("ld.global.v4.u32 {%r1, %r2}, [%rd1];"), 10, 18,
                  "Argument vector size mismatch for instruction 'ld'")
    assert "moves 4 elements" in err.reason
    parse(module("ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];"))


def test_version_1_0_and_target_sm_999():
    rejects(module("mov.u32 %r1, 1;", version="1.0"), 3, 1, "requires PTX ISA .version 2.3")
    rejects(module("mov.u32 %r1, 1;", target="sm_999"), 2, 1, "Unsupported .target 'sm_999'")
    rejects(module("mov.u32 %r1, 1;", version="9.1"), 1, 1, "Unsupported .version 9.1")
    rejects(module("mov.u32 %r1, 1;", version="7.0"), 1, 1, "PTX .version 7.0 does not support .target sm_90")
    rejects(module("mov.u32 %r1, 1;", version="7.8", target="sm_90a"), 1, 1, "needs .version 8.0")
    parse(module("mov.u32 %r1, 1;", version="7.8"))


def test_b32_register_as_a_global_address():
    rejects(module("ld.global.u32 %r2, [%r1];"), 10, 20, "32-bit address")
    rejects(module("st.global.u32 [%r1+4], %r2;"), 10, 15, "32-bit register addressing global memory")
    parse(module("ld.shared.u32 %r2, [%r1];"))                   # shared addresses are 32-bit


def test_const_variable_inside_a_kernel_loads_and_runs():
    gpusim = pytest.importorskip("gpusim")
    text = (".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            ".const .align 4 .b32 c[2] = {7, 9};\n.reg .b32 %r<3>;\n.reg .b64 %rd<3>;\n"
            "ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\nld.const.u32 %r1, [c+4];\n"
            "st.global.u32 [%rd2], %r1;\nret;\n}\n")
    mod = parse(text)
    assert mod.kernels["k"].variables["c"].space == "const"
    out = gpusim.zeros(1, np.uint32)
    gpusim.RawModule(code=text).get_function("k")((1,), (1,), (out,))
    assert out.get()[0] == 9


# ---------------------------------------------------------------- the rules, one each
@pytest.mark.parametrize("body, line, col, phrase", [
    ("add.s32 %r1, %r2, 1.5;", 10, 19, "1.5 is a float literal"),
    ("add.f32 %f1, %f2, 256;", 10, 19, "256 is an integer literal"),
    ("mov.u32 %r1, %tid;", 10, 14, "Argument vector size mismatch"),
    ("mov.u32 %r1, %laneid.x;", 10, 14, "Unknown field '.x'"),
    ("mov.u32 %r1, %clock64;", 10, 14, "64-bit special register"),
    ("add.u32 %r1, %tid.x, 1;", 10, 14, "Special register argument not allowed for instruction 'add'"),
    ("ld.global.shared.u32 %r1, [%rd1];", 10, 1, "Unexpected number of state spaces"),
    ("ld.shared.u32 %r1, [p];", 10, 20, "State space mismatch between instruction and address"),
    ("st.param.u64 [p], %rd1;", 10, 14, "Illegal to write to function input parameter 'p'"),
    ("ld.global.v2.u32 {%r1, %r2, %r3}, [%rd1];", 10, 18, "Illegal vector size: 3"),
    ("ld.global.v2.f32 {%f1, %p1}, [%rd1];", 10, 18, "Vector with elements of different types"),
    ("mov.b64 {%r1, %r2, %r3}, %rd1;", 10, 9, "Illegal vector size: 3"),
    ("ld.global.u32 %r1, [%f1];", 10, 20, "of type .f32 as address operand"),
    ("setp.lo.s32 %p1, %r1, %r2;", 10, 1, "Mismatch between instruction type and comparison qualifier"),
    ("mul.s32 %r1, %r2, %r3;", 10, 1, "needs one of .lo, .hi, .wide"),
    ("cvt.f32.s32 %f1, %r1;", 10, 1, "Rounding modifier required for instruction 'cvt'"),
    ("ld.global.nc.nc.u32 %r1, [%rd1];", 10, 1, "Duplicate .nc modifier"),
    ("ld.shared.nc.u32 %r1, [%r2];", 10, 1, "Modifier '.nc' requires .global space"),
    ("bar.sync 16;", 10, 10, "Barrier number '16' out of range"),
    ("add.s32 %r1, %r2, -0f3F800000;", 10, 19, "Parsing error near '0f3F800000'"),
])
def test_rule(body, line, col, phrase):
    rejects(module(body), line, col, phrase)


def test_instruction_target_pairs():
    rejects(module("redux.sync.add.u32 %r1, %r2, -1;", target="sm_75", version="7.8"), 10, 1,
            "requires .target sm_80 or higher")
    text = (ROOT / "tests/functional/ptx/wgmma_ops.ptx").read_text()
    err = rejects(text.replace(".target sm_90a", ".target sm_90"), *_first("wgmma", text), "not supported on .target 'sm_90'")
    assert "sm_90a only" in err.reason


def _first(word: str, text: str) -> tuple[int, int]:
    for no, ln in enumerate(text.splitlines(), 1):
        if ln.lstrip().startswith(word):
            return no, len(ln) - len(ln.lstrip()) + 1
    raise AssertionError(word)


def test_declaration_rules():
    rejects(module("ret;").replace(".param .u64 p)", ".param .u64 p, .param .u32 p)"), 4, 34, "Duplicate definition")
    rejects(module("ret;").replace(".reg .f32 %f<3>;", ".shared .shared .align 4 .b8 s[4];"), 9, 1,
            "Multiple state spaces specified")
    rejects(module("ret;").replace(".reg .f32 %f<3>;", ".shared .align 6 .b8 s[4];"), 9, 1, "power of two")


# ---------------------------------------------------------------- agreement with ptxas on mutants
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH")
def test_mutants_agree_with_ptxas():
    """40 mutants of the smaller project PTX files (validation/mutants.py, as the benchmark
    benchmarks/ptx_mutants.py draws them): ptxas and gpusim's loader agree on every one."""
    import sys

    sys.path.insert(0, str(ROOT))
    from validation.mutants import generate, judge, project_ptx_files

    small = [f for f in project_ptx_files() if (ROOT / f).stat().st_size < 40_000]
    t0 = time.time()
    results = [judge(m, shutil.which("ptxas")) for m in generate(40, seed=3, files=small)]
    bad = [(r["file"], r["line"], r["after"], r["ptxas_msg"], r["gpusim_msg"]) for r in results if not r["agree"]]
    assert not bad, bad
    assert {r["ptxas"] for r in results} == {True, False}   # both verdicts occur
    assert time.time() - t0 < 60
