"""validation/probes/dirty_capacity.py on the H100's committed run (validation/reports/h100/dirty_capacity/):
atomics near the L2's capacity read each line once and write dirty sectors back instead."""

from __future__ import annotations

import pathlib

from validation.probes import dirty_capacity

DATA = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100" / "dirty_capacity"


def test_atomics_read_each_line_once_and_write_back_more_as_the_footprint_grows():
    gpu = dirty_capacity.gpu_rows(str(DATA / "dirty_capacity.csv"))
    assert list(gpu) == [r[0] for r in dirty_capacity.launches()]
    written = []
    for f in dirty_capacity.FOOTPRINTS:
        row = gpu[f"red_mod {f >> 20} MiB"]
        assert 0.97 < row["dram_read_bytes"] / f < 1.01, f
        written.append(row["dram_write_bytes"] / f)
    # none written back at 16 MiB, more from 20 to 32 MiB, over 2 F from 32 MiB
    assert written[0] < 0.01 < written[1] and written[:5] == sorted(written[:5]) and min(written[4:]) > 2.0
    table = dirty_capacity.table(str(DATA / "dirty_capacity.csv"), str(DATA / "sim.json"))
    assert table.count("\n") == len(dirty_capacity.launches()) + 1
    assert "| red_mod 32 MiB | 195,656 | 265,416 | 0.99 | 4.54 | 2.34 | 1.87 |" in table


def test_a_cap_on_dirty_lines_writes_back_nothing_below_it_and_cleans_above():
    assert dirty_capacity.dirty_line_cap_model(16, 82_000) == 0.0
    assert 2.0 < dirty_capacity.dirty_line_cap_model(24, 82_000) < 2.3   # the H100: 1.12 (a gentler onset)
