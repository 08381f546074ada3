"""The H100's shared-memory occupancy arithmetic behind ``copy_occupancy`` (Little's law).

Owns :func:`copy_occupancy_smem`, :data:`COPY_OCCUPANCY_SMEM` and the H100 constants they use.
A helper of the memory family, not a family (it has no PTX of its own).

Imports the standard library and :mod:`.case`, :mod:`.launch` only; never gpusim's engines, never cupy.
"""

from __future__ import annotations

from .case import SizeError
from .launch import cdiv

__all__ = ["COPY_OCCUPANCY_SMEM", "OCC_BLOCK", "copy_occupancy_smem"]

# H100 shared memory per SM (228 KB carveout), reserved per block, allocation granularity
# (hardware-facts section 4; cudaOccMaxActiveBlocksPerMultiprocessor, driver-verified on the H100)
_H100_SMEM_PER_SM = 233472
_H100_SMEM_RESERVED_PER_BLOCK = 1024
_H100_SMEM_GRANULE = 128
_H100_SMEM_OPTIN = 232448          # sharedMemPerBlockOptin: 227 KB
OCC_BLOCK = 256                   # threads per block: 8 warps; 8 blocks = the 64-warp limit
_OCC_BLOCKS_PER_SM = (1, 2, 3, 4, 6, 8)


def copy_occupancy_smem(blocks_per_sm: int) -> int:
    """Dynamic shared memory (bytes) that limits 256-thread blocks to ``blocks_per_sm`` on an H100.

    A block allocates ``S = roundup(shared_mem + 1024, 128)`` bytes of the SM's 233472, so
    ``floor(233472 / S)`` blocks fit.  S is taken midway between the smallest allocation that
    gives ``blocks_per_sm`` blocks and the largest (rounded down to the 128 B granule), so the
    limit holds with a margin on both sides.  8 blocks of 256 threads are the warp limit
    (64 warps/SM) already, so 8 (or more) needs none.
    """
    k = int(blocks_per_sm)
    if k >= 2048 // OCC_BLOCK:
        return 0
    hi = _H100_SMEM_PER_SM / k                 # largest S giving k blocks
    lo = _H100_SMEM_PER_SM / (k + 1)           # S must exceed this
    s_cta = int((hi + lo) / 2) // _H100_SMEM_GRANULE * _H100_SMEM_GRANULE
    smem = min(s_cta - _H100_SMEM_RESERVED_PER_BLOCK, _H100_SMEM_OPTIN)
    alloc = cdiv(smem + _H100_SMEM_RESERVED_PER_BLOCK, _H100_SMEM_GRANULE) * _H100_SMEM_GRANULE
    if smem < 0 or _H100_SMEM_PER_SM // alloc != k:
        raise SizeError(f"no dynamic shared memory size gives {k} blocks of {OCC_BLOCK} threads per H100 SM")
    return smem


#: copy_occupancy's launches in order: H100 blocks per SM -> dynamic shared memory per block
#: (bytes; unused by the kernel, it only limits how many 256-thread blocks an SM holds).
#: {1: 174080, 2: 96256, 3: 67072, 4: 51456, 6: 35072, 8: 0}
COPY_OCCUPANCY_SMEM: dict[int, int] = {k: copy_occupancy_smem(k) for k in _OCC_BLOCKS_PER_SM}
