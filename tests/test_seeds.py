"""The course notes' A100 reductions (``gpusim.suite.seeds``): exact results, tables, CLI, timing.

The big runs (2**29 ints, 32 M floats) are ``benchmarks/seeds_tables.py``'s; here every kernel
runs at a few thousand elements.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.cli import main
from gpusim.suite import CASES, PTX_DIR, check, entry_params, run_case
from gpusim.suite.reduce_int import _strided_sums
from gpusim.suite.seeds import REDUCE7_K, SEED_CASES, SEED_GROUPS, TABLES


@pytest.fixture(scope="module")
def a100():
    with gpusim.Device("a100") as d:
        yield d


@pytest.mark.parametrize("name", list(SEED_CASES))
def test_seed_case_bit_exact(a100, name):
    case = SEED_CASES[name]
    for n in (case.test_n, 1, 513):        # the default size, one element, one past a block's pair
        ok, msg = check(run_case(case, gpusim, n, seed=n))
        assert ok, f"{name} n={n}: {msg}"


def test_oracle_catches_a_wrong_partial(a100):
    run = run_case(SEED_CASES["reduce7_2"], gpusim, 5000)
    run.outputs["partials"][1] += 1
    ok, msg = check(run)
    assert not ok and "flat index 1" in msg


def test_reduce6_grid_stride_loop_runs_several_trips(a100):
    """reduce6's while loop at a grid smaller than seeds.py launches: 3 trips, last one partial."""
    n, grid = 2 * 512 * 2 + 700, 2
    x = np.random.default_rng(5).integers(-1000, 1001, size=n, dtype=np.int32)
    out = gpusim.zeros(grid, np.int32)
    k = gpusim.RawModule(path=str(PTX_DIR / "reduce_int.ptx")).get_function("reduce6")
    k((grid,), (256,), (gpusim.asarray(x), out, np.uint32(n)))
    assert np.array_equal(out.get(), _strided_sums(x, grid, 3))
    assert int(out.get().astype(np.int64).sum()) == int(x.astype(np.int64).sum())


def test_int32_sums_wrap_like_add_s32(a100):
    """Partials that overflow int32 wrap in the kernel and in the oracle alike."""
    x = np.full(512, 2**30, dtype=np.int32)          # 512 * 2**30 = 2**39: wraps to 0 in int32
    x[0] = 7
    out = gpusim.zeros(1, np.int32)
    k = gpusim.RawModule(path=str(PTX_DIR / "reduce_int.ptx")).get_function("reduce5")
    k((1,), (256,), (gpusim.asarray(x), out, np.uint32(512)))
    assert out.get()[0] == 7 - 2**30 and _strided_sums(x, 1, 1)[0] == 7 - 2**30


def test_every_entry_of_reduce_int_is_a_seed_case():
    entries = set(entry_params((PTX_DIR / "reduce_int.ptx").read_text()))
    assert entries == {c.kernel for c in SEED_CASES.values()}
    assert [f"reduce7_{k}" for k in REDUCE7_K] == [n for n in SEED_CASES if n.startswith("reduce7_")]


def test_seed_cases_stay_out_of_the_suite():
    assert not set(SEED_CASES) & set(CASES)
    assert all(c.group not in {s.group for s in CASES.values()} for c in SEED_CASES.values())
    assert SEED_GROUPS == {"seeds_a100": list(SEED_CASES)}


def test_tables_name_cases_that_exist():
    assert [r.case for r in TABLES["a100"]["rows"]] == list(SEED_CASES)
    assert all(r.case in CASES for r in TABLES["a5000"]["rows"])
    # the seeds' A100 figures fall from reduce0 to reduce7_16 (the first row is the slowest)
    a100 = [r.seconds for r in TABLES["a100"]["rows"]]
    assert max(a100) == a100[0] and min(a100) == TABLES["a100"]["rows"][11].seconds


def test_h100_table_is_the_committed_measurement():
    # the "h100" table's figures are ncu's gpu__time_duration.sum of the committed H100 run, row
    # for row, at the table's size; its kernels are the A100 table's
    import json
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "validation/reports/h100/seeds_int/timing_h100.json"
    measured = {r["case"]: r for r in json.loads(path.read_text())["launches"]}
    spec = TABLES["h100"]
    assert [r.case for r in spec["rows"]] == [r.case for r in TABLES["a100"]["rows"]] == list(measured)
    for r in spec["rows"]:
        assert measured[r.case]["n"] == spec["n"] and measured[r.case]["ok"]
        assert r.seconds == measured[r.case]["metrics"]["gpu__time_duration.sum"] * 1e-9


def test_cli_runs_seed_cases_by_name_and_group(capsys):
    assert main(["run", "--case", "reduce7_4", "--case", "reduce1", "-n", "3000", "--gpu", "a100"]) == 0
    out = capsys.readouterr().out
    assert "2 of 2 kernels match their oracle" in out and "reduce7_4" in out
    assert main(["run", "--list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in SEED_CASES)
    assert main(["run", "--group", "seeds_a100", "-n", "600"]) == 0
    assert f"{len(SEED_CASES)} of {len(SEED_CASES)} kernels match" in capsys.readouterr().out


def test_timing_mode_small_size_orders_reduce0_above_reduce5():
    """At 2**14 ints (64 and 32 CTAs, simulated in detail) the timing model runs both bit-exact
    and puts the divergent, bank-conflicted reduce0 above the unrolled reduce5."""
    spec = TABLES["a100"]
    with gpusim.Device(spec["gpu"], mode="timing", overrides=dict(spec["overrides"])):
        r0 = run_case(SEED_CASES["reduce0"], gpusim, 2**14)
        r5 = run_case(SEED_CASES["reduce5"], gpusim, 2**14)
    assert check(r0)[0] and check(r5)[0]
    c0, c5 = r0.launches[0].cycles, r5.launches[0].cycles
    assert c0 > c5 > 0
    assert r0.launches[0].metrics["smsp__inst_executed.sum"] > 2 * r5.launches[0].metrics["smsp__inst_executed.sum"]
