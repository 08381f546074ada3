"""validation/probes/l1_sets.py on its committed H200 run (validation/reports/h200/l1_sets/): one thread's
cyclic walk keeps every line up to the L1's 1,792-line capacity, a falling share just beyond it (no cliff),
none at 2,560; power-of-two strides conflict nowhere up to 256 lines."""

from __future__ import annotations

import pathlib

from validation.probes import l1_sets

CSV = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h200" / "l1_sets" / "l1_sets.csv"


def test_the_l1_keeps_a_falling_share_of_a_walk_just_beyond_its_capacity():
    rows = l1_sets.gpu_rows(str(CSV))
    assert set(rows) == {lab for lab, *_ in l1_sets.LAUNCHES}
    kept = {n: l1_sets.kept(rows[f"seq {n}"]["l1_load_hit_pct"]) for n in (1664, 1792, 1920, 2048, 2560)}
    assert kept[1664] > 0.99 and kept[2560] < 0.01
    assert 0.99 > kept[1792] > kept[1920] > kept[2048] > 0.1           # gradual: a share kept past the capacity
    assert all(l1_sets.kept(rows[lab]["l1_load_hit_pct"]) > 0.99 for lab, *_ in l1_sets.LAUNCHES if lab.startswith("stride"))
    assert rows["seq 256"]["l1_load_sectors"] == 256 * l1_sets.ROUNDS
