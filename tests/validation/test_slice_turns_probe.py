"""validation/probes/slice_turns.py on its committed run (validation/reports/h100/slice_turns/): reads
beside a hot address add about a cycle a one-sector request homed in its slice and twice that for a
whole line, and gpusim's ``l2.slice_read_cycles`` / ``slice_read_sector_cycles`` give both."""

from __future__ import annotations

import json
import pathlib

import pytest

import gpusim
from validation.probes import slice_turns

DATA = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100" / "slice_turns"


def test_a_whole_line_holds_the_hot_slice_about_twice_as_long_as_one_sector_on_the_h100():
    gpu = slice_turns.gpu_rows(str(DATA / "slice_turns.csv"))
    assert list(gpu) == [p[0] for p in slice_turns.PATTERNS]
    alone = gpu["red A1"]["cycles"]
    per_request = {}
    for width, sectors in (("sector", 1), ("line", 4)):
        both = gpu[f"red A1 + {width} reads"]
        assert both["read_sectors"] == pytest.approx(sectors * both["read_requests"], rel=0.01)
        per_request[width] = (both["cycles"] - alone) / (both["read_requests"] / 96)
    # the slice's cost of a read request: neither the same for 1 and 4 sectors nor 4 times as much
    assert 0.8 < per_request["sector"] < 1.0 and 1.8 < per_request["line"] < 2.2
    cfg = gpusim.config.load("h100").l2
    assert max(cfg.slice_read_cycles, cfg.slice_read_sector_cycles) == pytest.approx(per_request["sector"], abs=0.15)
    assert 4 * cfg.slice_read_sector_cycles == pytest.approx(per_request["line"], abs=0.15)


def test_gpusim_gives_the_reads_turns_at_the_hot_slice():
    rows = {r["launch"]: r for r in json.loads((DATA / "sim.json").read_text())["rows"]}
    for label in ("red A1", "red A1 + sector reads", "red A1 + line reads"):
        assert abs(rows[label]["error_pct"]) < 5, label
