"""validation/probes/atomic_lanes.py --max on its committed H200 run (validation/reports/h200/atomic_lanes_max/):
an atomic maximum holds its L2 slice as long as an add, pattern by pattern."""

from __future__ import annotations

import pathlib

from validation.probes import atomic_lanes

CSV = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h200" / "atomic_lanes_max" / "atomic_lanes_max.csv"


def test_an_atomic_maximum_costs_its_slice_what_an_add_does():
    rows = atomic_lanes.gpu_rows(str(CSV))
    assert set(rows) == {lab for lab, _ in atomic_lanes.launches(maxima=True)}
    for pattern in atomic_lanes.MAX_PATTERNS:
        add, mx = rows[pattern], rows[pattern + " max"]
        assert add["l2_requests"] == mx["l2_requests"] > 0
        assert abs(mx["cycles"] / add["cycles"] - 1) < 0.03
