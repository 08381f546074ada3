"""The global-memory footprint of CTAs: which 32 B sectors each CTA loads and stores, in order.

Owns: :func:`run_footprints`, a functional run of a range of CTAs (exactly as
:func:`gpusim.functional.launch.run_blocks`) that also returns, per CTA, the
distinct sectors its global loads, stores and atomics touched, each with the ordinal of
the CTA's memory step that touched it first and whether it was a store (an atomic counts as a
store of its whole sector: the L2 holds it dirty). The
sampled timing model uses them to let the CTAs of the SMs it does not simulate
fill the L2 (clean or dirty) as they would on the whole GPU
(:mod:`gpusim.timing.sampling`). Imports numpy, isa, gpusim.memmodel and the
functional engine; never simpy or cupy.
"""

from __future__ import annotations

import collections

import numpy as np

from gpusim.functional.engine import ChunkExecutor, Grid
from gpusim.functional.launch import run_blocks
from gpusim.functional.memory import GLOBAL_BASE, GlobalMemory
from gpusim.memmodel import sector_byte_masks
from gpusim.memmodel.coalesce import FULL_SECTOR
from isa.ir import Kernel

__all__ = ["run_footprints"]

_SECTOR_BITS = 36  # (sector relative to GLOBAL_BASE: 1 TiB of global memory) << 1 | stored


class _Recorder(ChunkExecutor):
    """A chunk executor that keeps the distinct (CTA, sector, stored) keys of global loads and
    stores with the step that first touched each, and the CTAs taking part in each such step."""

    #: Buffered pairs above which repeats are dropped (bounds memory in long loops, ~ 64 MiB).
    COMPACT = 1 << 22

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.accesses = []
        self.keys: list[np.ndarray] = []
        self.key_steps: list[np.ndarray] = []
        self.key_bytes: list[np.ndarray] = []  # per key: the bytes of its sector written (32-bit mask; loads: all)
        self.parts: list[np.ndarray] = []  # per load step: its CTAs (keys >> _SECTOR_BITS)
        self.buffered = 0
        self.limit = self.COMPACT

    def consume_accesses(self) -> None:
        keys, written = [], []
        for a in self.accesses:
            if a.space == "global":
                # an atomic leaves its sector dirty in L2 (read there, then written whole): a store of it all
                sectors = ((a.addrs - np.uint64(GLOBAL_BASE)) >> np.uint64(5) << np.uint64(1)) | np.uint64(a.op != "ld")
                cta = self.block_ids[self.block_of[a.lanes]].astype(np.uint64)
                keys.append((cta << np.uint64(_SECTOR_BITS)) | sectors)
                written.append(sector_byte_masks(a.addrs, a.width) if a.op == "st" else np.full(a.addrs.size, FULL_SECTOR, np.uint64))
        self.accesses.clear()
        if not keys:
            return
        k, m = _union(np.concatenate(keys), np.concatenate(written))
        self.parts.append(np.unique(k >> np.uint64(_SECTOR_BITS)))
        self.keys.append(k)
        self.key_bytes.append(m)
        self.key_steps.append(np.full(k.size, len(self.parts) - 1, np.int64))
        self.buffered += k.size
        if self.buffered > self.limit:
            self._compact()

    def _compact(self) -> None:
        """Keep each (CTA, sector) pair once, with its first step."""
        keys, steps = np.concatenate(self.keys), np.concatenate(self.key_steps)
        order = np.lexsort((steps, keys))
        keys, steps, written = keys[order], steps[order], np.concatenate(self.key_bytes)[order]
        first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        self.keys, self.key_steps = [keys[first]], [steps[first]]
        self.key_bytes = [np.bitwise_or.reduceat(written, first)]
        self.buffered = first.size
        self.limit = max(self.COMPACT, 2 * self.buffered)  # so compacting stays linear overall

    def footprints(self) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """``{CTA: (sectors in step order, ordinal of the CTA's memory step that first touched each,
        whether that was a store, the bytes of the sector the CTA wrote)}``."""
        if not self.keys:
            return {}
        self._compact()
        keys, steps, written = self.keys[0], self.key_steps[0], self.key_bytes[0]
        ctas = (keys >> np.uint64(_SECTOR_BITS)).astype(np.int64)
        low = (keys & np.uint64((1 << _SECTOR_BITS) - 1)).astype(np.int64)
        sectors, stored = (low >> 1) + GLOBAL_BASE // 32, (low & 1).astype(bool)
        # Ordinal of a step among the load steps its CTA took part in.
        n_steps = len(self.parts)
        part_cta = np.concatenate(self.parts).astype(np.int64)
        part_step = np.repeat(np.arange(n_steps), [p.size for p in self.parts])
        code = part_cta * n_steps + part_step
        order = np.argsort(code, kind="stable")
        code, part_cta = code[order], part_cta[order]
        group_start = np.flatnonzero(np.r_[True, part_cta[1:] != part_cta[:-1]])
        rank = np.arange(code.size) - np.repeat(group_start, np.diff(np.r_[group_start, code.size]))
        ordinal = rank[np.searchsorted(code, ctas * n_steps + steps)]
        order = np.lexsort((sectors, ordinal, ctas))  # by CTA, then step, then sector
        ctas, sectors, ordinal, stored = ctas[order], sectors[order], ordinal[order], stored[order]
        written = written[order]
        bounds = np.flatnonzero(np.diff(ctas)) + 1
        return {c: parts for c, *parts in zip(ctas[np.r_[0, bounds]].tolist(), np.split(sectors, bounds),
                                              np.split(ordinal, bounds), np.split(stored, bounds),
                                              np.split(written, bounds))}


def _union(keys: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``keys`` (sorted) with the union of their ``masks``."""
    order = np.argsort(keys, kind="stable")
    keys, masks = keys[order], masks[order]
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[first], np.bitwise_or.reduceat(masks, first)


def run_footprints(kernel: Kernel, grid: Grid, params: np.ndarray, memory: GlobalMemory, dynamic_shared: int,
                   sm_count: int, max_warps: int, max_steps: int, first: int, end: int,
                   counters: tuple[np.ndarray, np.ndarray],
                   stats: "collections.Counter[str]", jobs: int = 1,
                   paths: list | None = None) -> dict[int, tuple[np.ndarray, ...]]:
    """Execute CTAs ``first .. end - 1`` like :func:`~gpusim.functional.launch.run_blocks` and return
    their global-memory footprints: ``{linear CTA id: (sectors, steps, stored, written)}``, where ``sectors``
    are the distinct 32 B sector numbers (byte address // 32, int64) the CTA's global loads,
    stores and atomics touched, in the order of the CTA's memory steps (ascending within a step; a sector both
    loaded and stored appears once for each), ``steps`` (int64, same length) the ordinal of the
    CTA's memory step (0, 1, ...: steps of the chunked engine in which the CTA executed a global
    load, store or atomic) that touched each first, ``stored`` (bool) whether that was a store or
    atomic, and ``written`` (uint64) the 32-bit mask of the sector's bytes the CTA stored (all 32
    for loads and atomics).
    CTAs that touch no global memory are absent. ``jobs``: worker processes that may run the chunks
    (:func:`~gpusim.functional.launch.run_blocks`; the footprints do not depend on it); how they ran
    is appended to ``paths`` if given.

    Raises:
        gpusim.errors.KernelFault: the first fault (memory written before it stays written).
    """
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    path = run_blocks(kernel, grid, params, memory, dynamic_shared, sm_count, max_warps, max_steps, first, end,
                      counters, stats, executor=_Recorder, jobs=jobs, collect=_Recorder.footprints, gather=out.update)
    if paths is not None:
        paths.append(path)
    return out
