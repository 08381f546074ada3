"""validation/probes/atomic_lanes.py on its committed runs (validation/reports/h100/atomic_lanes/): on the
H100 a contended atomic request holds its L2 slice per sector it updates, less for a sector written whole,
float adds as integer ones; the index tables put each pattern's lanes where its label says."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from validation.probes import atomic_lanes

DATA = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100" / "atomic_lanes"
WARPS = 132 * atomic_lanes.CTAS_PER_SM * atomic_lanes.BLOCK // 32 * atomic_lanes.ITERS
OVERHEAD = 4700   # launch overhead and a latency, as atomic_contention.py's constants were taken


@pytest.mark.parametrize("label", [k for k, p in atomic_lanes.PATTERNS.items() if p != "random64"])
def test_each_table_puts_the_lanes_where_the_label_says(label):
    n_lines, s, d, m = atomic_lanes.PATTERNS[label]
    words = atomic_lanes.index_table(label)
    assert len(words) == 32 and words.max() < 128          # one 512 B granule
    assert len(np.unique(words >> 5)) == n_lines
    assert len(np.unique(words >> 3)) == n_lines * s
    assert set(np.unique(words, return_counts=True)[1]) == {m}


def test_a_request_costs_its_slice_per_sector_less_for_a_whole_one():
    runs = [atomic_lanes.gpu_rows(DATA / f"atomic_lanes_s2_run{r}.csv") for r in (1, 2)]
    assert all(list(r) == [lab for lab, _ in atomic_lanes.launches()] for r in runs)
    for label, (n_lines, s, d, m) in ((k, p) for k, p in atomic_lanes.PATTERNS.items() if p != "random64"):
        cycles = sum(r[label]["cycles"] for r in runs) / 2
        requests = n_lines * m                                        # the L1's split
        assert runs[0][label]["l2_requests"] == requests * WARPS      # ncu counts them so
        per_sector = (cycles - OVERHEAD) / (WARPS * requests * s)
        if d == 8:
            assert 1.15 < per_sector < 1.25, label
        else:
            assert 1.40 < per_sector < 1.50, label
    # float adds: the same where no word is updated twice a warp
    for label in ("random64", "L1 s4 d4 m2", "L2 s4 d4 m1", "L1 s4 d8 m1"):
        assert runs[0][f"{label} f32"]["cycles"] == pytest.approx(runs[0][label]["cycles"], rel=0.01)


def test_gpusim_times_the_patterns_within_a_few_per_cent():
    rows = json.loads((DATA / "sim.json").read_text())["rows"]
    assert len(rows) >= 19
    assert all(abs(r["error_pct"]) < 9 for r in rows), [(r["launch"], r["error_pct"]) for r in rows]
