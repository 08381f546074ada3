"""Independent thread scheduling: spin-waits and locks within a warp finish, as on Volta+ GPUs,
in both engines; a spin nobody can end is reported; colliding atomics stay in lane order."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import KernelFault
from gpusim.functional.its import CHECK_EVERY

PTX_DIR = Path(__file__).parent / "ptx"


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_a_lane_waits_for_a_later_lane_of_its_warp(kernels, mode):
    # Lane 0's spin loop has the lowest PC: the lowest-PC order alone would never run lane 31.
    with gpusim.Device("h100", mode=mode):
        k = kernels("its").get_function("flag_wait")
        flag, out = gpusim.zeros(4, np.uint32), gpusim.zeros(4, np.uint32)
        k((1,), (128,), (flag, out))
        np.testing.assert_array_equal(flag.get(), np.arange(4) + 7)
        np.testing.assert_array_equal(out.get(), np.arange(4) + 8)


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_a_spin_lock_taken_by_every_lane_of_every_warp(kernels, mode):
    with gpusim.Device("h100", mode=mode):
        k = kernels("its").get_function("locked_sum")
        n = 150
        x = gpusim.asarray(np.arange(n, dtype=np.int32) * 3)
        lock, total = gpusim.zeros(1, np.int32), gpusim.zeros(1, np.int32)
        k((2,), (96,), (lock, total, x, np.int32(n)))
        assert int(total.get()[0]) == 3 * n * (n - 1) // 2
        assert int(lock.get()[0]) == 0


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_a_lock_never_released_is_an_endless_loop_error(kernels, mode):
    with gpusim.Device("h100", mode=mode):
        k = kernels("its").get_function("locked_sum")
        x = gpusim.zeros(64, np.int32)
        lock, total = gpusim.asarray(np.ones(1, np.int32)), gpusim.zeros(1, np.int32)
        with pytest.raises(KernelFault, match=r"endless loop|deadlock") as e:
            k((1,), (64,), (lock, total, x, np.int32(40)))
        # it names a line of the spin loop
        text = (PTX_DIR / "its.ptx").read_text().splitlines()
        first = text.index("$L__BB0_2:") + 1
        lines = {int(m) for m in re.findall(r"its\.ptx:(\d+)", str(e.value))}
        assert lines and all(first < n <= first + 5 for n in lines), (lines, first)


def test_only_some_lanes_spinning_on_a_lock_held_forever_is_a_deadlock(dev):
    # Lane 0 holds the lock and exits; the others spin while one lane of the chunk sits at a
    # barrier-free path: parked, resumed, parked again with nothing else to run.
    ptx = """.version 9.0
.target sm_90
.address_size 64
.visible .entry hold(.param .u64 hold_lock, .param .u64 hold_out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [hold_lock];
    ld.param.u64 %rd2, [hold_out];
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra $L_take;
$L_spin:
    atom.global.cas.b32 %r2, [%rd1], 0, 1;
    setp.ne.u32 %p2, %r2, 0;
    @%p2 bra $L_spin;
    st.global.u32 [%rd2], %r1;
    ret;
$L_take:
    atom.global.exch.b32 %r3, [%rd1], 1;
    ret;
}
"""
    k = gpusim.RawModule(code=ptx).get_function("hold")
    lock, out = gpusim.zeros(1, np.uint32), gpusim.zeros(1, np.uint32)
    with pytest.raises(KernelFault, match=r"deadlock: 31 threads spin|endless loop"):
        k((1,), (32,), (lock, out))


def test_threads_that_exit_while_diverged_stay_exited_after_the_others_reconverge(dev, kernels):
    k = kernels("its").get_function("exit_then_join")
    out = gpusim.asarray(np.full(64, 0xFFFF, np.uint32))
    k((1,), (64,), (out,))
    i = np.arange(64, dtype=np.uint32)
    np.testing.assert_array_equal(out.get(), np.where(i % 2 == 0, i, 0xFFFF))


def test_a_divergent_counting_loop_is_never_parked(dev, kernels):
    # control.ptx's loop runs i % 5 times per lane, registers changing every iteration: the
    # counters are those of the lowest-PC order (test_engine checks them by hand), and stay so
    # with more iterations than the check interval.
    assert CHECK_EVERY < 40
    k = kernels("control").get_function("diverge")
    out = gpusim.zeros(32, np.uint32)
    res = k((1,), (32,), (out, np.uint32(32)))
    body = {i.to_ptx(): int(c) for i, c in zip(k.kernel.instrs, res.inst_executed)}
    assert body["add.s32 %r9, %r9, 1;"] == 4


def _serial(op: int, p0: int, b: np.ndarray) -> tuple[np.ndarray, int]:
    """The old values of ``atom.OP`` applied lane after lane to one word (the oracle)."""
    cur, old = p0, []
    for t, v in enumerate(b.tolist()):
        old.append(cur)
        if op == 0:
            cur = (cur + v) & 0xFFFFFFFF
        elif op == 1:
            cur = v
        elif op == 2:
            cur = t if cur == v else cur
        elif op == 3:
            cur = 0 if cur >= v else cur + 1
        else:
            s = lambda u: u - (1 << 32) if u >= 1 << 31 else u  # noqa: E731
            cur = max(s(cur), s(v)) & 0xFFFFFFFF
    return np.array(old, np.uint32), cur


@pytest.mark.parametrize("op", [0, 1, 2, 3, 4], ids=["add", "exch", "cas", "inc", "max_s32"])
def test_atomics_of_every_lane_on_one_word_apply_in_lane_order(dev, kernels, op):
    rng = np.random.default_rng(op)
    n = 256  # more colliding lanes than the per-round path takes (the address-by-address one)
    b = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    if op == 2:  # cas: compare values that sometimes hold
        b = (rng.integers(0, 4, n) * (np.arange(n) // 2)).astype(np.uint32)
    if op == 3:
        b = rng.integers(0, 40, n).astype(np.uint32)
    p0 = 5
    p = gpusim.asarray(np.array([p0], np.uint32))
    old = gpusim.zeros(n, np.uint32)
    kernels("same_address").get_function("same_address")((1,), (n,), (p, gpusim.asarray(b), old, np.uint32(op)))
    want_old, want_final = _serial(op, p0, b)
    np.testing.assert_array_equal(old.get(), want_old)
    assert int(p.get()[0]) == want_final
