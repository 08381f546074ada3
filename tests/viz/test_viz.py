"""Tests of gpusim.viz (issue #6): exact numbers against the launch result and the address
models, trace structure, errors, CLI behaviour, the report and the gallery script."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpusim.cli import main
from gpusim.errors import GpusimError
from gpusim.viz import record_case
from gpusim.viz.banks import bank_figure, bank_rows
from gpusim.viz.charts import kernel_work, peaks, roofline_figure, stall_figure
from gpusim.viz.coalescing import coalescing_figure, sector_map
from gpusim.viz.select import select_access
from gpusim.viz.source import source_html, source_rows, source_text
from gpusim.viz.style import REASONS, png_bytes
from gpusim.viz.trace import IPC_BUCKET, build_trace
from gpusim.viz.warpstate import warp_state_figure, warp_states

ROOT = Path(__file__).resolve().parents[2]
REGS = 32  # skip ptxas: the tests do not depend on the register count


@pytest.fixture(scope="module")
def recs():
    return {name: record_case(name, regs_per_thread=REGS)[0]
            for name in ("transpose_conflict", "transpose_padded", "copy_offset", "reduce_v1")}


# ----------------------------------------------------------------------------- steps
def test_steps_carry_the_lane_addresses_of_every_memory_instruction(recs):
    for rec in recs.values():
        m = rec.result.metrics
        assert len(rec.steps) == len(rec.result.events) == m["gpusim__ptx_inst_executed.sum"]
        for s in rec.steps:
            assert not s.accesses or rec.kernel.instrs[s.pc].spec.kind.name in ("LD", "ST", "ATOM")
            for a in s.accesses:
                assert 0 < int(a.active.sum()) <= s.active
        for space, op in (("global", "ld"), ("global", "st"), ("shared", "ld"), ("shared", "st")):
            n = sum(any(a.space == space and a.op == op for a in s.accesses) for s in rec.steps)
            # the PTX instructions executed (the metric also counts the guarded shared accesses that
            # warps issue with every lane off in SASS, which no step carries)
            assert n == int(rec.result.pc_metrics[f"smsp__inst_executed_op_{space}_{op}.sum"].sum())


# ----------------------------------------------------------------------------- trace
def _check_nesting(events):
    """Every (pid, tid) track: X slices nest perfectly (sorted by ts, longer first)."""
    tracks = collections.defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            assert e["dur"] > 0
            tracks[(e["pid"], e["tid"])].append((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)))
    for spans in tracks.values():
        stack = []
        for a, b in sorted(spans, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1] <= a:
                stack.pop()
            assert not stack or b <= stack[-1], "overlapping slices on one track"
            stack.append(b)


def test_trace_counts_and_structure(recs):
    rec = recs["transpose_conflict"]
    res = rec.result
    tr = json.loads(json.dumps(build_trace(rec)))
    ev = tr["traceEvents"]
    by = collections.Counter((e["ph"], e.get("cat")) for e in ev)
    assert by[("X", "issue")] == sum(e.slots > 0 for e in res.events)
    assert by[("i", "issue")] == sum(e.slots == 0 for e in res.events) > 0  # folded by ptxas: no issue cycle
    assert by[("X", "stall")] == sum(len(e.stalls) for e in res.events)
    assert by[("X", "warp")] == len({(e.cta, e.warp) for e in res.events})
    mem = [e for e in res.events if e.space in ("global", "local", "shared") and e.ready > e.cycle + 1]
    assert by[("b", "memory")] == by[("e", "memory")] == len(mem) > 0
    # stall slice cycles per PC and reason equal the launch's stall counters (result.stalls: real PCs
    # only); segment ends can be fractional cycles, which the engine's int64 counters truncate
    cyc = collections.defaultdict(float)
    frac = collections.Counter()
    for e in ev:
        if e.get("cat") == "stall" and e["args"]["pc"] < len(rec.kernel.instrs):
            key = (e["args"]["pc"], e["args"]["reason"])
            cyc[key] += e["args"]["cycles"]
            frac[key] += e["args"]["cycles"] != int(e["args"]["cycles"])
    for r in REASONS[1:]:
        for pc in range(len(rec.kernel.instrs)):
            assert abs(cyc[(pc, r)] - int(res.stalls[r][pc])) <= frac[(pc, r)] + 1e-6, (pc, r)
    assert by[("X", "issue")] + by[("i", "issue")] == int(res.inst_executed.sum()) + sum(
        e.pc == len(rec.kernel.instrs) for e in res.events)
    _check_nesting(ev)
    # async pairs share ids
    b = collections.Counter(e["id"] for e in ev if e["ph"] == "b")
    e_ = collections.Counter(e["id"] for e in ev if e["ph"] == "e")
    assert b == e_ and max(b.values()) == 1
    # names: every pid and every (pid, tid) that has slices is named
    pnames = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    tnames = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {(e["pid"], e["tid"]) for e in ev if e["ph"] == "X"} == tnames
    assert {e["pid"] for e in ev if e["ph"] in "XCb"} == pnames == {e.sm + 1 for e in res.events}
    # counters: IPC sums back to the issued instructions; active warps end at 0 and never go negative
    for sm in {e.sm for e in res.events}:
        ipc = [e["args"]["issued per cycle"] for e in ev if e["ph"] == "C" and e["name"] == "IPC" and e["pid"] == sm + 1]
        assert round(sum(ipc) * IPC_BUCKET) == sum(e.slots for e in res.events if e.sm == sm)
        act = [e["args"]["active"] for e in ev if e["ph"] == "C" and e["name"] == "warps" and e["pid"] == sm + 1]
        assert min(act) >= 0 and act[-1] == 0
        assert max(act) == max(len(s[2]) for s in res.cta_spans if s[1] == sm) * 1 or max(act) > 0
    assert tr["otherData"]["cycles"] == res.cycles


def test_trace_loads_in_perfetto_trace_processor(recs, tmp_path):
    """Perfetto's own trace processor: slices and counters as written. Needs the
    trace_processor_shell binary, which the `perfetto` package downloads on first use (not
    possible offline); GPUSIM_TRACE_PROCESSOR may point at a local binary."""
    tp_mod = pytest.importorskip("perfetto.trace_processor")
    rec = recs["copy_offset"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(build_trace(rec)))
    kw = {}
    if os.environ.get("GPUSIM_TRACE_PROCESSOR"):
        kw["config"] = tp_mod.TraceProcessorConfig(bin_path=os.environ["GPUSIM_TRACE_PROCESSOR"])
    try:
        tp = tp_mod.TraceProcessor(trace=str(path), **kw)
    except Exception as exc:  # no binary and no network to download one
        pytest.skip(f"Perfetto trace processor unavailable here ({type(exc).__name__}: {str(exc)[:120]})")
    try:
        n_issue = next(iter(tp.query("select count(*) as n from slice where category = 'issue'"))).n
        n_stall = next(iter(tp.query("select count(*) as n from slice where category = 'stall'"))).n
        n_ctr = next(iter(tp.query("select count(*) as n from counter_track where name like '%IPC%'"))).n
    finally:
        tp.close()
    assert n_issue == len(rec.result.events)
    assert n_stall == sum(len(e.stalls) for e in rec.result.events)
    assert n_ctr == len({e.sm for e in rec.result.events})


# ----------------------------------------------------------------------------- warp states
def test_warp_states_tile_the_cycles(recs):
    rec = recs["reduce_v1"]
    res = rec.result
    sm = res.events[0].sm
    lo = min(e.cycle for e in res.events if e.sm == sm) - 50
    hi = max(e.cycle for e in res.events if e.sm == sm) + 1
    rows = warp_states(rec, sm, lo, hi)
    issued = sum(b - a for v in rows.values() for a, b, r in v if r == "selected")
    # each event's issue cycles, and those of an expansion's earlier SASS ('selected' segments)
    expanded = sum(b - a for e in res.events if e.sm == sm for a, b, r in e.stalls if r == "selected")
    assert issued == sum(e.slots for e in res.events if e.sm == sm) + expanded > len([e for e in res.events if e.sm == sm])
    for v in rows.values():  # no overlap inside a slot
        for (_a0, b0, _), (a1, _b1, _) in zip(v, v[1:]):
            assert b0 <= a1
    assert png_bytes(warp_state_figure(rec, sm, lo, lo + 200))[:4] == b"\x89PNG"


def test_warp_state_errors(recs):
    rec = recs["reduce_v1"]
    with pytest.raises(GpusimError, match="empty cycle window"):
        warp_states(rec, 0, 10, 10)
    with pytest.raises(GpusimError, match="SMs that ran warps: 0, 1"):
        warp_states(rec, 131, 0, 100)
    with pytest.raises(GpusimError, match=r"was active in cycles \d+:\d+"):
        warp_states(rec, 0, 0, 100)


# ----------------------------------------------------------------------------- banks
def _brute_wavefronts(addrs, active):
    per_bank = collections.defaultdict(set)
    for a, on in zip(addrs, active):
        if on:
            per_bank[(a // 4) % 32].add(a // 4)
    return max(len(v) for v in per_bank.values())


def test_bank_diagram_numbers(recs):
    conf = select_access(recs["transpose_conflict"], "shared", cta=0, warp=1)
    pad = select_access(recs["transpose_padded"], "shared", cta=0, warp=1)
    assert conf.access.op == pad.access.op == "ld"
    for sel in (conf, pad):
        rows = bank_rows(sel)
        wf = {r.wavefront for r in rows if r.active}
        assert len(wf) == _brute_wavefronts(sel.access.addrs, sel.access.active)
        for r in rows:
            assert r.banks == ((r.address // 4) % 32,) if r.active else r.banks == ()
    # the column read of tile[32][32] hits one bank 32 times; padding spreads it over all banks
    assert len({r.wavefront for r in bank_rows(conf)}) == 32
    assert len({r.banks for r in bank_rows(pad)}) == 32
    assert png_bytes(bank_figure([conf, pad]))[:4] == b"\x89PNG"


def test_select_errors(recs):
    rec = recs["transpose_conflict"]
    with pytest.raises(GpusimError, match=r"PTX line 86 has no shared-memory access; lines with one: \d+"):
        select_access(rec, "shared", line=86)
    with pytest.raises(GpusimError, match=r"CTA 0 warp 99 never ran; warps that ran \(CTA, warp\): \(0, 0\)"):
        select_access(rec, "shared", cta=0, warp=99)
    with pytest.raises(GpusimError, match="executed no shared-memory access"):
        select_access(recs["copy_offset"], "shared")
    line = select_access(rec, "shared", cta=0, warp=0).line
    with pytest.raises(GpusimError, match=r"executed PTX line \d+ 1 time\(s\); choose an instance 0..0"):
        select_access(rec, "shared", line=line, cta=0, warp=0, instance=3)


# ----------------------------------------------------------------------------- coalescing
def test_coalescing_numbers(recs):
    sel = select_access(recs["copy_offset"], "global", cta=0, warp=0)
    m = sector_map(sel)
    a = sel.access
    lanes = [int(x) for x, on in zip(a.addrs, a.active) if on]
    expect = sorted({x // 32 * 32 for x in lanes} | {(x + a.width - 1) // 32 * 32 for x in lanes})
    assert list(m.sectors) == expect
    assert list(m.lines) == sorted({s // 128 * 128 for s in expect})
    assert m.lane_bytes == a.width * len(lanes)
    # a[i + 1] of 32 floats: 5 sectors in 2 lines (hardware-facts §6)
    assert (len(m.sectors), len(m.lines)) == (5, 2)
    assert png_bytes(coalescing_figure(sel))[:4] == b"\x89PNG"
    with pytest.raises(GpusimError, match="needs a global access"):
        sector_map(select_access(recs["transpose_conflict"], "shared"))


# ----------------------------------------------------------------------------- source view
def test_source_view_equals_the_launch(recs):
    for rec in recs.values():
        res, m = rec.result, rec.result.metrics
        rows = source_rows(rec)
        assert [r.inst_executed for r in rows] == res.inst_executed.tolist()
        assert [r.thread_inst_executed for r in rows] == res.thread_inst_executed.tolist()
        for reason in REASONS:
            assert sum(r.stalls[reason] for r in rows) == m[f"smsp__pcsamp_warps_issue_stalled_{reason}"]
        assert sum(r.shared_wavefronts for r in rows) == sum(
            m[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"] for op in ("ld", "st"))
        assert sum(r.bank_conflicts for r in rows) == sum(
            m[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"] for op in ("ld", "st"))
        assert sum(r.global_sectors for r in rows) == sum(
            m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"] for op in ("ld", "st"))
        assert sum(r.global_requests for r in rows) == sum(
            m[f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"] for op in ("ld", "st"))
    rows = source_rows(recs["transpose_conflict"])
    assert any(r.cuda.startswith("shared.cu:") and r.cuda_text for r in rows)
    text = source_text(recs["transpose_conflict"])
    worst = max(rows, key=lambda r: r.bank_conflicts)
    assert f"{worst.shared_wavefronts}/{worst.shared_ideal}" in text
    html = source_html(recs["transpose_conflict"])
    assert "<table>" in html and "&lt;" not in worst.ptx and worst.ptx.split()[0] in html


# ----------------------------------------------------------------------------- charts
def test_roofline_work_and_charts(recs):
    rec = recs["reduce_v1"]
    w = kernel_work(rec)
    adds = sum(int(rec.result.thread_inst_executed[i.index]) for i in rec.kernel.instrs
               if i.op == "add" and i.ty == "f32")
    assert w.flops_f32 == adds > 0
    assert w.dram_bytes == rec.result.metrics["dram__bytes_read.sum"] + rec.result.metrics["dram__bytes_write.sum"]
    cfg = rec.config
    assert peaks(cfg).fp32 == cfg.sm_count * 4 * 32 * 2 * cfg.clock_hz  # H100: 4 SMSPs x 32 FP32 lanes
    assert png_bytes(roofline_figure(list(recs.values())))[:4] == b"\x89PNG"
    assert png_bytes(stall_figure(list(recs.values())))[:4] == b"\x89PNG"


# ----------------------------------------------------------------------------- CLI, report, gallery
def test_cli_trace_and_overwrite(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["trace", "copy_stride", "-o", str(out), "--regs", str(REGS)]) == 0
    data = json.loads(out.read_text())
    assert data["otherData"]["kernel"] == "copy_stride"
    before = out.read_text()
    assert main(["trace", "copy_stride", "-o", str(out), "--regs", str(REGS)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err
    assert out.read_text() == before


@pytest.mark.parametrize("argv, message", [
    (["source", "no_such_case"], "unknown suite case 'no_such_case'; cases: reduce_v0"),
    (["diagram", "banks", "copy_offset"], "executed no shared-memory access"),
    (["diagram", "coalescing", "copy_offset", "--line", "1"], "PTX line 1 has no global-memory access; lines with one"),
    (["diagram", "warps", "copy_offset", "--cycles", "9:9"], "empty cycle window"),
    (["diagram", "banks", "transpose_conflict", "--warp", "77"], "CTA 0 warp 77 never ran; warps that ran"),
])
def test_cli_errors(argv, message, tmp_path, capsys):
    assert main(argv + ["--regs", str(REGS)] + (["-o", str(tmp_path / "x.png")] if argv[0] == "diagram" else [])) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_report_is_self_contained(recs, tmp_path):
    from gpusim.viz.report import write_report

    out = write_report([recs["transpose_conflict"], recs["transpose_padded"]], tmp_path / "r.html")
    html = out.read_text()
    assert html.count("data:image/png;base64,") >= 2 + 2 * (3 + 2)  # roofline, stalls; per launch 3 occ + 2
    assert "http://" not in html.replace("http://www.w3.org", "") and "src=\"http" not in html
    for label in ("transpose_conflict", "transpose_padded", "Bank diagram", "Source view"):
        assert label in html
    with pytest.raises(GpusimError, match="exists"):
        write_report([recs["copy_offset"]], out)


def test_gallery_script_runs(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "docs/gallery/make_gallery.py"), "--quick", "--regs", str(REGS),
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs and all((tmp_path / p).stat().st_size > 20_000 for p in pngs)
    committed = {p.name for p in (ROOT / "docs/gallery").glob("*.png")}
    assert set(pngs) <= committed
