"""gpusim: a pure-Python GPU simulator for a strict subset of NVIDIA PTX.

The public API mirrors CuPy, so that a script switches between the simulator
and a real GPU by changing one import::

    import gpusim as xp            # or: import cupy as xp
    mod = xp.RawModule(path="reduce.ptx")
    k = mod.get_function("reduce_v3")
    d_in = xp.asarray(host); d_out = xp.zeros(blocks, np.float32)
    k((blocks,), (256,), (d_in, d_out, np.uint32(n)), shared_mem=256 * 4)
    d_out.get()

Layers: :mod:`isa` (PTX subset, opcode table, semantics), :mod:`gpusim.functional`
(the vectorised SIMT engine), :mod:`gpusim.timing` (the SimPy cycle model), :mod:`gpusim.config` (GPU descriptions),
:mod:`gpusim.occupancy`, :mod:`gpusim.suite` (teaching kernels), :mod:`gpusim.cli`.
"""

from gpusim.device import MODES, Device, get_device
from gpusim.errors import (
    ArrayIndexError,
    CompileError,
    ConfigError,
    GpusimError,
    KernelFault,
    LaunchError,
    OutOfMemoryError,
    PTXError,
)
from gpusim.frontends.cupy_kernels import ElementwiseKernel, ReductionKernel
from gpusim.module import RawKernel, RawModule
from gpusim.ndarray import (
    arange,
    array,
    asarray,
    ascontiguousarray,
    asnumpy,
    empty,
    empty_like,
    full,
    full_like,
    ndarray,
    ones,
    ones_like,
    zeros,
    zeros_like,
)

__version__ = "0.1.0"

__all__ = [
    "Device", "get_device", "MODES", "RawModule", "RawKernel", "ElementwiseKernel", "ReductionKernel", "ndarray",
    "asarray", "array", "asnumpy", "empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "arange", "ascontiguousarray", "GpusimError", "ConfigError", "LaunchError", "KernelFault", "PTXError",
    "CompileError", "ArrayIndexError", "OutOfMemoryError",
]
