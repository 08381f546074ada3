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


def _kernel(body: str, regs: str = ".reg .f64 %fd<9>; .reg .f32 %f<9>; .reg .pred %p<3>;"):
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
    assert not wrong, "\n".join(wrong[:10])
