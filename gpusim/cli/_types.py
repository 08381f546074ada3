"""argparse ``type=`` functions for the command line's numbers.

Owns: turning an option's text into an integer within its range, or an
``argparse.ArgumentTypeError`` whose message names the rule broken (argparse prints it as
``gpusim CMD: error: argument -n: must be a positive integer, got -5`` and exits with
status 2). Imports only the standard library.
"""

from __future__ import annotations

import argparse

__all__ = ["integer", "positive_int", "nonneg_int", "budget"]


def integer(lo: int | None = None, hi: int | None = None, what: str = "an integer"):
    """A ``type=`` function accepting integers in ``lo..hi`` (either end open when ``None``);
    ``0x``/``0o``/``0b`` prefixes and ``_`` separators are accepted, as in Python."""

    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
        return value

    parse.__name__ = what  # argparse names the type in its own messages
    return parse


#: An integer >= 1 (sizes, counts, repeats).
positive_int = integer(1, None, "a positive integer")
#: An integer >= 0 (seeds, indices, bytes).
nonneg_int = integer(0, None, "an integer >= 0")
#: A watchdog budget: an integer >= 0, 0 meaning no limit.
budget = integer(0, None, "an integer >= 0 (0 = no limit)")
