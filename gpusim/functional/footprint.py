"""The global-memory footprint of CTAs: which 32 B sectors each CTA loads, in order.

Owns: :func:`run_footprints`, a functional run of a range of CTAs (exactly as
:func:`gpusim.functional.launch.run_blocks`) that also returns, per CTA, the
distinct sectors its global loads touched, each with the ordinal of the CTA's
load step that touched it first. The sampled timing model uses them
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
    """A chunk executor that keeps, per step with global loads, the distinct (CTA, sector) pairs."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.accesses = []
        self.keys: list[np.ndarray] = []

    def consume_accesses(self) -> None:
        keys = []
        for a in self.accesses:
            if a.op == "ld" and a.space == "global":
                sectors = (a.addrs - np.uint64(GLOBAL_BASE)) >> np.uint64(5)
                cta = self.block_of[a.lanes].astype(np.uint64) + np.uint64(self.first_block)
                keys.append((cta << np.uint64(_SECTOR_BITS)) | sectors)
        if keys:
            k = np.concatenate(keys)
            k = k[np.r_[True, k[1:] != k[:-1]]]  # neighbouring lanes mostly share a sector: cheap first cut
            self.keys.append(np.unique(k))
        self.accesses.clear()


def run_footprints(kernel: Kernel, grid: Grid, params: np.ndarray, memory: GlobalMemory, dynamic_shared: int,
                   sm_count: int, max_warps: int, max_steps: int, first: int, end: int,
                   counters: tuple[np.ndarray, np.ndarray],
                   stats: "collections.Counter[str]") -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Execute CTAs ``first .. end - 1`` like :func:`~gpusim.functional.launch.run_blocks` and return
    their global-load footprints: ``{linear CTA id: (sectors, steps)}``, where ``sectors`` are the
    distinct 32 B sector numbers (byte address // 32, int64) the CTA's global loads touched, in the
    order of the CTA's load steps (ascending within a step), and ``steps`` (int64, same length) the
    ordinal of the CTA's load step (0, 1, ...: steps of the chunked engine in which the CTA executed
    a global load) that touched each first. CTAs that load nothing are absent.

    Raises:
        gpusim.errors.KernelFault: the first fault (memory written before it stays written).
    """
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    per_chunk = chunk_blocks(kernel, grid, dynamic_shared, CHUNK_THREADS)
    mask = np.uint64((1 << _SECTOR_BITS) - 1)
    for start in range(first, end, per_chunk):
        ex = _Recorder(kernel, grid, start, min(per_chunk, end - start), params, memory, dynamic_shared, counters,
                       stats, sm_count, max_warps, max_steps)
        ex.run()
        if not ex.keys:
            continue
        keys = np.concatenate(ex.keys)
        step = np.repeat(np.arange(len(ex.keys)), [k.size for k in ex.keys])
        ctas = (keys >> np.uint64(_SECTOR_BITS)).astype(np.int64)
        order = np.lexsort((step, ctas))  # by CTA, then step (keys stay ascending within a step)
        keys, step, ctas = keys[order], step[order], ctas[order]
        # Ordinal of each entry's step among its CTA's load steps.
        new_cta = np.r_[True, ctas[1:] != ctas[:-1]]
        new_step = new_cta | np.r_[True, step[1:] != step[:-1]]
        count = np.cumsum(new_step)
        ordinal = count - count[np.maximum.accumulate(np.where(new_cta, np.arange(count.size), 0))]
        # Keep each (CTA, sector) once, at its first step.
        first_seen = np.sort(np.unique(keys, return_index=True)[1])
        keys, ctas, ordinal = keys[first_seen], ctas[first_seen], ordinal[first_seen]
        sectors = (keys & mask).astype(np.int64) + GLOBAL_BASE // 32
        bounds = np.flatnonzero(np.diff(ctas)) + 1
        for c, sec, o in zip(ctas[np.r_[0, bounds]].tolist(), np.split(sectors, bounds), np.split(ordinal, bounds)):
            out[c] = (sec, o)
    return out
