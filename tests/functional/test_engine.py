"""The SIMT engine: divergence, barriers, memory spaces, atomics, warp ops, counters."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.errors import KernelFault


def test_divergent_branches_and_loops_give_exact_results(dev, kernels):
    k = kernels("control").get_function("diverge")
    n = 1000
    out = gpusim.zeros(n, np.uint32)
    k((4,), (256,), (out, np.uint32(n)))
    i = np.arange(n, dtype=np.uint32)
    expect = np.where(i % 2 == 1, 3 * i, i + 100) + i % 5
    np.testing.assert_array_equal(out.get(), expect)


def _counts_by_text(k, counts):
    return {i.to_ptx(): int(c) for i, c in zip(k.kernel.instrs, counts)}


def test_instruction_counters_follow_the_warp_paths(dev, kernels):
    # One warp, all lanes live: count the warp-level executions by hand.
    k = kernels("control").get_function("diverge")
    out = gpusim.zeros(32, np.uint32)
    res = k((1,), (32,), (out, np.uint32(32)))
    warp = _counts_by_text(k, res.inst_executed)
    thread = _counts_by_text(k, res.thread_inst_executed)
    # Odd path and even path run once each, with 16 active lanes.
    assert warp["mul.lo.s32 %r7, %r5, 3;"] == 1 and warp["add.s32 %r7, %r5, 100;"] == 1
    assert thread["mul.lo.s32 %r7, %r5, 3;"] == 16 and thread["add.s32 %r7, %r5, 100;"] == 16
    # The loop test runs max(i % 5) + 1 = 5 times for the warp, the body 4 times.
    assert warp["setp.ge.u32 %p3, %r9, %r8;"] == 5 and warp["add.s32 %r9, %r9, 1;"] == 4
    assert thread["add.s32 %r9, %r9, 1;"] == sum(v % 5 for v in range(32))
    # After the loop the warp has reconverged: the store runs once with 32 lanes.
    assert warp["st.global.u32 [%rd2], %r7;"] == 1 and thread["st.global.u32 [%rd2], %r7;"] == 32
    assert res.metrics["gpusim__ptx_inst_executed.sum"] == int(res.inst_executed.sum())
    assert res.metrics["gpusim__ptx_thread_inst_executed.sum"] == int(res.thread_inst_executed.sum())


def test_barrier_with_partial_warps_and_early_exit(dev, kernels):
    k = kernels("control").get_function("reverse_block")
    n = 230  # last block has 38 live threads of 48: a partial warp and exited threads
    x = np.arange(n, dtype=np.uint32) * 7
    out = gpusim.zeros(n, np.uint32)
    k((5,), (48,), (gpusim.asarray(x), out, np.uint32(n)))
    expect = np.concatenate([x[s:s + 48][::-1] for s in range(0, n, 48)])
    np.testing.assert_array_equal(out.get(), expect)


def test_divergent_barrier_is_reported(dev, kernels):
    k = kernels("control").get_function("bad_barrier")
    with pytest.raises(KernelFault, match=r"bad_barrier: threads of block \(0, 0, 0\) wait at different barriers "
                                          r"\(PTX lines 106, 109\): bar.sync in divergent code"):
        k((1,), (64,), (gpusim.zeros(1, np.uint32),))


def test_a_spinning_kernel_stops_with_a_clear_error(kernels):
    with gpusim.Device("h100", max_steps=1000):
        k = kernels("control").get_function("spin")
        with pytest.raises(KernelFault, match=r"spin: watchdog: no completion after 1,000 instruction steps "
                                              r"\(max_steps\).*control.ptx:120 "):
            k((1,), (32,), (gpusim.zeros(1, np.uint32),))


def test_out_of_bounds_load_names_kernel_line_thread_and_keeps_prior_writes(dev, kernels):
    k = kernels("memory").get_function("load_offset")
    a = gpusim.asarray(np.arange(64, dtype=np.uint32))
    out = gpusim.zeros(64, np.uint32)
    with pytest.raises(KernelFault) as info:
        k((2,), (32,), (a, out, np.uint32(1)))
    msg = str(info.value)
    assert "load_offset: out-of-bounds access (global, 4 bytes at address " in msg
    assert "memory.ptx:30 'ld.global.u32 %r7, [%rd6];' by block (1, 0, 0) thread (31, 0, 0)" in msg
    # The store of the global thread index before the faulting load stays written.
    np.testing.assert_array_equal(out.get(), np.arange(64))


def test_misaligned_access_is_reported(dev):
    ptx = (PTX_MISALIGNED)
    k = gpusim.RawModule(code=ptx).get_function("mis")
    with pytest.raises(KernelFault, match=r"mis: misaligned 4-byte access \(global, 4 bytes at address 0x[0-9a-f]+2\)"):
        k((1,), (32,), (gpusim.zeros(64, np.uint32),))


PTX_MISALIGNED = """
.version 9.0
.target sm_90
.address_size 64
.visible .entry mis(.param .u64 p)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    add.s64 %rd2, %rd1, 2;
    ld.global.u32 %r1, [%rd2];
    ret;
}
"""


def test_vectors_local_memory_and_generic_shared_addresses(dev, kernels):
    k = kernels("memory").get_function("vec_local_generic")
    x = np.arange(128 * 4, dtype=np.uint32) * 3
    out = gpusim.zeros(128 * 4, np.uint32)
    k((1,), (128,), (gpusim.asarray(x), out))
    q = x.reshape(-1, 4)
    expect = np.stack([q[:, 3], q[:, 2] + 1, q[:, 1] + 2, q[:, 0] + 3], axis=1).reshape(-1)
    np.testing.assert_array_equal(out.get(), expect)


def test_atomics_serialise_colliding_lanes(dev, kernels):
    k = kernels("memory").get_function("atomics")
    n, m = 3 * 256, 5
    counter = gpusim.zeros(m, np.uint32)
    old = gpusim.zeros(n, np.uint32)
    mx = gpusim.zeros(2, np.uint32)
    k((3,), (256,), (counter, old, mx, np.uint32(m)))
    i = np.arange(n)
    np.testing.assert_array_equal(counter.get(), np.bincount(i % m))
    # Within each counter the old values are 0..count-1, handed out in thread order.
    for c in range(m):
        np.testing.assert_array_equal(old.get()[i % m == c], np.arange(np.sum(i % m == c)))
    got = mx.get()
    assert got[0] == ((i * 7) % 1000).max()
    # Only the first CAS (compare with 0) succeeds: it stores the block's thread count.
    assert got[1] == 256


def test_shuffles_match_the_ptx_pseudocode(dev, kernels):
    k = kernels("warp").get_function("shuffles")
    out = gpusim.zeros(64 * 4, np.uint32)
    k((1,), (64,), (out,))
    got = out.get().reshape(-1, 4)
    t = np.arange(64)
    lane, x = t % 32, 10 * t
    base = t - lane
    np.testing.assert_array_equal(got[:, 0], x[base + (lane ^ 1)])
    np.testing.assert_array_equal(got[:, 1], np.where(lane >= 3, x[t - 3], x))
    np.testing.assert_array_equal(got[:, 2], np.where(lane + 5 <= 31, x[np.minimum(t + 5, 63)], x))
    # c = 0x181F: segments of 8 lanes (segmask 0x18), index 7 within the segment.
    np.testing.assert_array_equal(got[:, 3], x[base + (lane & 0x18) + 7])


def test_votes_and_activemask(dev, kernels):
    k = kernels("warp").get_function("votes")
    out = gpusim.zeros(64 * 4, np.uint32)
    k((1,), (64,), (out,))
    got = out.get().reshape(-1, 4)
    t = np.arange(64)
    ballot = [sum(1 << L for L in range(32) if (w * 32 + L) % 3 == 0) for w in range(2)]
    np.testing.assert_array_equal(got[:, 0], np.repeat(ballot, 32))
    assert (got[:, 1] == 1).all()
    np.testing.assert_array_equal(got[:, 2], np.repeat([1, 0], 32))
    np.testing.assert_array_equal(got[:, 3], np.where(t % 2 == 1, 0xAAAAAAAA, 0))


def test_shuffle_with_unconverged_member_mask_is_an_error(dev, kernels):
    k = kernels("warp").get_function("shfl_diverged")
    with pytest.raises(KernelFault, match=r"shfl.sync at .*warp.ptx:71 in block \(0, 0, 0\), warp 0: "
                                          r"lanes 0,2,4,.*,30 named in the member mask 0xffffffff are not converged"):
        k((1,), (32,), (gpusim.zeros(1, np.uint32),))


def test_large_grid_is_processed_in_chunks_with_identical_results(dev, kernels):
    from gpusim.functional import launch
    k = kernels("control").get_function("diverge")
    n = 40_000
    a, b = gpusim.zeros(n, np.uint32), gpusim.zeros(n, np.uint32)
    r1 = k((157,), (256,), (a, np.uint32(n)))
    old = launch.CHUNK_THREADS
    launch.CHUNK_THREADS = 512  # force 2-block chunks
    try:
        r2 = k((157,), (256,), (b, np.uint32(n)))
    finally:
        launch.CHUNK_THREADS = old
    np.testing.assert_array_equal(a.get(), b.get())
    assert r1.metrics == r2.metrics


def test_a_fault_in_a_predicated_load_names_the_faulting_thread(dev):
    # Threads 0..6 are predicated off; thread 7 is the first that loads, out of bounds.
    ptx = """.version 9.0
.target sm_90
.address_size 64
.visible .entry pred_oob(.param .u64 pred_oob_p)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [pred_oob_p];
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 7;
    mul.wide.u32 %rd2, %r1, 4096;
    add.s64 %rd3, %rd1, %rd2;
    @%p1 ld.global.u32 %r2, [%rd3];
    ret;
}
"""
    k = gpusim.RawModule(code=ptx).get_function("pred_oob")
    with pytest.raises(KernelFault, match=r"by block \(0, 0, 0\) thread \(7, 0, 0\)"):
        k((1,), (32,), (gpusim.zeros(16, np.uint32),))
