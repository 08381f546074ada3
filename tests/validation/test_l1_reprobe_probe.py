"""validation/probes/l1_reprobe.py on its committed H200 run (validation/reports/h200/l1_reprobe/): a warp's
dependent re-load of the sector it has just loaded hits the L1 less and less often as more random lines are in
flight an SM, gradually; a re-load of another sector of the line never hits."""

from __future__ import annotations

import pathlib

from validation.probes import l1_reprobe

CSV = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h200" / "l1_reprobe" / "l1_reprobe.csv"


def test_a_reloaded_sector_hits_the_l1_less_often_the_more_lines_are_in_flight():
    rows = l1_reprobe.gpu_rows(str(CSV))
    assert set(rows) == {lab for lab, *_ in l1_reprobe.LAUNCHES}
    reloads_hit = [2 * rows[f"dist 1 c{c}"]["l1_load_hit_pct"] / 100 for c in (1, 2, 4, 6, 8)]
    assert all(b < a for a, b in zip(reloads_hit, reloads_hit[1:]))      # strictly fewer with every step
    assert reloads_hit[0] > 0.85 and reloads_hit[-1] < 0.15
    assert 0.4 < reloads_hit[2] < 0.65                                      # no cliff: half of them at 1,024 lines
    assert all(rows[f"dist 8 c{c}"]["l1_load_hit_pct"] < 1 for c in (1, 2, 4, 6, 8))
    # two sectors a lane an iteration (fewer only where two lanes of a warp meet in one sector)
    lanes = 132 * l1_reprobe.BLOCK * l1_reprobe.ITERS * 2
    assert 0.9999 < rows["dist 1 c1"]["l1_load_sectors"] / lanes <= 1
    assert abs(rows["dist 1 c8"]["l1_load_sectors"] / (8 * rows["dist 1 c1"]["l1_load_sectors"]) - 1) < 1e-4
