"""The ``gpusim`` command line (argparse).

Owns: argument parsing and dispatch only. Each sub-command lives in its own
module of this package and exposes ``register(subparsers)``, which adds an
``argparse`` parser whose defaults carry ``func=callable(args) -> int``.
Errors that users can cause (:class:`gpusim.GpusimError`) are printed as one
clear message and exit with status 2, never as a traceback (:func:`main` says how
the other exceptions end).
"""

from __future__ import annotations

import argparse
import importlib
import sys

__all__ = ["main"]

#: Sub-command modules, in the order ``gpusim --help`` lists them.
_COMMANDS = ("run", "isa", "occupancy", "validate", "sweep", "calibrate", "trace", "report", "diagram", "source",
             "lesson", "step", "ddp")


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


#: Exit status of an internal error (a bug of gpusim's): EX_SOFTWARE of sysexits.h.
INTERNAL_ERROR = 70


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gpusim`` script; returns the process exit status.

    One error path: a :class:`gpusim.GpusimError` (the user's mistake) prints one line
    ``gpusim CMD: error: ...`` and returns 2 (as argparse's own usage errors do); an
    ``OSError`` (a file that cannot be read or written) one line, status 1; Ctrl-C one line,
    status 130; anything else is a bug of gpusim's: its traceback, a request to report it,
    status :data:`INTERNAL_ERROR` (70).
    """
    from gpusim.cli.sweep import shorthand
    from gpusim.errors import GpusimError

    prog = "gpusim"
    try:
        parser = build_parser()
        args = parser.parse_args(shorthand(list(sys.argv[1:] if argv is None else argv)))
        if not getattr(args, "func", None):
            parser.print_help()
            return 0
        prog = f"gpusim {args.command}"
        return int(args.func(args) or 0)
    except BrokenPipeError:  # the reader went away (gpusim isa | head): not an error of ours
        sys.stderr.close()
        return 0
    except GpusimError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{prog}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception:  # a bug of gpusim's: say so, with what is needed to fix it
        import traceback

        traceback.print_exc()
        print(f"{prog}: internal error (a bug in gpusim, not in your input): please report it with the command "
              f"you ran and the traceback above", file=sys.stderr)
        return INTERNAL_ERROR
