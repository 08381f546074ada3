"""The problem sizes the validation times each case at: timing comparison and scale tier.

Owns :func:`timing_sizes` and :func:`scale_sizes` (the package turns them into
``TIMING_SIZES`` and ``SCALE_SIZES`` over its registry).  Knows case names and groups,
not how a case runs.

Imports the standard library and :mod:`.case` only; never gpusim's engines, never cupy.
"""

from __future__ import annotations

from .case import Case

__all__ = ["scale_sizes", "timing_sizes"]

# The problem sizes the timing comparison (simulator timing mode vs the H100's Nsight Compute
# counters, validation/probes/timing_on_gpu.py) runs each case at: its test_n and one "medium"
# size of about 2**15 to 2**16 threads in total, small enough for the timing simulator (~30,000
# warp-instructions per host second).  n counts what the case's ``n_means`` says:
#   reduce_*:          input floats/ints (2**15 and 2**16; v3-v7 use 2 elements per thread)
#   matmul_*:          matrix side N (64: 4096 outputs; 128: 16384 outputs/threads, fewer for regtile)
#   conv1d_*:          outputs (= threads)
#   copy_*/axpy/gmem_*: elements (copy_vec4: floats, 4 per thread); aos/soa: structs (= threads)
#   local_hist8:       threads; ilp_*: elements (1, 2 or 4 per thread); divergence/warp: elements
#   transpose_*:       matrix side (256: 65536 threads); shared_stride: floats (1024 per block)
#   micro smem_*:      one warp (test_n only)
#   copy_occupancy:    floats (4 per thread): 2**18 (256 blocks) and 2**20 (1024 blocks), each
#                      size launched 6 times (COPY_OCCUPANCY_SMEM)
_MEDIUM_BY_GROUP: dict[str, tuple[int, ...]] = {
    "reduce": (2**15, 2**16),
    "matmul": (64, 128),
    "conv": (2**16,),
    "memory": (2**16,),
    "ilp": (2**16,),
    "divergence": (2**16,),
    "warp": (2**16,),
}
_MEDIUM_BY_CASE: dict[str, tuple[int, ...]] = {
    "transpose_naive": (256,), "transpose_conflict": (256,), "transpose_padded": (256,),
    "transpose_swizzled": (256,), "shared_stride": (2**16,),
    "smem_stride_u32": (), "smem_stride_v2_u32": (), "smem_stride_v4_u32": (), "smem_same_word_u32": (),
    "gmem_stride_u32": (2**16,), "gmem_offset_u32": (2**16,), "gmem_uniform_u32": (2**16,),
    "copy_occupancy": (2**18, 2**20),
    # 2**17 threads: one wave on 132 SMs at every block size (32-thread blocks: 4096 <= 32 x 132)
    "copy_block_size": (2**19,),
}


def _timing_sizes(case: Case) -> tuple[int, ...]:
    """test_n plus the medium sizes of the case (by name) or its group; a case of another group
    (shared, micro) that is not listed above is timed at its test_n only."""
    medium = _MEDIUM_BY_CASE.get(case.name, _MEDIUM_BY_GROUP.get(case.group, ()))
    return tuple(sorted({case.test_n, *medium}))


def timing_sizes(cases: dict[str, Case]) -> dict[str, tuple[int, ...]]:
    """Case name -> problem sizes n (ascending; the first is the case's test_n) of the timing comparison."""
    return {name: _timing_sizes(case) for name, case in cases.items()}


def scale_sizes(cases: dict[str, Case]) -> dict[str, int]:
    """Case name -> problem size of the scale tier of the validation: a GPU-filling launch of at
    least 4 waves on the H100's 132 SMs or at least 50,000 cycles (issue #11), so that launch
    overhead (about 4,400 cycles) is a small part of it; timed with the sampled engine.
    The one-warp micro-kernels have no scale size."""
    return {
        **{name: 2**24 for name, case in cases.items()
           if case.group in ("reduce", "conv", "ilp", "divergence", "warp")},
        **{name: 2**24 for name in ("copy_offset", "copy_stride", "copy_vec4", "copy_grid_stride", "copy_occupancy",
                                    "copy_block_size", "axpy_half", "shared_stride", "gmem_stride_u32",
                                    "gmem_offset_u32", "gmem_uniform_u32")},
        "aos_update": 2**21, "soa_update": 2**21, "local_hist8": 2**22,
        **{name: 512 for name in ("matmul_naive", "matmul_tiled", "matmul_regtile", "matmul_smem_regtile")},
        **{name: 4096 for name in ("transpose_naive", "transpose_conflict", "transpose_padded", "transpose_swizzled")},
    }
