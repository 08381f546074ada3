"""A SimPy model of NCCL's collectives on one machine: all-reduce (ring or tree), reduce-scatter,
all-gather and broadcast over a :class:`~gpusim.multigpu.topology.Topology`.

Owns: choosing NCCL's algorithm and protocol for a call (:func:`select`, NCCL's own tuner model:
``latency + bytes / bandwidth`` per algorithm and protocol, the least wins; ``src/graph/tuning.cc``),
the channel count for a size (NCCL drops channels while ``bytes < channels x threads x threshold``,
``src/enqueue.cc``), and the discrete-event run of one channel (:func:`collective_time`).

The SimPy run follows NCCL's structure (``src/device/all_reduce.h``, ``prims_*.h``): a channel (one CTA
per GPU) moves its share ``bytes / channels`` of the buffer in loops of ``W`` chunks; a chunk goes round
the ring in ``2(W-1)`` steps (all-reduce: ``W-1`` reduce-scatter steps, then ``W-1`` all-gather steps;
reduce-scatter and all-gather ``W-1``; broadcast: a chain from the root, ``W-1`` hops), each step cut into
slices. A slice's send from a GPU waits for that slice's arrival from the step before (data dependency),
for a free slot in the receiver's FIFO (``NCCL_STEPS`` steps of the protocol's buffer: flow control),
and holds the sender's link for ``slice bytes / (channel bandwidth x protocol payload)``; it arrives
one hop latency later. The tree all-reduce is NCCL's one-node tree, a chain: reduce up to the root and
broadcast down, pipelined per chunk, with the up and down sends of a GPU sharing its link. Channels are
identical, so one is simulated; the time is the collective's base latency, the launch, the simulated
makespan, and at least the framework's per-call floor (``nccl.call_overhead_us``).

Bandwidths as nccl-tests reports them (``doc/PERFORMANCE.md``): ``algbw = S / t`` (``S`` the whole
buffer's bytes) and ``busbw = algbw x`` :func:`bus_factor`.

Must not import: cupy, torch, the engines (gpusim.functional, gpusim.timing). Imports simpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import simpy

from gpusim.errors import ConfigError
from gpusim.multigpu.topology import PROTOCOLS, Topology, load_topology

__all__ = ["COLLECTIVES", "ALGORITHMS", "CollectiveResult", "bus_factor", "select", "channels_for",
           "collective_time", "sweep"]

COLLECTIVES: tuple[str, ...] = ("all_reduce", "reduce_scatter", "all_gather", "broadcast")
ALGORITHMS: tuple[str, ...] = ("ring", "tree")


def bus_factor(collective: str, world: int) -> float:
    """nccl-tests' ``busbw / algbw`` for ``collective`` over ``world`` ranks (``doc/PERFORMANCE.md``):
    all-reduce ``2(W-1)/W``, reduce-scatter and all-gather ``(W-1)/W``, broadcast 1."""
    if collective == "all_reduce":
        return 2 * (world - 1) / world
    if collective in ("reduce_scatter", "all_gather"):
        return (world - 1) / world
    return 1.0


@dataclass(frozen=True)
class CollectiveResult:
    """One modelled collective: ``seconds`` for ``bytes`` (the whole buffer) over ``world`` GPUs with
    NCCL's ``algorithm`` (ring/tree) and ``protocol`` (LL/LL128/Simple) on ``channels`` channels."""

    collective: str
    world: int
    bytes: int
    seconds: float
    algorithm: str
    protocol: str
    channels: int

    @property
    def algbw_GBps(self) -> float:
        """``bytes / seconds`` in GB/s (1e9 bytes/s)."""
        return self.bytes / self.seconds / 1e9

    @property
    def busbw_GBps(self) -> float:
        """``algbw x`` :func:`bus_factor`, GB/s."""
        return self.algbw_GBps * bus_factor(self.collective, self.world)


def _check(topo: Topology, collective: str, nbytes: int, world: int) -> None:
    if collective not in COLLECTIVES:
        raise ConfigError(f"argument collective: {collective!r} is not one of {', '.join(COLLECTIVES)}")
    if not isinstance(world, int) or isinstance(world, bool) or not 2 <= world <= topo.max_gpus:
        raise ConfigError(f"argument world: {world!r} GPUs; topology {topo.name} has 2..{topo.max_gpus} "
                          f"(max_gpus) for a collective")
    if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 1:
        raise ConfigError(f"argument bytes: {nbytes!r} is not a positive integer byte count")


def _nsteps(collective: str, world: int) -> int:
    """Ring steps of one chunk: all-reduce ``2(W-1)``, the others ``W-1``."""
    return 2 * (world - 1) if collective == "all_reduce" else world - 1


def _channel_wire_Bps(topo: Topology) -> float:
    """Raw bytes/s of one channel over one link direction: the GPU's link bandwidth x efficiency / channels."""
    return topo.link.GBps * topo.link.bw_efficiency / topo.nccl.max_channels * 1e9


def _data_rate(topo: Topology, collective: str, algorithm: str, protocol: str, channels: int) -> float:
    """Data bytes/s of one channel for ``protocol`` (payload fraction and NCCL's caps)."""
    p = topo.nccl.protocols[protocol]
    wire = _channel_wire_Bps(topo) * topo.nccl.bw_factor[collective]
    if algorithm == "ring":
        rate, cap = wire * p.payload, p.per_channel_max_GBps
    else:
        rate, cap = wire * p.tree_payload * topo.nccl.tree_efficiency, p.tree_per_channel_max_GBps
    if cap:
        rate = min(rate, cap * 1e9)
    if p.max_GBps:
        rate = min(rate, p.max_GBps * 1e9 / channels)
    return rate


def _latency_s(topo: Topology, algorithm: str, protocol: str) -> float:
    p = topo.nccl.protocols[protocol]
    base = p.base_latency_us if algorithm == "ring" else p.tree_base_latency_us
    return (base + topo.nccl.launch_us) * 1e-6


def _hop_s(topo: Topology, algorithm: str, protocol: str) -> float:
    p = topo.nccl.protocols[protocol]
    return (p.hop_latency_us if algorithm == "ring" else p.tree_hop_latency_us) * 1e-6


def _candidates(topo: Topology, collective: str, world: int) -> list[tuple[str, str]]:
    algos = ("ring", "tree") if collective == "all_reduce" else ("ring",)
    return [(a, p) for a in algos for p in PROTOCOLS if topo.nccl.protocols[p].enabled]


def select(topology: Topology | str, collective: str, nbytes: int, world: int) -> tuple[str, str]:
    """NCCL's choice of ``(algorithm, protocol)`` for a call: the least of its tuner's estimate
    ``latency + bytes / algbw`` over the enabled protocols (and, for all-reduce, ring and tree), with
    ``latency = base + nsteps x hop`` and ``algbw`` = all channels' data rate x ``W / nsteps`` (ring) or
    x 1/2 (tree) (``src/graph/tuning.cc``). Raises :class:`ConfigError` for bad arguments."""
    topo = load_topology(topology)
    _check(topo, collective, nbytes, world)
    best, best_t = None, math.inf
    nc = topo.nccl.max_channels
    for algo, proto in _candidates(topo, collective, world):
        nsteps = _nsteps(collective, world)
        bus = nc * _data_rate(topo, collective, algo, proto, nc)
        if algo == "ring":
            algbw = bus * (world / nsteps if collective != "broadcast" else 1.0)
            lat = _latency_s(topo, algo, proto) + nsteps * _hop_s(topo, algo, proto)
        else:
            algbw = bus * 0.5
            lat = _latency_s(topo, algo, proto) + 2 * (world - 1) * _hop_s(topo, algo, proto)
        t = lat + nbytes / algbw
        if t < best_t:
            best, best_t = (algo, proto), t
    return best


def channels_for(topology: Topology | str, nbytes: int, algorithm: str, protocol: str, world: int) -> int:
    """Channels NCCL uses for ``nbytes``: it drops one while ``bytes < channels x threads x threshold``
    (the threshold of ring LL is multiplied by the ranks; ``src/enqueue.cc``, ``src/graph/tuning.cc``)."""
    topo = load_topology(topology)
    p = topo.nccl.protocols[protocol]
    thr = p.thread_threshold * (world if (algorithm == "ring" and protocol == "LL") else 1)
    nc = topo.nccl.max_channels
    while nc > 1 and nbytes < nc * p.threads * thr:
        nc -= 1
    return nc


def _geometry(topo: Topology, collective: str, protocol: str) -> tuple[int, int, int]:
    """(chunk bytes, slice bytes, FIFO slots in slices) of one channel's connection, data bytes."""
    n = topo.nccl
    p = n.protocols[protocol]
    step = max(1, int(p.buffer_bytes / n.steps * p.payload))
    if protocol != "Simple":
        return step, step, n.steps
    if collective == "broadcast":
        return step, step, n.steps
    return step * n.chunk_steps, step * n.slice_steps, n.steps // n.slice_steps


def _split(nbytes: int, piece: int) -> list[int]:
    full, rest = divmod(nbytes, piece)
    return [piece] * full + ([rest] if rest else [])


def _run(flows: list[tuple[list[tuple[int, int]], list[int]]], programs: list[tuple[int, list[tuple[int, int, int]]]],
         rate: float, hop_s: float, slots: int) -> float:
    """Simulate one channel; returns the makespan in seconds.

    ``flows[f] = (hops, slices)``: the (src, dst) GPU of each hop and the data bytes of each slice;
    ``programs``: one per sending thread, ``(gpu, ops)`` with ops ``(flow, hop, slice)`` in program order.
    A send waits for its slice's arrival from the previous hop, a FIFO slot at the receiver, and its GPU's
    link; it holds the link ``bytes / rate`` and arrives ``hop_s`` later.
    """
    env = simpy.Environment()
    arrived: dict[tuple[int, int, int], simpy.Event] = {}
    credits: dict[tuple[int, int], simpy.Container] = {}
    threads_of: dict[int, int] = {}
    for gpu, _ in programs:
        threads_of[gpu] = threads_of.get(gpu, 0) + 1
    egress = {g: simpy.Resource(env, capacity=1) for g, k in threads_of.items() if k > 1}
    for hops, _ in flows:
        for src_dst in hops:
            if src_dst not in credits:
                credits[src_dst] = simpy.Container(env, capacity=slots, init=slots)
    for f, (hops, slices) in enumerate(flows):
        for h in range(len(hops)):
            for j in range(len(slices)):
                arrived[(f, h, j)] = env.event()

    def deliver(key, link, terminal):
        yield env.timeout(hop_s)
        arrived[key].succeed()
        if terminal:
            yield credits[link].put(1)

    def thread(gpu, ops):
        for f, h, j in ops:
            hops, slices = flows[f]
            link = hops[h]
            if h:
                yield arrived[(f, h - 1, j)]
            yield credits[link].get(1)
            if gpu in egress:
                with egress[gpu].request() as req:
                    yield req
                    yield env.timeout(slices[j] / rate)
            else:
                yield env.timeout(slices[j] / rate)
            if h:
                yield credits[hops[h - 1]].put(1)
            env.process(deliver((f, h, j), link, h == len(hops) - 1))

    for gpu, ops in programs:
        env.process(thread(gpu, ops))
    env.run()
    return env.now


def _plan(collective: str, algorithm: str, world: int, data: int, chunk: int, slice_: int):
    """Flows and thread programs of one channel carrying ``data`` bytes (see :func:`_run`)."""
    flows: list[tuple[list[tuple[int, int]], list[int]]] = []
    if collective == "broadcast":
        hops = [(r, r + 1) for r in range(world - 1)]
        for c in _split(data, chunk):
            flows.append((hops, _split(c, slice_)))
        programs = [(r, [(f, r, j) for f in range(len(flows)) for j in range(len(flows[f][1]))])
                    for r in range(world - 1)]
        return flows, programs
    if algorithm == "tree":  # one-node tree: a chain 0-1-..-W-1, reduce up to 0, broadcast down
        hops = [(r, r - 1) for r in range(world - 1, 0, -1)] + [(r, r + 1) for r in range(world - 1)]
        for c in _split(data, chunk):
            flows.append((hops, _split(c, slice_)))
        programs = []
        for r in range(world):
            every = [(f, j) for f in range(len(flows)) for j in range(len(flows[f][1]))]
            if r >= 1:
                programs.append((r, [(f, world - 1 - r, j) for f, j in every]))
            if r <= world - 2:
                programs.append((r, [(f, world - 1 + r, j) for f, j in every]))
        return flows, programs
    nsteps = 2 * (world - 1) if collective == "all_reduce" else world - 1
    per_rank = math.ceil(data / world)
    loops = []
    left = per_rank
    while left > 0:
        loops.append(min(chunk, left))
        left -= loops[-1]
    progs: list[list[tuple[int, int, int]]] = [[] for _ in range(world)]
    for portion in loops:
        base = len(flows)
        sl = _split(portion, slice_)
        for i in range(world):
            flows.append(([((i + k) % world, (i + k + 1) % world) for k in range(nsteps)], sl))
        for r in range(world):
            for k in range(nsteps):
                f = base + (r - k) % world
                progs[r].extend((f, k, j) for j in range(len(sl)))
    return flows, list(enumerate(progs))


def collective_time(topology: Topology | str, collective: str, nbytes: int, world: int, *,
                    algorithm: str | None = None, protocol: str | None = None) -> CollectiveResult:
    """Modelled time of one NCCL ``collective`` over a buffer of ``nbytes`` bytes on ``world`` GPUs.

    ``collective``: ``all_reduce``, ``reduce_scatter``, ``all_gather`` or ``broadcast`` (``nbytes`` is
    the whole buffer: reduce-scatter's input, all-gather's output, as nccl-tests and
    ``validation/probes/ddp_step.py`` count it). ``algorithm`` / ``protocol`` force NCCL's choice
    (``NCCL_ALGO`` / ``NCCL_PROTO``); by default :func:`select` picks. Raises :class:`ConfigError` naming
    the argument for an unknown collective, algorithm or protocol, a disabled protocol, or ``world``
    outside ``2..max_gpus``.
    """
    topo = load_topology(topology)
    _check(topo, collective, nbytes, world)
    algo0, proto0 = select(topo, collective, nbytes, world)
    algo = algorithm or algo0
    proto = protocol or proto0
    if algo not in ALGORITHMS:
        raise ConfigError(f"argument algorithm: {algo!r} is not one of {', '.join(ALGORITHMS)}")
    if algo == "tree" and collective != "all_reduce":
        raise ConfigError(f"argument algorithm: NCCL runs {collective} by ring only on one node, not by tree")
    if proto not in PROTOCOLS:
        raise ConfigError(f"argument protocol: {proto!r} is not one of {', '.join(PROTOCOLS)}")
    if not topo.nccl.protocols[proto].enabled:
        raise ConfigError(f"argument protocol: {proto} is disabled in topology {topo.name} "
                          f"(nccl.protocols.{proto}.enabled)")
    nc = channels_for(topo, nbytes, algo, proto, world)
    chunk, slice_, slots = _geometry(topo, collective, proto)
    data = math.ceil(nbytes / nc)
    flows, programs = _plan(collective, algo, world, data, chunk, slice_)
    span = _run(flows, programs, _data_rate(topo, collective, algo, proto, nc), _hop_s(topo, algo, proto), slots)
    t = max(topo.nccl.call_overhead_us * 1e-6, _latency_s(topo, algo, proto) + span)
    return CollectiveResult(collective, world, nbytes, t, algo, proto, nc)


def sweep(topology: Topology | str, collective: str, world: int, sizes: list[int]) -> list[CollectiveResult]:
    """:func:`collective_time` for each of ``sizes`` (bytes)."""
    topo = load_topology(topology)
    return [collective_time(topo, collective, s, world) for s in sizes]
