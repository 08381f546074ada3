"""validation/probes/l2_reuse.py: its analysis on the committed runs (validation/reports/h100/l2_reuse/):
the H100's L2 loses re-read lines to a stream as gpusim's LRU L2 does."""

from __future__ import annotations

import json
import pathlib

import pytest

from validation.probes import l2_reuse

DATA = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100" / "l2_reuse"


def test_the_hot_set_loses_more_reads_to_a_longer_stream_on_the_h100():
    gpu = l2_reuse.gpu_rows(str(DATA / "l2_reuse.csv"))
    assert list(gpu) == [r[0] for r in l2_reuse.launches()]
    for h in (8, 16, 24):
        missed = [l2_reuse.hot_misses(gpu[f"hot {h} MiB per {p}"], f"hot {h} MiB per {p}") for p in l2_reuse.PER]
        assert missed == sorted(missed) and missed[-1] > 0.04, (h, missed)
    # without a stream a hot set the L2 holds (with its far copies) is read from DRAM once
    assert gpu["hot 16 MiB per 0"]["dram_read_bytes"] == pytest.approx(16 << 20, rel=0.01)


def test_gpusims_lru_l2_misses_the_hot_reads_as_the_h100_does():
    sim = {r["launch"]: r for r in json.loads((DATA / "sim.json").read_text())["rows"]}
    for label, *_ in l2_reuse.launches():
        g, s = sim[label]["gpu"], sim[label]["gpusim"]
        assert s["dram_read_bytes"] == pytest.approx(g["dram_read_bytes"], rel=0.16), label
        assert abs(l2_reuse.hot_misses(s, label) - l2_reuse.hot_misses(g, label)) < 0.04, label
    table = l2_reuse.table(str(DATA / "l2_reuse.csv"), str(DATA / "sim.json"))
    assert table.count("\n") == len(l2_reuse.launches()) + 1 and "| hot 24 MiB per 4 | 277 |" in table
