"""validation/probes/bgemm_parts.py and mio_pressure.py without a GPU: the phases read from clock
stamps, the pairing of ncu's rows with the launches, and the chase's walk over distinct lines."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from validation import probekit

REPORTS = pathlib.Path(__file__).resolve().parents[2] / "validation/reports/h100"
bgemm = probekit.load_probe("bgemm_parts")
mio = probekit.load_probe("mio_pressure")


def test_stamp_phases_are_medians_over_warps_and_resident_warps_per_sm():
    # two SMs; rows: smid, CTA, warp, entry, after the barrier, after the dot product, end
    rows = np.array([[0, 0, 0, 100, 300, 400, 410],
                     [0, 0, 1, 100, 500, 600, 620],
                     [1, 1, 0, 0, 100, 150, 200],
                     [0, 0, 0, 0, 0, 0, 0]])            # a warp of a CTA never launched: ignored
    ph = bgemm.stamp_phases(rows)
    assert ph["load+barrier"] == 200 and ph["dot"] == 100 and ph["store"] == 20 and ph["warp life"] == 310
    # SM 0: 310 + 520 warp-cycles over 520 cycles; SM 1: one warp all its span
    assert ph["resident warps"] == pytest.approx((830 / 520 + 1.0) / 2)


def test_ncu_rows_pair_with_the_launches_in_order():
    got = bgemm.gpu_rows(REPORTS / "bgemm_parts/bgemm_parts.csv")
    assert list(got) == [lab for lab, *_ in bgemm.LAUNCHES]
    # the shared-load burst is what separates the corpus kernel from the one without it
    assert got["full"]["sm__cycles_elapsed.avg"] > 1.4 * got["noburst"]["sm__cycles_elapsed.avg"]
    assert got["full"]["smsp__inst_executed.sum"] == 4_849_664      # the corpus's bgemm16 count


def test_the_chase_steps_through_distinct_lines():
    # each CTA walks its STEPS steps twice (untimed, then timed): every step a new 128-byte line
    nxt = mio._chain()
    for cta in range(mio.CTAS):
        j, words = cta * 4096, []
        for _ in range(mio.STEPS):
            j = int(nxt[j])
            words.append(j)
        assert all(w % 32 == 0 for w in words) and len(set(words)) == mio.STEPS
