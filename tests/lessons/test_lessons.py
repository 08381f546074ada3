"""gpusim.lessons: the H100 data, the ordering of every lesson's variants against the H100,
the table, the errors and the CLI."""

from __future__ import annotations

import pytest

from gpusim import lessons
from gpusim.errors import GpusimError
from gpusim.lessons import h100
from gpusim.lessons.counters import COUNTERS, combine, top_stall


def test_shipped_h100_data_equals_the_committed_bundles():
    shipped = __import__("json").loads(h100.DATA_FILE.read_text())
    assert shipped == __import__("json").loads(__import__("json").dumps(h100.extract())), \
        "gpusim/data/lessons_h100.json is stale: run python -m gpusim.lessons.h100"


@pytest.mark.parametrize("name", list(lessons.LESSONS))
def test_every_full_size_row_has_its_h100_measurement(name):
    for v in lessons.get(name).variants:
        hw = h100.lookup(v.case, v.n, v.launch)
        assert hw, f"{name}: no H100 data for {v.case} at {v.n} launch {v.launch}"
        assert combine(hw)["sm__cycles_elapsed.avg"] > 10_000   # GPU-filling: far beyond the launch overhead


def test_counters_read_both_sides_alike():
    sim = {"smsp__pcsamp_warps_issue_stalled_selected": 900, "smsp__pcsamp_warps_issue_stalled_wait": 50,
           "smsp__pcsamp_warps_issue_stalled_long_scoreboard": 70}
    hw = {"smsp__average_warps_issue_stalled_selected_per_issue_active.ratio": 1.0,
          "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 2.5,
          "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": 0.4}
    assert (top_stall(sim), top_stall(hw)) == ("long_scoreboard", "barrier")
    m = {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 96, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 12}
    assert COUNTERS["sectors_per_request"].format(m) == "8.00"
    both = combine([{"sm__cycles_elapsed.avg": 100, "smsp__inst_executed.sum": 7, "x.pct": 50.0},
                    {"sm__cycles_elapsed.avg": 300, "smsp__inst_executed.sum": 5, "x.pct": 20.0}])
    assert both == {"sm__cycles_elapsed.avg": 400.0, "smsp__inst_executed.sum": 12.0, "x.pct": 20.0}


def test_unknown_lesson_and_size_are_named():
    with pytest.raises(GpusimError, match="unknown lesson 'nope'.*divergence"):
        lessons.get("nope")
    with pytest.raises(GpusimError, match="--size must be one of full, quick, test"):
        lessons.run("banks", "huge")


#: lessons whose variants the current model does not order as the H100 at the size the test runs,
#: with the reason (strict: the test fails once the model gets them right, so this list is kept honest)
NOT_YET: dict[str, str] = {}

#: lessons whose effect needs the full size: at the quick size the H100 itself orders them otherwise
#: (copy_occupancy at 2^20 is about one wave: 4 blocks/SM 9,994 cycles, 3 blocks 9,568, in the small tier)
FULL_SIZE = {"occupancy"}


@pytest.mark.parametrize("name", list(lessons.LESSONS))
def test_simulated_variants_are_in_the_h100_order(name):
    """The simulator at the lesson's quick size (full size for :data:`FULL_SIZE`, about 30 s) orders
    the variants as the H100 did at the full size (committed scale-tier measurements); pairs within
    5 % on the H100 are ties. A lesson the H100 measured flat must be flat (within 2 x 5 %) in the
    simulator too."""
    res = lessons.run(name, "full" if name in FULL_SIZE else "quick")
    o = res.ordering()
    if res.lesson.flat:
        assert o["pairs"] == 0 and o["ties"]
        assert o["tie_spread"] <= 0.10, res.text()
        return
    assert o["pairs"] >= len(res.rows) - 1
    if name in NOT_YET:
        assert not o["same"], f"{name} is ordered as on the H100 now: remove it from NOT_YET"
        pytest.xfail(NOT_YET[name])
    assert o["same"], res.text()


def test_table_text_names_the_seed_section_and_every_variant():
    res = lessons.run("occupancy", "quick")
    text = res.text()
    assert "T - Little’s Law" in text
    for r in res.rows:
        assert r.label in text and r.hw_us is not None   # the H100 measured copy_occupancy at 2^20 too
    assert [r.label for r in res.rows] == [f"{b} block(s)/SM" for b in (1, 2, 3, 4, 6, 8)]
    occ = [float(row["counter_sim"]) for row in res.table_rows()]
    assert occ[0] < occ[1] < occ[2] < occ[3]           # achieved occupancy rises with the blocks per SM
    assert "<table" in res._repr_html_() and "sim/H100" in res._repr_html_()


def test_cli_list_and_errors(capsys):
    from gpusim.cli import main

    assert main(["lesson", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in lessons.LESSONS) and "Cast Study 2" in out
    assert main(["lesson", "nope"]) == 2
    assert "unknown lesson 'nope'" in capsys.readouterr().err
    assert main(["lesson"]) == 2
    assert "NAME is required" in capsys.readouterr().err


def test_cli_writes_the_page_and_refuses_to_overwrite(tmp_path, capsys):
    from gpusim.cli import main

    out = tmp_path / "banks.html"
    assert main(["lesson", "banks", "--size", "test", "-o", str(out)]) == 0
    html = out.read_text()
    assert html.count('class="lesson-figure"') == 3   # comparison chart, bank diagrams, coalescing diagram
    assert "Padding &amp; Swizzling" in html and "shared, 32-way conflict" in html
    assert main(["lesson", "banks", "--size", "test", "-o", str(out)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err
