"""Launch options shared by the visualization sub-commands (trace, report, diagram, source).

Owns: adding the "what to launch" arguments to a parser (a suite case name, or a PTX file
with ``--kernel/--grid/--block/--arg``) and turning them into recorded launches
(:mod:`gpusim.viz.capture`), plus the output-path rule: an existing file is never
overwritten without ``--force``.

Must not import: simpy, cupy.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from gpusim.cli._types import integer, nonneg_int, positive_int
from gpusim.errors import GpusimError

__all__ = ["add_launch_args", "recordings", "check_output"]


def add_launch_args(p: argparse.ArgumentParser, many: bool = False) -> None:
    """Add TARGET (suite case or .ptx file; several with ``many``) and the launch options."""
    p.add_argument("target", nargs="+" if many else None,
                   help="suite case name ('gpusim run --list') or a .ptx file with --kernel/--grid/--block/--arg"
                   + (" (several case names: compared side by side)" if many else ""))
    p.add_argument("-n", type=positive_int, metavar="N", help="problem size of a suite case (default: its small test size)")
    p.add_argument("--seed", type=nonneg_int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--gpu", default="h100", help="GPU configuration name or TOML path (default h100)")
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help="override a config field")
    p.add_argument("--regs", type=integer(1, 255, "an integer in 1..255"), metavar="N",
                   help="registers per thread for the occupancy (default: ptxas -v, else 32)")
    p.add_argument("--launch", type=nonneg_int, default=0, metavar="K",
                   help="which launch of a multi-launch case (0 = first; e.g. reduce_v6 has 2)")
    p.add_argument("--kernel", help="kernel (.entry) name, with a .ptx file")
    p.add_argument("--grid", help="grid with a .ptx file, e.g. 4 or 2,2")
    p.add_argument("--block", help="block with a .ptx file, e.g. 256 or 32,32")
    p.add_argument("--shared-mem", type=nonneg_int, default=0, help="dynamic shared memory per block (bytes), .ptx file")
    p.add_argument("--arg", action="append", default=[], metavar="SPEC",
                   help="kernel argument with a .ptx file, in order: u32=1024, f32[1024]:random, ...")


def _shape(text: str | None, what: str) -> tuple[int, ...]:
    if not text:
        raise GpusimError(f"--{what} is required with a .ptx file (e.g. --{what} 256)")
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise GpusimError(f"--{what} {text!r}: expected integers separated by commas") from None


def _one(args: argparse.Namespace, target: str):
    import gpusim
    from gpusim.config import parse_override
    from gpusim.viz.capture import record_case, record_launch

    overrides = dict(parse_override(s) for s in args.set)
    if target.endswith(".ptx"):
        from gpusim.experiment import build_args, parse_arg

        if not Path(target).is_file():
            raise GpusimError(f"{target}: no such PTX file")
        if not args.kernel:
            raise GpusimError(f"{target}: say which kernel to launch with --kernel NAME")
        specs = [parse_arg(a, f"--arg {i}") for i, a in enumerate(args.arg)]
        with gpusim.Device(args.gpu, "timing", overrides=overrides, record_events=True, regs_per_thread=args.regs):
            k = gpusim.RawModule(path=target).get_function(args.kernel)
            launch_args, _ = build_args(specs, np.random.default_rng(args.seed))
            return [record_launch(k, _shape(args.grid, "grid"), _shape(args.block, "block"), tuple(launch_args),
                                  args.shared_mem)]
    recs = record_case(target, args.n, gpu=args.gpu, seed=args.seed, overrides=overrides,
                       regs_per_thread=args.regs)
    if not 0 <= args.launch < len(recs):
        raise GpusimError(f"{target} makes {len(recs)} launch(es); choose --launch 0..{len(recs) - 1}")
    return [recs[args.launch]]


def recordings(args: argparse.Namespace):
    """The recorded launches named by ``args.target`` (one per target)."""
    targets = args.target if isinstance(args.target, list) else [args.target]
    out = []
    for t in targets:
        out.extend(_one(args, t))
    return out


def check_output(path: str, force: bool) -> Path:
    """``path`` as a Path; raises GpusimError if it exists and ``force`` is false."""
    p = Path(path)
    if p.exists() and not force:
        raise GpusimError(f"{p} exists; pass --force to overwrite it")
    return p
