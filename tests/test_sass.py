"""gpusim.sass: SASS listings mapped onto PTX instructions, SASS-equivalent instruction counts
against the H100's, SASS-aware issue costs in the timing model, and the table fallback.

Covers: the listing parser on fixed text (no tools needed); marked ``sass`` (skipped without
ptxas and nvdisasm): the per-PC mapping of a rem.u32 loop and of an if-converted branch,
``smsp__inst_executed.sum`` against the committed H100 counts of the suite, the timing
model's issue cycles; and the table fallback when no ptxas is found.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim import sass
from gpusim.errors import GpusimError
from gpusim.suite import CASES, ptx_path, run_case
from gpusim.suite.seeds import SEED_CASES
from isa import parse

ROOT = Path(__file__).resolve().parents[1]
TIMING_PTX = ROOT / "tests" / "timing" / "ptx" / "timing.ptx"
GUARDED_PTX = ROOT / "tests" / "timing" / "ptx" / "guarded_shared.ptx"

LISTING = """
//--------------------- .text.k   --------------------------
        .text.k:
\t//## File ".nv_debug_ptx_txt", line 10
        /*0000*/                   LDC R1, c[0x0][0x28] ;
\t//## File ".nv_debug_ptx_txt", line 12
        /*0010*/                   ISETP.NE.AND P0, PT, R0, RZ, PT ;
        /*0020*/               @P0 EXIT ;
\t//## File ".nv_debug_ptx_txt", line 14
        /*0030*/                   BRA.DIV UR6, `(.L_x_5) ;
        /*0040*/                   EXIT ;
.L_x_5:
        /*0050*/                   WARPSYNC.COLLECTIVE R6, `(.L_x_6) ;
.L_x_10:
        /*0060*/                   BRA `(.L_x_10);
        /*0070*/                   NOP;
"""


def test_listing_parser_attributes_lines_and_marks_out_of_line_code():
    got = sass.parse_listing(LISTING)["k"]
    assert [(i.opcode, i.line, i.guarded, i.out_of_line) for i in got] == [
        ("LDC", 10, False, False), ("ISETP.NE.AND", 12, False, False), ("EXIT", 12, True, False),
        ("BRA.DIV", 14, False, False), ("EXIT", 14, False, False),
        ("WARPSYNC.COLLECTIVE", 14, False, True), ("BRA", 14, False, True), ("NOP", 14, False, True)]
    # labels start blocks; a branch knows the address it jumps to (the last BRA: itself)
    assert [i.address for i in got if i.label] == [0x50, 0x60]
    assert [(i.address, i.target) for i in got if i.target >= 0] == [(0x30, 0x50), (0x60, 0x60)]


def _kernel(path: Path, name: str):
    text = path.read_text()
    return parse(text, str(path)).kernels[name], text


@pytest.mark.sass
def test_rem_expands_and_id_moves_fold():
    k, text = _kernel(TIMING_PTX, "rem_loop")
    ks = sass.kernel_sass(k, text, "sm_90")
    by = {ins.mnemonic: len(ops) for ins, ops in zip(k.instrs, ks.ops) if ins.mnemonic in ("rem.u32", "bra", "ret")}
    assert ks.source == "ptxas" and by["rem.u32"] >= 12 and by["bra"] == 1 and by["ret"] == 1
    assert "MUFU.RCP" in ks.ops[[i.mnemonic for i in k.instrs].index("rem.u32")]
    assert min(ks.counts) == 0  # some mov / cvta folds into the instructions using it


@pytest.mark.sass
def test_if_converted_branch_is_charged_when_every_thread_takes_it():
    # reduce_v1's `if (index < blockDim.x)` body becomes guarded SASS: no branch of its own.
    k, text = _kernel(ptx_path(CASES["reduce_v1"]), "reduce_v1")
    ks = sass.kernel_sass(k, text, "sm_90")
    skips = [pc for pc, t in enumerate(ks.skip) if t >= 0]
    assert skips and all(k.instrs[pc].op == "bra" and not ks.ops[pc] for pc in skips)
    pc = skips[0]
    n = np.ones(len(k.instrs), np.int64)
    n[pc + 1:ks.skip[pc]] = 0  # every warp jumped over the body ...
    assert ks.executed(n) == sum(ks.counts)  # ... and still issued its guarded SASS


@pytest.mark.sass
def test_guarded_shared_accesses_issued_with_every_lane_off_still_cost():
    # `if (tid < n) buf[tid] += buf[tid + 256]` becomes guarded LDS, LDS, FADD, STS; with n = 0
    # every warp jumps over it in PTX but issues them in SASS: they count, pass the data stage, and
    # the FADD waits for the loads (its scoreboard wait does not depend on the guard).
    k, text = _kernel(GUARDED_PTX, "guarded_rmw")
    ks = sass.kernel_sass(k, text, "sm_90")
    (pc,) = [pc for pc, t in enumerate(ks.skip) if t >= 0]
    assert ks.skipped_shared(pc) == (2, 1, True)
    cycles = {}
    for latency in (23, 523):
        with gpusim.Device("h100", mode="timing", overrides={"shared.latency_cycles": latency,
                                                             "launch_overhead_cycles": 0}):
            out = gpusim.zeros(256, np.uint32)
            res = gpusim.RawModule(path=str(GUARDED_PTX)).get_function("guarded_rmw")(1, 256, (out, np.uint32(0)))
        assert np.array_equal(out.get(), np.arange(256, dtype=np.uint32))
        # 8 warps: two guarded loads each; the first store and the guarded one
        assert res.metrics["smsp__inst_executed_op_shared_ld.sum"] == 16
        assert res.metrics["smsp__inst_executed_op_shared_st.sum"] == 16
        cycles[latency] = res.cycles
    assert cycles[523] - cycles[23] == 500  # the skipped loads' latency, once


def _h100_launches(metric: str = "smsp__inst_executed.sum"):
    data = json.loads((ROOT / "validation" / "reports" / "h100" / "hardware_h100.json").read_text())
    out: dict[tuple[str, int], list[int]] = {}
    for x in data["launches"]:
        if x["case"] in CASES and metric in x.get("metrics", {}):
            out.setdefault((x["case"], x["n"]), []).append(x["metrics"][metric])
    return out


def _loop_sass(case: str):
    """(kernel, its KernelSass, PCs of its first innermost loop, SASS instructions of that loop
    in the nounroll listing) of a suite case."""
    k, text = _kernel(ptx_path(CASES[case]), CASES[case].kernel)
    ks = sass.kernel_sass(k, text, "sm_90")
    lo, hi = sass._innermost_loops(k)[0]
    listing = sass.sass_listing(text, "sm_90")[k.name]
    closing = next(s for s in listing if s.line == k.instrs[hi].loc.line and 0 <= s.target <= s.address)
    return k, ks, range(lo, hi + 1), [s for s in listing if closing.target <= s.address <= closing.address]


@pytest.mark.sass
def test_code_hoisted_out_of_a_loop_is_charged_outside_it():
    # shared_stride's copy loop: ptxas hoists three of its instructions into the preheader and
    # places the BSYNC of its branch after it; the loop's PCs are charged the SASS loop alone.
    k, ks, loop, body = _loop_sass("shared_stride")
    assert len(body) == 8 and sum(ks.counts[pc] for pc in loop) == 8
    listing = sass.sass_listing(_kernel(ptx_path(CASES["shared_stride"]), k.name)[1], "sm_90")[k.name]
    assert sum(ks.counts) == sum(not s.out_of_line for s in listing)  # nothing lost, nothing twice


@pytest.mark.sass
def test_a_loop_ptxas_unrolls_costs_the_unrolled_body_per_iteration():
    # matmul_naive's loop (4 products an iteration in PTX): ptxas unrolls it 4 times more, 73
    # SASS instructions for 4 iterations, where one alone takes 25.
    k, ks, loop, body = _loop_sass("matmul_naive")
    text = ptx_path(CASES["matmul_naive"]).read_text()
    unrolled = sass.sass_listing(text, "sm_90", nounroll=False)[k.name]
    loops = [[s for s in unrolled if b.target <= s.address <= b.address] for b in unrolled if 0 <= b.target <= b.address]
    longest = max(loops, key=len)
    assert len(body) == 25 and len(longest) == 73
    assert sum(ks.counts[pc] for pc in loop) == round(73 / 4)
    loads = [pc for pc in loop if k.instrs[pc].op == "ld"]
    assert loads and all(ks.counts[pc] == 1 for pc in loads)  # each load stays one LDG


@pytest.mark.sass
def test_a_branch_ptxas_if_converted_around_hoisted_loop_code_issues_for_every_warp():
    # stencil3d_coarse (corpus, fit half): ptxas predicates the interior threads' stencil (@P1 LDS,
    # FADD, STG) and schedules the loop's own counter update and moves among it, unguarded. The branch
    # is if-converted all the same: the warps of the tile's edge rows, which skip it in PTX, issue its
    # SASS with every lane off. Counted as the H100 counts them (0.928x before, as branching).
    from validation.corpus import cases as C
    from validation.corpus.on_gpu import gpu_rows
    from validation.corpus.runner import Modules, launch

    report = ROOT / "validation" / "reports" / "h100" / "corpus"
    digests = json.loads((report / "corpus_digests.json").read_text())
    want = gpu_rows(report / "corpus.csv", digests["order"])["stencil3d_coarse"]["smsp__inst_executed.sum"]
    case = C.BY_NAME["stencil3d_coarse"]
    n = case.sizes["gpu"]
    with gpusim.Device("h100"):
        res, _ = launch(gpusim, Modules(gpusim), case, n, C.inputs(case, n))
    assert abs(res.metrics["smsp__inst_executed.sum"] / want - 1) < 0.001


@pytest.mark.sass
def test_sass_equivalent_counts_match_the_h100():
    # Every suite case at its smallest committed H100 size.
    sizes: dict[str, int] = {}
    for case, n in _h100_launches():
        sizes[case] = min(n, sizes.get(case, n))
    hw = _h100_launches()
    shared = {op: _h100_launches(f"smsp__inst_executed_op_shared_{op}.sum") for op in ("ld", "st")}
    worst_sass = worst_ptx = 0.0
    exact = 0
    shared_off = []
    for case, n in sorted(sizes.items()):
        with gpusim.Device("h100"):
            run = run_case(CASES[case], gpusim, n)
        for i, (res, want) in enumerate(zip(run.launches, hw[(case, n)])):
            got, ptx = res.metrics["smsp__inst_executed.sum"], res.metrics["gpusim__ptx_inst_executed.sum"]
            exact += got == want
            assert abs(got / want - 1) <= 0.10, (case, n, got, want)
            worst_sass = max(worst_sass, abs(got / want - 1))
            worst_ptx = max(worst_ptx, abs(ptx / want - 1))
            for op, counts in shared.items():
                if (case, n) in counts and res.metrics[f"smsp__inst_executed_op_shared_{op}.sum"] != counts[(case, n)][i]:
                    shared_off.append((case, op))
    assert worst_ptx > 0.25 and exact >= 40
    # Guarded shared loads and stores that warps issue with every lane off count, as on the H100
    # (the reductions' `if (tid < s)` bodies; without them 23 of 184 counts differed). Left: two
    # matmuls whose ld.shared ptxas merges into vector LDS.
    assert sorted(shared_off) == [("matmul_smem_regtile", "ld"), ("matmul_tiled", "ld")]


@pytest.mark.sass
def test_timing_issues_one_cycle_per_sass_instruction():
    out = {}
    for costs in (False, True):
        with gpusim.Device("h100", mode="timing", sass=costs, record_events=True,
                           overrides={"launch_overhead_cycles": 0}):
            buf = gpusim.zeros(32, np.uint32)
            out[costs] = gpusim.RawModule(path=str(TIMING_PTX)).get_function("rem_loop")(1, 32, (buf,))
    ptx_only, with_sass = out[False], out[True]
    assert with_sass.costs == "ptxas" and ptx_only.costs == "ptx"
    assert np.array_equal(ptx_only.inst_executed, with_sass.inst_executed)
    # The rem.u32 expansion makes the one-warp loop several times slower (to its last issue; the
    # launch then waits the same for its store to reach L2).
    last = {k: max(e.cycle for e in r.events) for k, r in out.items()}
    assert last[True] > 2 * last[False]
    # Issue cycles of the events (and of an expansion's earlier SASS, its "selected" segments) add up
    # to the stall counters' "selected".
    expanded = sum(b - a for e in with_sass.events for a, b, r in e.stalls if r == "selected")
    assert sum(e.slots for e in with_sass.events) + expanded == int(with_sass.stalls["selected"].sum())
    # A folded instruction (no SASS) takes no issue cycle and no latency: the warp's next
    # instruction may issue in the same cycle.
    ev = with_sass.events
    folded = [i for i, e in enumerate(ev) if e.slots == 0]
    assert folded and all(ev[i].ready == ev[i].cycle for i in folded)
    assert any(ev[i + 1].cycle == ev[i].cycle for i in folded if i + 1 < len(ev))


def test_table_fallback_without_ptxas(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUSIM_PTXAS", str(tmp_path / "no-ptxas"))
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path))
    k, text = _kernel(TIMING_PTX, "rem_loop")
    ks = sass.kernel_sass(k, text, "sm_90")
    assert ks.source == "table"
    rem = [ops for ins, ops in zip(k.instrs, ks.ops) if ins.mnemonic == "rem.u32"][0]
    assert len(rem) >= 12 and "MUFU.RCP" in rem
    assert sass.expansion_table("sm_70") == sass.expansion_table("sm_80")  # the nearest architecture measured


def test_device_rejects_a_bad_sass_flag():
    with pytest.raises(GpusimError, match="sass must be True or False"):
        gpusim.Device("h100", sass="yes")


@pytest.mark.sass
def test_straight_line_regions_issue_in_the_order_ptxas_scheduled():
    # reduce_v6's loop body `mySum += g[i]; if (i + 256 < n) mySum += g[i + 256];`: ptxas
    # if-converts the `if` and schedules the second LDG before the first FADD, so a warp keeps
    # both loads in flight; in PTX order the first add waits for the first load.
    k, text = _kernel(ptx_path(CASES["reduce_v6"]), "reduce_v6")
    ks = sass.kernel_sass(k, text, "sm_90")
    loads = [pc for pc, i in enumerate(k.instrs) if i.op == "ld" and "global" in i.mnemonic]
    first_add = next(pc for pc in range(loads[0], len(k.instrs)) if k.instrs[pc].mnemonic == "add.f32")
    assert len(loads) == 2 and loads[0] < first_add < loads[1]
    assert len({ks.block[pc] for pc in range(loads[0], loads[1] + 1)}) == 1  # one region in SASS
    assert ks.order[loads[1]] < ks.order[first_add]
    order = {}
    for costs in (False, True):
        with gpusim.Device("h100", mode="timing", sass=costs, record_events=True):
            run = run_case(CASES["reduce_v6"], gpusim, 1 << 16)
        res = run.launches[0]
        pcs = [e.pc for e in res.events if e.cta == 0 and e.warp == 0]
        order[costs] = pcs.index(loads[1]) < pcs.index(first_add)
        if costs:
            with_sass = res.cycles
        else:
            ptx_only = res.cycles
    assert order == {False: False, True: True}
    assert with_sass < ptx_only  # two loads in flight per iteration instead of one


@pytest.mark.sass
def test_shared_loads_ptxas_merges_into_lds128_take_one_vector_data_stage():
    # matmul_smem_regtile reads a[0..3] = sA[ki][ty * 4 + v] with four ld.shared.f32; ptxas
    # makes one LDS.128 of them: the load it is attributed to takes a 16-byte-per-lane data
    # stage, the other three none (and no issue slot).
    from gpusim.timing.decode import decode

    k, text = _kernel(ptx_path(CASES["matmul_smem_regtile"]), "matmul_smem_regtile")
    ks = sass.kernel_sass(k, text, "sm_90")
    timed = decode(k, gpusim.config.load("h100"), ks)
    shared = [t for t in timed if t.space == "shared" and t.kind.value == "ld"]
    assert {t.shared_width for t in shared} == {0, 16}
    for t in shared:
        assert (t.shared_width == 16) == ("LDS.128" in ks.ops[t.pc])
        assert t.shared_width or t.slots == len(ks.ops[t.pc]) == 0
    assert all(t.shared_width == -1 for t in decode(k, gpusim.config.load("h100")))  # PTX costs: as written
    # ldmatrix's LDSM is a load of its own, timed as its PTX access (not a folded one)
    k, text = _kernel(ptx_path(CASES["hgemm_mma"]), "hgemm_mma")
    ks = sass.kernel_sass(k, text, "sm_90")
    ldsm = [t for t in decode(k, gpusim.config.load("h100"), ks) if t.pc < len(k.instrs) and k.instrs[t.pc].op == "ldmatrix"]
    assert ldsm and all(t.shared_width == -1 and t.slots >= 1 for t in ldsm)


@pytest.mark.sass
def test_viadd_issues_beside_the_alu():
    # uniform_branch's hash round x = (x ^ (x >> 7)) + C: ptxas makes VIADD of the add, which the
    # H100 runs beside the ALU's SHF/LOP3 (validation/probes/int_pipes.py), as it does IMAD.
    from gpusim.timing.decode import decode

    k, text = _kernel(ptx_path(CASES["uniform_branch"]), "uniform_branch")
    ks = sass.kernel_sass(k, text, "sm_90")
    units = {ks.ops[t.pc][0].split(".")[0]: t.unit for t in decode(k, gpusim.config.load("h100"), ks)
             if t.pc < len(ks.ops) and len(ks.ops[t.pc]) == 1 and t.space == ""}
    assert units["VIADD"] == units["IMAD"] == "imad" and units["LOP3"] == units["SHF"] == "alu"


@pytest.mark.sass
def test_rem_issues_its_sass_one_by_one_on_their_pipes():
    # ptxas's rem.u32 (reduce0's tid % (2*s)) is 17 SASS, of which I2F.U32.RP, MUFU.RCP and
    # F2I.FTZ.U32.TRUNC share the XU pipe at 8 cycles each (validation/probes/xu_pipe.py on the H100).
    # Each issues on its own, after what it reads is ready: IMAD.HI.U32 -> IMAD.HI.U32 9 cycles,
    # ISETP -> the IMAD.IADD it guards predicate_latency (both measured by the same probe).
    from gpusim.timing.decode import decode

    cfg = gpusim.config.load("h100")
    k, text = _kernel(ptx_path(SEED_CASES["reduce0"]), "reduce0")
    ks = sass.kernel_sass(k, text, "sm_90")
    timed = decode(k, cfg, ks)
    (rem,) = [t for t in timed if t.pc < len(k.instrs) and k.instrs[t.pc].op == "rem"]
    ops = ks.ops[rem.pc]
    assert len(ops) == 17 and rem.slots == 1 and len(rem.micro) == 16
    steps = (rem, *rem.micro)
    xu = [(s.unit, s.interval) for o, s in zip(ops, steps) if o.split(".")[0] in ("I2F", "MUFU", "F2I")]
    assert xu == [("sfu", 8)] * 3
    hi = [i for i, o in enumerate(ops) if o.startswith("IMAD.HI")]
    assert len(hi) == 2 and steps[hi[1]].latency == cfg.sm.sass_latency["IMAD.HI"] == 9
    guarded = ops.index("IMAD.IADD")
    assert ops[guarded - 1].startswith("ISETP") and steps[guarded].latency == cfg.sm.predicate_latency == 14
    # a uniform-datapath ULDC beside an ISETP holds no pipe; the ISETP holds the ALU's
    (setp,) = [t for t in timed if t.pc < len(k.instrs) and ks.ops[t.pc][:1] == ("ULDC",)
               and any(o.startswith("ISETP") for o in ks.ops[t.pc])][:1]
    assert (setp.unit, setp.interval) == ("", 0)
    assert (setp.micro[-1].unit, setp.micro[-1].interval) == ("alu", cfg.sm.units["alu"].issue_interval)

@pytest.mark.parametrize("opcode, guard, operands, reads, writes", [
    ("ISETP.GE.U32.AND", "", "P1, PT, R3, R10, PT", ("R3", "R10"), ("P1",)),
    ("IMAD.IADD", "@P1 ", "R3, R3, 0x1, -R10", ("R3", "R10", "P1"), ("R3",)),
    ("IADD3", "", "R4, P0, R2, R3, RZ", ("R2", "R3"), ("R4", "P0")),
    ("STS", "", "[R5], R4", ("R5", "R4"), ()),
    ("LDG.E", "@!P0 ", "R4, desc[UR6][R2.64]", ("UR6", "R2", "P0"), ("R4",)),
    ("DFMA", "", "R4, R2, R6, R4", ("R2", "R3", "R6", "R7", "R4", "R5"), ("R4", "R5")),
    ("BRA", "@!P1 ", "0x7f1f697ac360", ("P1",), ()),
])
def test_listing_operands_give_each_sass_instructions_reads_and_writes(opcode, guard, operands, reads, writes):
    # what the expansion's issue schedule (gpusim.timing.decode) takes its dependencies from
    assert sass._operand_regs(opcode, guard, operands) == (reads, writes)


@pytest.mark.sass
def test_an_imad_wide_holds_the_fma_pipes_and_the_alu():
    # x[i]'s address, mul.wide.u32 + add.s64, is one IMAD.WIDE.U32: on the H100 it holds the FFMA
    # and IMAD pipes 8 cycles and the ALU 4 (sm.sass_pipes, validation/probes/ldg_cost.py); no
    # instruction of those pipes issues on its scheduler in that window. Without the rule one does.
    from gpusim.timing.decode import decode

    cfg = gpusim.config.load("h100")
    k, text = _kernel(TIMING_PTX, "fma_chain8")
    ks = sass.kernel_sass(k, text, "sm_90")
    timed = decode(k, cfg, ks)
    # here add.s64 is (LDC.64, IMAD.WIDE.U32): an expansion whose last SASS is the IMAD.WIDE
    (wide,) = [t for t in timed if t.pc < len(ks.ops) and ks.ops[t.pc][-1:] == ("IMAD.WIDE.U32",)]
    step = (wide, *wide.micro)[-1]
    assert (step.unit, step.interval, step.holds) == ("imad", 8, (("fma", 8), ("alu", 4)))

    def gaps(overrides):
        """(cycle gap, unit) from each IMAD.WIDE's issue to each later FFMA, IMAD or ALU issue on its
        scheduler, and the launch's dispatch_stall warp-cycles."""
        with gpusim.Device("h100", mode="timing", record_events=True, overrides=overrides):
            out = gpusim.zeros(1024, np.float32)
            r = gpusim.RawModule(path=str(TIMING_PTX)).get_function("fma_chain8")(1, 512, (out,))
        unit = {t.pc: t.unit if t.slots else "" for t in timed}
        issued = [(e.cycle, e.slot % 4, unit[e.pc]) for e in r.events]
        # (an expansion's event is at its last SASS's issue: the IMAD.WIDE's)
        return ([(c2 - c1, u) for e in r.events if e.pc == wide.pc for c1, s1 in [(e.cycle, e.slot % 4)]
                 for c2, s2, u in issued if s2 == s1 and c2 > c1 and u in ("fma", "imad", "alu")],
                r.metrics["smsp__pcsamp_warps_issue_stalled_dispatch_stall"])

    held, stalled = gaps({"launch_overhead_cycles": 0})
    assert held and all(d >= 8 for d, u in held if u in ("fma", "imad")) and all(d >= 4 for d, u in held)
    free, not_stalled = gaps({"launch_overhead_cycles": 0, "sm.sass_pipes": {}})
    assert any(d < 8 for d, u in free if u in ("fma", "imad"))
    # warps waiting for a held pipe stall in dispatch_stall, as Nsight Compute names it
    assert stalled > 0 and not_stalled == 0
