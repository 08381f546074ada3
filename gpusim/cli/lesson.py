"""``gpusim lesson NAME``: one lesson of the course notes, run as a demo.

Owns: the sub-command's arguments and output only (the lessons are :mod:`gpusim.lessons`).
Prints the lesson's table (variant, simulated time, H100 time, the explaining counter on both
sides, top stall reason, simulated/measured ratio) and writes its HTML page.
Must not import: simpy, cupy.

Examples::

    gpusim lesson --list
    gpusim lesson banks                     # full size, writes lesson_banks.html
    gpusim lesson reduction --size quick -o red.html --force
"""

from __future__ import annotations

import argparse
import sys

from gpusim.errors import GpusimError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lesson", help="run one lesson of the course notes: table beside the H100, HTML page",
                       description="Run a lesson's variants in timing mode at the size the H100 was measured at, "
                                   "print them beside the H100's committed measurements and write an HTML page.")
    p.add_argument("name", nargs="?", help="the lesson (see --list)")
    p.add_argument("--list", action="store_true", help="list the lessons and exit")
    p.add_argument("--size", default="full", help="full (the H100's GPU-filling sizes, default), quick "
                                                  "(smaller grids) or test (the cases' tiny test sizes, seconds)")
    p.add_argument("-o", "--output", help="HTML page (default: lesson_NAME.html)")
    p.add_argument("--no-html", action="store_true", help="print the table only")
    p.add_argument("--gpu", default="h100", help="GPU configuration (default h100; the H100 columns stay the H100's)")
    p.add_argument("--all-variants", action="store_true",
                   help="also run the variants too slow for the 2-minute budget at full size (reduction: v6)")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    p.set_defaults(func=run)


def _list() -> str:
    from gpusim.lessons import LESSONS
    from gpusim.table import format_table

    rows = [[les.name, les.title, f"{len(les.variants)}", les.seed] for les in LESSONS.values()]
    return format_table(["lesson", "idea", "variants", "course notes section"], rows)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gpusim import lessons

    if args.list:
        print(_list())
        return 0
    if not args.name:
        raise GpusimError("NAME is required: give a lesson name, or --list to see them")
    lessons.get(args.name)                          # unknown name: a clear error before any work
    out = Path(args.output or f"lesson_{args.name}.html")
    if not args.no_html and out.exists() and not args.force:
        raise GpusimError(f"{out} exists; pass --force to overwrite it")
    print(f"gpusim lesson {args.name} ({args.size} size):", file=sys.stderr)
    res = lessons.run(args.name, args.size, config=args.gpu, progress=lambda s: print(s, file=sys.stderr),
                      all_variants=args.all_variants)
    print(res.text())
    if not args.no_html:
        res.write_html(out, force=True)
        print(f"wrote {out}")
    return 0
