"""Opcodes added for everyday nvcc output: testp, copysign, .u16x2/.s16x2 arithmetic, redux and
match with partial member masks (PTX ISA 9.0 semantics, checked bit for bit)."""

from __future__ import annotations

import numpy as np

import gpusim

TESTP_PTX = """.version 9.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 out)
{
.reg .pred %p<8>;
.reg .b32 %r<12>;
.reg .f32 %f<4>;
.reg .b64 %rd<6>;
ld.param.u64 %rd1, [x];
ld.param.u64 %rd2, [out];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd4, %rd1, %rd3;
ld.global.f32 %f1, [%rd4];
testp.finite.f32 %p1, %f1;
testp.infinite.f32 %p2, %f1;
testp.number.f32 %p3, %f1;
testp.notanumber.f32 %p4, %f1;
testp.normal.f32 %p5, %f1;
testp.subnormal.f32 %p6, %f1;
selp.u32 %r2, 1, 0, %p1;
selp.u32 %r3, 2, 0, %p2;
selp.u32 %r4, 4, 0, %p3;
selp.u32 %r5, 8, 0, %p4;
selp.u32 %r6, 16, 0, %p5;
selp.u32 %r7, 32, 0, %p6;
or.b32 %r2, %r2, %r3;
or.b32 %r2, %r2, %r4;
or.b32 %r2, %r2, %r5;
or.b32 %r2, %r2, %r6;
or.b32 %r2, %r2, %r7;
copysign.f32 %f2, %f1, 0f3FC00000;
mov.b32 %r8, %f2;
shl.b32 %r9, %r2, 0;
mul.wide.u32 %rd3, %r1, 8;
add.s64 %rd5, %rd2, %rd3;
st.global.v2.u32 [%rd5], {%r2, %r8};
ret;
}
"""


def test_testp_and_copysign(dev):
    x = np.zeros(32, np.float32)
    x[:9] = [1.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 3.4e38, 0.0]
    x[8] = -np.float32(np.nan)
    out = gpusim.zeros(64, np.uint32)
    gpusim.RawModule(code=TESTP_PTX).get_function("k")((1,), (32,), (gpusim.asarray(x), out))
    flags, signed = out.get().reshape(32, 2).T
    # bits: finite 1, infinite 2, number 4, notanumber 8, normal 16, subnormal 32
    assert flags[:9].tolist() == [21, 5, 6, 6, 8, 37, 37, 21, 8]
    want = np.where(np.signbit(x), np.float32(-1.5), np.float32(1.5)).view(np.uint32)
    assert signed.tolist() == want.tolist()


SIMD_PTX = """.version 9.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 out)
{
.reg .pred %p<2>;
.reg .b32 %r<12>;
.reg .b64 %rd<6>;
ld.param.u64 %rd1, [a];
ld.param.u64 %rd2, [out];
mov.u32 %r1, %laneid;
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd4, %rd1, %rd3;
ld.global.u32 %r2, [%rd4];
mov.u32 %r10, 0;
add.s16x2 %r3, %r2, %r1;
min.u16x2 %r4, %r1, %r2;
max.s16x2 %r5, %r2, %r10;
mul.wide.u32 %rd3, %r1, 16;
add.s64 %rd5, %rd2, %rd3;
setp.ge.u32 %p1, %r1, 16;
@%p1 bra $L_skip;
redux.sync.min.s32 %r6, %r2, 65535;
match.any.sync.b32 %r7, %r1, 65535;
st.global.v4.u32 [%rd5], {%r3, %r4, %r5, %r6};
$L_skip:
ret;
}
"""


def _halves(v):
    return v & 0xFFFF, v >> 16


def test_packed_16bit_arithmetic_and_partial_member_masks(dev):
    a = np.random.default_rng(3).integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    out = gpusim.zeros(128, np.uint32)
    gpusim.RawModule(code=SIMD_PTX).get_function("k")((1,), (32,), (gpusim.asarray(a), out))
    got = out.get().reshape(32, 4)[:16]
    lanes = np.arange(16, dtype=np.int64)
    av = a[:16].astype(np.int64)
    lo, hi = _halves(av)
    add = ((lo + lanes) & 0xFFFF) | ((hi + 0) & 0xFFFF) << 16          # the lane id is 0 in the high half
    sub = np.minimum(lanes, lo) | np.minimum(0, hi) << 16                  # min.u16x2 with the lane id
    s16 = lambda h: np.where(h >= 0x8000, h - 0x10000, h)
    mx = (np.maximum(s16(lo), 0) & 0xFFFF) | (np.maximum(s16(hi), 0) & 0xFFFF) << 16
    red = a[:16].view(np.int32).min().astype(np.int64) & 0xFFFFFFFF
    assert got[:, 0].tolist() == add.tolist()
    assert got[:, 1].tolist() == sub.tolist()
    assert got[:, 2].tolist() == mx.tolist()
    assert got[:, 3].tolist() == [red] * 16
    assert out.get().reshape(32, 4)[16:].tolist() == [[0] * 4] * 16
