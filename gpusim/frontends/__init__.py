"""Front-ends: kernels as users write them (CUDA C, Numba, Triton), compiled to PTX and launched on gpusim
with their own conventions.

Each module owns one front-end: :mod:`gpusim.frontends.cupy_kernels` (CuPy's ``ElementwiseKernel`` and
``ReductionKernel``), :mod:`gpusim.frontends.numba` (``@numba.cuda.jit`` kernels) and
:mod:`gpusim.frontends.triton` (``@triton.jit`` kernels). Their compilers are optional extras (``cuda``,
``numba``, ``triton``), imported only inside the functions that need them. The front-ends produce PTX and
reach the engines only through the public API (:mod:`gpusim.module`); they never import simpy or cupy.
CUDA C source itself is the API's (``RawModule(code=...)``, compiled by the toolchain module
:mod:`gpusim.nvrtc`, beside :mod:`gpusim.ptxas`).
"""
