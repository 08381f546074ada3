"""``gpusim ddp``: predict a PyTorch DDP training step on 1..N GPUs, or NCCL collectives, from a topology.

Owns: the sub-command's arguments and its text tables; the models are :mod:`gpusim.multigpu`
(``docs/multigpu.md``). Must not import: simpy, cupy (the model imports simpy, not this module).

Examples::

    gpusim ddp                                          # the probe's MLP (8 x 4096, batch 64) on 1, 2, 4, 8 H200s
    gpusim ddp --hidden 8192 --layers 16 --bucket-mb 100
    gpusim ddp --topology pcie_gen5 --gpus 1 2 4        # the same step over PCIe
    gpusim ddp --set link.count=9 --set nccl.protocols.LL128.enabled=false
    gpusim ddp --layer-times validation/reports/h200x4/ddp/ddp.json   # measured per-layer times
    gpusim ddp --collective all_reduce --gpus 2 4       # NCCL times, 1 KiB..1 GiB
"""

from __future__ import annotations

import argparse
import json

from gpusim.cli._types import positive_int
from gpusim.errors import ConfigError

_DEFAULT_TOPOLOGY = "hgx_h200_nvswitch"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ddp", help="predict a DDP training step (or NCCL collectives) on 1..N GPUs",
                       description="Model a PyTorch DistributedDataParallel step of an MLP (or NCCL collectives) "
                                   "over a multi-GPU topology: step time, exposed communication, scaling efficiency.")
    p.add_argument("--topology", default=_DEFAULT_TOPOLOGY,
                   help=f"shipped topology name or a .toml path (default {_DEFAULT_TOPOLOGY}; 'gpusim ddp --list')")
    p.add_argument("--list", action="store_true", help="list the shipped topologies")
    p.add_argument("--gpus", type=positive_int, nargs="+", default=None, metavar="W",
                   help="world sizes (default: 1 2 4 8 up to the topology's max_gpus; collectives: from 2)")
    p.add_argument("--bucket-mb", type=float, nargs="+", default=[25.0], metavar="MB",
                   help="DDP bucket_cap_mb values (default 25, PyTorch's)")
    p.add_argument("--hidden", type=positive_int, default=4096, help="MLP width (default 4096)")
    p.add_argument("--layers", type=positive_int, default=8, help="hidden Linear layers (default 8)")
    p.add_argument("--batch", type=positive_int, default=64, help="batch per GPU (default 64)")
    p.add_argument("--tflops", type=float, default=25.0,
                   help="achieved TFLOP/s that turns the layers' FLOPs into times (default 25, ASSUMED)")
    p.add_argument("--layer-times", metavar="JSON",
                   help="per-layer times measured by validation/probes/ddp_step.py (its ddp.json) instead of FLOPs")
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                   help="topology what-if, e.g. link.count=9, link.kind=pcie, nccl.max_channels=8 (repeatable)")
    p.add_argument("--collective", choices=("all_reduce", "reduce_scatter", "all_gather", "broadcast"),
                   help="instead of a DDP step: this collective's time over 1 KiB..1 GiB")
    p.set_defaults(func=run)


def _layers(args, topo):
    from gpusim.multigpu.ddp import layers_from_probe, mlp_layers

    if not args.layer_times:
        return mlp_layers(args.hidden, args.layers, args.batch, tflops=args.tflops)
    with open(args.layer_times) as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{args.layer_times}: not JSON: {exc}") from None
    rows = data.get("rows", data) if isinstance(data, dict) else data
    timed = next((r["layers_timed"] for r in rows if isinstance(r, dict) and "layers_timed" in r), None)
    if timed is None:
        raise ConfigError(f"{args.layer_times}: no 'layers_timed' row (the one-GPU rows of ddp_step.py's ddp.json)")
    return layers_from_probe(timed, topo)


def run(args: argparse.Namespace) -> int:
    from gpusim.config import parse_override
    from gpusim.multigpu import available, load_topology
    from gpusim.multigpu.ddp import scaling
    from gpusim.multigpu.nccl import sweep
    from gpusim.table import format_table

    if args.list:
        for name in available():
            t = load_topology(name)
            print(f"{name:24s} {t.max_gpus} x {t.gpu}: {t.description}")
        return 0
    topo = load_topology(args.topology)
    if args.set:
        topo = topo.with_overrides(dict(parse_override(s) for s in args.set))
    link = f"{topo.link.kind} gen {topo.link.generation}, {topo.link.count} x {topo.link.GBps_per_link:g} GB/s"
    if args.collective:
        worlds = args.gpus or [w for w in (2, 4, 8) if w <= topo.max_gpus]
        sizes = [1 << k for k in range(10, 31, 2)]
        rows = []
        for w in worlds:
            for r in sweep(topo, args.collective, w, sizes):
                rows.append((w, r.bytes, round(r.seconds * 1e6, 1), round(r.algbw_GBps, 1), round(r.busbw_GBps, 1),
                             f"{r.algorithm}/{r.protocol}", r.channels))
        print(f"{args.collective} on {topo.name} ({link})")
        print(format_table(["GPUs", "bytes", "time us", "algbw GB/s", "busbw GB/s", "algo/proto", "channels"], rows))
        return 0
    layers = _layers(args, topo)
    worlds = args.gpus or [w for w in (1, 2, 4, 8) if w <= topo.max_gpus]
    rows = []
    for k, cap in enumerate(args.bucket_mb):
        for r in scaling(topo, layers, worlds, bucket_cap_mb=cap):
            if r.world == 1 and k:
                continue  # one GPU has no buckets: listed once
            rows.append((r.world, cap if r.world > 1 else "-", round(r.seconds * 1e3, 3),
                         round((r.forward_s + r.backward_s) * 1e3, 3), round(r.comm_s * 1e3, 3),
                         round(r.exposed_comm_s * 1e3, 3), len(r.buckets), f"{r.efficiency * 100:.1f} %"))
    params = sum(sum(ly.params) for ly in layers)
    print(f"DDP step on {topo.name} ({link}): {len(layers)} layers, {params:,} parameters "
          f"({params * layers[0].bytes_per_param / 2**20:,.0f} MiB of gradients)")
    print(format_table(["GPUs", "bucket MB", "step ms", "fwd+bwd ms", "all-reduce ms", "exposed ms", "buckets",
                        "efficiency"], rows))
    print("efficiency: the one-GPU step / this step (the same batch per GPU); exposed: the step's wait for "
          "all-reduces after the backward's compute ends")
    return 0
