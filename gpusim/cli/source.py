"""``gpusim source``: the PTX listing annotated per instruction (terminal table or HTML).

Owns: the sub-command's arguments; the view is :mod:`gpusim.viz.source`.
Must not import: simpy, cupy.

Examples::

    gpusim source transpose_conflict
    gpusim source reduce_v1 --html reduce_v1_source.html
"""

from __future__ import annotations

import argparse

from gpusim.cli._vizargs import add_launch_args, check_output, recordings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("source", help="per-PTX-line executions, thread efficiency, stalls, wavefronts, sectors",
                       description="Simulate one launch in timing mode and print its PTX listing annotated per "
                                   "instruction, like Nsight Compute's source page.")
    add_launch_args(p)
    p.add_argument("--html", metavar="FILE", help="write the view as an HTML page instead of printing it")
    p.add_argument("--all-lines", action="store_true", help="also list instructions that never executed")
    p.add_argument("--force", action="store_true", help="overwrite an existing --html file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gpusim.viz.source import source_html, source_text

    out = check_output(args.html, args.force) if args.html else None
    rec = recordings(args)[0]
    if out is not None:
        out.write_text(source_html(rec), encoding="utf-8")
        print(f"wrote {out}")
    else:
        print(source_text(rec, only_executed=not args.all_lines))
    return 0
