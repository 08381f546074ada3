"""The kernel suite: the course-notes kernels, their PTX, launches and numpy oracles.

Owns:

* ``cuda/*.cu`` -- the seed kernels (reductions v0-v7, matmul, 1D convolution,
  copies, AoS/SoA, ILP, divergence, warp primitives, bank conflicts) as CUDA C,
  each file headed by the exact ``nvcc`` command that produced its PTX;
* ``ptx/*.ptx`` -- that PTX, committed unmodified, plus two hand-written PTX
  micro-kernel files for teaching (``micro_shared.ptx``: bank-conflict
  strides; ``micro_global.ptx``: coalescing patterns);
* one module per kernel family beside its ``.cu``/``.ptx`` (``reduce.py``,
  ``matmul.py``, ``conv.py``, ``memory.py``, ``ilp.py``, ``divergence.py``,
  ``shared.py``, ``micro_shared.py``, ``micro_global.py``; ``reduce_int.py`` for
  the seeds' A100 kernels, kept out of ``CASES``): one :class:`Case` per kernel,
  whose ``run`` function launches it and returns a :class:`CaseRun` holding what
  the kernel produced and what a numpy oracle says it must produce;
* the core they share: :mod:`.case` (Case, CaseRun, run_case, check),
  :mod:`.launch` (the launcher, input helpers), :mod:`.dryrun` (DryRun),
  :mod:`.registry` (which families, in which order), :mod:`.sizes` (timing and
  scale sizes), :mod:`.occupancy` (copy_occupancy's shared-memory sizes).

This package re-exports the public names of those modules; ``CASES`` is the
registry's collection of every family in :data:`~.registry.FAMILIES` order.

One source, two executors.  A case's ``run(xp, n, rng)`` receives ``xp`` --
either the ``gpusim`` module or the ``cupy`` module -- and uses nothing of it
but ``xp.RawModule(path=...)``, ``module.get_function(name)``,
``kernel(grid, block, args, shared_mem=...)`` (args: ``xp`` arrays and numpy
scalars ``np.uint32``/``np.int32``/``np.float32``), ``xp.asarray``,
``xp.zeros``, ``xp.empty`` and ``array.get()``.  So the very same case code
runs in the simulator and on a real GPU (``validation/probes/suite_on_gpu.py``).
:class:`DryRun` is a third ``xp`` that launches nothing but checks every
launch against the PTX ``.entry`` parameter list (used by the static tests).

Every module of this package imports only numpy, the standard library and its
siblings (relative imports), so the package can be loaded on a machine that has
CuPy but none of gpusim's other dependencies (by import, or by the file path of
this ``__init__.py``: ``validation/probes/suite_on_gpu.py`` does).

Sizes: ``n`` means what :attr:`Case.n_means` says (elements, matrix side...).
Exactness: every oracle reproduces the kernel's own order of floating-point
operations (tree shapes, butterfly exchanges, accumulation order), or uses
inputs whose results are exact in any order (small integers, dyadic
fractions), so nearly every case is ``exact=True``: outputs must equal the
oracle bit for bit.  The one exception is ``reduce_atomic_f32``, whose block
partials are combined by ``atomicAdd`` in an unspecified order (see its rtol).

Usage::

    import gpusim, numpy as np
    from gpusim.suite import CASES, run_case, check
    r = run_case(CASES["reduce_v2"], gpusim)          # default_n, seed 0
    ok, message = check(r)
"""

from __future__ import annotations

from .case import (
    CUDA_DIR,
    PTX_DIR,
    SUITE_DIR,
    Case,
    CaseRun,
    SizeError,
    check,
    compare,
    cuda_path,
    ptx_path,
    run_case,
)
from .dryrun import DryRun, entry_params
from .occupancy import COPY_OCCUPANCY_SMEM, copy_occupancy_smem
from .registry import FAMILIES, SEED_FAMILIES, collect, groups
from .sizes import scale_sizes, timing_sizes

__all__ = [
    "CASES", "COPY_OCCUPANCY_SMEM", "CUDA_DIR", "FAMILIES", "GROUPS", "PTX_DIR", "SCALE_SIZES", "SEED_FAMILIES",
    "SUITE_DIR", "TIMING_SIZES", "Case", "CaseRun", "DryRun", "SizeError", "check", "compare",
    "copy_occupancy_smem", "cuda_path", "entry_params", "ptx_path", "run_case",
]

#: name -> Case, in suite order (the families of FAMILIES, each in its CASE_LIST order)
CASES: dict[str, Case] = collect(FAMILIES)
_CASE_LIST: list[Case] = list(CASES.values())

#: group -> case names, in suite order
GROUPS: dict[str, list[str]] = groups(CASES)

#: case name -> problem sizes n (ascending; the first is the case's test_n) of the timing comparison
TIMING_SIZES: dict[str, tuple[int, ...]] = timing_sizes(CASES)

#: case name -> problem size of the scale tier (GPU-filling; see :func:`.sizes.scale_sizes`)
SCALE_SIZES: dict[str, int] = scale_sizes(CASES)
