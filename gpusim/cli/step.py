"""``gpusim step CASE --warp W``: walk one warp's PTX one issue at a time in the terminal (rich).

Owns: the sub-command's arguments and the terminal rendering (rich) of
:func:`gpusim.lessons.step.walk`: per issue, the PTX line, the active mask (32 lanes), the
registers written (first lanes' values), the lanes' addresses with their banks (shared) or
sectors (global) and the access's wavefronts or sectors, the issue cycle and the stall
reasons since the warp's previous issue. Must not import: simpy, cupy.

Examples::

    gpusim step divergent_branch --warp 0             # min-PC reconvergence on the divergent branch
    gpusim step transpose_conflict --warp 1 --only-memory
    gpusim step reduce_v0 --warp 0 --max 40 --pause   # Enter for the next issue
"""

from __future__ import annotations

import argparse

from gpusim.cli._types import nonneg_int, positive_int
from gpusim.errors import GpusimError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("step", help="walk one warp's PTX one issue at a time (mask, registers, addresses, stalls)",
                       description="Run a suite case in timing mode and walk one warp of one CTA issue by issue.")
    p.add_argument("case", help="suite case name ('gpusim run --list')")
    p.add_argument("--warp", type=nonneg_int, default=0, metavar="W", help="warp in the CTA (default 0)")
    p.add_argument("--cta", type=nonneg_int, default=0, help="linear CTA id (default 0)")
    p.add_argument("-n", type=positive_int, metavar="N", help="problem size (default: the case's small test size)")
    p.add_argument("--launch", type=nonneg_int, default=0, metavar="K", help="which launch of a multi-launch case (default 0)")
    p.add_argument("--gpu", default="h100", help="GPU configuration (default h100)")
    p.add_argument("--max", type=positive_int, default=None, metavar="K", help="show at most K issues")
    p.add_argument("--only-memory", action="store_true", help="show memory instructions only")
    p.add_argument("--pause", action="store_true", help="wait for Enter after each issue")
    p.set_defaults(func=run)


def _mask(mask) -> str:
    return "".join("[green]█[/]" if m else "[dim]·[/]" for m in mask)


def _values(lanes, vals, ty: str, k: int = 6) -> str:
    def f(v):
        if ty == "pred":
            return "T" if v else "F"
        if ty.startswith("f"):
            return f"{float(v):.6g}"
        return str(int(v))
    shown = ", ".join(f"{int(lane)}:{f(v)}" for lane, v in list(zip(lanes, vals))[:k])
    return shown + (f", ... ({len(lanes)} lanes)" if len(lanes) > k else "")


def render(walk, console, *, limit=None, only_memory=False, pause=False) -> int:
    """Print the walk's issues to a rich ``console``; returns the number shown."""
    from rich.table import Table

    console.print(f"[bold]{walk.case}[/] (n={walk.n:,}) kernel [cyan]{walk.kernel}[/], launch {walk.launch}, "
                  f"CTA {walk.cta}, warp {walk.warp}: {len(walk.issues)} issues")
    console.print("[dim]mask: one cell per lane (0..31), █ active; next PC = the lowest PC of the warp's lanes "
                  "(min-PC reconvergence)[/]")
    shown = 0
    for iss in walk.issues:
        if only_memory and not iss.space:
            continue
        if limit is not None and shown >= limit:
            break
        shown += 1
        stall = ", ".join(f"{r} {c}" for r, c in iss.stalls) or "-"
        cyc = "?" if iss.cycle is None else f"{iss.cycle:,}"
        console.print(f"\n[bold]#{iss.seq}[/] cycle {cyc}  pc {iss.pc}  line {iss.line}  [yellow]{iss.ptx}[/]")
        console.print(f"  mask  {_mask(iss.mask)}  {int(iss.mask.sum())}/32   next pc {iss.next_pc}   "
                      f"stalled before: {stall}")
        for reg, lanes, vals, ty in iss.writes:
            console.print(f"  wrote {reg} ({ty}) = {_values(lanes, vals, ty)}")
        if iss.space:
            act = iss.mask if iss.units is None else (iss.units >= 0)
            unit = "bank" if iss.space == "shared" else "sector"
            base = 0 if iss.space == "shared" else int(iss.units[act].min()) if act.any() else 0
            t = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
            t.add_column("")
            for g in range(32):
                t.add_column(str(g), justify="right")
            addr0 = int(iss.addrs[act].min()) if act.any() else 0
            t.add_row("addr+", *[(f"{int(a) - addr0}" if on else "") for a, on in zip(iss.addrs, act)])
            t.add_row(unit if iss.space == "shared" else "sector+",
                      *[(str(int(u) - base) if on else "") for u, on in zip(iss.units, act)])
            console.print(f"  {iss.op}.{iss.space} {iss.width} B/lane, base address {addr0:#x}: "
                          + (f"{iss.cost} wavefront(s)" if iss.space == "shared" else f"{iss.cost} sector(s)")
                          + ("" if not iss.served else "; served " + ", ".join(
                              f"{v} {list(iss.served.values()).count(v)}" for v in dict.fromkeys(iss.served.values()))))
            console.print(t)
        if pause:
            console.input("[dim]Enter: next issue[/]")
    return shown


def run(args: argparse.Namespace) -> int:
    try:
        from rich.console import Console
    except ImportError:
        raise GpusimError("gpusim step needs rich: pip install rich (or gpusim[notebook])") from None
    from gpusim.lessons.step import walk

    if args.max is not None and args.max < 1:
        raise GpusimError(f"--max {args.max}: must be >= 1")
    w = walk(args.case, args.warp, cta=args.cta, n=args.n, launch=args.launch, gpu=args.gpu)
    import sys

    # the lane tables are 32 columns wide: a pipe or a file gets 200 columns instead of rich's 80
    console = Console() if sys.stdout.isatty() else Console(width=200, soft_wrap=True)
    render(w, console, limit=args.max, only_memory=args.only_memory, pause=args.pause)
    return 0
