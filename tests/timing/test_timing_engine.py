"""The timing engine (gpusim.timing): exact cycles of tiny kernels, scheduler
policies as exact issue logs, H100 counter rules of hardware-facts.md §6,
errors, determinism, and equivalence with functional mode over the whole suite."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import gpusim
from gpusim.errors import KernelFault, LaunchError
from gpusim.suite import CASES, run_case

PTX = pathlib.Path(__file__).parent / "ptx" / "timing.ptx"


def _launch(kernel: str, grid, block, overrides=None, **device):
    # No launch overhead, so that issue logs start at cycle 0.
    overrides = {"launch_overhead_cycles": 0, **(overrides or {})}
    with gpusim.Device("h100", mode="timing", overrides=overrides, **device):
        out = gpusim.zeros(1024, np.float32)
        return gpusim.RawModule(path=str(PTX)).get_function(kernel)(grid, block, (out,))


def test_dependent_fma_chain_costs_the_fma_latency_per_link():
    # 8 more dependent FMAs cost exactly 8 x the configured FMA latency (4 cycles, hardware-facts §3).
    r8, r16 = _launch("fma_chain8", 1, 32), _launch("fma_chain16", 1, 32)
    assert r16.cycles - r8.cycles == 8 * 4
    # ... and those cycles are 'wait' stalls (fixed-latency dependency) of the FMA instructions.
    assert int(r16.stalls["wait"].sum()) - int(r8.stalls["wait"].sum()) == 8 * 3


def _scheduler0_log(policy: str) -> list[tuple[int, int, int]]:
    # 5 warps: slots 0 and 4 share scheduler 0 (warp slot modulo 4).
    # PTX-only costs (one issue cycle per instruction), so that the log shows the policy alone.
    r = _launch("independent", 1, 160, record_events=True, overrides={"sm.scheduler.policy": policy}, sass=False)
    return [(e.cycle, e.slot, e.pc) for e in r.events if e.slot % 4 == 0]


def test_gto_keeps_issuing_the_same_warp():
    log = _scheduler0_log("gto")
    # The two movs use the ALU pipe (issue interval 2); then warp 0 runs its 8 independent
    # FP32 adds (FMA pipe, interval 1) back to back before warp 4 gets the scheduler again.
    assert log == [(0, 0, 0), (2, 0, 1), (4, 4, 0), (6, 4, 1)] + [(7 + i, 0, 2 + i) for i in range(9)] \
        + [(16 + i, 4, 2 + i) for i in range(9)]


def test_lrr_alternates_between_warps():
    log = _scheduler0_log("lrr")
    slots = [s for _, s, pc in log if pc >= 2]
    assert slots[:10] == [0, 0, 4, 0, 4, 0, 4, 0, 4, 0]
    assert [c for c, _, _ in log] == sorted(c for c, _, _ in log)  # one issue per cycle at most
    assert len({c for c, _, _ in log}) == len(log)


def test_two_level_issues_inside_a_fetch_group_first():
    # One SM, two 1024-thread CTAs: scheduler 0 holds 16 warps (slots 0, 4, ..., 60), two
    # fetch groups of 8. Round robin inside group 0 (warp 4 follows warp 0, unlike gto's
    # greedy warp 0), and group 1 starts only after every warp of group 0 has issued.
    r = _launch("independent", 2, 1024, record_events=True,
                overrides={"sm.scheduler.policy": "two_level", "sm_count": 1}, sass=False)
    first: dict[int, int] = {}
    log = [(e.cycle, e.slot) for e in r.events if e.slot % 4 == 0]
    for cycle, slot in log:
        first.setdefault(slot, cycle)
    assert [slot for _, slot in log[:2]] == [0, 4]
    assert max(first[s] for s in range(0, 32, 4)) < min(first[s] for s in range(32, 64, 4))
    assert r.metrics["smsp__inst_executed.sum"] == 64 * 11


def test_spin_loop_stops_at_the_cycle_limit_naming_warps_and_lines():
    with pytest.raises(KernelFault) as e:
        _launch("spin", 2, 64, max_cycles=3000)
    msg = str(e.value)
    assert "kernel spin: watchdog: no completion after 3,000 cycles (max_cycles)" in msg
    assert "block (1, 0, 0) warp 1 running at " in msg and "timing.ptx:" in msg and "add.s32 %r1, %r1, 1;" in msg
    assert "gpusim.Device(max_cycles=N) or 'gpusim run --max-cycles N' (0 = unlimited)" in msg


def test_a_block_that_cannot_fit_fails_like_cuda():
    with pytest.raises(LaunchError, match="too many resources requested for launch"):
        _launch("independent", 1, 1024, regs_per_thread=255)


def _gmem(case: str, n: int = 4096):
    with gpusim.Device("h100", mode="timing"):
        return run_case(CASES[case], gpusim, n).launches


def test_global_load_counters_follow_the_h100_stride_rows():
    # hardware-facts.md §6: per L1 request, L2 sectors 4/8/16/32 and L2 requests (lines)
    # 1/2/8/32 for strides 1/2/8/32; a stride-32 miss fetches 64 B from DRAM (2 sectors).
    want = {1: (4, 1), 2: (8, 2), 8: (32, 8), 32: (32, 32)}
    for (stride, (sectors, lines)), L in zip(want.items(), _gmem("gmem_stride_u32")):
        m = L.metrics
        req = m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
        assert m["lts__t_sectors_srcunit_tex_op_read.sum"] == sectors * req, stride
        assert m["lts__t_requests_srcunit_tex_op_read.sum"] == lines * req, stride
        assert m["l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct"] == 0.0
        assert m["dram__bytes_read.sum"] == 32 * sectors * req * (2 if stride == 32 else 1)


def test_misaligned_and_uniform_loads_hit_in_l1_as_measured():
    # §6: 'i+1' reads 5 sectors per request with a 17.5 % L1 hit rate (7 of 8 warps of a
    # 256-thread block find their first sector already fetched) and 33/32 of the aligned
    # L2 sectors; 'i/32' reads 1 sector per request and hits 87.5 %.
    off1 = _gmem("gmem_offset_u32")[1].metrics
    assert off1["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 5 * 128
    assert off1["l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct"] == pytest.approx(17.5)
    assert off1["lts__t_sectors_srcunit_tex_op_read.sum"] == 16 * 33
    uni = _gmem("gmem_uniform_u32")[0].metrics
    assert uni["l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct"] == pytest.approx(87.5)


def test_strided_reads_slow_down_with_the_stride():
    cycles = [L.cycles for L in _gmem("gmem_stride_u32", 16384)]
    assert all(a < b for a, b in zip(cycles, cycles[1:])), cycles


def test_bank_conflicts_cost_cycles():
    with gpusim.Device("h100", mode="timing"):
        runs = {k: run_case(CASES[k], gpusim, 128).launches[0] for k in
                ("transpose_conflict", "transpose_padded", "transpose_swizzled")}
    conflicted = runs["transpose_conflict"]
    for k in ("transpose_padded", "transpose_swizzled"):
        assert runs[k].metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0
        assert conflicted.cycles > runs[k].cycles


def test_same_launch_same_cycles_and_counters():
    a, b = _launch("fma_chain16", 8, 128), _launch("fma_chain16", 8, 128)
    assert a.cycles == b.cycles and a.metrics == b.metrics


def test_achieved_occupancy_never_exceeds_theoretical():
    L = _gmem("gmem_stride_u32", 16384)[0]
    m = L.metrics
    assert 0 < m["sm__warps_active.avg.pct_of_peak_sustained_active"] <= m["sm__maximum_warps_per_active_cycle_pct"]
    stalled = sum(v for k, v in m.items() if k.startswith("smsp__pcsamp_warps_issue_stalled_"))
    # every resident warp-cycle is in exactly one state, 'selected' once per instruction
    assert m["smsp__pcsamp_warps_issue_stalled_selected"] == m["smsp__inst_executed.sum"]
    resident = m["sm__warps_active.avg.pct_of_peak_sustained_active"] / 100 * 64 * m["sm__cycles_active.avg"] * 132
    assert stalled == pytest.approx(resident, abs=len(L.inst_executed) * 3)  # rounding per PC and reason


@pytest.mark.parametrize("name", list(CASES))
def test_timing_mode_computes_what_functional_mode_computes(name):
    case = CASES[name]
    with gpusim.Device("h100"):
        f = run_case(case, gpusim, case.test_n)
    with gpusim.Device("h100", mode="timing"):
        t = run_case(case, gpusim, case.test_n)
    for key in f.outputs:
        if f.exact:
            np.testing.assert_array_equal(t.outputs[key], f.outputs[key], err_msg=f"{name}: {key}")
        else:  # atomics in an unspecified order (reduce_atomic_f32): timing mode applies them as they arrive
            np.testing.assert_allclose(t.outputs[key], f.outputs[key], rtol=f.rtol, err_msg=f"{name}: {key}")
            np.testing.assert_allclose(t.outputs[key], t.expected[key], rtol=f.rtol, err_msg=f"{name}: {key}")
    for lf, lt in zip(f.launches, t.launches):
        assert {k: lt.metrics[k] for k in lf.metrics} == lf.metrics
        assert lt.cycles > 0


def test_gpusim_run_timing_mode_prints_cycles_and_counters(capsys):
    from gpusim.cli import main

    assert main(["run", "--mode", "timing", "--case", "reduce_v2", "-n", "3000"]) == 0
    out = capsys.readouterr().out
    assert "(timing mode)" in out and "achieved occ %" in out and "long_scoreboard" in out
    with gpusim.Device("h100", mode="timing"):
        cycles = run_case(CASES["reduce_v2"], gpusim, 3000).launches[0].cycles
    assert f"  {cycles:,}  " in out


def test_events_tile_each_warps_cycles_and_sum_to_the_stall_counters():
    # 'rem_loop' mixes folded instructions (0 issue cycles) and rem.u32 (many SASS instructions).
    r = _launch("rem_loop", 2, 1024, record_events=True, overrides={"sm_count": 1})
    last: dict[tuple[int, int], int] = {}
    totals = {reason: 0 for reason in r.stalls}
    for e in r.events:
        key = (e.cta, e.warp)
        start = last.get(key)
        if start is not None:  # stall segments cover exactly the cycles since the warp's previous issue
            assert [s[0] for s in e.stalls[:1]] in ([start + 1], [])
            assert all(a < b for a, b, _ in e.stalls)
            assert all(e.stalls[i][1] == e.stalls[i + 1][0] for i in range(len(e.stalls) - 1))
            assert (e.stalls[-1][1] if e.stalls else start + 1) == e.cycle
        assert e.ready >= e.cycle + min(e.slots, 1)  # a folded instruction's result is there at once
        for a, b, reason in e.stalls:
            totals[reason] += b - a
        totals["selected"] += e.slots
        last[key] = max(last.get(key, -1), e.cycle + e.slots - 1)  # a folded instruction (0 slots) issues with the next
    assert totals == {reason: int(per_pc.sum()) for reason, per_pc in r.stalls.items()}
    assert any(e.slots == 0 for e in r.events) and any(e.slots == 1 for e in r.events)
    assert any(reason == "selected" for e in r.events for _, _, reason in e.stalls)  # an expansion's SASS
    assert sorted(s[0] for s in r.cta_spans) == [0, 1]
    assert all(start < end <= r.cycles for _, sm, slots, start, end in r.cta_spans)


def test_an_expansion_issues_its_sass_one_by_one_between_other_warps():
    # rem.u32 is 17 SASS (ptxas): warp 0 issues them one at a time over its dependency chain
    # (125 cycles on the H100 config, validation/probes/xu_pipe.py measures 137.5), and the other
    # warps of its scheduler issue in the gaps.
    r = _launch("rem_loop", 1, 256, record_events=True, overrides={"sm_count": 1})
    if r.costs != "ptxas":
        pytest.skip("needs ptxas and nvdisasm for the SASS listing")
    from isa.parser import parse

    rem = next(i.index for i in parse(PTX.read_text(), str(PTX)).kernels["rem_loop"].instrs if i.op == "rem")
    # one event for the expansion; the issue cycles of its first 16 SASS are 'selected' segments
    e = next(e for e in r.events if (e.cta, e.warp, e.pc) == (0, 0, rem))
    mine = [a for a, b, reason in e.stalls if reason == "selected"] + [e.cycle]
    assert len(mine) == 17 and mine[-1] - mine[0] >= 100
    assert any(x.warp != 0 and x.warp % 4 == 0 and mine[0] < x.cycle < mine[-1] for x in r.events)


def test_an_add_ptxas_folds_away_does_not_hold_the_loads_after_it():
    # load_sum4 is ld, add, ld, add... (nvcc's order); ptxas issues the four LDGs back to back and
    # folds the first and third adds into the IADD3s after them (Timed.forward). The folded adds
    # wait for nothing, so all four loads issue before the first one's data returns (a cold miss,
    # hundreds of cycles), and the store waits for the last load.
    r = _launch("load_sum4", 1, 32, record_events=True)
    if r.costs != "ptxas":
        pytest.skip("needs ptxas and nvdisasm for the SASS listing")
    loads = [e for e in r.events if e.space == "global" and e.served is not None]
    assert len(loads) == 4
    assert max(e.cycle for e in loads) - min(e.cycle for e in loads) <= 8
    assert max(e.cycle for e in loads) < min(e.ready for e in loads)
    store = next(e for e in r.events if e.space == "global" and e.served is None)
    assert store.cycle >= max(e.ready for e in loads)


def test_multi_wave_launch_runs_every_cta_exactly_once():
    # 2 SMs x 32 resident CTAs (the H100's block limit): CTAs retire within a few cycles of each
    # other, and each retirement starts the next CTA of the grid on its SM. 200 CTAs = 4 waves.
    # (An unlimited block scheduler, so that the two SMs retire and refill in step.)
    r = _launch("independent", 200, 32, record_events=True, overrides={"sm_count": 2, "cta_dispatch_cycles": 0})
    blocks = sorted(s[0] for s in r.cta_spans)
    assert blocks == list(range(200))
    assert r.metrics["gpusim__ptx_inst_executed.sum"] == 200 * 11
    per_sm = [sorted(start for _, sm, _, start, _ in r.cta_spans if sm == i) for i in (0, 1)]
    assert [len(s) for s in per_sm] == [100, 100]
    # At most 32 CTAs resident on an SM at any time.
    for i in (0, 1):
        spans = [(start, end) for _, sm, _, start, end in r.cta_spans if sm == i]
        assert max(sum(a <= t < b for a, b in spans) for t, _ in spans) == 32


def test_events_say_where_each_loaded_sector_was_served():
    # 'i+1' (§6): of 5 * 128 sectors, 17.5 % hit in L1; every miss goes to L2, and the 16 x 33
    # L2 sectors of a cold launch come from DRAM the first time each is read.
    with gpusim.Device("h100", mode="timing", record_events=True):
        L = run_case(CASES["gmem_offset_u32"], gpusim, 4096).launches[1]
    m = L.metrics
    levels = [lv for e in L.events if e.served for lv in e.served.values()]
    assert len(levels) == m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 5 * 128
    assert levels.count("L1") == round(0.175 * 5 * 128)
    assert levels.count("L2") + levels.count("DRAM") == m["lts__t_sectors_srcunit_tex_op_read.sum"] == 16 * 33
    # Cold caches: a sector's first read comes from DRAM, unless DRAM already delivered it as
    # the other half of a 64 B access granule.
    first: dict[int, str] = {}
    for e in L.events:
        for sector, lv in sorted((e.served or {}).items()):
            if sector not in first:
                assert lv == "DRAM" or first.get(sector ^ 1) == "DRAM", (sector, lv)
                first[sector] = lv
    assert all(e.served is None for e in L.events if e.space != "global")


def test_clock_reads_return_the_issue_cycle_of_each_warp():
    # %clock64 is never run ahead of its warp's issue: 5 warps, warps 0 and 4 share scheduler 0,
    # so they read different cycles, each the cycle its mov issued.
    with gpusim.Device("h100", mode="timing", overrides={"launch_overhead_cycles": 0}, record_events=True):
        out = gpusim.zeros(160, np.uint64)
        r = gpusim.RawModule(path=str(PTX)).get_function("clock_per_warp")((1,), (160,), (out,))
    k = gpusim.RawModule(path=str(PTX)).get_function("clock_per_warp").kernel
    pc = next(i.index for i in k.instrs if i.mnemonic == "mov.u64")
    issued = {e.warp: e.cycle for e in r.events if e.pc == pc}
    got = out.get().reshape(5, 32)
    assert all((got[w] == issued[w]).all() for w in range(5))
    assert issued[0] != issued[4]


def test_the_block_scheduler_dispatches_one_cta_per_cta_dispatch_cycles():
    # 'independent' compiles to a lone EXIT (ptxas folds its dead adds), so a grid of many CTAs is
    # bound by the block scheduler: 1.2 cycles per CTA on the H100 (configs/h100.toml, MEAS).
    def cycles(grid, **ov):
        return _launch("independent", grid, 32, overrides=ov).cycles
    assert cycles(8192) - cycles(4096) == pytest.approx(4096 * 1.2, rel=0.02)
    assert cycles(8192, cta_dispatch_cycles=2.4) - cycles(4096, cta_dispatch_cycles=2.4) == pytest.approx(
        4096 * 2.4, rel=0.02)


@pytest.mark.parametrize("stride,cycles", [(32, 32.0), (40, 10.0), (48, 16.0)])
def test_l1_hit_throughput_is_the_longer_of_bank_wavefronts_and_tag_lookups(stride, cycles):
    """32 warps load a[lane * stride + (i & 31)] (L1 hits): 32 distinct lines take 32 / 3.2 = 10
    tag cycles, and stride 32 / 48 floats put 32 / 16 lanes' words in one bank (the H100's
    9.8, 32.1 and 16.2 cycles: validation/probes/l1_stride.py)."""
    ptx = pathlib.Path(__file__).resolve().parents[2] / "validation" / "probes" / "l1_stride.ptx"
    with gpusim.Device("h100", mode="timing"):
        f = gpusim.RawModule(path=str(ptx)).get_function("l1_stride")
        a = gpusim.asarray(np.ones(32 * 64, np.float32))
        out = gpusim.zeros(1024, np.float32)
        c0, c1 = (f((1,), (1024,), (a, np.int32(k), np.int32(stride), out)).cycles for k in (0, 64))
    assert (c1 - c0) / 64 / 32 == pytest.approx(cycles, rel=0.05)


@pytest.mark.parametrize("interval", [2, 1])
def test_integer_multiply_adds_issue_at_the_imad_pipe_rate(interval):
    """One warp runs 1,024 IMADs in four independent chains (validation/probes/icache.ptx):
    the FMA-heavy pipe takes one every sm.units.imad.issue_interval cycles (the H100: 2.0-2.2
    cycles each, straight_256/1024 under ncu), not the FP32 rate of one a cycle."""
    ptx = pathlib.Path(__file__).resolve().parents[2] / "validation" / "probes" / "icache.ptx"
    with gpusim.Device("h100", mode="timing", overrides={"sm.units.imad.issue_interval": interval}):
        mod = gpusim.RawModule(path=str(ptx))
        out = gpusim.zeros(32, np.uint32)
        c0, c1 = (mod.get_function(k)((1,), (32,), (out,)).cycles for k in ("straight_0", "straight_256"))
    assert (c1 - c0) / 1024 == pytest.approx(interval, rel=0.05)


@pytest.mark.parametrize("case", ["reduce_v2", "transpose_conflict", "copy_offset", "gmem_stride_u32"])
def test_the_inlined_warp_pick_agrees_with_ready_at(case, monkeypatch):
    # Scheduler._run inlines Scheduler.ready_at for speed; every issue's ready cycle and stall
    # reason must be what ready_at, the readable definition, says of that warp.
    from gpusim.timing.sm import SM
    issue, seen = SM.issue, []

    def checked(self, w, now, t_ready, reason):
        if w.expansion is None:
            seen.append((w.sched.ready_at(w), (t_ready, reason)))
        return issue(self, w, now, t_ready, reason)

    monkeypatch.setattr(SM, "issue", checked)
    with gpusim.Device("h100", mode="timing", sampling=False):
        run_case(CASES[case], gpusim, CASES[case].test_n)
    assert seen and all(a == b for a, b in seen), next((a, b) for a, b in seen if a != b)


@pytest.mark.parametrize("case,policy", [("reduce_v2", "lrr"), ("matmul_tiled", "lrr"), ("reduce_v2", "gto"),
                                         ("transpose_conflict", "gto"), ("reduce_v5", "two_level")])
def test_the_inlined_warp_choice_and_sleep_agree_with_the_policy(case, policy, monkeypatch):
    # Scheduler._run keeps LRR's and GTO's orders ahead (Scheduler.after/order) and inlines the
    # scan: the warp it issues must be the first of policy.order(warps, last), the readable
    # definition, whose ready_at is due, and when none is, it must sleep until the earliest
    # ready_at of its warps.
    from gpusim.timing.sm import INF, SM, Scheduler
    issue, run, picks, sleeps = SM.issue, Scheduler._run, [], []

    def checked_issue(self, w, now, t_ready, reason):
        s = w.sched
        due = [x for x in s.policy.order(s.warps, s.last) if s.ready_at(x)[0] <= now]
        picks.append(bool(due) and due[0] is w)
        return issue(self, w, now, t_ready, reason)

    def checked_run(self, token):
        live = token == self.token
        run(self, token)
        if live and self.sleep_until is not None:
            sleeps.append(self.sleep_until == min((self.ready_at(x)[0] for x in self.warps), default=INF))

    monkeypatch.setattr(SM, "issue", checked_issue)
    monkeypatch.setattr(Scheduler, "_run", checked_run)
    with gpusim.Device("h100", mode="timing", sampling=False, overrides={"sm.scheduler.policy": policy}):
        run_case(CASES[case], gpusim, CASES[case].test_n)
    assert picks and all(picks), picks.index(False)
    assert sleeps and all(sleeps), sleeps.index(False)


@pytest.mark.parametrize("case, n", [("matmul_tiled", 128), ("matmul_regtile", 128)])
def test_cycles_do_not_depend_on_how_many_ctas_a_functional_stepper_runs(monkeypatch, case, n):
    """``gpu.GROUP_THREADS`` (CTAs a functional stepper runs ahead together) is host-side
    batching: the issue order the SASS schedule gives a warp must not depend on how far its
    group happened to have run ahead (a queue cut at the run-ahead cap, or empty after a
    barrier, once made these launches differ by up to 3 %)."""
    import gpusim.timing.gpu as gpu

    got = []
    for threads in (32, 8192, 1 << 20):
        monkeypatch.setattr(gpu, "GROUP_THREADS", threads)
        with gpusim.Device("h100", mode="timing", sampling=False):
            r = run_case(CASES[case], gpusim, n).launches[0]
        got.append((r.cycles, r.metrics["smsp__inst_executed.sum"], r.metrics["smsp__pcsamp_warps_issue_stalled_long_scoreboard"]))
    assert got[0] == got[1] == got[2]


def test_every_sub_partition_gets_its_turn_at_a_full_shared_memory_queue():
    # lds_width.py's lds32: 64 warps an SM issue 8 conflict-free shared loads an iteration, so the
    # SM's data stage (one wavefront a cycle) is the limit and the MIO queue stays full. Each
    # sub-partition's queue is its own, and the H100 serves them in turn (the slope is the data
    # stage's rate); when the four schedulers raced for one SM-wide queue, the scheduler that won a
    # freed slot was the first awake at the next, and one sub-partition's 16 warps issued no shared
    # load until the others' had finished (the loop sampler took the other 48 warps' rate for all).
    from validation.probes import lds_width as L

    with gpusim.Device("h100", mode="timing", overrides={"sm_count": 1}, sampling=False, record_events=True):
        r = gpusim.RawModule(code=L.CODE).get_function("lds32")((8,), (256,), L._args(gpusim, np, 16, 8))
    shared = sorted((e.cycle, e.slot % 4) for e in r.events if e.space == "shared")
    first_half = [s for _, s in shared[:len(shared) // 2]]
    counts = [first_half.count(s) for s in range(4)]
    assert min(counts) >= 0.2 * len(first_half), counts   # each near a quarter (one had 7 %)


def test_a_global_load_enters_the_l1tex_behind_its_sub_partitions_queued_shared_instructions(monkeypatch):
    # mio_pressure.py: one lane chases L2 hits while the CTA's other 31 warps run shared accesses. On
    # the H100 a step takes 279 cycles alone, 437 beside LDS.128 and 312 beside STS
    # (validation/reports/h100/mio_pressure/). With sm.mio_queue_instructions (the h100 config's 14)
    # the load waits behind its sub-partition's queued shared instructions; with the cycles rule it
    # did not wait at all.
    from validation.probes import mio_pressure as M

    monkeypatch.setattr(M, "CTAS", 1)
    monkeypatch.setattr(M, "STEPS", 16)
    monkeypatch.setattr(M, "LOOPS", 24)
    steps = {}
    for rule, ov in (("instructions", {}), ("cycles", {"sm.mio_queue_instructions": None})):
        for kind in ("idle", "lds128", "sts32"):
            with gpusim.Device("h100", mode="timing", sampling=False, overrides={"sm_count": 1, **ov}):
                steps[rule, kind] = M.run(gpusim, kind)["chase_step"]
    assert steps["instructions", "idle"] == steps["cycles", "idle"]
    idle = steps["cycles", "idle"]
    assert steps["instructions", "lds128"] > idle + 100
    assert idle + 25 < steps["instructions", "sts32"] < steps["instructions", "lds128"]
    assert abs(steps["cycles", "lds128"] - idle) < 5 and abs(steps["cycles", "sts32"] - idle) < 5


def test_oldest_cta_serves_an_sms_ctas_in_the_order_they_started():
    # lds_width.py's FFMA loop with clock stamps, 8 CTAs of 256 threads on one SM. On the H100 the CTAs
    # end one after another in their start order, each CTA's warps together
    # (validation/reports/h100/lds_width/fma_stamps_h100.npy); "oldest_cta" gives that, "lrr" ends
    # every CTA together; the totals are close.
    from validation.probes import lds_width as L

    ends = {}
    for policy in ("oldest_cta", "lrr"):
        with gpusim.Device("h100", mode="timing", sampling=False,
                           overrides={"sm_count": 1, "sm.scheduler.policy": policy}):
            s = L.stamps(gpusim, 1, 16, "fma_stamped")
        t = s[:, 3] - s[:, 2].min()
        ends[policy] = [int(t[s[:, 1] // 8 == c].max()) for c in range(8)]
    oldest, lrr = ends["oldest_cta"], ends["lrr"]
    assert oldest == sorted(oldest) and oldest[0] < 0.3 * oldest[-1]
    assert max(lrr) - min(lrr) < 0.1 * max(lrr)
    assert abs(oldest[-1] / max(lrr) - 1) < 0.1   # (+8 %: the youngest CTA ends alone, 2 warps a scheduler)


def test_oldest_cta_orders_older_ctas_first_and_rotates_inside_the_last_warps_cta():
    from types import SimpleNamespace

    from gpusim.timing.policies import OldestCTA

    a, b, c = object(), object(), object()
    warps = [SimpleNamespace(cta=cta, done=False, name=f"{n}{i}") for n, cta in (("a", a), ("b", b), ("c", c))
             for i in range(3)]
    order = OldestCTA(None).order(warps, warps[4])   # b1 issued last
    assert [w.name for w in order] == ["a0", "a1", "a2", "b2", "b0", "b1", "c0", "c1", "c2"]
    assert OldestCTA(None).order(warps, None) is warps
