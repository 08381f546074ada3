"""``gpusim trace``: a Perfetto / chrome://tracing JSON timeline of one timing-mode launch.

Owns: the sub-command's arguments; the trace itself is :mod:`gpusim.viz.trace`.
Must not import: simpy, cupy.

Example::

    gpusim trace transpose_conflict -o transpose.json     # open it in ui.perfetto.dev
"""

from __future__ import annotations

import argparse

from gpusim.cli._vizargs import add_launch_args, check_output, recordings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("trace", help="write a Perfetto/Chrome trace JSON of a timing-mode launch",
                       description="Simulate one launch in timing mode and write its timeline as Chrome Trace Event "
                                   "JSON: one process per SM, one track per warp slot, instruction and stall slices, "
                                   "memory requests in flight, active-warp and IPC counters. Open the file in "
                                   "ui.perfetto.dev or chrome://tracing.")
    add_launch_args(p)
    p.add_argument("-o", "--output", default=None, help="output file (default: TARGET.trace.json)")
    p.add_argument("--time", choices=("cycles", "real"), default="cycles",
                   help="time axis: cycles (1 cycle drawn as 1 ns, default) or real (cycles / clock)")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gpusim.viz.trace import write_trace

    out = check_output(args.output or f"{args.target.rsplit('/', 1)[-1].removesuffix('.ptx')}.trace.json", args.force)
    rec = recordings(args)[0]
    write_trace(rec, out, time=args.time, force=True)
    res = rec.result
    print(f"wrote {out}: {len(res.events):,} issued warp instructions on {len({e.sm for e in res.events})} SM(s), "
          f"{res.cycles:,} cycles; open it in ui.perfetto.dev or chrome://tracing")
    return 0
