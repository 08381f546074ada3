"""Floating-point contraction (isa.contract): which add/sub ptxas fuses with the mul feeding it,
checked on small kernels (exact bits) and against the SASS ptxas makes of every committed PTX file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from isa import parse

ROOT = Path(__file__).resolve().parents[2]
HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


def _kernel(body: str, regs: str = ".reg .f64 %fd<9>; .reg .f32 %f<9>; .reg .b64 %rd<3>; .reg .pred %p<3>;"):
    text = HEAD + f".visible .entry k() {{\n{regs}\n{body}\nret;\n}}\n"
    return parse(text, "<test>").kernels["k"]


def _fused(body: str) -> list[str]:
    return [i.mnemonic for i in _kernel(body).instrs if i.contract is not None]


def test_plain_mul_then_add_or_sub_fuse_in_either_operand_order():
    assert _fused("mul.f64 %fd3, %fd1, %fd2;\nsub.f64 %fd4, %fd3, %fd1;") == ["sub.f64"]
    assert _fused("mul.f32 %f3, %f1, %f2;\nadd.f32 %f4, %f5, %f3;") == ["add.f32"]
    k = _kernel("mul.f32 %f3, %f1, %f2;\nsub.f32 %f4, %f5, %f3;").instrs[1].contract
    assert (k.neg_product, k.neg_c, k.mul) == (True, False, 0)


@pytest.mark.parametrize("body", [
    "mul.rn.f64 %fd3, %fd1, %fd2;\nsub.f64 %fd4, %fd3, %fd1;",       # .rn on the mul forbids it
    "mul.f64 %fd3, %fd1, %fd2;\nsub.rn.f64 %fd4, %fd3, %fd1;",       # .rn on the sub
    "mul.f64 %fd3, %fd1, %fd2;\nmov.f64 %fd1, 0d3FF0000000000000;\nsub.f64 %fd4, %fd3, %fd5;",  # source rewritten
    "mul.f64 %fd3, %fd1, %fd2;\n$L1:\nsub.f64 %fd4, %fd3, %fd1;",    # another block
    "mul.ftz.f32 %f3, %f1, %f2;\nadd.f32 %f4, %f3, %f1;",            # .ftz differs
    "mul.f32 %f1, %f1, %f2;\nadd.f32 %f4, %f1, %f5;",                # the product overwrote a source
    "mul.sat.f32 %f3, %f1, %f2;\nadd.f32 %f4, %f3, %f1;",
])
def test_what_does_not_fuse(body):
    assert _fused(body) == []


def test_a_slow_path_ends_the_block():
    # an IEEE reciprocal between the products (precise_math's call price): only the second can fuse
    body = "mul.f32 %f3, %f1, %f2;\nrcp.rn.f32 %f5, %f1;\nmul.f32 %f6, %f5, %f2;\nsub.f32 %f4, %f3, %f6;"
    k = _kernel(body).instrs[3].contract
    assert (k.mul, k.neg_product, k.neg_c) == (2, True, False)
    assert _fused(body.replace("rcp.rn.f32", "rcp.approx.f32")) == ["sub.f32"]
    assert _kernel(body.replace("rcp.rn.f32", "rcp.approx.f32")).instrs[3].contract.mul == 0
    for slow in ("div.rn.f64 %fd5, %fd1, %fd2;", "div.s64 %rd1, %rd1, %rd1;", "sqrt.rn.f32 %f5, %f1;"):
        assert _fused(f"mul.f32 %f3, %f1, %f2;\n{slow}\nadd.f32 %f4, %f3, %f1;") == []


#: type -> (destination, source, store type) of the instructions tried against ptxas
_REGS = {"s16": ("%h2", "%h1", "b16"), "u16": ("%h2", "%h1", "b16"), "s32": ("%r2", "%r1", "b32"),
         "u32": ("%r2", "%r1", "b32"), "s64": ("%rd2", "%rd1", "b64"), "u64": ("%rd2", "%rd1", "b64"),
         "f32": ("%f2", "%f1", "f32"), "f64": ("%fd2", "%fd1", "f64")}
_INT = ("s16", "u16", "s32", "u32", "s64", "u64")
#: (opcode with modifiers, types) whose slow paths :func:`isa.contract.slow_path` is checked against
SLOW_CANDIDATES = [
    ("div.rn", ("f32", "f64")), ("div.rz", ("f32",)), ("div.rn.ftz", ("f32",)), ("div.rm", ("f64",)),
    ("div.full", ("f32",)), ("div.approx", ("f32",)),
    ("rcp.rn", ("f32", "f64")), ("rcp.rp.ftz", ("f32",)), ("rcp.rz", ("f64",)), ("rcp.approx", ("f32",)),
    ("rcp.approx.ftz", ("f32", "f64")), ("sqrt.rn", ("f32", "f64")), ("sqrt.rm.ftz", ("f32",)),
    ("sqrt.approx", ("f32",)), ("rsqrt.approx", ("f32", "f64")), ("rsqrt.approx.ftz", ("f64",)),
    ("div", _INT), ("rem", _INT)]


@pytest.mark.sass
def test_slow_path_is_what_ptxas_branches_to():
    from gpusim import sass
    from isa.contract import slow_path

    body = []
    for i, (op, ty) in enumerate((op, ty) for op, tys in SLOW_CANDIDATES for ty in tys):
        d, a, st = _REGS[ty]
        srcs = f"{a}, {a}" if op.split(".")[0] in ("div", "rem") else a
        body += [f"{op}.{ty} {d}, {srcs};", f"st.global.{st} [%rd1+{8 * i}], {d};"]
    text = HEAD + ".visible .entry k(.param .u64 p) {\n.reg .b16 %h<3>; .reg .b32 %r<3>; .reg .b64 %rd<3>; " \
        ".reg .f32 %f<3>; .reg .f64 %fd<3>;\nld.param.u64 %rd1, [p];\nld.global.u16 %h1, [%rd1];\n" \
        "ld.global.u32 %r1, [%rd1];\nld.global.f32 %f1, [%rd1];\nld.global.f64 %fd1, [%rd1];\n" \
        + "\n".join(body) + "\nret;\n}\n"
    k = parse(text, "<slow>").kernels["k"]
    ks = sass.kernel_sass(k, text, "sm_90")
    tried = [(ins, ops) for ins, ops in zip(k.instrs, ks.ops) if ins.op in ("div", "rem", "rcp", "sqrt", "rsqrt")]
    branches = {ins.mnemonic: any(o.split(".")[0] in ("BRA", "CALL") for o in ops) for ins, ops in tried}
    assert {ins.mnemonic: slow_path(ins) for ins, _ in tried} == branches
    assert sum(branches.values()) == 21


def test_a_fused_sub_rounds_once():
    """x * y - x with x = 1 + 2^-30, y = 1 + 2^-30: two roundings lose the 2^-60 term."""
    text = HEAD + """.visible .entry k(.param .u64 p) {
.reg .f64 %fd<5>; .reg .b64 %rd<2>;
ld.param.u64 %rd1, [p];
ld.global.f64 %fd1, [%rd1];
mul.f64 %fd3, %fd1, %fd1;
sub.f64 %fd4, %fd3, %fd1;
st.global.f64 [%rd1+8], %fd4;
ret;
}
"""
    x = 1 + 2.0 ** -30
    with gpusim.Device("h100"):
        k = gpusim.RawModule(code=text).get_function("k")
        a = gpusim.asarray(np.array([x, 0.0]))
        k((1,), (1,), (a,))
        got = a.get()[1]
    exact = 2.0 ** -30 + 2.0 ** -60          # x*x - x, representable in binary64
    assert got == exact and (x * x - x) != exact


def _committed_ptx():
    dirs = [ROOT / "gpusim" / "suite" / "ptx", ROOT / "tests" / "corpus" / "ptx", ROOT / "validation" / "probes"]
    return sorted(p for d in dirs for p in d.rglob("*.ptx"))


@pytest.mark.sass
@pytest.mark.parametrize("path", _committed_ptx(), ids=lambda p: p.name)
def test_the_rule_fuses_exactly_what_ptxas_fuses(path):
    from gpusim import sass

    text = path.read_text()
    module = parse(text, str(path))
    wrong = []
    for name, k in module.kernels.items():
        ks = sass.kernel_sass(k, text, "sm_90")
        for ins, ops in zip(k.instrs, ks.ops):
            if ins.op in ("add", "sub") and ins.types[:1] in (("f32",), ("f64",)):
                fused = any(o.split(".")[0] in ("FFMA", "DFMA") for o in ops)
                if fused != (ins.contract is not None):
                    wrong.append(f"{name}: line {ins.loc.line} {ins.mnemonic}: ptxas {ops}, rule "
                                 f"{'fuses' if ins.contract else 'does not fuse'}")
                elif fused and any(o.split(".")[0] in ("FMUL", "DMUL") for o in ks.ops[ins.contract.mul]):
                    wrong.append(f"{name}: line {ins.loc.line} {ins.mnemonic}: ptxas fused another mul than "
                                 f"line {k.instrs[ins.contract.mul].loc.line}'s")
    assert not wrong, "\n".join(wrong[:10])
