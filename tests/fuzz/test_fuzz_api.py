"""Fuzz: API calls (issue #29, part 7). Sequences of Device(...), array creation, views and
indexing, kernel launches and module loads with fuzzed arguments: each call returns or raises a
GpusimError (which may also be the builtin CuPy raises: ArrayIndexError is an IndexError)."""

from __future__ import annotations

from hypothesis import given

from tests.fuzz.strategies import check, fuzz_settings, strategy


@fuzz_settings(max_examples=100)
@given(strategy("api"))
def test_api_calls_return_or_raise_gpusim_errors(ops):
    check("api", ops)
