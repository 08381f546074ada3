"""``gpusim validate --corpus`` (issue #28): the corpus's cases simulated and scored per half from a
hardware folder, against what ``validation/corpus/score.py``'s functions and script compute from the
same inputs; every bad input a clear error before any simulation.

The hardware folder is synthetic and at the ``small`` sizes (a few CTAs: under a second each in timing
mode): ncu's CSV with invented cycle counts, and digests from the numpy oracles (gpusim's outputs equal
them bit for bit at these sizes) except one case's, which is wrong on purpose.
"""

from __future__ import annotations

import json
import math

import pytest

from gpusim.cli import main
from validation.corpus import cases as C
from validation.corpus import score as corpus_score
from validation.corpus import simulate as corpus_simulate
from validation.score import best_constant

#: case -> (half, the invented H100 cycles of its measured launch): two per half, two size buckets
HW = {"gather": ("fit", 6_000.0), "scatter": ("fit", 60_000.0), "softmax_warp": ("test", 9_000.0),
      "radix_count": ("test", 7_500.0)}
WRONG_DIGEST = "softmax_warp"


def _csv(order: list[str]) -> str:
    head = ('"ID","Kernel Name","sm__cycles_elapsed.avg","lts__t_sectors_op_read.sum","dram__bytes_read.sum"\n'
            '"","","cycle","sector","byte"\n')
    rows, i = [], 0
    for name in order:
        for cyc in (123.0, HW[name][1]):  # the warm-up, then the measured launch
            rows.append(f'"{i}","{C.BY_NAME[name].kernel}(unsigned int *)","{cyc:,.0f}","{int(cyc) // 10}","{i}"\n')
            i += 1
    return "==PROF== Connected to process 1\n" + head + "".join(rows)


@pytest.fixture(scope="module")
def hw_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hw")
    order = list(HW)
    cases = {}
    for name in order:
        case = C.BY_NAME[name]
        n = case.sizes["small"]
        dg = C.digests(case, case.ref(C.inputs(case, n, 0), n))
        cases[name] = {"family": case.family, "kernel": case.kernel, "n": n,
                       "digests": ["0" * 64] * len(dg) if name == WRONG_DIGEST else dg}
    (folder / "corpus_digests.json").write_text(json.dumps({"gpu": "Synthetic H100", "seed": 0, "size": "small",
                                                            "order": order, "cases": cases}))
    (folder / "corpus.csv").write_text(_csv(order))
    return folder


def _nan_to_none(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, dict):
        return {k: _nan_to_none(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_nan_to_none(x) for x in v]
    return v


@pytest.fixture(scope="module")
def report(hw_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("rep")
    assert main(["validate", "--corpus", "--from", str(hw_dir), "--jobs", "2", "--out", str(out)]) == 0
    return out


def test_report_is_score_py_on_the_same_inputs(report, hw_dir):
    doc = json.loads((report / "corpus_score.json").read_text())
    sim = json.loads((report / "corpus_sim.json").read_text())
    assert sim["size"] == "small" and set(sim["cases"]) == set(HW)
    digests = json.loads((hw_dir / "corpus_digests.json").read_text())
    hw_rows = corpus_score.gpu_rows(hw_dir / "corpus.csv", digests["order"])
    want = corpus_score.score(hw_rows, digests, sim, C.split(), list(HW))
    assert doc["rows"] == _nan_to_none(want["rows"]) and doc["summary"] == _nan_to_none(want["summary"])
    assert doc["missing"] == [] and doc["meta"]["size"] == "small"
    md = (report / "corpus_score.md").read_text()
    assert corpus_score.markdown(want["rows"], want["summary"], want["missing"]) in md


def test_report_rows_and_halves_by_hand(report):
    doc = json.loads((report / "corpus_score.json").read_text())
    sim = json.loads((report / "corpus_sim.json").read_text())["cases"]
    by = {r["case"]: r for r in doc["rows"]}
    assert set(by) == set(HW)
    for name, (half, hw) in HW.items():
        m = sim[name]["metrics"]["sm__cycles_elapsed.avg"]
        assert by[name]["half"] == half and by[name]["hw_cycles"] == hw and by[name]["sim_cycles"] == m
        assert by[name]["error_pct"] == pytest.approx(100 * (m / hw - 1))
        assert by[name]["bit_exact"] is (name != WRONG_DIGEST)
        assert by[name]["counters"]["L2 read sectors"][0] == int(hw) // 10
    s = doc["summary"]
    for half in ("fit", "test"):
        names = [x for x, (h, _) in HW.items() if h == half]
        st = s[half]["all"]
        assert st["n"] == 2 and st["bit_checked"] == 2 and st["bit_exact"] == sum(x != WRONG_DIGEST for x in names)
        assert st["mae_pct"] == pytest.approx(sum(abs(by[x]["error_pct"]) for x in names) / 2)
        c, c_mae = best_constant([HW[x][1] for x in names])
        assert (st["best_constant_cycles"], st["best_constant_mae_pct"]) == pytest.approx((c, c_mae))
    assert s["all"]["all"]["n"] == 4 and s["fit"]["50k-500k cycles"]["n"] == 1 and s["test"]["50k-500k cycles"]["n"] == 0


def test_report_sim_side_is_gpusim_at_the_hardware_size(report):
    sim = json.loads((report / "corpus_sim.json").read_text())["cases"]
    direct = corpus_simulate.simulate_case("radix_count", "small", 0)
    assert sim["radix_count"]["metrics"] == direct["metrics"] and sim["radix_count"]["digests"] == direct["digests"]


def test_the_scripts_still_give_the_same_numbers(report, hw_dir, tmp_path, monkeypatch):
    # simulate.py's and score.py's own command lines, as the docs and the GPU scripts call them
    monkeypatch.setenv("GPUSIM_JOBS", "1")  # simulate.main sets it: restored after the test
    corpus_simulate.main([str(tmp_path / "sim.json"), "--cases", "gather", "norm", "--size", "small", "--jobs", "1"])
    sim = json.loads((tmp_path / "sim.json").read_text())
    cli_sim = json.loads((report / "corpus_sim.json").read_text())["cases"]
    assert set(sim["cases"]) == {"gather", "softmax_block", "softmax_warp", "layernorm"}
    assert sim["cases"]["gather"]["metrics"] == cli_sim["gather"]["metrics"]
    corpus_score.main(["--csv", str(hw_dir / "corpus.csv"), "--digests", str(hw_dir / "corpus_digests.json"),
                       "--sim", str(report / "corpus_sim.json"), "--out", str(tmp_path / "s.json")])
    by_script = json.loads((tmp_path / "s.json").read_text())
    doc = json.loads((report / "corpus_score.json").read_text())
    assert _nan_to_none(by_script["summary"]) == doc["summary"] and _nan_to_none(by_script["rows"]) == doc["rows"]
    assert len(by_script["missing"]) == len(C.CASES) - len(HW)  # the script scores against all cases
    with pytest.raises(SystemExit, match="no corpus case or family"):
        corpus_simulate.main([str(tmp_path / "x.json"), "--cases", "nope"])


def test_half_selects_the_cases_of_that_half(hw_dir, tmp_path, capsys):
    assert main(["validate", "--corpus", "--from", str(hw_dir), "--half", "test", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "corpus_score.json").read_text())
    assert sorted(r["case"] for r in doc["rows"]) == ["radix_count", "softmax_warp"]
    assert doc["summary"]["fit"]["all"]["n"] == 0 and doc["summary"]["test"]["all"]["n"] == 2
    assert "test: 2 launches" in capsys.readouterr().out


# ------------------------------------------------------------------------------ bad input


def _fails(capsys, argv, *words):
    assert main(["validate", "--corpus", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("gpusim validate: error: "), err
    for w in words:
        assert w in err, (w, err)


@pytest.fixture
def no_sim(monkeypatch):
    monkeypatch.setattr(corpus_simulate, "run_cases", lambda *a, **k: pytest.fail("simulated before refusing"))
    monkeypatch.setattr("validation.corpus.validate.run_cases", lambda *a, **k: pytest.fail("simulated"))


def test_unknown_case(capsys, hw_dir, tmp_path, no_sim):
    _fails(capsys, ["--from", str(hw_dir), "--cases", "gather", "nope", "--out", str(tmp_path)],
           "--cases 'nope'", "no corpus case or family")


def test_case_the_hardware_did_not_measure(capsys, hw_dir, tmp_path, no_sim):
    _fails(capsys, ["--from", str(hw_dir), "--cases", "bfs_topdown", "--out", str(tmp_path)],
           "--cases", "bfs_topdown not measured", "corpus_digests.json")


def test_unknown_half(capsys, hw_dir, tmp_path, no_sim):
    _fails(capsys, ["--from", str(hw_dir), "--half", "middle", "--out", str(tmp_path)],
           "--half 'middle'", "fit, test or all")


def test_half_of_nothing(capsys, hw_dir, tmp_path, no_sim):
    _fails(capsys, ["--from", str(hw_dir), "--cases", "gather", "--half", "test", "--out", str(tmp_path)],
           "--half test", "none of the selected cases")


def test_half_needs_corpus(capsys, tmp_path):
    assert main(["validate", "--half", "fit", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--half fit" in err and "needs --corpus" in err


def test_from_folder_without_the_csv(capsys, hw_dir, tmp_path, no_sim):
    (tmp_path / "hw").mkdir()
    (tmp_path / "hw" / "corpus_digests.json").write_text((hw_dir / "corpus_digests.json").read_text())
    _fails(capsys, ["--from", str(tmp_path / "hw"), "--out", str(tmp_path / "r")],
           f"--from {tmp_path / 'hw'}", "corpus.csv", "folder holding")
    _fails(capsys, ["--from", str(tmp_path / "none"), "--out", str(tmp_path / "r")], "no such folder")
    _fails(capsys, ["--from", str(hw_dir / "corpus.csv"), "--out", str(tmp_path / "r")], "not a folder")


def test_from_folder_with_bad_files(capsys, hw_dir, tmp_path, no_sim):
    bad = tmp_path / "hw"
    bad.mkdir()
    (bad / "corpus.csv").write_text(_csv(["gather"]))  # one case's rows for a JSON of four
    (bad / "corpus_digests.json").write_text((hw_dir / "corpus_digests.json").read_text())
    _fails(capsys, ["--from", str(bad), "--out", str(tmp_path / "r")], "corpus.csv", "2 corpus kernel rows for 4")
    (bad / "corpus_digests.json").write_text("{not json")
    _fails(capsys, ["--from", str(bad), "--out", str(tmp_path / "r")], "corpus_digests.json", "not valid JSON")


def test_suite_only_options_are_refused(capsys, hw_dir, tmp_path, no_sim):
    _fails(capsys, ["--from", str(hw_dir), "--sweeps", "reduction", "--out", str(tmp_path)], "--sweeps", "suite")
    _fails(capsys, ["--from", str(hw_dir), str(hw_dir), "--out", str(tmp_path)], "one folder")


def test_existing_report_is_refused_before_simulating(capsys, hw_dir, tmp_path, no_sim):
    (tmp_path / "corpus_score.md").write_text("mine")
    _fails(capsys, ["--from", str(hw_dir), "--out", str(tmp_path)], "corpus_score.md", "--force")
    assert (tmp_path / "corpus_score.md").read_text() == "mine"


def test_no_gpu_says_what_is_missing(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUSIM_NO_GPU", "1")
    _fails(capsys, ["--cases", "gather", "--out", str(tmp_path / "r")], "no GPU", "--corpus --from")
    assert not (tmp_path / "r").exists()
    monkeypatch.delenv("GPUSIM_NO_GPU")
    monkeypatch.setattr("validation.gpu.require_cupy", lambda hint="": object())  # CuPy and a GPU, but no ncu
    monkeypatch.setattr("validation.gpu.find_ncu", lambda: None)
    _fails(capsys, ["--cases", "gather", "--out", str(tmp_path / "r")], "Nsight Compute (ncu) not found")
    assert not (tmp_path / "r").exists()
