"""``gpusim calibrate``: micro-benchmarks on the local GPU -> a config override file for it.

Owns: the sub-command's arguments and messages. The benchmarks, the field mapping and
the file format are :mod:`validation.calibrate`, imported inside :func:`run` only, so
``gpusim --help`` and every other command work without CuPy.

Examples::

    gpusim calibrate --out my_gpu.toml                 # base config h100
    gpusim calibrate --base a100 --out a100_local.toml --json a100_local.json --force

Without CuPy or a GPU it prints why and exits with status 2. An existing ``--out`` (or
``--json``) file is not replaced unless ``--force`` is given.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from gpusim.cli._types import positive_int
from gpusim.errors import GpusimError

__all__ = ["register", "run"]


def register(sub) -> None:
    """Add the ``calibrate`` parser to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser("calibrate", help="fit a config override file to this machine's GPU (needs CuPy)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="override TOML to write (refused if it exists, unless --force)")
    p.add_argument("--base", default="h100", help="shipped configuration the overrides modify (default h100)")
    p.add_argument("--json", help="also write every raw measurement and the provenance as JSON here")
    p.add_argument("--repeat", type=positive_int, default=5, help="runs per latency benchmark; the median is kept (default 5)")
    p.add_argument("--force", action="store_true", help="replace existing output files")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Measure, then write the override file (and the JSON); 0 on success."""
    from gpusim import config as gpu_config
    from validation import calibrate

    if args.repeat < 1:
        raise GpusimError(f"--repeat {args.repeat}: must be at least 1")
    gpu_config.load(args.base)  # a bad --base fails before any GPU work
    for opt, path in (("--out", args.out), ("--json", args.json)):
        if path and pathlib.Path(path).exists() and not args.force:
            raise GpusimError(f"{opt} {path}: the file exists; pass --force to replace it")
    measured = calibrate.measure(repeat=args.repeat, progress=lambda m: print(m, file=sys.stderr, flush=True))
    out = calibrate.write_overrides(args.out, measured, base=args.base, force=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(measured, indent=1) + "\n")
    print(f"wrote {out}: {', '.join(f'{k}={v}' for k, v in calibrate.overrides_from(measured, args.base).items())}")
    return 0
