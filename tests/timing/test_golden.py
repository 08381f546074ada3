"""The detailed engine gives the committed cycles and metrics on every golden run
(``golden.py``): engine speed-ups must not move a cycle. The runs use SASS-aware costs
(:mod:`gpusim.sass`), so they need ptxas and nvdisasm."""

from __future__ import annotations

import json
import math

import pytest

from tests.timing.golden import GOLDEN, record, runs, simulate

EXPECTED = json.loads(GOLDEN.read_text())


@pytest.mark.sass
@pytest.mark.parametrize("key,case,n,overrides", runs(), ids=[r[0] for r in runs()])
def test_detailed_engine_gives_the_committed_cycles(key, case, n, overrides):
    got = record(simulate(case, n, overrides, sampling=False))
    want = EXPECTED[key]
    assert [g["cycles"] for g in got] == [w["cycles"] for w in want]
    for g, w in zip(got, want):
        assert set(g["metrics"]) >= set(w["metrics"])
        for name, value in w["metrics"].items():
            assert math.isclose(g["metrics"][name], value, rel_tol=1e-12, abs_tol=1e-9), (key, name)
