"""Fuzz: experiment and sweep TOML files (issue #29, part 7). The tiny valid files of
``tests/fuzz/strategies.py`` with keys deleted, added, retyped, paths that do not exist and text
mutations: loading raises a GpusimError naming the file, or the experiment loads (and runs)."""

from __future__ import annotations

from hypothesis import given

from tests.fuzz.strategies import check, fuzz_settings, strategy


@fuzz_settings(max_examples=100)
@given(strategy("experiment"))
def test_experiment_file_loads_or_names_the_problem(inp):
    check("experiment", inp)
