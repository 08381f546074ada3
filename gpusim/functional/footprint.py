"""The global-memory footprint of CTAs: which 32 B sectors each CTA loads.

Owns: :func:`run_footprints`, a functional run of a range of CTAs (exactly as
:func:`gpusim.functional.launch.run_blocks`) that also returns, per CTA, the
distinct sectors its global loads touched. The sampled timing model uses them
to let the CTAs of the SMs it does not simulate warm the L2 as they would on
the whole GPU (:mod:`gpusim.timing.sampling`). Imports numpy, isa and the
functional engine; never simpy or cupy.
"""

from __future__ import annotations

import collections

import numpy as np

from gpusim.functional.engine import ChunkExecutor, Grid
from gpusim.functional.launch import CHUNK_THREADS, chunk_blocks
from gpusim.functional.memory import GLOBAL_BASE, GlobalMemory
from isa.ir import Kernel

__all__ = ["run_footprints"]

_SECTOR_BITS = 35  # sector numbers relative to GLOBAL_BASE: 1 TiB of global memory


class _Recorder(ChunkExecutor):
    """A chunk executor that keeps, per step, the distinct (CTA, sector) pairs of global loads."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.accesses = []
        self.keys: list[np.ndarray] = []

    def consume_accesses(self) -> None:
        for a in self.accesses:
            if a.op == "ld" and a.space == "global":
                sectors = (a.addrs - np.uint64(GLOBAL_BASE)) >> np.uint64(5)
                cta = self.block_of[a.lanes].astype(np.uint64) + np.uint64(self.first_block)
                self.keys.append(np.unique((cta << np.uint64(_SECTOR_BITS)) | sectors))
        self.accesses.clear()


def run_footprints(kernel: Kernel, grid: Grid, params: np.ndarray, memory: GlobalMemory, dynamic_shared: int,
                   sm_count: int, max_warps: int, max_steps: int, first: int, end: int,
                   counters: tuple[np.ndarray, np.ndarray], stats: "collections.Counter[str]") -> dict[int, np.ndarray]:
    """Execute CTAs ``first .. end - 1`` like :func:`~gpusim.functional.launch.run_blocks` and return
    ``{linear CTA id: the sorted distinct 32 B sector numbers (byte address // 32, int64) of its
    global loads}`` (CTAs that load nothing are absent).

    Raises:
        gpusim.errors.KernelFault: the first fault (memory written before it stays written).
    """
    out: dict[int, np.ndarray] = {}
    per_chunk = chunk_blocks(kernel, grid, dynamic_shared, CHUNK_THREADS)
    mask = np.uint64((1 << _SECTOR_BITS) - 1)
    for start in range(first, end, per_chunk):
        ex = _Recorder(kernel, grid, start, min(per_chunk, end - start), params, memory, dynamic_shared, counters,
                       stats, sm_count, max_warps, max_steps)
        ex.run()
        if not ex.keys:
            continue
        keys = np.unique(np.concatenate(ex.keys))
        ctas = (keys >> np.uint64(_SECTOR_BITS)).astype(np.int64)
        sectors = (keys & mask).astype(np.int64) + GLOBAL_BASE // 32
        bounds = np.flatnonzero(np.diff(ctas)) + 1
        for c, sec in zip(ctas[np.r_[0, bounds]].tolist(), np.split(sectors, bounds)):
            out[c] = sec
    return out
