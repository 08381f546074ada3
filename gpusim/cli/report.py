"""``gpusim report``: one self-contained HTML page for a launch or a comparison of launches.

Owns: the sub-command's arguments; the page is :mod:`gpusim.viz.report`.
Must not import: simpy, cupy.

Examples::

    gpusim report transpose_conflict -o transpose.html
    gpusim report reduce_v0 reduce_v1 reduce_v2 reduce_v3 reduce_v4 reduce_v5 reduce_v6 -o reductions.html
"""

from __future__ import annotations

import argparse

from gpusim.cli._vizargs import add_launch_args, check_output, recordings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write one self-contained HTML report of one or more launches",
                       description="Simulate each TARGET in timing mode and write one HTML page (pictures embedded) "
                                   "with a comparison table, roofline, stall breakdown, occupancy charts, warp states, "
                                   "bank and coalescing diagrams and the source view of every launch.")
    add_launch_args(p, many=True)
    p.add_argument("-o", "--output", default="gpusim_report.html", help="output file (default gpusim_report.html)")
    p.add_argument("--title", help="page title")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gpusim.viz.report import write_report

    out = check_output(args.output, args.force)
    recs = recordings(args)
    write_report(recs, out, title=args.title, force=True)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB): " + ", ".join(
        f"{r.label} {r.result.cycles:,} cycles" for r in recs))
    return 0
