"""Multi-GPU models: NCCL's collectives over a machine's links and PyTorch DDP's training step.

Owns: the topology schema and loading (:mod:`gpusim.multigpu.topology`, ``configs/topologies/*.toml``),
the SimPy model of NCCL's collectives (:mod:`gpusim.multigpu.nccl`) and the DDP step model
(:mod:`gpusim.multigpu.ddp`). Documented in ``docs/multigpu.md``.

Must not import: cupy, torch, the engines (gpusim.functional, gpusim.timing). May import simpy, numpy,
pydantic, gpusim.config and gpusim.errors.

Example::

    from gpusim import multigpu
    r = multigpu.collective_time("hgx_h100_nvswitch", "all_reduce", 1 << 30, world=4)
    r.seconds, r.busbw_GBps, r.protocol
    step = multigpu.ddp_step("hgx_h100_nvswitch", multigpu.mlp_layers(4096, 8, batch=64), world=4)
    step.seconds, step.efficiency
"""

from gpusim.multigpu.ddp import DDPStep, Layer, buckets, ddp_step, mlp_layers, scaling
from gpusim.multigpu.nccl import COLLECTIVES, CollectiveResult, bus_factor, collective_time, select, sweep
from gpusim.multigpu.topology import Topology, available, load_topology

__all__ = ["COLLECTIVES", "CollectiveResult", "DDPStep", "Layer", "Topology", "available", "buckets",
           "bus_factor", "collective_time", "ddp_step", "load_topology", "mlp_layers", "scaling", "select", "sweep"]
