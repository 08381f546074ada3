"""CTAs that wait on each other's flags (volatile loads and stores): the functional stepper runs
such accesses when their warp issues them, never ahead, and kernels that wait on other CTAs (flags,
retry loops on atom.cas) are not wave-sampled
(gpusim/functional/warpstep.py, gpusim/timing/itersampling.waits_on_ctas)."""

from __future__ import annotations

import pathlib

import numpy as np

import gpusim
from gpusim.timing import Policy

PTX = pathlib.Path(__file__).parent / "ptx" / "flags.ptx"


def _relay(ctas: int, rounds: int, **device):
    """``ctas`` one-warp CTAs pass a flag around ``rounds`` times; (each role's cycles, the result)."""
    with gpusim.Device("h100", mode="timing", **device):
        t = gpusim.zeros(ctas, np.int64)
        flags = gpusim.zeros(ctas * 32, np.uint32)
        r = gpusim.RawModule(path=str(PTX)).get_function("relay")((ctas,), (32,), (flags, np.uint32(rounds),
                                                                                  np.uint32(32), t))
        return t.get(), r, flags.get()


def test_a_spinning_cta_sees_the_flag_at_its_next_load_after_the_store():
    t, r, flags = _relay(2, 1)
    assert flags[0] == flags[32] == 1
    # Role 1 sees role 0's flag at its first or second load, stores its own, and role 0's next load
    # sees it: a few loads and about two L2 round trips. Run ahead, role 0's loop had queued 80
    # loads before role 1 stored, and took 24,888 cycles. A flag homed in the far L2 partition costs
    # each of its loads after a store the far latency (stores leave no copy near, l2.far_latency_cycles).
    far = gpusim.config.load("h100").l2.far_latency_cycles
    assert r.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] <= 6
    assert t[1] < t[0] < 5 * far


def test_a_kernel_that_waits_on_other_ctas_flags_is_timed_in_detail():
    with gpusim.Device("h100", mode="timing", overrides={"sm_count": 4},
                       sampling=Policy(sms=1, min_waves=3, max_waves=6)):
        flags = gpusim.zeros(64 * 32, np.uint32)
        r = gpusim.RawModule(path=str(PTX)).get_function("pass")((64,), (32,), (flags, np.uint32(32)))
    assert r.sampling.method == "detailed"
    assert r.sampling.reason.startswith("the kernel waits on other CTAs (ld.volatile in the loop at lines")
    assert (flags.get()[::32] == 1).all()


def test_a_kernel_whose_atomic_cas_decides_a_loop_is_timed_in_detail():
    # cas_max: every thread retries atom.cas until its max lands; how often depends on the other
    # CTAs' updates, which a slice run on the launch's memory would not see
    ptx = pathlib.Path(__file__).parents[1] / "corpus" / "ptx" / "atomics.ptx"
    x = np.random.default_rng(0).standard_normal(64 * 256).astype(np.float32)
    with gpusim.Device("h100", mode="timing", overrides={"sm_count": 4},
                       sampling=Policy(sms=1, min_waves=3, max_waves=6)):
        out = gpusim.asarray(np.full(1, -np.inf, np.float32))
        r = gpusim.RawModule(path=str(ptx)).get_function("cas_max")((64,), (256,), (gpusim.asarray(x), out,
                                                                                   np.int32(x.size)))
    assert r.sampling.method == "detailed"
    assert r.sampling.reason.startswith("the kernel waits on other CTAs (atom.global.cas.b32 decides the loop at")
    assert out.get()[0] == x.max()
