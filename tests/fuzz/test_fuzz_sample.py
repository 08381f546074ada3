"""Fuzz: the first inputs of the long run (``benchmarks/fuzz.py --seed 0``), of every kind, in the
suite: the same generators as the hypothesis tests but drawn by a seeded ``random.Random``, whose
choices spread over the whole vocabulary (hypothesis favours the first, simplest ones)."""

from __future__ import annotations

import pytest

from tests.fuzz.strategies import KINDS, check, generate

#: Inputs per kind (command lines cost about 0.1-1 s each, the others 5-80 ms).
N = {"ptx": 40, "cli": 25, "experiment": 60, "api": 60}


@pytest.mark.parametrize("kind", KINDS)
def test_benchmark_inputs(kind):
    outcomes = [check(kind, generate(kind, f"0:{i}")) for i in range(N[kind])]
    assert set(outcomes) <= {"accepted", "rejected"}
    assert "rejected" in outcomes  # the inputs are fuzzed: some must be refused
