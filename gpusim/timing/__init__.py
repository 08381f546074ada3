"""The timing engine: WHEN a kernel's instructions execute, cycle by cycle, on a
discrete-event model of the GPU (SimPy's event order, its own event loop).

Modules: ``decode`` (per-PC unit, latency, register dependences), ``memsys``
(sectored L1/L2 and DRAM: caches and bandwidth servers), ``policies`` (warp
selection policies by registered name), ``sm`` (warp schedulers, scoreboards,
pipes, shared-memory data stage, stall accounting), ``dispatch`` (the CTA
dispatcher: the block scheduler), ``context`` (what an SM sees of its launch),
``eventloop`` (the cycles and what is scheduled at them, in SimPy's order),
``gpu`` (the launch: components composed, the event loop's run, metrics under Nsight
Compute names),
``sampling`` (the entry point: a launch in detail, or a slice of SMs and
waves with the rest of the grid run functionally and its timing extrapolated).
Values are computed once, by the functional engine, when an instruction
issues (:mod:`gpusim.functional.warpstep`); this package consumes only the
outcome. Imports numpy, isa, gpusim.config, gpusim.occupancy,
gpusim.memmodel and gpusim.functional; never cupy.
"""

from gpusim.timing.sampling import Policy, SamplingInfo, run_timing

__all__ = ["run_timing", "Policy", "SamplingInfo"]
