"""The validation layer without a GPU: scores, hardware-bundle loading, the no-GPU error path,
the HTML report rebuilt from the committed H100 JSON, and a guard that the simulator's agreement
with the recorded H100 numbers does not get worse than the committed report shows.

The hardware side is the committed ``validation/reports/h100/hardware_h100.json`` (``gpusim
validate --hardware-only`` on an H100); the simulator side is recomputed for a small subset of
quick runs (about 30 s on one core)."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

from gpusim.cli import main
from validation import calibrate, hardware, report, score, sweeps

H100 = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100"
HW_FILE = H100 / "hardware_h100.json"
COMMITTED = H100 / "validation_h100.json"
#: quick runs (under ~3 s each on one core) at every recorded size up to 2^16 threads: the
#: micro-kernels, copies, late reductions, the ILP sweep, AoS/SoA and the new block-size case's test_n
SUBSET = ("smem_stride_u32", "smem_stride_v2_u32", "smem_stride_v4_u32", "smem_same_word_u32", "gmem_uniform_u32",
          "copy_vec4", "copy_stride", "copy_offset", "reduce_v4", "reduce_v5", "reduce_v6", "ilp_fma_1",
          "ilp_fma_unroll2_grid", "ilp_fma_unroll2_block", "ilp_fma_unroll4_block", "aos_update", "soa_update",
          "copy_block_size")
MAX_THREADS = 1 << 16


# --------------------------------------------------------------------------- scores


def test_scores_against_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    hw = rng.integers(1000, 9000, 40).astype(float)
    sim = hw * rng.uniform(0.7, 1.3, 40)
    sim[:5] = sim[5]  # ties
    assert score.pearson(sim, hw) == pytest.approx(scipy_stats.pearsonr(sim, hw)[0])
    assert score.spearman(sim, hw) == pytest.approx(scipy_stats.spearmanr(sim, hw)[0])
    st = score.error_stats(sim, hw)
    rel = np.abs(sim - hw) / hw
    assert st["mae_pct"] == pytest.approx(100 * rel.mean())
    assert st["nrmse"] == pytest.approx(np.sqrt(np.mean((sim - hw) ** 2)) / hw.mean())
    assert st["within_10pct"] == pytest.approx((rel <= 0.1).mean())
    assert st["under"] + st["over"] + st["exact"] == 40


def test_ordering_ignores_hardware_ties_and_names_swaps():
    # hardware 100, 102 (a tie within 5 %), 150; the simulator swaps the tie: fine; swaps 150: not
    ok = score.ordering([10, 9, 20], [100, 102, 150])
    assert ok["same"] and ok["pairs"] == 2
    bad = score.ordering([10, 30, 20], [100, 102, 150])
    assert not bad["same"] and bad["disagreements"] == [(1, 2)]


def test_best_constant_and_tier_scores():
    hw = [5000.0, 6000.0, 60000.0]
    c, mae = score.best_constant(hw)
    # brute force over a fine grid: no constant does better than the one returned
    grid = np.linspace(1000, 70000, 69001)
    brute = min(100 * np.mean([abs(g - h) / h for h in hw]) for g in grid)
    assert c in hw and mae == pytest.approx(brute, abs=1e-3)
    t = score.tier_stats([5500.0, 6000.0, 30000.0], hw, overhead=4400)
    assert t["best_constant_mae_pct"] == pytest.approx(mae)
    assert t["mae_ratio_to_best_constant"] == pytest.approx(t["mae_pct"] / mae)
    # beyond the overhead: |5500-5000|/600, 0, |30000-60000|/55600
    assert t["beyond_overhead_n"] == 3
    assert t["beyond_overhead_mae_pct"] == pytest.approx(100 * (500 / 600 + 0 + 30000 / 55600) / 3)


def test_tiers_and_merged_bundles():
    small = [{"grid": [4, 1, 1], "block": [256, 1, 1]}]
    assert report.tier_of("reduce_v0", 3000, small) == "small"
    assert report.tier_of("reduce_v0", 1 << 24, small) == "scale"  # its SCALE_SIZES entry
    assert report.tier_of("reduce_v0", 65536, [{"grid": [1024, 1, 1], "block": [256, 1, 1]}]) == "scale"
    both = hardware.load_many([HW_FILE, H100 / "scale_tier"])
    runs = report.hardware_runs(both)
    tiers = {report.tier_of(c, n, v) for (c, n), v in runs.items()}
    assert tiers == {"small", "scale"}
    assert ("reduce_v0", 1 << 24) in runs and ("reduce_v0", 3000) in runs
    assert both["provenance"]["merged_from"] and len(both["occupancy"]) == len(
        {(o["ptx"], o["kernel"], o["block_threads"], o["dynamic_smem"]) for o in both["occupancy"]})
    only_small = report.hardware_runs(both, tiers=("small",))
    assert all(report.tier_of(c, n, v) == "small" for (c, n), v in only_small.items())


# --------------------------------------------------------------------------- inputs and errors


def test_no_gpu_and_no_from_is_a_clear_error(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("GPUSIM_NO_GPU", "1")
    assert main(["validate", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "no GPU" in err and "--from" in err and "Traceback" not in err
    assert main(["calibrate", "--out", str(tmp_path / "c.toml")]) == 2
    assert "GPUSIM_NO_GPU" in capsys.readouterr().err
    assert not (tmp_path / "r").exists() and not (tmp_path / "c.toml").exists()


@pytest.mark.parametrize("content, words", [
    (None, "no such file"), ("{not json", "not valid JSON"), ('{"a": 1}', "not hardware data"),
    ('{"format": "gpusim-validation-hardware/1", "provenance": {}, "launches": [{"case": "x"}]}', "lacks n"),
])
def test_bad_from_file_names_the_file_and_the_rule(tmp_path, capsys, content, words):
    path = tmp_path / "hw.json"
    if content is not None:
        path.write_text(content)
    assert main(["validate", "--from", str(path), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and words in err and "Traceback" not in err


def test_an_existing_report_is_refused_before_any_simulation(capsys, tmp_path, monkeypatch):
    (tmp_path / "report.html").write_text("mine")
    monkeypatch.setattr("validation.report.build", lambda *a, **k: pytest.fail("simulated before refusing"))
    assert main(["validate", "--from", str(HW_FILE), "--cases", "reduce_v1", "--out", str(tmp_path)]) == 2
    assert "report.html" in capsys.readouterr().err and (tmp_path / "report.html").read_text() == "mine"


def test_bad_selection_is_rejected(capsys, tmp_path):
    assert main(["validate", "--from", str(HW_FILE), "--sweeps", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown sweep" in capsys.readouterr().err
    assert main(["validate", "--from", str(HW_FILE), "--cases", "reduce_v9", "--out", str(tmp_path)]) == 2
    assert "unknown suite case" in capsys.readouterr().err


def test_committed_bundle_is_complete():
    hw = hardware.load(HW_FILE)
    assert hw["provenance"]["gpu_name"].startswith("NVIDIA H100")
    assert all(r["ok"] for r in hw["runs"])
    assert all(r["metrics"] and r["metrics"].get("sm__cycles_elapsed.avg") for r in hw["launches"])
    assert "--clock-control none" in hw["collection"]["ncu_command"]
    assert all(r["event_ms"] and r["event_ms"] > 0 for r in hw["launches"])
    assert hw.outputs and len(hw["occupancy"]) > 40
    # every sweep point has a hardware measurement: the small tier's in this bundle, the scale
    # tier's in the scale bundle
    have = {(r["case"], r["n"]) for r in hardware.load_many([HW_FILE, H100 / "scale_tier"])["launches"]}
    small = {(r["case"], r["n"]) for r in hw["launches"]}
    for sw in sweeps.SWEEPS.values():
        assert all((p.case, p.n) in (small if sw.tier == "small" else have) for p in sw.points), sw.name
    assert sum(sw.tier == "scale" for sw in sweeps.SWEEPS.values()) >= 9


def test_calibrate_override_file_roundtrip(tmp_path):
    measured = json.loads((H100 / "calibrate_h100.json").read_text())
    path = calibrate.write_overrides(tmp_path / "o.toml", measured)
    base, ov = calibrate.read_overrides(path)
    assert base == "h100" and ov["sm_count"] == 132 and ov["l2.latency_cycles"] == round(measured["l2_chase_cycles"])
    import gpusim

    # the DRAM chase (far homes, TLB misses) moves the shipped near-home latency: the H100's own gives it back
    assert ov["dram.latency_cycles"] == gpusim.config.load("h100").dram.latency_cycles
    # counted at the measured SM clock: a clock what-if on the calibrated config keeps them in ns
    assert ov["dram.latency_clock_hz"] == ov["clock_hz"] == measured["clock_hz"]
    assert "dram.latency_clock_hz" not in calibrate.overrides_from({"clock_hz": 1.5e9})
    with pytest.raises(Exception, match="exists"):
        calibrate.write_overrides(path, measured)
    assert gpusim.Device(base, overrides=ov).config.l2.latency_cycles == ov["l2.latency_cycles"]
    (tmp_path / "bad.toml").write_text("x = 1\n")
    with pytest.raises(Exception, match="base"):
        calibrate.read_overrides(tmp_path / "bad.toml")


def test_calibrate_bandwidth_shares_of_the_measured_peak():
    """The copy and read rates are shares of the peak from the device attributes (an H200's 4.92 TB/s
    exceeds the h100 base's 3.35 TB/s: against the base, its copy would be capped at 1.0), and so is
    the loaded-latency curve's utilisation; a result without a measured peak falls back to the base's."""
    points = [{"bytes_per_s": r, "latency_cycles": c} for r, c in ((0.385e12, 696), (1.455e12, 736), (2.608e12, 821))]
    h200 = {"dram_peak_bytes_per_s": 4.917e12, "memory_bus_width_bits": 6144, "copy_bytes_per_s": 4.205e12,
            "read_bytes_per_s": 4.5e12, "loaded_latency": points}
    ov = calibrate.overrides_from(h200)
    assert ov["dram.bandwidth_bytes_per_s"] == 4.917e12 and ov["dram.bus_width_bits"] == 6144
    assert ov["dram.efficiency"] == round(4.205 / 4.917, 3) and ov["dram.read_efficiency"] == round(4.5 / 4.917, 3)
    assert ov["dram.queue_cycles"] == round(calibrate.fit_queue_cycles(points, 4.917e12)[1])
    assert ov["dram.queue_cycles"] > round(calibrate.fit_queue_cycles(points, 3.35e12)[1])
    old = calibrate.overrides_from({"copy_bytes_per_s": 4.205e12})
    assert old == {"dram.efficiency": 1.0} and "dram.bandwidth_bytes_per_s" not in old


def test_calibrate_l2_throughputs_from_the_probes_launches():
    """The H100's own cycles give back its shipped values; the H200's (ncu rows of random_access.py and
    l2_bandwidth.py, committed) give faster ones, each by its launch's ratio; without the empty kernel's
    cycles (no ncu) none is written."""
    import operator

    import gpusim
    from validation.probekit import load_probe

    h100 = gpusim.config.load("h100")
    launches = calibrate.L2_RATE_LAUNCHES
    own = {"empty_kernel_cycles": calibrate.H100_EMPTY_KERNEL_CYCLES,
           **{calibrate._l2_key(label): c for (_, label), (_, c) in launches.items()}}
    ov = calibrate.overrides_from(own)
    assert [ov[f] for f, _ in launches.values()] == [operator.attrgetter(f)(h100) for f, _ in launches.values()]
    h200_dir = H100.parent / "h200"
    rows = {"random_access": load_probe("random_access").gpu_rows(str(h200_dir / "random_access/random_access.csv")),
            "l2_bandwidth": load_probe("l2_bandwidth").gpu_rows(str(h200_dir / "l2_bandwidth/l2_bandwidth.csv"))}
    empty = 2750.0
    h200 = {"empty_kernel_cycles": empty,
            **{calibrate._l2_key(label): rows[probe][label]["cycles"] for probe, label in launches}}
    ov = calibrate.overrides_from(h200)
    for (probe, label), (field, c) in launches.items():
        ratio = (c - calibrate.H100_EMPTY_KERNEL_CYCLES) / (rows[probe][label]["cycles"] - empty)
        assert 1.1 < ratio < 1.3, label
        assert ov[field] == calibrate._ROUND[field](operator.attrgetter(field)(h100) * ratio)
    assert not {f for f, _ in launches.values()} & set(calibrate.overrides_from({"rd_rand_4_mib_cycles": 58780.23}))


# --------------------------------------------------------------------------- report from committed JSON


@pytest.fixture(scope="module")
def subset_report(tmp_path_factory):
    hw = hardware.load(HW_FILE)
    names = [n for n in sweeps.SWEEPS if set(sweeps.SWEEPS[n].cases) <= set(SUBSET)]
    result = report.build(hw, cases=list(SUBSET), sweep_names=names, max_threads=MAX_THREADS, progress=lambda m: None)
    out = tmp_path_factory.mktemp("report")
    paths = report.write(result, out)
    return result, paths


def test_html_report_from_json_is_self_contained(subset_report):
    result, paths = subset_report
    html = paths["html"].read_text()
    assert html.count("data:image/png;base64,") >= 2            # the scatter and a sweep
    assert "sm__cycles_elapsed.avg" in html and "NVIDIA H100" in html
    assert "http://" not in html and "https://" not in html and "<script" not in html
    raw = json.loads(paths["json"].read_text())
    assert raw["summary"]["launches"] == len(raw["rows"]) > 20
    assert raw["provenance"]["simulator"]["config"] == "h100"
    with pytest.raises(Exception, match="--force"):
        report.write(result, paths["html"].parent)


def _committed_rows():
    if not COMMITTED.is_file():
        pytest.skip("no committed validation_h100.json")
    return {(r["case"], r["n"], r["launch"]): r for r in json.loads(COMMITTED.read_text())["rows"]}


def test_agreement_with_the_h100_is_not_worse_than_committed(subset_report):
    result, _ = subset_report
    committed = _committed_rows()
    new = [r for r in result["rows"] if (r["case"], r["n"], r["launch"]) in committed]
    assert len(new) == len(result["rows"]) > 20
    hw = [r["hw_cycles"] for r in new]
    now = score.error_stats([r["sim_cycles"] for r in new], hw)
    then = score.error_stats([committed[(r["case"], r["n"], r["launch"])]["sim_cycles"] for r in new], hw)
    assert now["pearson_r"] >= then["pearson_r"] - 0.002, (now, then)
    assert now["mae_pct"] <= then["mae_pct"] + 0.25, (now, then)
    # counters that were exact stay exact
    for r in new:
        old = committed[(r["case"], r["n"], r["launch"])]["metrics"]
        for name, (h, s) in r["metrics"].items():
            if name in report.EXACT_COUNTERS and name in old and old[name][0] == old[name][1]:
                assert s == h, (r["case"], r["n"], r["launch"], name)


def test_subset_outputs_occupancy_and_micro_counters_meet_the_targets(subset_report):
    result, _ = subset_report
    s = result["summary"]
    assert s["outputs_total"] > 20 and s["outputs_equal"] == s["outputs_total"]
    assert s["occupancy_calculator_equal"] == s["occupancy_total"]
    assert s["occupancy_model_checked"] > 5 and s["occupancy_model_equal"] == s["occupancy_model_checked"]
    assert s["micro_counters_total"] > 50 and s["micro_counters_equal"] == s["micro_counters_total"]
    for sw in result["sweeps"]:
        if sw["name"] == "smem_micro_stride":
            assert sw["ordering"]["same"] and sw["ordering"]["pairs"] > 10


def test_committed_report_matches_its_summary():
    if not COMMITTED.is_file():
        pytest.skip("no committed validation_h100.json")
    rep = json.loads(COMMITTED.read_text())
    rows = [r for r in rep["rows"] if r["hw_cycles"] and r["sim_cycles"]]
    st = score.error_stats([r["sim_cycles"] for r in rows], [r["hw_cycles"] for r in rows])
    assert math.isclose(st["pearson_r"], rep["summary"]["cycles"]["pearson_r"], rel_tol=1e-9)
    assert math.isclose(st["mae_pct"], rep["summary"]["cycles"]["mae_pct"], rel_tol=1e-9)
    assert (H100 / "report.html").is_file()


# --------------------------------------------------------------------------- on a GPU


@pytest.mark.gpu
def test_collect_on_a_gpu(tmp_path):
    pytest.importorskip("cupy")
    from validation.gpu import GpuUnavailable, require_cupy

    try:
        require_cupy()
    except GpuUnavailable as exc:
        pytest.skip(str(exc))
    path = hardware.collect(tmp_path, ["copy_vec4"], test_only=True, use_ncu=False, progress=lambda m: None)
    hw = hardware.load(path)
    assert hw["launches"] and all(r["event_ms"] > 0 for r in hw["launches"])
    assert hw["occupancy"][0]["driver_blocks_per_sm"] > 0


# --------------------------------------------------------------------------- a user's kernel


def test_experiment_bundle_builds_a_report(tmp_path):
    """A bundle of `gpusim validate --experiment` carries the TOML and PTX text, so the simulator
    side is rebuilt anywhere; here the 'hardware' outputs are the simulator's own (no GPU), with
    one element changed to show that a difference is caught."""
    from gpusim.experiment import load_experiment
    from validation import experiment

    toml = pathlib.Path(__file__).resolve().parents[2] / "validation" / "experiments" / "copy_offset.toml"
    exp = load_experiment(toml)
    name = experiment.case_name(toml)
    entry = {"toml": toml.read_text(), "ptx_name": exp.ptx.name, "ptx": exp.ptx.read_text()}
    sim = experiment.simulate(name, entry)
    assert sim["error"] is None and sim["launches"][0]["cycles"] > 0
    outs = {f"{name}/{k}": v.copy() for k, v in sim["outputs"].items()}
    outs[f"{name}/arg1"][5] += 1
    np.savez_compressed(tmp_path / "outputs_x.npz", **outs)
    launch = {"case": name, "n": 0, "extra": False, "run": 0, "launch": 0, "kernel": exp.kernel, "grid": [64, 1, 1],
              "block": [256, 1, 1], "shared_mem": 0, "ok": True, "event_ms": 0.01,
              "metrics": {"sm__cycles_elapsed.avg": 5000.0}}
    occ = {"ptx": exp.ptx.name, "kernel": exp.kernel, "block_threads": 256, "dynamic_smem": 0, "num_regs": 10,
           "shared_size_bytes": 0, "max_dynamic_shared_size_bytes": 49152, "driver_blocks_per_sm": 8}
    bundle = {"format": hardware.FORMAT, "provenance": {"gpu_name": "test GPU", "slug": "x"}, "collection": {},
              "runs": [], "launches": [launch], "occupancy": [occ], "outputs_npz": "outputs_x.npz",
              "experiments": {name: entry}}
    (tmp_path / "hardware_x.json").write_text(json.dumps(bundle))
    assert main(["validate", "--from", str(tmp_path), "--out", str(tmp_path / "rep")]) == 0
    rep = json.loads((tmp_path / "rep" / "validation_x.json").read_text())
    by_output = {o["output"]: o for o in rep["outputs"]}
    assert by_output["arg0"]["equal"] and not by_output["arg1"]["equal"]
    assert rep["sweeps"] == [] and rep["occupancy"][0]["calculator_equal"]
    assert rep["rows"][0]["sim_cycles"] == sim["launches"][0]["cycles"]


def test_probe_timing_json_is_read_as_hardware_data():
    """--from also takes the probe's timing_h100.json, with its sibling events and outputs files."""
    hw = hardware.load(H100 / "timing_h100.json")
    assert len(hw["launches"]) == 178 and hw["provenance"]["slug"] == "h100"
    assert all(r["event_ms"] for r in hw["launches"]) and hw.outputs
    assert hw["occupancy"] == []           # that probe asked the driver nothing


def test_approx_outputs_are_held_to_the_ulp_bound():
    assert report.approx_rule("add.rn.f32 %f1, %f2, %f3;") == ("bit-exact", 0)
    rule, bound = report.approx_rule("rcp.approx.f32 %f1, %f2;\n\tex2.approx.ftz.f32 %f3, %f1;")
    assert bound == 2 and "ex2.approx.ftz.f32" in rule
    assert report.approx_rule("sin.approx.f32 %f1, %f2;")[1] is None
    a = np.array([1.0, -2.0, 0.0], np.float32)
    b = a.copy()
    b.view(np.int32)[1] += 2                   # two ulp further from zero
    assert report._ulp_distance(a, b) == 2
    assert report._ulp_distance(np.float32([0.0]), np.float32([-0.0])) == 0   # +0 and -0 are neighbours at 0
