"""isa/mma.py: the tensor core's arithmetic and register layouts, against the H100's outputs
(validation/reports/h100/tensor_core/tensor_core_numerics.h100.npz, made by
validation/probes/tensor_core.py) and against hand-built cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from isa import mma

NPZ = Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100" / "tensor_core" / "tensor_core_numerics.h100.npz"
SETS = ("normal", "wide", "cancel", "sparse", "special", "tiny_c")
VARIANTS = (("mma_f32_f16", "f16", "f32"), ("mma_f32_bf16", "bf16", "f32"), ("mma_f16_f16", "f16", "f16"))


@pytest.fixture(scope="module")
def gpu():
    return np.load(NPZ)


def _to_regs(A, Bt, C, acc):
    """Tiles (T, 16, 16), (T, 8, 16), (T, 16, 8) -> the registers of the PTX fragment layouts."""
    av = A[:, mma.A_LAYOUT[..., 0], mma.A_LAYOUT[..., 1]]
    B = np.swapaxes(Bt, 1, 2)
    bv = B[:, mma.B_LAYOUT[..., 0], mma.B_LAYOUT[..., 1]]
    cv = C[:, mma.C_LAYOUT[..., 0], mma.C_LAYOUT[..., 1]]

    def pack(v):
        return v[..., 0::2].astype(np.uint32) | (v[..., 1::2].astype(np.uint32) << np.uint32(16))
    return pack(av), pack(bv), cv if acc == "f32" else pack(cv)


@pytest.mark.parametrize("kern,ab,acc", VARIANTS)
@pytest.mark.parametrize("name", SETS)
def test_mma_matches_the_h100_bit_for_bit(gpu, kern, ab, acc, name):
    A, Bt, C, D = (gpu[f"{kern}/{name}/{k}"] for k in ("A", "Bt", "C", "D"))
    a, b, c = _to_regs(A, Bt, C, acc)
    got = mma.mma_m16n8k16(a, b, c, ab, acc)
    _, _, want = _to_regs(A, Bt, D, acc)
    got_u, want_u = got.view(np.uint32), np.asarray(want).view(np.uint32)
    bad = np.flatnonzero(got_u != want_u)
    assert bad.size == 0, f"{kern}/{name}: {bad.size} of {got_u.size} registers differ"


def test_ldmatrix_layout_matches_the_h100(gpu):
    perm, out = gpu["ldmatrix/perm"], gpu["ldmatrix/out"]
    rows = 256 * perm[:, None] + np.arange(8) + 1          # what each lane's address points at
    for v, (n, trans) in enumerate(((1, False), (2, False), (4, False), (1, True), (2, True), (4, True))):
        lay = mma.ldmatrix_layout(n, trans)
        vals = rows[lay[..., 0], lay[..., 1]].astype(np.uint32)     # (32, n, 2)
        assert np.array_equal(vals[..., 0] | (vals[..., 1] << 16), out[v][:, :n]), (n, trans)


def _f16(x):
    return np.asarray(x, np.float16).view(np.uint16)


def _one(products_a, products_b, c, ab="f16"):
    a = np.zeros(16, np.uint16)
    b = np.zeros(16, np.uint16)
    a[:len(products_a)] = products_a
    b[:len(products_b)] = products_b
    return mma.dot_f32(a, b, np.float32(c), ab)


def test_terms_far_below_the_largest_are_truncated_not_rounded():
    # c = 1.0 sets E = 0: terms keep bits down to 2**-25. 2**-26 vanishes (a correctly
    # rounded sum would keep 1.0 too, but 3 * 2**-26 + 1.0 would round up to 1 + 2**-23).
    one = _f16(1.0)
    assert _one([_f16(2.0 ** -13)], [_f16(2.0 ** -13)], 1.0) == np.float32(1.0)
    three = _f16(3 * 2.0 ** -14)
    assert _one([three, three], [_f16(2.0 ** -12), _f16(2.0 ** -12)], 1.0) == np.float32(1.0)   # 1 + 3 * 2**-25
    # exactly representable products are kept whole
    assert _one([one], [_f16(2.0 ** -10)], 1.0) == np.float32(1.0 + 2.0 ** -10)


def test_the_sum_rounds_toward_zero_and_zero_is_positive():
    # 1 + 2**-24 + 2**-25 = 1 + 0.75 ulp: toward zero gives 1.0 (nearest would give 1 + 2**-23)
    got = _one([_f16(2.0 ** -12), _f16(2.0 ** -12)], [_f16(2.0 ** -12), _f16(2.0 ** -13)], 1.0)
    assert got == np.float32(1.0)
    neg = _one([_f16(-(2.0 ** -12)), _f16(-(2.0 ** -12))], [_f16(2.0 ** -12), _f16(2.0 ** -13)], -1.0)
    assert neg == np.float32(-1.0)
    z = _one([_f16(-0.0)], [_f16(1.0)], -0.0)
    assert z.view(np.uint32) == 0


def test_nan_and_infinities():
    assert _one([_f16(np.inf)], [_f16(0.0)], 1.0).view(np.uint32) == 0x7FFFFFFF
    assert _one([_f16(np.inf)], [_f16(2.0)], 1.0) == np.inf
    assert _one([_f16(np.inf)], [_f16(2.0)], -np.inf).view(np.uint32) == 0x7FFFFFFF
    big = np.uint16(0x7F7F)                                     # bf16 ~ 3.4e38: the product overflows f32
    assert _one([big], [np.uint16(0x3F80 + 0x800)], 0.0, "bf16") == np.inf


def test_unsupported_type_combinations_raise():
    with pytest.raises(ValueError):
        mma.mma_m16n8k16(np.zeros((1, 32, 4)), np.zeros((1, 32, 2)), np.zeros((1, 32, 2)), "bf16", "f16")


def _kernel(body: str) -> str:
    return (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
            ".reg .b32 %r<9>;\n.reg .f32 %f<9>;\n" + body + "\nret;\n}\n")


@pytest.mark.parametrize("line, message", [
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.bf16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r1,%r2}, {%f1,%f2,%f3,%f4};",
     r"mma type combination .f32.f16.bf16.f32 is not supported \(supported: .f32.f16.f16.f32, .f32.bf16.bf16.f32, .f16.f16.f16.f16\)"),
    ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2}, {%r1}, {%f1,%f2,%f3,%f4};",
     r"unsupported modifier .m16n8k8 on 'mma'"),
    ("mma.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r1,%r2}, {%f1,%f2,%f3,%f4};",
     r"needs exactly one of .(row|col)"),
    ("ldmatrix.sync.aligned.m8n8.trans.shared.b16 {%r1}, [%r2];", r"needs exactly one of .x1/.x2/.x4"),
])
def test_unsupported_mma_forms_are_refused_at_load_time(line, message):
    from isa import PTXError, parse
    with pytest.raises(PTXError, match=message):
        parse(_kernel(line), "user.ptx")
