"""``gpusim diagram``: one teaching picture (PNG) of a timing-mode launch.

Owns: the sub-command's arguments and which :mod:`gpusim.viz` function draws each kind:
``banks`` (shared-memory bank diagram; several targets side by side), ``coalescing``
(global sectors and lines), ``warps`` (warp states of one SM over a cycle window),
``roofline`` and ``stalls`` (one or more targets). Must not import: simpy, cupy.

Examples::

    gpusim diagram banks transpose_conflict transpose_padded transpose_swizzled -o banks.png
    gpusim diagram coalescing copy_offset --line 48 -o coalescing.png
    gpusim diagram warps reduce_v1 --sm 0 --cycles 4400:4640 -o warps.png
"""

from __future__ import annotations

import argparse

from gpusim.cli._types import nonneg_int, positive_int
from gpusim.cli._vizargs import add_launch_args, check_output, recordings
from gpusim.errors import GpusimError

KINDS = ("banks", "coalescing", "warps", "roofline", "stalls")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diagram", help="draw a bank, coalescing, warp-state, roofline or stall picture (PNG)",
                       description="Simulate the TARGET launch(es) in timing mode and draw one picture.")
    p.add_argument("kind", choices=KINDS, help="which picture")
    add_launch_args(p, many=True)
    p.add_argument("-o", "--output", help="PNG file (default: KIND.png)")
    p.add_argument("--line", type=positive_int, action="append", metavar="L",
                   help="PTX line of the memory instruction (banks/coalescing; default: the costliest; "
                        "repeat once per target for side-by-side banks)")
    p.add_argument("--cta", type=nonneg_int, default=None, help="linear CTA id (default: the first that ran the line)")
    p.add_argument("--warp", type=nonneg_int, default=None, help="warp in the CTA (default: the first that ran the line)")
    p.add_argument("--instance", type=nonneg_int, default=0, help="which execution of the line by that warp (default 0)")
    p.add_argument("--sm", type=nonneg_int, default=0, help="SM of the warp-state picture (default 0)")
    p.add_argument("--cycles", metavar="FIRST:END", help="cycle window of the warp-state picture (END exclusive)")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    p.set_defaults(func=run)


def _window(text: str | None) -> tuple[int | None, int | None]:
    if not text:
        return None, None
    try:
        a, b = (int(x) for x in text.split(":"))
    except ValueError:
        raise GpusimError(f"--cycles {text!r}: expected FIRST:END, e.g. 4400:4700") from None
    return a, b


def run(args: argparse.Namespace) -> int:
    from gpusim.viz import charts
    from gpusim.viz.banks import bank_figure
    from gpusim.viz.coalescing import coalescing_figure
    from gpusim.viz.select import select_access
    from gpusim.viz.style import save_png
    from gpusim.viz.warpstate import warp_state_figure

    out = check_output(args.output or f"{args.kind}.png", args.force)
    start, end = _window(args.cycles)
    if args.cycles and end <= start:
        raise GpusimError(f"empty cycle window {args.cycles}; give FIRST:END with END > FIRST")
    if args.line and len(args.line) not in (1, len(args.target)):
        raise GpusimError(f"give one --line, or one per target ({len(args.target)})")
    if args.kind in ("coalescing", "warps") and len(args.target) > 1:
        raise GpusimError(f"'diagram {args.kind}' draws one launch; got {len(args.target)} targets")
    recs = recordings(args)
    lines = (args.line * len(recs) if args.line and len(args.line) == 1 else args.line) or [None] * len(recs)
    cta, warp = (args.cta, args.warp) if args.cta is not None or args.warp is not None else (None, None)
    if cta is not None or warp is not None:
        cta, warp = cta or 0, warp or 0
    if args.kind == "banks":
        sels = [select_access(r, "shared", ln, cta, warp, args.instance) for r, ln in zip(recs, lines)]
        fig = bank_figure(sels)
    elif args.kind == "coalescing":
        fig = coalescing_figure(select_access(recs[0], "global", lines[0], cta, warp, args.instance))
    elif args.kind == "warps":
        fig = warp_state_figure(recs[0], args.sm, start, end)
    elif args.kind == "roofline":
        fig = charts.roofline_figure(recs)
    else:
        fig = charts.stall_figure(recs)
    save_png(fig, out)
    print(f"wrote {out}")
    return 0
