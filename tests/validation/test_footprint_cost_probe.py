"""validation/probes/footprint_cost.py on its committed H200 run (validation/reports/h200/footprint_cost/): a
random 64-byte DRAM read costs more the larger the footprint, most of the rise by 512 MiB."""

from __future__ import annotations

import pathlib

from validation.probekit import counter_rows
from validation.probes import footprint_cost

CSV = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h200" / "footprint_cost" / "footprint_cost.csv"


def test_a_random_dram_read_costs_more_the_larger_the_footprint():
    rows = counter_rows(CSV, ("rd_mod",), footprint_cost.labels(),
                        {k: (m,) for k, m in footprint_cost.COUNTERS.items()})
    cost = [r["cycles"] / r["dram_read_bytes"] for r in rows.values()]    # cycles a DRAM byte
    assert all(b >= a * 0.995 for a, b in zip(cost, cost[1:]))              # never cheaper with a larger footprint
    mib = dict(zip(footprint_cost.FOOTPRINTS_MIB, cost))
    assert 1.12 < mib[8192] / mib[64] < 1.20
    assert (mib[512] - mib[64]) / (mib[8192] - mib[64]) > 0.7               # most of it by 512 MiB
    assert "| rd_mod 8192 MiB |" in footprint_cost.table(str(CSV))
