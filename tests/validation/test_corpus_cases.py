"""The generalization corpus (validation/corpus, issue #28): every case at its small size in functional
mode against its numpy oracle, the fit/test split file, and the scorer's join of ncu rows."""

from __future__ import annotations

import json

import numpy as np
import pytest

from validation.corpus import cases as C

# ------------------------------------------------------------------------------ static: no compiler needed


def test_corpus_size_and_names():
    assert len(C.CASES) >= 40
    assert len(C.FAMILIES) >= 12
    assert len(C.BY_NAME) == len(C.CASES)  # names are unique
    for case in C.CASES:
        assert case.file.is_file(), case.file
        assert f'extern "C" __global__ void {case.kernel}(' in case.file.read_text(), case.name
        assert case.sizes["small"] < case.sizes["gpu"], case.name
        assert max(case.outputs) < len(C.inputs(case, case.sizes["small"])), case.name


def test_corpus_families_are_new_to_the_suite():
    from gpusim.suite.registry import FAMILIES as SUITE
    assert not set(C.FAMILIES) & set(SUITE)


def test_split_covers_every_family_once_with_six_per_half():
    halves = C.split()
    assert sorted(halves) == sorted(C.FAMILIES)
    assert set(halves.values()) == {"fit", "test"}
    for half in ("fit", "test"):
        assert sum(v == half for v in halves.values()) >= 6


def test_split_follows_its_stated_rule():
    import random
    import tomllib

    doc = tomllib.loads((C.KERNEL_DIR.parent / "split.toml").read_text())
    fams = sorted(C.FAMILIES)
    random.Random(doc["seed"]).shuffle(fams)
    half = len(fams) // 2
    assert {f: "fit" for f in fams[:half]} | {f: "test" for f in fams[half:]} == doc["families"]


def test_inputs_are_seeded():
    case = C.BY_NAME["hash_lookup"]
    a, b, c = (C.inputs(case, 64, s) for s in (0, 0, 1))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[2], c[2])


def _csv(rows):
    head = '"ID","Kernel Name","sm__cycles_elapsed.avg","lts__t_sectors_op_read.sum"\n"","","cycle","sector"\n'
    return "==PROF== log line\n" + head + "".join(f'"{i}","{k}","{cyc:,}","{rd}"\n' for i, (k, cyc, rd) in enumerate(rows))


def test_score_joins_the_measured_rows_and_scores_each_half(tmp_path):
    from validation.corpus import score

    order = ["gather", "scatter", "softmax_warp"]
    csv = tmp_path / "c.csv"
    csv.write_text(_csv([("gather", 9, 1), ("gather", 1000, 11), ("scatter", 9, 1), ("scatter", 2000, 22),
                         ("softmax_warp", 9, 1), ("softmax_warp", 4000, 44)]))
    hw = score.gpu_rows(csv, order)
    assert {k: v["sm__cycles_elapsed.avg"] for k, v in hw.items()} == {"gather": 1000, "scatter": 2000,
                                                                        "softmax_warp": 4000}
    assert hw["scatter"]["lts__t_sectors_op_read.sum"] == 22
    digests = {"cases": {"gather": {"digests": ["a"]}, "scatter": {"digests": ["b"]}, "softmax_warp": {"digests": ["c"]}}}
    sim = {"cases": {"gather": {"metrics": {"sm__cycles_elapsed.avg": 1100.0}, "digests": ["a"]},
                     "scatter": {"metrics": {"sm__cycles_elapsed.avg": 500.0}, "digests": ["x"]},
                     "softmax_warp": {"metrics": {"sm__cycles_elapsed.avg": 4000.0}, "digests": ["c"]}}}
    rows = score.join(hw, digests, sim, {"graph": "fit", "norm": "test"})
    by = {r["case"]: r for r in rows}
    assert by["gather"]["error_pct"] == pytest.approx(10.0)
    assert (by["gather"]["bit_exact"], by["scatter"]["bit_exact"]) == (True, False)
    s = score.summarise(rows)
    assert s["fit"]["all"]["n"] == 2 and s["test"]["all"]["n"] == 1
    assert s["fit"]["all"]["mae_pct"] == pytest.approx((10 + 75) / 2)
    assert s["fit"]["all"]["over_50pct"] == 1 and s["fit"]["all"]["max_abs_err_pct"] == pytest.approx(75)
    # the best constant of {1000, 2000}: 1000 (MAE 25 %) beats 2000 (MAE 50 %)
    assert (s["fit"]["all"]["best_constant_cycles"], s["fit"]["all"]["best_constant_mae_pct"]) == (1000, 25)
    with pytest.raises(ValueError, match="expected two per case"):
        score.gpu_rows(csv, order + ["gather"])
    assert "| fit | all | 2 |" in score.markdown(rows, s, [])
    json.dumps(s)  # JSON-ready


# ------------------------------------------------------------------------- functional runs (need NVRTC)


@pytest.fixture(scope="module")
def device():
    pytest.importorskip("cuda.bindings.nvrtc", reason="needs gpusim[cuda] (cuda-bindings, nvidia-cuda-nvrtc)")
    import gpusim
    from validation.corpus.runner import Modules

    with gpusim.Device("h100", mode="functional", jobs=1):
        yield gpusim, Modules(gpusim)


@pytest.mark.parametrize("name", [c.name for c in C.CASES])
def test_case_matches_numpy_oracle_at_small_size(device, name):
    from validation.corpus.runner import launch

    xp, mods = device
    case = C.BY_NAME[name]
    n = case.sizes["small"]
    args = C.inputs(case, n, seed=3)
    expected = C.reference(case, args, n)
    _, outs = launch(xp, mods, case, n, args)
    got = C.canonical(case, outs)
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype and g.shape == e.shape, (name, k)
        if case.tol is None:
            np.testing.assert_array_equal(g, e, err_msg=f"{name} output {k}")
        else:
            np.testing.assert_allclose(g, e, rtol=case.tol[0], atol=case.tol[1], err_msg=f"{name} output {k}")
    assert len(C.digests(case, outs)) == len(case.outputs)
