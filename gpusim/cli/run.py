"""``gpusim run``: run suite kernels (default: the seed reductions) or any PTX kernel.

With no arguments it runs the course notes' reductions (v0-v7) on 2**20
random floats (2**24 with ``--mode timing``, where the reductions differ as
on hardware) on the default H100 configuration and prints, per kernel, the
launch shape, the check against the numpy oracle and the instructions
executed (and in timing mode the cycles, counters and how they were timed).
``gpusim run FILE.ptx|FILE.cu --kernel NAME --grid G --block B --arg ...`` or
``gpusim run EXPERIMENT.toml`` runs any kernel (see gpusim.experiment).
"""

from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path

import numpy as np

import gpusim
from gpusim.cli._types import budget, nonneg_int, positive_int
from gpusim.config import parse_override
from gpusim.errors import GpusimError
from gpusim.table import format_table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run", help="run suite kernels (default: the seed reductions) or a PTX kernel",
        description="Run kernels in the simulator. Without a FILE: suite cases (default: the reduction "
                    "sequence on 2**20 random floats; 2**24 in timing mode). With FILE.ptx (or CUDA C FILE.cu) or "
                    "EXPERIMENT.toml: one kernel.")
    p.add_argument("file", nargs="?", help="a .ptx or CUDA C .cu file (with --kernel ...) or an experiment .toml file")
    p.add_argument("--case", action="append", default=[], metavar="NAME", help="suite case to run (repeatable)")
    p.add_argument("--group", action="append", default=[], metavar="GROUP", help="run every case of a suite group")
    p.add_argument("--all", action="store_true", help="run the whole suite")
    p.add_argument("--list", action="store_true", help="list the suite cases and exit")
    p.add_argument("-n", type=positive_int, metavar="N", help="problem size for suite cases (default: each case's)")
    p.add_argument("--seed", type=nonneg_int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--gpu", default=None, help="GPU configuration name or TOML path (default h100)")
    p.add_argument("--mode", choices=gpusim.MODES, default="functional",
                   help="functional (results, instruction counts) or timing (also cycles, occupancy, caches, stalls)")
    p.add_argument("--no-sampling", dest="sampling", action="store_false",
                   help="timing mode: simulate every instruction of every CTA on every SM (default: large grids "
                        "are timed from a slice of SMs and waves, small ones' long loops from their first "
                        "iterations; results and instruction counts are exact either way)")
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help="override a config field")
    p.add_argument("--jobs", type=positive_int, default=None, metavar="N",
                   help="worker processes that run a launch's CTAs (default: $GPUSIM_JOBS, else 1); results, "
                        "counters and cycles are identical whatever N; kernels whose CTAs may communicate "
                        "(global atomics, fences) and small launches run in one process (see docs/parallel.md)")
    p.add_argument("--kernel", help="kernel (.entry) name, with a .ptx or .cu FILE (an extern \"C\" name, a "
                   "mangled name or a template name expression such as add<float>)")
    p.add_argument("--grid", help="grid, e.g. 4096 or 64,64")
    p.add_argument("--block", help="block, e.g. 256 or 16,16")
    p.add_argument("--shared-mem", type=nonneg_int, default=0, help="dynamic shared memory per block, bytes")
    p.add_argument("--arg", action="append", default=[], metavar="SPEC",
                   help="kernel argument, in order: u32=1024, f32[1024]:random, f32[64,64]:range, ...")
    p.add_argument("--max-steps", type=budget, default=None, metavar="N",
                   help="watchdog: instruction steps per chunk of CTAs before a launch is stopped as stuck "
                        "(default 500000; 0 = no limit)")
    p.add_argument("--max-cycles", type=budget, default=None, metavar="N",
                   help="watchdog, timing mode: SM cycles before a launch is stopped as stuck (default 50000000; "
                        "0 = no limit)")
    p.add_argument("--save", metavar="FILE.npz", help="save the array arguments after the launch")
    p.add_argument("--force", action="store_true", help="allow --save to overwrite an existing file")
    p.set_defaults(func=run)


def _device(gpu: str | None, sets: list[str], extra: dict | None = None, mode: str = "functional",
            sampling: bool = True, args: argparse.Namespace | None = None) -> gpusim.Device:
    overrides = dict(extra or {})
    overrides.update(parse_override(s) for s in sets)
    return gpusim.Device(gpu or "h100", mode, overrides=overrides, sampling=sampling,
                         max_steps=getattr(args, "max_steps", None), max_cycles=getattr(args, "max_cycles", None),
                         jobs=getattr(args, "jobs", None))


def _shape(text: str | None, what: str) -> tuple[int, ...]:
    if not text:
        raise GpusimError(f"--{what} is required with a .ptx or .cu file (e.g. --{what} 256)")
    try:
        vals = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise GpusimError(f"--{what} {text!r}: expected integers separated by commas, e.g. 64,64") from None
    return vals


def run(args: argparse.Namespace) -> int:
    if args.file:
        return _run_file(args)
    return _run_suite(args)


# ---------------------------------------------------------------- suite cases
def _run_suite(args: argparse.Namespace) -> int:
    from gpusim.suite import CASES, SizeError, check, run_case
    from gpusim.suite.seeds import SEED_CASES

    known = {**CASES, **SEED_CASES}   # --case/--group also find the seeds' A100 kernels (not in --all)
    if args.list:
        rows = [(c.name, c.group, c.kernel, c.default_n, c.n_means, c.doc) for c in known.values()]
        print(format_table(["case", "group", "kernel", "default n", "n means", "teaches"], rows))
        return 0
    groups = sorted({c.group for c in known.values()})
    for g in args.group:
        if g not in groups:
            raise GpusimError(f"--group {g!r}: no such suite group (groups: {', '.join(groups)})")
    for c in args.case:
        if c not in known:
            raise GpusimError(f"--case {c!r}: no such suite case ('gpusim run --list' lists them)")
    if args.all:
        cases = list(CASES.values())
    elif args.case or args.group:
        cases = [c for c in known.values() if c.name in args.case or c.group in args.group]
    else:
        cases = [c for c in CASES.values() if c.group == "reduce" and c.name.startswith("reduce_v")]
    dev = _device(args.gpu, args.set, mode=args.mode, sampling=args.sampling, args=args)
    timing = args.mode == "timing"
    default = not (args.all or args.case or args.group)
    what = "the seed reductions" if default else f"{len(cases)} suite case(s)"
    if timing and default and args.n is None:
        # At 2**24 floats the reductions differ as on the H100 (v0 4.4x slower than v5); at the
        # functional default (2**20) launch overhead hides most of it.
        args.n = TIMING_REDUCTION_N
    print(f"gpusim {gpusim.__version__}: {what} on {dev.config.name} ({args.mode} mode)\n")
    rows, failed = [], 0
    costs: set[str] = set()
    paths: dict[str, str] = {}
    with dev:
        for case in cases:
            t0 = time.perf_counter()
            try:
                r = run_case(case, gpusim, args.n, args.seed)
            except SizeError as exc:
                raise GpusimError(f"-n {args.n}: {exc}") from None
            seconds = time.perf_counter() - t0
            ok, msg = check(r)
            failed += not ok
            warp = sum(x.metrics["smsp__inst_executed.sum"] for x in r.launches)
            thread = sum(x.metrics["smsp__thread_inst_executed.sum"] for x in r.launches)
            n = case.default_n if args.n is None else args.n
            row = [case.name, n, f"{_fmt(r.grid)} x {_fmt(r.block)}", r.shared_mem, len(r.launches),
                   "ok: " + msg if ok else msg, warp, thread]
            if timing:
                row += _timing_columns(r.launches) + [_sampling(r.launches)]
            rows.append(tuple(row + [round(seconds, 3)]))
            costs |= {x.costs for x in r.launches}
            paths[case.name] = r.launches[0].parallel
    heads = ["kernel", "n", "grid x block", "dyn smem B", "launches", "check vs numpy oracle", "warp inst", "thread inst"]
    print(format_table(heads + (_TIMING_HEADS if timing else []) + ["host s"], rows))
    source = {"ptxas": "the SASS ptxas makes of each PTX instruction", "table": "gpusim's per-opcode table (no "
              "ptxas/nvdisasm found)", "ptx": "PTX instructions"}
    print(f"\n{len(rows) - failed} of {len(rows)} kernels match their oracle. "
          f"Instructions are Nsight Compute's smsp__inst_executed.sum / smsp__thread_inst_executed.sum, counted in "
          f"{' and '.join(source.get(c, c) for c in sorted(costs))}.")
    if timing:
        print("Timing columns (summed over a case's launches; rates of the first launch): sm__cycles_elapsed.avg, "
              "sm__warps_active.avg.pct_of_peak_sustained_active, l1tex__t_sector_hit_rate.pct, "
              "lts__t_sector_op_read_hit_rate.pct, dram__bytes_read.sum + dram__bytes_write.sum, and the most "
              "frequent stall reason (smsp__pcsamp_warps_issue_stalled_*, 'selected' excluded). 'timed from': "
              "'detailed' = every CTA on every SM; 'slice k/N SMs, f % CTAs' = k SMs simulated for some waves and "
              "the rest extrapolated; 'loop, f % iterations' = every CTA on every SM, the main loop's "
              "iterations after its period per iteration was stable extrapolated (', loop f % iterations' after "
              "a slice: so were the slice CTAs' loops, at the period learnt in its first wave); +/- the "
              "estimate's spread "
              "(--no-sampling turns it off); outputs and "
              "instruction counts are exact either way.")
    if dev.jobs > 1:
        print(f"CTAs run (--jobs {dev.jobs}; first launch of each case): "
              + "; ".join(f"{name}: {path}" for name, path in paths.items()))
    return 1 if failed else 0


_TIMING_HEADS = ["cycles", "achieved occ %", "L1 hit %", "L2 hit %", "DRAM bytes", "top stall", "timed from"]
#: Problem size of ``gpusim run --mode timing`` for the default reductions (floats).
TIMING_REDUCTION_N = 1 << 24


def _sampling(launches: list) -> str:
    """How the first launch's cycles were computed, in a few words."""
    s = launches[0].sampling
    if s is None or s.method == "detailed":
        return "detailed"
    if s.method == "loop":
        return f"loop, {100 * s.fraction:.1f} % iterations, +/-{s.spread_pct:.1f} %"
    loop = ""
    if s.method.endswith("+loop"):
        total = s.iterations_simulated + s.iterations_skipped
        loop = f", loop {100 * s.iterations_simulated / total:.1f} % iterations"
    return f"slice {s.sms_simulated}/{s.sms} SMs, {100 * s.fraction:.1f} % CTAs{loop}, +/-{s.spread_pct:.1f} %"


def _timing_columns(launches: list) -> list:
    """Cycles, achieved occupancy, hit rates, DRAM bytes and the top stall reason of a case."""
    m = launches[0].metrics
    stalls = collections.Counter()
    for x in launches:
        stalls.update({k.rsplit("_stalled_", 1)[1]: v for k, v in x.metrics.items()
                       if "_issue_stalled_" in k and not k.endswith("_selected")})
    return [sum(x.cycles for x in launches), round(m["sm__warps_active.avg.pct_of_peak_sustained_active"], 1),
            round(m["l1tex__t_sector_hit_rate.pct"], 1), round(m["lts__t_sector_op_read_hit_rate.pct"], 1),
            sum(x.metrics["dram__bytes_read.sum"] + x.metrics["dram__bytes_write.sum"] for x in launches),
            stalls.most_common(1)[0][0] if stalls else ""]


def _fmt(dims: tuple) -> str:
    dims = tuple(dims)
    while len(dims) > 1 and dims[-1] == 1:
        dims = dims[:-1]
    return ",".join(map(str, dims))


# ---------------------------------------------------------------- any kernel
def _run_file(args: argparse.Namespace) -> int:
    from gpusim.experiment import Experiment, build_args, launcher_of, load_experiment, parse_arg, summarize

    path = Path(args.file)
    if path.suffix == ".toml":
        exp = load_experiment(path)
        kernel, grid, block, smem, specs = exp.kernel, exp.grid, exp.block, exp.shared_mem, exp.args
        dev = _device(args.gpu or exp.gpu, args.set, exp.overrides, args.mode, args.sampling, args)
        seed = exp.seed
    elif path.suffix in (".ptx", ".cu"):
        if not args.kernel:
            raise GpusimError(f"{path}: say which kernel to run with --kernel NAME")
        kernel, smem, seed = args.kernel, args.shared_mem, args.seed
        grid, block = _shape(args.grid, "grid"), _shape(args.block, "block")
        specs = [parse_arg(a, f"--arg {i}") for i, a in enumerate(args.arg)]
        exp = Experiment(path, kernel, grid, block, specs, smem)
        dev = _device(args.gpu, args.set, mode=args.mode, sampling=args.sampling, args=args)
    else:
        raise GpusimError(f"{path}: expected a .ptx or .cu kernel file or an experiment .toml file")
    if args.save and Path(args.save).exists() and not args.force:
        raise GpusimError(f"--save {args.save}: the file exists; pass --force to overwrite it")
    with dev:
        launch = launcher_of(exp)
        launch_args, arrays = build_args(specs, np.random.default_rng(seed))
        res = launch(grid, block, launch_args, smem)
        print(f"{kernel} on {dev.config.name}: grid {_fmt(res.grid)} x block {_fmt(res.block)}, "
              f"{res.shared_mem} B dynamic shared memory, {res.host_seconds:.3f} s simulated on the host")
        if res.sampling is not None:
            print(f"timing: {res.sampling}")
        print(f"CTAs run: {res.parallel}")
        print()
        print(format_table(["metric", "value"], sorted(res.metrics.items())))
        if arrays:
            print()
            print(format_table(["arg", "shape", "dtype", "min", "max", "mean", "first values"], summarize(arrays)))
        if args.save:
            np.savez(args.save, **{f"arg{i}": a.get() for i, a in arrays.items()})
            print(f"\nsaved the array arguments to {args.save}")
    return 0
