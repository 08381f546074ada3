"""Every suite case launches, uploads, expects and produces what the committed snapshot says
(``snapshot.py``: written from the suite before its split into family modules)."""

from __future__ import annotations

import json

import pytest

from tests.suite.snapshot import SNAPSHOT, all_cases, entry

EXPECTED = json.loads(SNAPSHOT.read_text())


def test_order_groups_and_sizes_unchanged():
    from gpusim import suite
    from gpusim.suite.seeds import SEED_CASES

    assert list(suite.CASES) == EXPECTED["order"]
    assert list(SEED_CASES) == EXPECTED["seed_order"]
    assert sorted(all_cases()) == sorted(EXPECTED["cases"])
    assert suite.GROUPS == EXPECTED["groups"]
    assert {k: list(v) for k, v in suite.TIMING_SIZES.items()} == EXPECTED["timing_sizes"]
    assert suite.SCALE_SIZES == EXPECTED["scale_sizes"]
    assert {str(k): v for k, v in suite.COPY_OCCUPANCY_SMEM.items()} == EXPECTED["copy_occupancy_smem"]


@pytest.mark.parametrize("name", sorted(EXPECTED["cases"]))
def test_case_unchanged(name):
    assert name in all_cases()
    assert json.loads(json.dumps(entry(all_cases()[name]))) == EXPECTED["cases"][name]
