"""``0f``/``0d`` literals moved into bit-typed registers keep their IEEE bits (PTX ISA 9.0 §4.5.1):
LLVM (Triton's back end) writes float constants as ``mov.b32 %r, 0f3F800000``."""

from __future__ import annotations

import numpy as np

import gpusim

PTX = """.version 8.7
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
 .reg .b32 %r<6>; .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [out];
 mov.b32 %r1, 0f3F800000;
 mov.b32 %r2, 0fBFC00000;
 add.f32 %r3, %r1, %r2;
 mov.b64 %rd2, 0d4000000000000000;
 mov.u32 %r4, 7;
 st.global.b32 [%rd1], %r1;
 st.global.b32 [%rd1+4], %r2;
 st.global.b32 [%rd1+8], %r3;
 st.global.b32 [%rd1+12], %r4;
 st.global.b64 [%rd1+16], %rd2;
 ret;
}
"""


def test_float_literals_in_bit_registers_are_raw_bits():
    with gpusim.Device("h100"):
        out = gpusim.zeros(6, np.uint32)
        gpusim.RawModule(code=PTX).get_function("k")((1,), (1,), (out,))
    got = out.get()
    assert list(got[:4]) == [0x3F800000, 0xBFC00000, np.float32(-0.5).view(np.uint32), 7]
    assert got[4:].view(np.float64)[0] == 2.0
