"""Loop-iteration sampling (gpusim.timing.itersampling): launches too small for wave sampling
whose loop is long are timed from its first iterations. Results, instruction and branch
counters stay exact; cycles stay close to the detailed engine's; the sampler stays off when
told to, and where there is no loop or it never becomes stable."""

from __future__ import annotations

import functools
import pathlib

import numpy as np
import pytest

import gpusim
from gpusim.timing import Policy

PTX = pathlib.Path(__file__).parent / "ptx"
CTAS, THREADS = 4, 128
EXACT = ("smsp__inst_executed.sum", "smsp__thread_inst_executed.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
         "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")


def _inputs(iters: int) -> np.ndarray:
    # small integers: every float sum is exact in any order
    return (np.arange(CTAS * THREADS * iters) % 7).astype(np.float32)


def _oracle(kernel: str, iters: int) -> np.ndarray:
    x = _inputs(iters).reshape(iters, CTAS, THREADS)
    if kernel == "loop_smem":
        x = np.roll(x, -1, axis=2)   # each thread adds its neighbour's element, buf[(tid + 1) % 128]
    return x.sum(axis=0, dtype=np.float32).reshape(-1)


@functools.lru_cache(maxsize=None)
def _run(kernel: str, iters: int, mode: str = "timing", sampling=True, ptx: str = "loops.ptx"):
    with gpusim.Device("h100", mode=mode, sampling=sampling):
        out = gpusim.zeros(CTAS * THREADS, np.float32)
        args = (gpusim.asarray(_inputs(iters)), out, np.uint32(iters)) if ptx == "loops.ptx" else (out,)
        r = gpusim.RawModule(path=str(PTX / ptx)).get_function(kernel)((CTAS,), (THREADS,), args)
        return r, out.get()


@pytest.mark.parametrize("kernel", ["loop_sum", "loop_smem"])
def test_loop_sampling_engages_on_a_long_loop_and_stays_close_to_the_detailed_cycles(kernel):
    iters = 192
    (s, out), (d, out_d), (f, out_f) = (_run(kernel, iters), _run(kernel, iters, sampling=False),
                                        _run(kernel, iters, "functional"))
    assert np.array_equal(out.view(np.uint32), _oracle(kernel, iters).view(np.uint32))
    assert np.array_equal(out.view(np.uint32), out_f.view(np.uint32))
    assert np.array_equal(out.view(np.uint32), out_d.view(np.uint32))
    info = s.sampling
    assert info.method == "loop" and d.sampling.method == "detailed"
    assert info.loop.startswith("$L_" + kernel.split("_")[1]) and "loops.ptx" in info.loop
    # every warp was parked and skipped to the loop's end: its 192 iterations are all accounted for
    warps = CTAS * THREADS // 32
    assert info.iterations_simulated + info.iterations_skipped == warps * iters
    assert 0 < info.fraction < 0.5 and info.iterations_skipped > warps * iters // 2
    assert info.ctas == info.ctas_simulated == CTAS and info.sms == 132
    assert len(info.wave_cycles) == Policy().window and info.period_cycles > 0
    spread = (max(info.wave_cycles) - min(info.wave_cycles)) / np.mean(info.wave_cycles)
    assert spread <= Policy().tolerance + 1e-9
    assert "warp-iterations simulated" in str(info) and "cycles an iteration" in str(info)
    assert "smsp__sass_*branch*" in info.exact and "sm__cycles_elapsed.avg" in info.estimated
    for name in EXACT:   # every instruction ran functionally
        assert s.metrics[name] == d.metrics[name] == f.metrics[name], name
    # branches are counted from the outcomes of the skipped iterations too: the loop's one bra, once
    # an iteration of every warp (the detailed engine counts by the instruction it timed, 3,067 here)
    assert s.metrics["smsp__sass_branch_targets.sum"] == warps * iters
    assert d.metrics["smsp__sass_branch_targets.sum"] == pytest.approx(warps * iters, rel=0.005)
    assert np.array_equal(s.inst_executed, f.inst_executed)
    assert s.cycles == pytest.approx(d.cycles, rel=0.03)
    assert s.metrics["lts__t_sectors_op_read.sum"] == pytest.approx(d.metrics["lts__t_sectors_op_read.sum"], rel=0.05)
    stall = "smsp__pcsamp_warps_issue_stalled_long_scoreboard"
    assert s.metrics[stall] == pytest.approx(d.metrics[stall], rel=0.10)


def test_loop_sampling_off_short_loops_and_loopless_kernels_run_in_detail():
    d, _ = _run("loop_sum", 192, sampling=False)
    off, _ = _run("loop_sum", 192, sampling=Policy(iterations=False))
    assert off.sampling.method == "detailed" and "loop sampling off" in off.sampling.reason
    assert off.cycles == d.cycles
    short, _ = _run("loop_sum", 4)   # too few iterations to become stable: exactly the detailed run
    assert short.sampling.method == "detailed" and "no loop became stable" in short.sampling.reason
    assert short.cycles == _run("loop_sum", 4, sampling=False)[0].cycles
    flat, _ = _run("fma_chain8", 0, ptx="timing.ptx")
    assert flat.sampling.method == "detailed" and "the kernel has no loop" in flat.sampling.reason
    with pytest.raises(ValueError, match="bad sampling policy"):
        Policy(iteration_min_chunks=1)


def test_loop_sampling_of_a_kernel_whose_warps_follow_precomputed_region_plans():
    # matmul_regtile's loop body is one long straight-line region that ptxas reordered: its warps
    # issue it through SM._plan's picks, which a warp run ahead by the sampler must drop (it once
    # resumed with a stale plan and indexed past its queue).
    from gpusim.suite import CASES, run_case
    with gpusim.Device("h100", mode="timing"):
        run = run_case(CASES["matmul_regtile"], gpusim, 256)
    (res,) = run.launches
    assert res.sampling.method == "loop" and res.sampling.iterations_skipped > 0
    assert np.array_equal(run.outputs["C"].view(np.uint32), run.expected["C"].view(np.uint32))


def test_spin_loops_are_not_candidates():
    # locked_sum spins on atom.cas, flag_wait on a volatile load: running such a loop ahead
    # functionally while the lock holder is parked would never end (it hung the suite once).
    from gpusim.timing.itersampling import outer_loops
    from isa import parse
    path = pathlib.Path(__file__).parents[1] / "functional" / "ptx" / "its.ptx"
    module = parse(path.read_text(), str(path))
    for name in ("locked_sum", "flag_wait"):
        k = module.kernels[name]
        assert all(not any(i.spec.kind.name in ("ATOM", "FENCE") or "volatile" in i.mods
                           for i in k.instrs[h:b + 1]) for b, h in outer_loops(k).items())
    spins = [pc for pc, i in enumerate(module.kernels["locked_sum"].instrs) if i.op == "atom"]
    assert spins and not any(h <= spins[0] <= b for b, h in outer_loops(module.kernels["locked_sum"]).items())


def _decide(periods: list[int], policy: Policy, left: int = 0, waiting: int = 0):
    """Feed a loop_sum sampler iterations of the given cycles (16 warps in step, ``left`` of them
    past the loop's back edge, ``waiting`` more in its body completing none); return the (iteration
    at which it chose the loop, period) or None."""
    from types import SimpleNamespace

    from gpusim.timing.itersampling import LoopSampler
    from isa import parse
    path = PTX / "loops.ptx"
    sampler = LoopSampler(parse(path.read_text(), str(path)).kernels["loop_sum"], policy)
    (loop,) = sampler.loops.values()
    class Warp:   # warps in the loop's body
        done, timed = False, SimpleNamespace(pc=loop.head)
    loop.counts = {Warp(): 0 for _ in range(16)}
    warps = list(loop.counts) + [Warp() for _ in range(waiting)]
    sampler.launch = SimpleNamespace(mem=SimpleNamespace(count={"x": 0}), stalls=np.zeros(4),
                                     sms=[SimpleNamespace(ctas=[SimpleNamespace(warps=warps)])])
    for x in list(loop.counts)[:left]:
        x.timed = SimpleNamespace(pc=loop.back + 1)
    now = 0
    for i, cycles in enumerate(periods, 1):
        now += cycles
        loop.issued += 16
        for x in loop.counts:
            loop.counts[x] += 1
        sampler._mark(loop, now)
        if sampler.chosen is not None:
            return i, sampler.period
    return None


def test_a_loop_whose_iterations_alternate_is_judged_on_pairs_of_chunks():
    # matmul_smem_regtile at 512 runs iterations of about 2,440 and 2,850 cycles in no fixed order
    irregular = [3000, 2440, 2850, 2440, 2440, 2850, 2440, 2850, 2850, 2440, 2440, 2850, 2850, 2440] * 3
    assert _decide(irregular, Policy(iteration_max_stride=1)) is None
    at, period = _decide(irregular, Policy())
    assert at == 10 and period == (2440 + 2850) / 2   # the 4 pairs of iterations 3-10 agree
    # a steady loop is still chosen on single chunks, as soon as the window allows
    assert _decide([3000] + [2500] * 10, Policy()) == (7, 2500)   # 7 marks: iteration_min_chunks + 1
    # ... but not once warps leave the loop (its tail: those left iterate faster than the period)
    assert _decide([3000] + [2500] * 10, Policy(), left=1) is None
    # ... nor while a warp in the loop completes no iteration: the others' rate is not the loop's
    assert _decide([3000] + [2500] * 10, Policy(), waiting=1) is None
    with pytest.raises(ValueError, match="iteration_max_stride"):
        Policy(iteration_max_stride=0)


#: the chase's L2 without far homes' extra latency: each DRAM miss of its first pass then takes one
#: latency, as the window that learns the period assumes (see the xfail test below for why)
_UNIFORM = {"l2.far_latency_cycles": gpusim.config.load("h100").l2.latency_cycles}


@functools.lru_cache(maxsize=None)
def _chase(nodes: int, passes: int, sampling=True, uniform=True):
    rng = np.random.default_rng(7)
    order = rng.permutation(nodes)
    word = np.arange(nodes) * 64                       # a node every other 128 B line
    x = np.zeros(nodes * 64, np.uint32)
    x[word[order]] = word[np.roll(order, -1)]          # one cycle through every node
    with gpusim.Device("h100", mode="timing", sampling=sampling, overrides=_UNIFORM if uniform else None):
        out = gpusim.zeros(1, np.uint32)
        r = gpusim.RawModule(path=str(PTX / "loops.ptx")).get_function("chase")(
            (1,), (1,), (gpusim.asarray(x), out, np.uint32(nodes * passes)))
        p = 0
        for _ in range(nodes * passes):
            p = int(x[p])
        return r, int(out.get()[0]), p


def test_a_chase_whose_later_passes_hit_the_l2_is_not_timed_from_its_first_pass():
    # The first pass misses the L2 (DRAM latency an iteration), the next three hit it: the skipped
    # loads are looked up in the caches, their DRAM share falls from 1 to 0, and the period is
    # learnt again (before: 2.3x the detailed cycles, every pass timed at DRAM latency).
    (s, out, want), (d, out_d, _) = _chase(512, 4), _chase(512, 4, sampling=False)
    assert out == out_d == want
    assert s.sampling.method == "loop" and s.sampling.relearned >= 1 and "learnt" in str(s.sampling)
    assert s.sampling.iterations_skipped > 1500
    assert s.cycles == pytest.approx(d.cycles, rel=0.05)
    for name in ("dram__bytes_read.sum", "lts__t_sectors_op_read.sum"):
        assert s.metrics[name] == pytest.approx(d.metrics[name], rel=0.1), name
    # one pass: every skipped load misses as the window's did, the period is learnt once
    (c, out, want), (cd, _, _) = _chase(512, 1), _chase(512, 1, sampling=False)
    assert out == want and c.sampling.method == "loop" and c.sampling.relearned == 0
    assert c.cycles == pytest.approx(cd.cycles, rel=0.02)
    with pytest.raises(ValueError, match="iteration_cache_tolerance"):
        Policy(iteration_cache_tolerance=0)


@pytest.mark.xfail(strict=True, reason="known weakness (session 43): with far homes, the first pass's DRAM misses "
                   "alternate between 578 and 763 cycles; the window learnt in the second pass still holds a "
                   "DRAM read every 8 iterations, and the 1,474 iterations skipped after it are counted at that "
                   "rate: 46,992 bytes read against the detailed engine's 32,768 (cycles within 2 %)")
def test_a_chase_over_near_and_far_homes_counts_its_dram_reads_as_the_detailed_engine():
    (s, out, want), (d, _, _) = _chase(512, 4, uniform=False), _chase(512, 4, sampling=False, uniform=False)
    assert out == want and s.cycles == pytest.approx(d.cycles, rel=0.05)
    assert s.metrics["dram__bytes_read.sum"] == pytest.approx(d.metrics["dram__bytes_read.sum"], rel=0.1)
