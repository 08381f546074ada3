"""validation/probes/hash_issue.py on its committed run (validation/reports/h100/hash_issue/): the H100
charges ``slice_turns.py``'s hashed loads per load instruction, whatever its requests or L1 allocation."""

from __future__ import annotations

import pathlib

import pytest

from validation.probes import hash_issue

DATA = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100" / "hash_issue"


def test_a_hashed_load_costs_the_same_for_one_request_or_two_and_with_cg():
    gpu = hash_issue.gpu_rows(str(DATA / "hash_issue.csv"))
    assert list(gpu) == [p[0] for p in hash_issue.PATTERNS]
    hashed, load = gpu["hash only"], gpu["hash + load"]
    assert load["cycles"] > 1.4 * hashed["cycles"]  # the loads cost a lot on top of the hash
    two = gpu["hash + load of 2 lines"]
    assert two["read_requests"] == pytest.approx(2 * load["read_requests"], rel=0.02)
    assert two["cycles"] == pytest.approx(load["cycles"], rel=0.03)  # twice the requests, about the same time
    assert gpu["hash + load.cg"]["cycles"] == pytest.approx(load["cycles"], rel=0.01)
