"""``gpusim occupancy``: the occupancy calculator on the command line.

Owns: the ``occupancy`` sub-command's arguments, reading a kernel's resources (``ptxas -v``
through :mod:`gpusim.ptxas`, or the user's numbers), the Nsight-Compute-style limiter table,
sweeps written as CSV, and the three charts (:mod:`gpusim.occupancy_charts`).

Must not import: simpy, cupy. The calculation itself is :mod:`gpusim.occupancy`.

Examples::

    gpusim occupancy --gpu h100 --block-size 256 --regs 32
    gpusim occupancy --gpu a100 --block-size 96 --regs 40 --dynamic-smem 20000 --plot charts/
    gpusim occupancy kernel.ptx --kernel reduce_v3 --block-size 256
    gpusim occupancy --block-size 64:1024:32 --regs 16:255:8 --csv sweep.csv
    gpusim occupancy --block-size 256 --regs 32 --set sm.max_warps=48 --set sm.max_blocks=16

Every numeric option takes one integer, an inclusive range ``start:stop[:step]`` or a comma
list of either (``64,128,256``); more than one value makes a sweep.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpusim import config as gpu_config
from gpusim.errors import GpusimError
from gpusim.occupancy import NCU_LIMIT_METRICS, OccupancyResult, curves, max_active_blocks, sweep

__all__ = ["register", "parse_spec", "run"]

#: Column order of the sweep CSV.
CSV_COLUMNS = [
    "gpu", "block_size", "regs_per_thread", "static_smem", "dynamic_smem", "max_dynamic_smem", "carveout",
    "barriers", "warps_per_block", "blocks_per_sm", "active_warps", "max_warps", "occupancy_pct",
    "limit_warps", "limit_registers", "limit_shared_mem", "limit_blocks", "limit_barriers", "limiters",
    "registers_per_warp_allocated", "shared_mem_per_block_allocated", "shared_mem_config_bytes", "reason",
]

_NUMERIC = ("block_size", "regs", "smem", "dynamic_smem", "max_dynamic_smem", "carveout", "barriers")


def parse_spec(text: str, option: str) -> list[int]:
    """``"256"`` -> [256]; ``"64:1024:32"`` -> 64, 96, ..., 1024 (stop inclusive); ``"a,b"`` lists."""
    values: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        pieces = part.split(":")
        try:
            nums = [int(p, 0) for p in pieces]
        except ValueError:
            raise GpusimError(
                f"{option} {text!r}: expected an integer, START:STOP[:STEP] or a comma list of them"
            ) from None
        if len(nums) == 1:
            values.append(nums[0])
            continue
        if len(nums) not in (2, 3):
            raise GpusimError(f"{option} {part!r}: a range is START:STOP or START:STOP:STEP")
        start, stop = nums[0], nums[1]
        step = nums[2] if len(nums) == 3 else 1
        if step <= 0:
            raise GpusimError(f"{option} {part!r}: STEP must be positive")
        if stop < start:
            raise GpusimError(f"{option} {part!r}: STOP is below START")
        values.extend(range(start, stop + 1, step))
    return values


@dataclass
class _Kernel:
    regs: int | None
    static_smem: int | None
    barriers: int | None
    note: str


def _kernel_resources(args: argparse.Namespace, cfg: gpu_config.GPUConfig) -> _Kernel:
    from gpusim import ptxas

    path = Path(args.ptx)
    try:
        text = path.read_text()
    except OSError as exc:
        raise GpusimError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise GpusimError(f"{path}: not a PTX text file ({exc})") from None
    names = ptxas.kernel_names(text)
    if not names:
        raise GpusimError(f"{path}: no kernel (.entry) found")
    if args.kernel is None:
        if len(names) > 1:
            raise GpusimError(f"{path} has {len(names)} kernels; choose one with --kernel ({', '.join(names)})")
        name = names[0]
    elif args.kernel not in names:
        raise GpusimError(f"{path}: no kernel {args.kernel!r} (kernels: {', '.join(names)})")
    else:
        name = args.kernel
    if args.regs is not None and args.smem is not None:
        return _Kernel(None, None, None, f"{name} in {path}: resources from --regs and --smem")
    exe = ptxas.find_ptxas()
    failure = ""
    if exe:
        try:
            usage = ptxas.resource_usage(path, cfg.arch, ptxas=exe)[name]
        except ptxas.PtxasError as exc:
            if args.regs is None:
                raise ptxas.PtxasError(
                    f"{exc}\n(give --regs N and --smem BYTES to skip ptxas, or point GPUSIM_PTXAS at a ptxas "
                    f"that supports {cfg.arch}: CUDA 13 dropped sm_70)"
                ) from None
            failure = f"ptxas failed for {cfg.arch} ({str(exc).splitlines()[-1].strip()})"
        else:
            note = (
                f"{name} in {path}: ptxas -arch={cfg.arch} reports {usage.registers} registers, "
                f"{usage.static_shared_bytes} B static shared memory, {usage.barriers} barrier(s), "
                f"{usage.local_bytes} B stack"
            )
            return _Kernel(usage.registers, usage.static_shared_bytes, usage.barriers, note)
    static = ptxas.static_shared_from_ptx(text)[name]
    why = failure or "ptxas not found"
    note = (
        f"{name} in {path}: {why}, so registers come from --regs and static shared memory "
        f"({static} B) from the .shared declarations"
    )
    return _Kernel(None, static, None, note)


def _resolve(args: argparse.Namespace) -> tuple[gpu_config.GPUConfig, dict[str, list[Any]], str]:
    cfg = gpu_config.load(args.gpu)
    if args.set:
        cfg = cfg.with_overrides(dict(gpu_config.parse_override(item) for item in args.set))
    values: dict[str, list[Any]] = {}
    for name in _NUMERIC:
        raw = getattr(args, name)
        values[name] = parse_spec(raw, "--" + name.replace("_", "-")) if raw is not None else []
    note = ""
    if args.ptx:
        kernel = _kernel_resources(args, cfg)
        note = kernel.note
        if not values["regs"]:
            if kernel.regs is None:
                raise GpusimError("ptxas not found: give the registers per thread with --regs N")
            values["regs"] = [kernel.regs]
        if not values["smem"] and kernel.static_smem is not None:
            values["smem"] = [kernel.static_smem]
        if not values["barriers"] and kernel.barriers is not None:
            values["barriers"] = [kernel.barriers]
    elif args.kernel:
        raise GpusimError("--kernel needs a PTX file")
    if not values["block_size"]:
        raise GpusimError("--block-size is required (threads per block, e.g. --block-size 256)")
    if not values["regs"]:
        raise GpusimError("--regs is required without a PTX file (registers per thread, e.g. --regs 32)")
    defaults = {"smem": [0], "dynamic_smem": [0], "max_dynamic_smem": [None], "carveout": [-1], "barriers": [1]}
    for name, default in defaults.items():
        values[name] = values[name] or default
    return cfg, values, note


def _fmt_limit(value: int | None) -> str:
    return "unlimited" if value is None else str(value)


def format_table(cfg: gpu_config.GPUConfig, r: OccupancyResult, note: str = "", overrides: list[str] | None = None) -> str:
    """The Nsight-Compute-style report of one launch (Launch Statistics + Occupancy sections)."""
    lines = [f"GPU: {cfg.summary()}"]
    if overrides:
        lines.append(f"Overrides: {', '.join(overrides)}")
    if note:
        lines.append(f"Kernel: {note}")
    width = (38, 16, 12)
    rule = "  " + " ".join("-" * w for w in width)

    def section(title: str, rows: list[tuple[str, str, str, str]]) -> None:
        lines.extend(["", f"  Section: {title}", rule])
        lines.append("  " + f"{'Metric Name':<{width[0]}} {'Metric Unit':>{width[1]}} {'Metric Value':>{width[2]}}")
        lines.append(rule)
        for name, unit, value, mark in rows:
            lines.append(("  " + f"{name:<{width[0]}} {unit:>{width[1]}} {value:>{width[2]}}" + mark).rstrip())
        lines.append(rule)

    section("Launch Statistics", [
        ("Block Size", "", str(r.block_size), ""),
        ("Registers Per Thread", "register/thread", str(r.regs_per_thread), ""),
        ("Registers Per Thread (allocated)", "register/thread", str(r.registers_per_thread_allocated), ""),
        ("Static Shared Memory Per Block", "byte/block", str(r.static_smem), ""),
        ("Dynamic Shared Memory Per Block", "byte/block", str(r.dynamic_smem), ""),
        ("Driver Shared Memory Per Block", "byte/block", str(cfg.sm.reserved_shared_per_block_bytes), ""),
        ("Shared Memory Per Block (allocated)", "byte/block", str(r.shared_mem_per_block_allocated), ""),
        ("Max Dynamic Shared Memory (attribute)", "byte/block", str(r.max_dynamic_smem), ""),
        ("Shared Memory Configuration Size", "byte", str(r.shared_mem_config_bytes) if r.limit_shared_mem != 0 else "-", ""),
        ("Block Barriers", "barrier/block", str(r.barriers), ""),
    ])
    names = {
        "barriers": "Block Limit Barriers",
        "blocks": "Block Limit SM",
        "registers": "Block Limit Registers",
        "shared_mem": "Block Limit Shared Mem",
        "warps": "Block Limit Warps",
    }
    rows = [
        (names[n], "block", _fmt_limit(r.limit(n)), "  <- limiter" if n in r.limiters else "")
        for n in ("barriers", "blocks", "registers", "shared_mem", "warps")
    ]
    rows += [
        ("Theoretical Active Blocks per SM", "block", str(r.blocks_per_sm), ""),
        ("Theoretical Active Warps per SM", "warp", str(r.active_warps), ""),
        ("Theoretical Occupancy", "%", f"{r.occupancy_pct:.2f}".rstrip("0").rstrip("."), ""),
    ]
    section("Occupancy", rows)
    if r.blocks_per_sm == 0:
        lines.append(f"  Launch impossible: {r.reason}")
    else:
        metrics = " = ".join(NCU_LIMIT_METRICS[n] for n in r.limiters)
        lines.append(f"  Limited by {r.limited_by} ({metrics} = {r.blocks_per_sm} blocks)")
    return "\n".join(lines)


def _csv_value(value: Any) -> Any:
    return "" if value is None else value


def _write_csv(results: list[OccupancyResult], target: io.TextIOBase) -> None:
    writer = csv.DictWriter(target, CSV_COLUMNS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for r in results:
        writer.writerow({k: _csv_value(v) for k, v in r.as_row().items()})


def _open_csv(path: str, force: bool):
    target = Path(path)
    if target.exists() and not force:
        raise GpusimError(f"{target} exists; pass --force to overwrite it")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return open(target, "w", newline="")
    except OSError as exc:
        raise GpusimError(f"{target}: cannot write: {exc.strerror or exc}") from None


def run(args: argparse.Namespace) -> int:
    """Execute ``gpusim occupancy``; returns the exit status."""
    try:
        return _run(args)
    except BrokenPipeError:  # e.g. `gpusim occupancy ... | head`: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    cfg, values, note = _resolve(args)
    is_sweep = any(len(v) > 1 for v in values.values())
    if is_sweep:
        if args.plot:
            raise GpusimError("--plot draws one launch; give single values, not ranges, with --plot")
        results = sweep(
            cfg,
            block_size=values["block_size"],
            regs_per_thread=values["regs"],
            static_smem=values["smem"],
            dynamic_smem=values["dynamic_smem"],
            max_dynamic_smem=values["max_dynamic_smem"],
            carveout=values["carveout"],
            barriers=values["barriers"],
        )
        if args.csv:
            with _open_csv(args.csv, args.force) as fh:
                _write_csv(results, fh)
            best = max(results, key=lambda r: (r.occupancy, r.block_size))
            print(f"{len(results)} configurations on {cfg.summary()} written to {args.csv}")
            print(
                f"highest occupancy {best.occupancy_pct:.1f} % at block size {best.block_size}, "
                f"{best.regs_per_thread} registers/thread, {best.static_smem + best.dynamic_smem} B shared memory"
            )
        else:
            _write_csv(results, sys.stdout)
            sys.stdout.flush()
        return 0

    one = {k: v[0] for k, v in values.items()}
    launch = max_active_blocks(
        cfg, one["block_size"], one["regs"], one["smem"], one["dynamic_smem"], one["max_dynamic_smem"],
        one["carveout"], one["barriers"],
    )
    if args.format == "json":
        payload = launch.as_row()
        payload["ncu_metrics"] = launch.ncu_metrics()
        payload["gpu_summary"] = cfg.summary()
        if note:
            payload["kernel"] = note
        print(json.dumps(payload, indent=2))
    else:
        print(format_table(cfg, launch, note, args.set))
    if args.csv:
        with _open_csv(args.csv, args.force) as fh:
            _write_csv([launch], fh)
        print(f"wrote {args.csv}", file=sys.stderr if args.format == "json" else sys.stdout)
    if args.plot:
        from gpusim.occupancy_charts import write_charts

        data = curves(
            cfg, one["block_size"], one["regs"], one["smem"], one["dynamic_smem"], one["max_dynamic_smem"],
            one["carveout"], one["barriers"],
        )
        paths = write_charts(cfg, launch, data, args.plot)
        stream = sys.stderr if args.format == "json" else sys.stdout
        for path in paths:
            print(f"wrote {path}", file=stream)
    return 0


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``occupancy`` sub-command (contract of :mod:`gpusim.cli`)."""
    p = subparsers.add_parser(
        "occupancy",
        help="theoretical occupancy, its limiters, what-if sweeps and charts",
        description=(
            "Blocks per SM, active warps and the limiting resource of a launch, computed exactly "
            "like cudaOccupancyMaxActiveBlocksPerMultiprocessor. Numeric options take N, "
            "START:STOP[:STEP] (inclusive) or comma lists; more than one value makes a sweep (CSV)."
        ),
        epilog=(
            "examples:\n"
            "  gpusim occupancy --gpu h100 --block-size 256 --regs 32\n"
            "  gpusim occupancy kernel.ptx --kernel NAME --block-size 256 --plot charts/\n"
            "  gpusim occupancy --block-size 64:1024:32 --regs 16:255:8 --csv sweep.csv"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("ptx", nargs="?", metavar="KERNEL.ptx", help="PTX file: registers, static shared memory and barriers come from ptxas -v")
    p.add_argument("--kernel", metavar="NAME", help="kernel (.entry) in the PTX file (needed when it has several)")
    p.add_argument("--gpu", default=gpu_config.DEFAULT, metavar="NAME|FILE.toml",
                   help=f"GPU configuration: {', '.join(gpu_config.available())} or a TOML file (default {gpu_config.DEFAULT})")
    p.add_argument("--set", action="append", metavar="PATH=VALUE", default=[],
                   help="what-if override of a configuration field, e.g. --set sm.max_warps=48 (repeatable)")
    p.add_argument("--block-size", metavar="SPEC", help="threads per block")
    p.add_argument("--regs", metavar="SPEC", help="registers per thread (default with a PTX file: from ptxas)")
    p.add_argument("--smem", metavar="SPEC", help="static shared memory per block, bytes (default 0, or from ptxas)")
    p.add_argument("--dynamic-smem", metavar="SPEC", help="dynamic shared memory per block of this launch, bytes (default 0)")
    p.add_argument("--max-dynamic-smem", metavar="SPEC",
                   help="the kernel's max dynamic shared memory attribute, bytes (default: 48 KiB - static; raise it to opt in)")
    p.add_argument("--carveout", metavar="SPEC", help="preferred shared-memory carveout, percent 0-100 (default -1: none)")
    p.add_argument("--barriers", metavar="SPEC", help="block barriers the kernel uses (default 1, or from ptxas)")
    p.add_argument("--plot", metavar="DIR", help="write the three occupancy charts (PNG) into DIR")
    p.add_argument("--csv", metavar="FILE", help="write the result(s) as CSV (a sweep prints CSV to stdout without it)")
    p.add_argument("--force", action="store_true", help="overwrite an existing --csv file")
    p.add_argument("--format", choices=("table", "json"), default="table", help="output of a single launch (default table)")
    p.set_defaults(func=run)
    return p
