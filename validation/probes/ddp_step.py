"""GPU probe for the DDP chapter (course notes 001): NCCL collectives in nccl-tests' style and DDP
training steps in the notes' script shape, on every GPU of one machine.

``collectives``: one process a GPU (``torch.multiprocessing.spawn``, as the notes do), NCCL
through ``torch.distributed``. For each world size ``W`` of ``--worlds`` (default: 2 up to the
GPUs there are, doubling) and each collective (``all_reduce``, ``reduce_scatter``, ``all_gather``,
``broadcast``) over float32 buffers of 1 KiB to 1 GiB (every power of 4 and the 25 MiB of DDP's
default bucket): 5 warm-up calls, then timed calls (CUDA events on every rank, enough calls for
~20 ms, at least 5); the time of a size is the slowest rank's mean (with ``--rounds R``, the median of
R such measurements made in turn over all the sizes, each kept in ``seconds_rounds``: a single
measurement now and then takes several times its neighbours, e.g. 1.4 ms for 64 MiB where the
next round took 0.25 ms, ``validation/reports/h200x2/ddp/repeats3``). Bandwidths as nccl-tests
defines them (``doc/PERFORMANCE.md``): ``algbw = S / t`` with ``S`` the bytes of the (whole)
buffer; ``busbw = algbw x 2(W-1)/W`` for all_reduce, ``x (W-1)/W`` for reduce_scatter and
all_gather, ``x 1`` for broadcast.

``ddp``: a training step of an MLP (``--layers`` Linear layers ``H x H`` with ReLU, float32,
cross-entropy, SGD), the notes' ``ddp_setup`` / ``DDP(model, device_ids=[rank])`` /
``zero_grad`` / ``backward`` / ``step``, per world size (1 = no DDP wrapper, the baseline) and
per ``bucket_cap_mb`` (1, 25 = PyTorch's default, 100): 5 warm-up steps, then 20 timed steps
(CUDA events around each step on every rank; the slowest rank's mean; with ``--rounds R``
the median of R runs of the bucket sizes in turn, ``step_s_rounds``). On one GPU it also times
each layer's backward (events at the layer's full backward hooks) and forward, the per-layer
inputs a DDP step model needs.

Usage on the GPU machine (NVLink multicast stays off: keep NCCL_NVLS_ENABLE=0 as the machine
sets it)::

    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,ENV NCCL_DEBUG_FILE=$OUT/nccl.%h.%p.log \\
        python3 validation/probes/ddp_step.py collectives $OUT/collectives.json
    python3 validation/probes/ddp_step.py ddp $OUT/ddp.json [--hidden 4096 --layers 8 --batch 64]

Each writes one JSON (the machine's GPUs, torch and NCCL versions, every row). Imports torch;
never gpusim.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time

COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather", "broadcast")
#: bytes: every power of 4 from 1 KiB to 1 GiB, and DDP's default bucket (25 MiB)
SIZES = sorted({1 << k for k in range(10, 31, 2)} | {25 << 20})
BUCKETS_MB = (1, 25, 100)
STEPS, WARMUP = 20, 5


def bus_factor(coll: str, world: int) -> float:
    """nccl-tests' busbw / algbw for ``coll`` over ``world`` ranks."""
    if coll == "all_reduce":
        return 2 * (world - 1) / world
    if coll in ("reduce_scatter", "all_gather"):
        return (world - 1) / world
    return 1.0


def _setup(rank: int, world: int, port: int):
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group(backend="nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    return torch, dist


def _time_calls(torch, dist, fn, target_s: float = 0.02) -> float:
    """Mean seconds of ``fn()`` on this rank after warm-up; the call count is agreed by all ranks."""
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    one = torch.tensor([time.perf_counter() - t0], device="cuda")
    dist.all_reduce(one, op=dist.ReduceOp.MAX)
    n = max(5, min(1000, int(target_s / max(one.item(), 1e-6))))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    dist.barrier()
    torch.cuda.synchronize()
    start.record()
    for _ in range(n):
        fn()
    end.record()
    torch.cuda.synchronize()
    t = torch.tensor([start.elapsed_time(end) / 1e3 / n], device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def _collectives_worker(rank: int, world: int, port: int, out: str, rounds: int = 1) -> None:
    torch, dist = _setup(rank, world, port)
    times: dict[tuple[str, int], list[float]] = {}
    for _ in range(rounds):
        for coll in COLLECTIVES:
            for size in SIZES:
                times.setdefault((coll, size), []).append(_time_collective(torch, dist, coll, size, world, rank))
    rows = []
    for (coll, size), ts in times.items():
        t = statistics.median(ts)
        algbw = size / t
        rows.append({"collective": coll, "world": world, "bytes": size, "seconds": t, "seconds_rounds": ts,
                     "algbw_GBps": algbw / 1e9, "busbw_GBps": algbw * bus_factor(coll, world) / 1e9})
    if rank == 0:
        with open(out, "w") as f:
            json.dump(rows, f)
    dist.destroy_process_group()


def _time_collective(torch, dist, coll: str, size: int, world: int, rank: int) -> float:
    """Seconds of one ``coll`` over ``size`` bytes (:func:`_time_calls`), printed by rank 0."""
    n = size // 4
    if coll == "all_reduce":
        fn = functools.partial(dist.all_reduce, torch.ones(n, device="cuda"))
    elif coll == "broadcast":
        fn = functools.partial(dist.broadcast, torch.ones(n, device="cuda"), 0)
    elif coll == "reduce_scatter":
        fn = functools.partial(dist.reduce_scatter_tensor, torch.empty(n // world, device="cuda"),
                               torch.ones(n, device="cuda"))
    else:
        fn = functools.partial(dist.all_gather_into_tensor, torch.empty(n, device="cuda"),
                               torch.ones(n // world, device="cuda"))
    t = _time_calls(torch, dist, fn)
    if rank == 0:
        busbw = size / t * bus_factor(coll, world) / 1e9
        print(f"{coll:15s} W={world} {size:>11,d} B  {t * 1e6:10.1f} us  busbw {busbw:7.1f} GB/s", flush=True)
    del fn
    return t


class _MLP:
    """The notes' NeuralNetwork in a larger shape: ``layers`` Linear(H, H) + ReLU, then Linear(H, 10)."""

    @staticmethod
    def make(torch, hidden: int, layers: int):
        mods = []
        for _ in range(layers):
            mods += [torch.nn.Linear(hidden, hidden), torch.nn.ReLU()]
        return torch.nn.Sequential(*mods, torch.nn.Linear(hidden, 10))


def _step_time(torch, dist, model, opt, x, y, world: int) -> float:
    import torch.nn.functional as F

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(STEPS):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        step()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    t = torch.tensor([sum(times) / len(times)], device="cuda")
    if world > 1:
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def _layer_times(torch, model, x, y) -> list[dict]:
    """Per Linear layer: forward and backward seconds (CUDA events at its hooks), one GPU."""
    import torch.nn.functional as F

    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    ev = {}

    def mark(key):
        def hook(*_):
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            ev[key] = e
        return hook

    handles = []
    for i, m in enumerate(linears):
        handles.append(m.register_forward_pre_hook(mark(("f0", i))))
        handles.append(m.register_forward_hook(mark(("f1", i))))
        handles.append(m.register_full_backward_pre_hook(mark(("b0", i))))
        handles.append(m.register_full_backward_hook(mark(("b1", i))))
    acc = [[0.0, 0.0] for _ in linears]
    x = x.detach().requires_grad_(True)  # so that the first layer's backward hook fires too
    for it in range(WARMUP + STEPS):
        model.zero_grad()
        F.cross_entropy(model(x), y).backward()
        torch.cuda.synchronize()
        if it >= WARMUP:
            for i in range(len(linears)):
                acc[i][0] += ev[("f0", i)].elapsed_time(ev[("f1", i)]) / 1e3
                acc[i][1] += ev[("b0", i)].elapsed_time(ev[("b1", i)]) / 1e3
    for h in handles:
        h.remove()
    return [{"layer": i, "params": sum(p.numel() for p in m.parameters()), "forward_s": a[0] / STEPS,
             "backward_s": a[1] / STEPS} for i, (m, a) in enumerate(zip(linears, acc))]


def _ddp_worker(rank: int, world: int, port: int, args, out: str) -> None:
    import torch

    if world > 1:
        torch, dist = _setup(rank, world, port)
    else:
        dist = None
        torch.cuda.set_device(rank)
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(123)
    rows = []
    x = torch.randn(args.batch, args.hidden, device="cuda")
    y = torch.randint(0, 10, (args.batch,), device="cuda")
    steps: dict = {}
    for _ in range(args.rounds):  # rounds interleave the bucket sizes; a row keeps their median
        for bucket in (BUCKETS_MB if world > 1 else (None,)):
            model = _MLP.make(torch, args.hidden, args.layers).cuda()
            if world > 1:
                model = DDP(model, device_ids=[rank], bucket_cap_mb=bucket)
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            t = _step_time(torch, dist, model, opt, x, y, world)
            steps.setdefault(bucket, []).append(t)
            params = sum(p.numel() for p in model.parameters())
            if rank == 0:
                print(f"ddp W={world} bucket={bucket} step {t * 1e3:8.3f} ms", flush=True)
    for bucket, ts in steps.items():
        rows.append({"world": world, "bucket_cap_mb": bucket, "step_s": statistics.median(ts), "step_s_rounds": ts,
                     "hidden": args.hidden, "layers": args.layers, "batch_per_gpu": args.batch, "params": params})
    if world == 1:
        model = _MLP.make(torch, args.hidden, args.layers).cuda()
        rows.append({"world": 1, "layers_timed": _layer_times(torch, model, x, y)})
    if rank == 0:
        with open(out, "w") as f:
            json.dump(rows, f)
    if dist is not None:
        dist.destroy_process_group()


def _machine() -> dict:
    import torch

    return {"gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
            "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
            "env": {k: v for k, v in os.environ.items() if k.startswith(("NCCL_", "TORCH_SYMM", "NVSHMEM"))}}


def main(argv: list[str]) -> None:
    import torch
    import torch.multiprocessing as mp

    p = argparse.ArgumentParser(prog="ddp_step.py")
    p.add_argument("what", choices=("collectives", "ddp"))
    p.add_argument("out")
    p.add_argument("--worlds", type=int, nargs="+", default=None)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--rounds", type=int, default=1,
                   help="measure every size (collectives) or bucket (ddp) this many times, interleaved, "
                        "and keep the median (each round's time is kept too)")
    a = p.parse_args(argv)
    gpus = torch.cuda.device_count()
    worlds = a.worlds or ([w for w in (2, 4, 8) if w <= gpus] if a.what == "collectives"
                          else [w for w in (1, 2, 4, 8) if w <= gpus])
    result = {"machine": _machine(), "what": a.what, "rows": []}
    for i, w in enumerate(worlds):
        part = f"{a.out}.w{w}.tmp"
        port = 12345 + i
        if a.what == "collectives":
            mp.spawn(_collectives_worker, args=(w, port, part, a.rounds), nprocs=w)
        else:
            mp.spawn(_ddp_worker, args=(w, port, a, part), nprocs=w)
        with open(part) as f:
            result["rows"] += json.load(f)
        os.remove(part)
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
