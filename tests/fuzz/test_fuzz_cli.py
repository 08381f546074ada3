"""Fuzz: command lines (issue #29, part 7). argv built from the real sub-commands and options with
fuzzed values (negative, huge, non-numeric, empty, unicode, missing files, folders) run through
``gpusim.cli.main`` in a temporary folder: exit status 0, 1, 2 or 130, never a traceback or an
"internal error" line."""

from __future__ import annotations

from hypothesis import given

from tests.fuzz.strategies import check, fuzz_settings, strategy


@fuzz_settings(max_examples=40)
@given(strategy("cli"))
def test_command_line_exits_cleanly(argv):
    check("cli", argv)
