"""A model of one PyTorch DistributedDataParallel training step (course notes 001): forward, backward
with the gradients' all-reduce overlapping it bucket by bucket, then the optimizer step.

Owns: DDP's bucket assignment (:func:`buckets`), the SimPy run of a step (:func:`ddp_step`) and the
scaling over world sizes (:func:`scaling`). What DDP does, from PyTorch's source
(``torch/nn/parallel/distributed.py``, ``torch/csrc/distributed/c10d/reducer.cpp``):

* after the first iteration the reducer rebuilds its buckets in the order gradients became ready
  (the reverse of the parameters' order for a feed-forward model); a bucket closes once its bytes reach
  its cap: the first bucket's cap is ``_DEFAULT_FIRST_BUCKET_BYTES`` (1 MiB), the others
  ``bucket_cap_mb x 2**20`` (a parameter larger than the cap gets a bucket of its own);
* a parameter's gradient is copied into its bucket when its autograd hook fires (the end of its layer's
  backward), on the compute stream; a full bucket is all-reduced (NCCL, :mod:`gpusim.multigpu.nccl`) on
  the communication stream while the backward goes on; buckets are reduced in order, one at a time;
* at the end of the backward the step waits for every bucket, copies the averaged gradients back
  (``gradient_as_bucket_view=False``), and the optimizer (SGD: read parameter and gradient, write the
  parameter) runs at the GPU's memory bandwidth.

The world size 1 is the notes' single-GPU baseline: no DDP wrapper, no buckets, no communication.
Per-layer forward and backward times are the user's (measured, e.g. by ``validation/probes/ddp_step.py``,
or simulated kernels); :func:`mlp_layers` estimates them from FLOPs for what-ifs.

Must not import: cupy, torch, the engines. Imports simpy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import simpy

from gpusim.errors import ConfigError
from gpusim.multigpu.nccl import collective_time
from gpusim.multigpu.topology import Topology, load_topology

__all__ = ["Layer", "Bucket", "DDPStep", "buckets", "ddp_step", "mlp_layers", "layers_from_probe", "scaling", "MiB"]

MiB = 1 << 20


@dataclass(frozen=True)
class Layer:
    """One layer of the model, in forward order.

    ``params``: element counts of its parameter tensors (a Linear: ``(out*in, out)``); ``bytes_per_param``:
    4 for float32; ``forward_s`` / ``backward_s``: seconds of its forward and backward on one GPU.
    """

    name: str
    params: tuple[int, ...]
    forward_s: float
    backward_s: float
    bytes_per_param: int = 4

    @property
    def nbytes(self) -> int:
        """Bytes of the layer's gradients."""
        return sum(self.params) * self.bytes_per_param


@dataclass(frozen=True)
class Bucket:
    """One DDP gradient bucket: its parameters as ``(layer index, tensor index)``, in ready order."""

    index: int
    params: tuple[tuple[int, int], ...]
    nbytes: int
    cap: int


@dataclass
class DDPStep:
    """A modelled training step on ``world`` GPUs (seconds throughout).

    ``seconds``: the step; ``forward_s``, ``backward_s`` (compute only, any slowdown beside NCCL
    included), ``comm_s`` (all buckets' all-reduce time), ``exposed_comm_s`` (the step's time after the
    backward's compute ends waiting for communication), ``optimizer_s``, ``reducer_s`` (bucket copies),
    ``buckets`` and their all-reduce ``(start, end)`` times in ``timeline``; ``efficiency`` is the one-GPU
    step over this one (weak scaling: the same batch per GPU), set by :func:`ddp_step` when asked
    (``baseline=True``) and by :func:`scaling`.
    """

    world: int
    bucket_cap_mb: float
    seconds: float
    forward_s: float
    backward_s: float
    comm_s: float
    exposed_comm_s: float
    optimizer_s: float
    reducer_s: float
    overhead_s: float
    buckets: list[Bucket] = field(default_factory=list)
    timeline: list[tuple[float, float]] = field(default_factory=list)
    efficiency: float | None = None


def _check_layers(layers) -> list[Layer]:
    layers = list(layers)
    if not layers:
        raise ConfigError("argument layers: the model has no layers")
    for i, ly in enumerate(layers):
        if not isinstance(ly, Layer):
            raise ConfigError(f"argument layers[{i}]: a gpusim.multigpu.Layer, not {type(ly).__name__}")
        if ly.forward_s < 0 or ly.backward_s < 0:
            raise ConfigError(f"argument layers[{i}] ({ly.name}): forward_s and backward_s are seconds >= 0")
        if any((not isinstance(n, int)) or n < 0 for n in ly.params) or ly.bytes_per_param < 1:
            raise ConfigError(f"argument layers[{i}] ({ly.name}): params are element counts >= 0")
    return layers


def buckets(layers, bucket_cap_mb: float = 25.0, first_bucket_bytes: int = MiB) -> list[Bucket]:
    """DDP's buckets after its rebuild: parameters in gradient-ready order (last layer first), a bucket
    closed once its bytes reach its cap (``first_bucket_bytes`` for the first, ``bucket_cap_mb x 2**20``
    for the others; ``reducer.cpp`` ``compute_bucket_assignment_by_size``). Raises :class:`ConfigError`
    for a cap <= 0."""
    layers = _check_layers(layers)
    if not bucket_cap_mb > 0:
        raise ConfigError(f"argument bucket_cap_mb: {bucket_cap_mb!r}; a bucket cap is > 0 MB")
    cap = int(bucket_cap_mb * MiB)
    out: list[Bucket] = []
    cur: list[tuple[int, int]] = []
    size = 0
    limit = first_bucket_bytes
    for li in range(len(layers) - 1, -1, -1):
        ly = layers[li]
        for ti in range(len(ly.params) - 1, -1, -1):
            cur.append((li, ti))
            size += ly.params[ti] * ly.bytes_per_param
            if size >= limit:
                out.append(Bucket(len(out), tuple(cur), size, limit))
                cur, size, limit = [], 0, cap
    if cur:
        out.append(Bucket(len(out), tuple(cur), size, limit))
    return out


def mlp_layers(hidden: int, layers: int, batch: int, *, classes: int = 10, tflops: float = 25.0) -> list[Layer]:
    """The probe's MLP (``layers`` Linear(hidden, hidden) + ReLU, then Linear(hidden, classes)), float32,
    with forward and backward times estimated from FLOPs at ``tflops`` achieved TFLOP/s (forward
    ``2 x batch x in x out``, backward twice that). The rate is ASSUMED (FP32 GEMMs of 64 rows on an H100
    reach a fraction of its 67 TFLOP/s peak): give measured times through :class:`Layer` for predictions."""
    for name, v in (("hidden", hidden), ("layers", layers), ("batch", batch), ("classes", classes)):
        if not isinstance(v, int) or v < 1:
            raise ConfigError(f"argument {name}: {v!r} is not a positive integer")
    if not tflops > 0:
        raise ConfigError(f"argument tflops: {tflops!r} is not > 0")
    out = []
    for i in range(layers + 1):
        n_out = hidden if i < layers else classes
        flops = 2 * batch * hidden * n_out
        out.append(Layer(f"linear{i}", (hidden * n_out, n_out), flops / (tflops * 1e12), 2 * flops / (tflops * 1e12)))
    return out


def layers_from_probe(layers_timed: list[dict], topology: Topology | str) -> list[Layer]:
    """Layers from ``validation/probes/ddp_step.py``'s one-GPU ``layers_timed`` rows (``layer``, ``params``,
    ``forward_s``, ``backward_s``; float32), times multiplied by the topology's ``ddp.hook_time_scale``
    (events at module hooks overstate a layer's share of the step). Raises :class:`ConfigError` for a row
    without those keys."""
    topo = load_topology(topology)
    k = topo.ddp.hook_time_scale
    out = []
    for i, r in enumerate(layers_timed):
        try:
            out.append(Layer(f"layer{r['layer']}", (int(r["params"]),), float(r["forward_s"]) * k,
                             float(r["backward_s"]) * k))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"layers_timed[{i}]: needs layer, params, forward_s, backward_s ({exc})") from None
    return out


def _optimizer_s(topo: Topology, layers: list[Layer]) -> float:
    # SGD without momentum (the probe's): read the parameter and its gradient, write the parameter.
    return 3 * sum(ly.nbytes for ly in layers) / (topo.hbm_GBps * 1e9)


def ddp_step(topology: Topology | str, layers, world: int, *, bucket_cap_mb: float = 25.0,
             optimizer_s: float | None = None, baseline: bool = False) -> DDPStep:
    """Model one DDP training step of ``layers`` (forward order) on ``world`` GPUs of ``topology``.

    ``bucket_cap_mb``: DDP's ``bucket_cap_mb`` (MiB); ``optimizer_s``: the optimizer's time (default:
    SGD at the GPU's memory bandwidth); ``baseline``: also model one GPU and set ``efficiency``.
    Raises :class:`ConfigError` for ``world`` outside ``1..max_gpus``, a cap <= 0 or bad layers.
    """
    topo = load_topology(topology)
    layers = _check_layers(layers)
    if not isinstance(world, int) or isinstance(world, bool) or not 1 <= world <= topo.max_gpus:
        raise ConfigError(f"argument world: {world!r} GPUs; topology {topo.name} has 1..{topo.max_gpus} (max_gpus)")
    d = topo.ddp
    fwd = sum(ly.forward_s for ly in layers)
    opt = _optimizer_s(topo, layers) if optimizer_s is None else optimizer_s
    over = d.step_overhead_us * 1e-6
    if world == 1:
        bwd = sum(ly.backward_s for ly in layers)
        res = DDPStep(1, bucket_cap_mb, over + fwd + bwd + opt, fwd, bwd, 0.0, 0.0, opt, 0.0, over)
        if baseline:
            res.efficiency = 1.0
        return res
    bks = buckets(layers, bucket_cap_mb, d.first_bucket_bytes)
    hbm = topo.hbm_GBps * 1e9
    pass_in = min(2.0, d.reducer_passes)  # copy into the bucket, divide by the world size: on the compute stream
    pass_out = d.reducer_passes - pass_in
    left = {b.index: len(b.params) for b in bks}
    where = {p: b.index for b in bks for p in b.params}
    comm_time = {b.index: collective_time(topo, "all_reduce", b.nbytes, world).seconds for b in bks}

    # Two streams share the GPU: the compute stream (each layer's backward, then the reducer's copy of its
    # gradients into their buckets) and NCCL's stream (the buckets' all-reduces, one at a time, in bucket
    # order, each once its bucket is full). While both run, each progresses at 1 / overlap_slowdown.
    comp: list[list] = []
    for li in range(len(layers) - 1, -1, -1):
        comp.append([layers[li].backward_s, "bwd", li])
        comp.append([pass_in * 2 * layers[li].nbytes / hbm, "copy", li])  # read the gradient, write the bucket
    env = simpy.Environment()
    timeline: dict[int, tuple[float, float]] = {}
    stats = {"bwd": 0.0, "reducer": 0.0, "compute_end": 0.0}
    slow = d.overlap_slowdown

    def gpu():
        ci, nxt, cur, ready = 0, 0, None, set()
        while ci < len(comp) or nxt < len(bks):
            if cur is None and nxt in ready:
                cur = [comm_time[nxt], env.now]
            if ci >= len(comp) and cur is None:  # cannot happen: every bucket is ready once compute ends
                break
            rate = 1.0 / slow if (ci < len(comp) and cur is not None) else 1.0
            dts = [comp[ci][0] / rate] if ci < len(comp) else []
            if cur is not None:
                dts.append(cur[0] / rate)
            dt = min(dts)
            t0 = env.now
            yield env.timeout(dt)
            if ci < len(comp):
                comp[ci][0] -= dt * rate
                stats["bwd" if comp[ci][1] == "bwd" else "reducer"] += env.now - t0
                if comp[ci][0] <= 1e-15:
                    if comp[ci][1] == "copy":
                        li = comp[ci][2]
                        for ti in range(len(layers[li].params)):
                            bi = where[(li, ti)]
                            left[bi] -= 1
                            if left[bi] == 0:
                                ready.add(bi)
                    ci += 1
                    if ci == len(comp):
                        stats["compute_end"] = env.now
            if cur is not None:
                cur[0] -= dt * rate
                if cur[0] <= 1e-15:
                    timeline[nxt] = (cur[1], env.now)
                    cur, nxt = None, nxt + 1

    env.process(gpu())
    env.run()
    compute_end = stats["compute_end"]
    end = max(env.now, compute_end)
    exposed = end - compute_end
    tail = pass_out * 2 * sum(ly.nbytes for ly in layers) / hbm
    stats["reducer"] += tail
    seconds = over + fwd + end + tail + opt
    res = DDPStep(world, bucket_cap_mb, seconds, fwd, stats["bwd"], sum(comm_time.values()), exposed, opt,
                  stats["reducer"], over, bks, [timeline[b.index] for b in bks])
    if baseline:
        res.efficiency = ddp_step(topo, layers, 1, optimizer_s=optimizer_s).seconds / seconds
    return res


def scaling(topology: Topology | str, layers, worlds=(1, 2, 4, 8), *, bucket_cap_mb: float = 25.0,
            optimizer_s: float | None = None) -> list[DDPStep]:
    """:func:`ddp_step` for each world size (those up to the topology's ``max_gpus``), each with its
    ``efficiency`` = one-GPU step / this step (weak scaling, at most 1 in this model)."""
    topo = load_topology(topology)
    base = ddp_step(topo, layers, 1, optimizer_s=optimizer_s).seconds
    out = []
    for w in worlds:
        if w > topo.max_gpus:
            continue
        r = ddp_step(topo, layers, w, bucket_cap_mb=bucket_cap_mb, optimizer_s=optimizer_s)
        r.efficiency = base / r.seconds
        out.append(r)
    return out
