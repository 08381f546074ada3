"""The ``gpusim`` command line (argparse).

Owns: argument parsing and dispatch only. Each sub-command lives in its own
module of this package and exposes ``register(subparsers)``, which adds an
``argparse`` parser whose defaults carry ``func=callable(args) -> int``.
Errors that users can cause (:data:`gpusim.errors.USER_ERRORS`) are
printed as one clear message and exit with status 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

__all__ = ["main"]

#: Sub-command modules, in the order ``gpusim --help`` lists them.
_COMMANDS = ("run", "isa", "occupancy", "validate", "sweep", "calibrate", "trace", "report", "diagram", "source",
             "lesson", "step")


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with every sub-command registered."""
    parser = argparse.ArgumentParser(
        prog="gpusim",
        description="A pure-Python GPU simulator for a strict subset of PTX.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gpusim`` script; returns the process exit status."""
    from gpusim.cli.sweep import shorthand
    from gpusim.errors import USER_ERRORS

    parser = build_parser()
    args = parser.parse_args(shorthand(list(sys.argv[1:] if argv is None else argv)))
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # the reader went away (gpusim isa | head): not an error of ours
        sys.stderr.close()
        return 0
    except USER_ERRORS as exc:
        print(f"gpusim {args.command}: error: {exc}", file=sys.stderr)
        return 2
