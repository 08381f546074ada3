"""Module .global/.const variables at run time (RawModule.get_global, ld.const, the constant
cache's transactions and their cost in the timing model), named barriers and trap."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import GpusimError, KernelFault
from gpusim.memmodel import constant_transactions

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "ptx"

#: Lane i reads tab[(tid >> shift) & 31] through a register address (an indexed LDC) and
#: increments the __device__ counter hits; shift 5 makes the address warp-uniform.
CONST_PTX = """.version 9.0
.target sm_90
.address_size 64
.const .align 4 .b8 tab[128] = {1, 0, 0, 0, 2, 0, 0, 0, 3};
.global .align 4 .u32 hits = 100;

.visible .entry lookup(.param .u64 out, .param .u32 shift)
{
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [out];
ld.param.u32 %r5, [shift];
mov.u32 %r1, %tid.x;
shr.u32 %r2, %r1, %r5;
and.b32 %r2, %r2, 31;
shl.b32 %r2, %r2, 2;
mov.u64 %rd2, tab;
cvt.u64.u32 %rd3, %r2;
add.s64 %rd2, %rd2, %rd3;
ld.const.u32 %r3, [%rd2];
ld.const.u32 %r6, [tab+4];
add.s32 %r3, %r3, %r6;
cvta.to.global.u64 %rd4, %rd1;
mul.wide.u32 %rd5, %r1, 4;
add.s64 %rd4, %rd4, %rd5;
st.global.u32 [%rd4], %r3;
atom.global.add.u32 %r7, [hits], 1;
ret;
}
"""


def test_initialisers_host_writes_and_later_launches(dev):
    mod = gpusim.RawModule(code=CONST_PTX)
    k = mod.get_function("lookup")
    out = gpusim.zeros(64, np.uint32)
    k((1,), (64,), (out, np.uint32(0)))
    tab = np.zeros(32, np.uint32)
    tab[:3] = [1, 2, 3]
    assert out.get().tolist() == (tab[np.arange(64) & 31] + 2).tolist()
    hits = mod.get_global("hits")
    assert (hits.dtype, hits.shape, hits.get().tolist()) == (np.uint32, (1,), [164])
    view = gpusim.ndarray((32,), np.uint32, mod.get_global("tab"))      # CuPy's idiom: memptr=
    view.set(np.arange(32, dtype=np.uint32) * 10)
    hits.set(np.array([7], np.uint32))
    k((1,), (64,), (out, np.uint32(5)))                                  # the launch sees both host writes
    assert out.get().tolist() == [0 + 10] * 32 + [10 + 10] * 32
    assert hits.get().tolist() == [71]


def test_each_module_and_device_has_its_own_variables():
    with gpusim.Device("h100"):
        a, b = gpusim.RawModule(code=CONST_PTX), gpusim.RawModule(code=CONST_PTX)
        out = gpusim.zeros(32, np.uint32)
        a.get_function("lookup")((1,), (32,), (out, np.uint32(0)))
        assert (a.get_global("hits").get()[0], b.get_global("hits").get()[0]) == (132, 100)
    with gpusim.Device("a100"):
        assert a.get_global("hits").get()[0] == 100


def test_get_global_errors(dev):
    mod = gpusim.RawModule(code=CONST_PTX)
    with pytest.raises(GpusimError, match=r"no .global/.const variable named 'nope' \(module variables: hits, tab\)"):
        mod.get_global("nope")
    with pytest.raises(GpusimError, match=r"does not fit inside one device allocation"):
        gpusim.ndarray((33,), np.uint32, mod.get_global("tab"))


@pytest.mark.parametrize("shift, per_warp", [(5, 1), (1, 16), (0, 32)])
def test_constant_cache_transactions(dev, shift, per_warp):
    mod = gpusim.RawModule(code=CONST_PTX)
    res = mod.get_function("lookup")((1,), (96,), (gpusim.zeros(96, np.uint32), np.uint32(shift)))
    # Only the indexed load counts (ld.const [tab+4] is a constant-bank operand).
    assert res.metrics["idc__requests.sum"] == 3
    assert res.metrics["gpusim__idc_transactions.sum"] == 3 * per_warp


def test_constant_transactions_model():
    rows = np.array([np.zeros(32), np.arange(32) // 2 * 4, np.arange(32) * 4])
    assert constant_transactions(rows).tolist() == [1, 16, 32]
    act = np.zeros((3, 32), bool)
    act[:, :4] = True
    assert constant_transactions(rows, act).tolist() == [1, 2, 4]
    assert constant_transactions(rows, np.zeros((3, 32), bool)).tolist() == [0, 0, 0]


def test_divergent_constant_reads_cost_cycles_in_the_timing_model():
    mod = gpusim.RawModule(code=CONST_PTX)
    cycles = {}
    with gpusim.Device("h100", mode="timing", sass=False):
        for shift in (5, 0):
            cycles[shift] = mod.get_function("lookup")((1,), (32,), (gpusim.zeros(32, np.uint32), np.uint32(shift))).cycles
    # 32 serialised transactions instead of 1, one cycle each: up to 31 cycles later, less what
    # the independent instructions after the load hide.
    assert 20 <= cycles[0] - cycles[5] <= 31


BARRIER_PTX = """.version 9.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 count)
{
.reg .pred %p<3>;
.reg .b32 %r<8>;
.reg .b64 %rd<4>;
.shared .align 4 .b8 s[512];
mov.u32 %r1, %tid.x;
setp.ge.u32 %p1, %r1, 64;
@%p1 bra $L_exit;
shl.b32 %r2, %r1, 2;
mov.u32 %r3, s;
add.s32 %r3, %r3, %r2;
st.shared.u32 [%r3], %r1;
barrier.sync 3, 64;
xor.b32 %r4, %r2, 128;
mov.u32 %r5, s;
add.s32 %r5, %r5, %r4;
ld.shared.u32 %r6, [%r5];
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd1, %rd1;
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd1, %rd1, %rd2;
st.global.u32 [%rd1], %r6;
$L_exit:
ret;
}
"""


def test_named_barrier_with_a_thread_count_completes_for_its_warps(dev):
    # Warps 2-3 exit; warps 0-1 meet at barrier 3 (64 threads) and read each other's words.
    out = gpusim.zeros(64, np.uint32)
    gpusim.RawModule(code=BARRIER_PTX).get_function("k")((2,), (128,), (out, np.uint32(0)))
    assert out.get().tolist() == (np.arange(64) ^ 32).tolist()


def test_barrier_thread_count_must_be_a_multiple_of_the_warp_size(dev):
    mod = gpusim.RawModule(code=BARRIER_PTX.replace("barrier.sync 3, 64", "barrier.sync 3, 48"))
    with pytest.raises(KernelFault, match=r"the thread count a positive multiple of the warp size"):
        mod.get_function("k")((1,), (128,), (gpusim.zeros(64, np.uint32), np.uint32(0)))


def test_trap_fails_the_launch_naming_the_thread(dev):
    k = gpusim.RawModule(path=CORPUS / "intrinsics.ptx").get_function("trap_if_negative")
    x = np.arange(64, dtype=np.int32)
    x[37] = -1
    with pytest.raises(KernelFault, match=r"trap executed at .*intrinsics.ptx:\d+ by block \(0, 0, 0\) thread \(37, 0, 0\)"):
        k((1,), (64,), (gpusim.asarray(x), gpusim.zeros(64, np.int32), np.int32(64)))


GENERIC_PTX = """.version 9.0
.target sm_90
.address_size 64
.const .align 8 .u64 c[2] = {11, 22};
.global .align 8 .u64 g[2];

.visible .entry k()
{
.reg .b64 %rd<8>;
mov.u64 %rd1, c;
cvta.const.u64 %rd2, %rd1;
ld.u64 %rd3, [%rd2+8];
cvta.to.const.u64 %rd4, %rd2;
ld.const.u64 %rd5, [%rd4];
add.s64 %rd3, %rd3, %rd5;
st.global.u64 [g+8], %rd3;
mov.u64 %rd6, g;
cvta.global.u64 %rd6, %rd6;
st.u64 [%rd6], %rd5;
ld.global.u64 %rd7, [g];
atom.global.add.u64 %rd7, [g+8], %rd7;
ret;
}
"""


def test_generic_and_state_space_addresses_of_module_variables(dev):
    mod = gpusim.RawModule(code=GENERIC_PTX)
    mod.get_function("k")((1,), (1,), ())
    assert mod.get_global("g").get().tolist() == [11, 11 + 22 + 11]
    assert mod.get_global("c").get().tolist() == [11, 22]
