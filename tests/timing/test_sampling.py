"""Sampled timing (gpusim.timing.sampling): results and instruction counters stay exact, the
cycles of multi-wave launches stay close to the detailed engine's, and launches where
sampling is not sound are simulated in detail and say why."""

from __future__ import annotations

import functools
import pathlib

import numpy as np
import pytest

import gpusim
from gpusim.errors import GpusimError
from gpusim.suite import CASES, run_case
from gpusim.timing import Policy
from gpusim.timing.sampling import _stable, _Waves, slice_blocks, slice_sides

#: A 4-SM GPU timed from a 1-SM slice: small enough for tests, with many slice waves.
SMALL = {"sm_count": 4}
POLICY = Policy(sms=1, min_waves=3, max_waves=6)
EXACT = ("smsp__inst_executed.sum", "smsp__thread_inst_executed.sum",
         "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
         "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")


@functools.lru_cache(maxsize=None)
def _run(case: str, n: int, mode: str = "timing", sampling=POLICY):
    with gpusim.Device("h100", mode=mode, overrides=SMALL, sampling=sampling):
        return run_case(CASES[case], gpusim, n)


@pytest.mark.parametrize("case,n", [("reduce_v3", 1 << 17), ("reduce_v0", 1 << 16), ("transpose_conflict", 512)])
def test_sampled_launch_is_exact_where_it_must_be_and_close_in_cycles(case, n):
    sampled, detailed, functional = _run(case, n), _run(case, n, sampling=False), _run(case, n, "functional")
    for key, out in functional.outputs.items():  # every CTA ran functionally: outputs bit for bit
        assert np.array_equal(sampled.outputs[key].view(np.uint8), out.view(np.uint8)), key
    s, d, f = sampled.launches[0], detailed.launches[0], functional.launches[0]
    assert s.sampling.method == "sm_slice+waves" and d.sampling.method == "detailed"
    assert s.sampling.ctas == d.sampling.ctas_simulated == d.sampling.ctas
    for name in EXACT:
        assert s.metrics[name] == f.metrics[name] == d.metrics[name], name
    assert np.array_equal(s.inst_executed, f.inst_executed)
    assert s.sampling.fraction < 0.25 and s.sampling.sms_simulated == 1 and s.sampling.sms == 4
    assert s.cycles == pytest.approx(d.cycles, rel=0.03)
    assert s.metrics["dram__bytes_read.sum"] == pytest.approx(d.metrics["dram__bytes_read.sum"], rel=0.05)
    ns_per_cycle = d.metrics["gpu__time_duration.sum"] / d.cycles
    assert s.metrics["gpu__time_duration.sum"] == pytest.approx(s.cycles * ns_per_cycle, rel=1e-9)


def test_sampled_stall_counters_are_scaled_to_the_whole_grid():
    s, d = _run("reduce_v3", 1 << 17).launches[0], _run("reduce_v3", 1 << 17, sampling=False).launches[0]
    name = "smsp__pcsamp_warps_issue_stalled_long_scoreboard"
    # Extrapolated at the rate of the slice's last two waves: the detailed run's lighter tail
    # (fewer CTAs resident, less waiting on memory) is not seen, hence 15 % and not exact.
    assert s.metrics[name] == pytest.approx(d.metrics[name], rel=0.15)
    assert int(sum(a.sum() for a in s.stalls.values())) == pytest.approx(
        sum(v for k, v in s.metrics.items() if "_issue_stalled_" in k), rel=0.01)


def test_sampling_stops_at_stable_waves_and_reports_them():
    s = _run("reduce_v3", 1 << 17).launches[0].sampling  # 256 CTAs: the slice's 64 are 8 waves of 8
    waves = len(s.wave_cycles) + 1
    assert POLICY.min_waves <= waves <= POLICY.max_waves
    last = s.wave_cycles[-POLICY.window:]
    assert max(last) - min(last) <= POLICY.tolerance * np.mean(last) or waves == POLICY.max_waves
    assert s.ctas_simulated < 64 and s.ctas == 256 and s.spread_pct >= 0
    assert "1/4 SMs" in str(s)


def test_small_grids_events_and_clock_reads_are_simulated_in_detail():
    r = _run("reduce_v3", 4096).launches[0]
    assert r.sampling.method == "detailed" and "fewer than two waves" in r.sampling.reason
    with gpusim.Device("h100", mode="timing", overrides=SMALL, sampling=POLICY, record_events=True):
        r = run_case(CASES["reduce_v3"], gpusim, 1 << 15).launches[0]
    assert r.sampling.method == "detailed" and r.sampling.reason == "events are recorded"
    ptx = pathlib.Path(__file__).parent / "ptx" / "timing.ptx"
    with gpusim.Device("h100", mode="timing", overrides=SMALL, sampling=POLICY):
        out = gpusim.zeros(160, np.uint64)
        r = gpusim.RawModule(path=str(ptx)).get_function("clock_per_warp")((64,), (160,), (out,))
    assert r.sampling.method == "detailed" and "%clock" in r.sampling.reason


def test_sampling_false_and_bad_policies():
    r = _run("reduce_v3", 1 << 17, sampling=False).launches[0]
    assert r.sampling.method == "detailed" and r.sampling.reason == "sampling=False"
    with pytest.raises(GpusimError, match="sampling must be"):
        gpusim.Device("h100", mode="timing", sampling="yes")
    with pytest.raises(ValueError, match="bad sampling policy"):
        Policy(sms=0)
    with pytest.raises(ValueError, match="bad sampling policy"):
        Policy(min_waves=2, window=2)


def test_gpusim_run_says_how_each_launch_was_timed(capsys):
    from gpusim.cli import main

    assert main(["run", "--mode", "timing", "--case", "reduce_v3", "-n", "1048576"]) == 0
    assert "slice 8/132 SMs" in capsys.readouterr().out
    assert main(["run", "--mode", "timing", "--case", "reduce_v3", "-n", "4096", "--no-sampling"]) == 0
    assert "detailed" in capsys.readouterr().out


#: The fill and drain tests' model: without the H100's IMAD.WIDE holds (sm.sass_pipes, session 48), under
#: which copy_vec4's waves on this 4-SM GPU agree within POLICY's 6 waves. With the holds they do not:
#: the slice runs all its CTAs and ends in its drain (test_the_fill_estimate_with_imad_wide_holds).
#: Also with session 54's write drains (80 channels in step, 8 KiB each, 128 bytes a channel): this copy's
#: 1 MiB of write-backs fills about one 16 KiB drain a channel, so with the h100 config's staggered drains
#: (session 55) which channels drain at all depends on where each starts, and sampled over detailed moves
#: with it: cycles +2.7 %, L2 write sectors -4.1 % (one option of the three taken back at a time: cycles
#: -3.6..+0.7 %, write sectors -0.0..+3.5 %). Here that is the toy's granularity, not the fill rule's.
FILL_MODEL = {"sm.sass_pipes": {}, "dram.staggered_drains": False, "dram.write_drain_bytes": 8192,
              "dram.channel_bytes": 128}


def _copy_past_the_l2(policy, model=None):
    """copy_vec4 of 2 x 1 MiB on 4 SMs with a 256 KiB L2, sampled under ``policy`` and in detail:
    (sampled, detailed) launch results."""
    small_l2 = {**SMALL, "l2.size_bytes": 1 << 18, **(model or {})}
    out = {}
    for sampling in (policy, False):
        with gpusim.Device("h100", mode="timing", overrides=small_l2, sampling=sampling):
            out[sampling is False] = run_case(CASES["copy_vec4"], gpusim, 1 << 18).launches[0]
    return out[False], out[True]


def test_a_grid_larger_than_the_l2_is_sampled_after_filling_it_and_writes_back_like_the_detailed_run():
    # A float4 copy of 2 x 1 MiB through a 256 KiB L2: in the steady state every store's line is
    # written back. The slice starts after the CTAs that fill the L2 and replays the shadows'
    # stores dirty, so DRAM writes and cycles follow the detailed run; the slice CTAs before it
    # are costed at the rate of waves simulated from the first CTA, while the L2 fills.
    s, d = _copy_past_the_l2(POLICY, FILL_MODEL)
    assert s.sampling.method == "sm_slice+waves" and s.sampling.warmup_ctas > 0 and s.sampling.fill_ctas > 0
    assert "filled the L2 (costed by" in str(s.sampling)
    assert d.metrics["dram__bytes_write.sum"] > 0.5 * (1 << 20)
    assert s.metrics["dram__bytes_write.sum"] == pytest.approx(d.metrics["dram__bytes_write.sum"], rel=0.10)
    assert s.cycles == pytest.approx(d.cycles, rel=0.02)


def test_a_slice_that_runs_out_of_ctas_after_the_warm_up_rates_its_counters_per_cta_retired():
    # With waves that never agree, the slice runs every CTA it is dealt after the L2 filled, and
    # its last waves end in its drain, when CTAs retire and none are dispatched. The counters'
    # rates are those of the waves before the drain, per CTA retired: over the drain, per CTA
    # dispatched, the L2's read and write sectors came out 38 % and 25 % over the detailed run's
    # (the corpus's bfs_bottomup: 1.7 red sectors for each warp's one). Per CTA retired the reads
    # are +9.4 % (session 51's DRAM) and +10.0 % (session 52's, with its translation reach).
    s, d = _copy_past_the_l2(Policy(sms=1, min_waves=3, max_waves=1000, tolerance=1e-9), FILL_MODEL)
    assert s.sampling.warmup_ctas > 0 and s.sampling.ctas_simulated == len(slice_blocks(s.sampling.ctas, 4, 1))
    for metric, rel in (("lts__t_sectors_op_write.sum", 0.02), ("lts__t_sectors_op_read.sum", 0.12)):
        assert s.metrics[metric] == pytest.approx(d.metrics[metric], rel=rel), metric


@pytest.mark.xfail(strict=True, reason="open (session 48): with the IMAD.WIDE holds, copy_vec4's slice on 4 SMs "
                   "never sees its waves agree, runs every CTA and ends in its drain: cycles +4.9 %, L2 read "
                   "sectors +10.2 % over the detailed run")
def test_the_fill_estimate_with_imad_wide_holds():
    s, d = _copy_past_the_l2(POLICY)
    assert s.cycles == pytest.approx(d.cycles, rel=0.02)
    assert s.metrics["lts__t_sectors_op_read.sum"] == pytest.approx(d.metrics["lts__t_sectors_op_read.sum"], rel=0.05)


def test_the_rates_are_measured_to_the_last_wave_that_ended_while_ctas_were_dispatched():
    waves = object.__new__(_Waves)   # the bookkeeping alone, without a launch
    waves.policy, waves.wave = Policy(window=2), 4
    waves.ends, waves.steady = [100, 200, 300, 400, 700], [0, 1, 2, 3]   # the last wave ended in the drain
    assert waves.last() == 3 and waves.rate() == (400 - 200) / (2 * 4)
    waves.steady = [0, 1, 2, 3, 4]   # stopped after stable waves: the last one counts
    assert waves.last() == 4 and waves.rate() == (700 - 300) / (2 * 4)
    waves.ends, waves.steady = [100, 200], [0, 1]
    assert waves.last() is None and waves.rate() is None
    waves.ends, waves.steady = [100, 200, 300, 900], [0]   # too few steady waves: the last ones
    assert waves.last() == 3


def test_the_l2_fills_earlier_where_far_reads_take_a_second_place():
    # The slice starts where the grid's footprint has filled the L2. Where the L2 localizes far
    # reads, a loaded sector of a far line counts twice (its copy near the reader; sampling._record), so the copy's loads fill
    # the 256 KiB L2 after fewer CTAs than its distinct sectors alone would.
    small_l2 = {**SMALL, "l2.size_bytes": 1 << 18}
    # Likewise a stored sector takes l2.dirty_places (the H100's 2).
    start = {}
    for localize, dirty in ((True, 2), (False, 2), (False, 1)):
        with gpusim.Device("h100", mode="timing", overrides={**small_l2, "l2.localizes_far_reads": localize,
                                                             "l2.dirty_places": dirty}, sampling=POLICY):
            start[localize, dirty] = run_case(CASES["copy_vec4"], gpusim, 1 << 18).launches[0].sampling.warmup_ctas
    assert 0 < start[True, 2] < start[False, 2] < start[False, 1]


def test_a_slices_sms_sit_near_the_l2_partitions_in_the_gpus_proportions():
    h100 = tuple(gpusim.config.load("h100").l2.sm_partitions)
    assert h100[:8].count(0) == 2  # the measured map's first 8 SMs: 2 near partition 0, 6 near 1
    assert slice_sides(h100, 8) == (0, 1, 0, 1, 0, 1, 0, 1)
    assert slice_sides(h100, 3) == (0, 1, 0)
    # a GPU with 3 of 4 SMs near partition 0: 6 of an 8-SM slice, spread over it
    assert slice_sides((0, 0, 0, 1), 8) == (0, 0, 1, 0, 0, 0, 1, 0)
    assert slice_sides((1, 1, 2, 0, 0, 2), 6) == (0, 1, 2, 0, 1, 2)


def test_waves_are_stable_only_when_they_agree_and_have_stopped_drifting():
    # the seeds' reduce7_8 at 2^26 on the h100: its CTAs fall out of step over the first waves
    waves = np.array([13019, 12671, 12642, 12104, 10923, 11293, 11102, 11169], float)
    stable = [_stable(waves[:i], 2, 0.02) for i in range(1, len(waves) + 1)]
    # waves 2-3 agree (0.2 %) but come after a longer pair; waves 6-7 agree and so do their means
    assert stable == [False] * 7 + [True]
    assert not _stable(waves[1:3], 2, 0.02)  # two agreeing waves with none before


def test_a_slices_ctas_share_steppers_in_dispatch_order_with_their_own_ctaids(monkeypatch):
    # The 1-SM slice of the 4-SM GPU runs CTAs 0, 4, 8...: a stepper holds 32 of them
    # (GROUP_THREADS / 256 threads), not the 8 that a block of 32 consecutive ids holds, and
    # each CTA's threads read their own %ctaid.
    from gpusim.timing import gpu
    made = []

    class Spy(gpu.CTAStepper):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            made.append(self)

    monkeypatch.setattr(gpu, "CTAStepper", Spy)
    with gpusim.Device("h100", mode="timing", overrides=SMALL, sampling=POLICY):
        run_case(CASES["reduce_v3"], gpusim, 1 << 17)   # 256 CTAs of 256 threads
    assert made and made[0].nb == 32
    for st in made:
        assert list(st.block_ids) == list(range(st.first_block, st.first_block + 4 * st.nb, 4))
        assert np.array_equal(st.ctaid[0][::st.tpbp], st.block_ids.astype(np.uint32))
