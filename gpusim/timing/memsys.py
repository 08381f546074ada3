"""The global-memory hierarchy of the timing model: per-SM sectored L1, a shared
sectored L2, and DRAM, each a cache and/or a bandwidth server.

Owns: cache state (which 32 B sectors of which 128 B lines are present), the
time a warp's global access completes, and the hit/miss/byte counters under
their Nsight Compute names (hardware-facts.md §7). It does not decide which
sectors a warp touches (that is the address pattern, :mod:`gpusim.memmodel`)
nor when a warp may issue (that is :mod:`gpusim.timing.sm`).

The model, with its sources (hardware-facts.md section numbers):

* L1 (§2): 128 B lines of four 32 B sectors, capacity ``l1.unified_bytes``
  minus the shared-memory carveout of the launch; fully associative, LRU
  (associativity is not modelled); allocate on load miss, write-through and no
  allocate on store (the NVIDIA L1 policy for global stores, NCU
  #memory-tables). Its tag stage handles one 128 B line per cycle, so a warp
  access that touches k lines occupies it k cycles (§6: the uncoalesced rows).
  ``ld.global.cg``, ``.cv`` and ``.volatile`` loads bypass it.
* L2 (§2): one device-wide sectored cache of ``l2.size_bytes`` (fully
  associative LRU; partitions and slices are not modelled), write-back and
  write-allocate, with a bandwidth server of ``l2.bandwidth_bytes_per_s``.
  Atomics and reductions execute there.
* DRAM (§2): a bandwidth server of ``dram.bandwidth_bytes_per_s`` x ``dram.efficiency`` (the
  sustained share of the peak: 0.886 measured on the H100 by a 1 GiB copy) that moves
  ``dram.access_granularity_bytes`` (64 B on the H100: a missed 32 B sector
  fetches its aligned 64 B pair, MEAS §6 row "32i"); dirty L2 sectors are
  written back on eviction (32 B each). Data still dirty when a kernel ends is
  not counted as written (the L2 keeps it).
* Latencies are the measured load-to-use figures of §3 (``l1.latency_cycles``,
  ``l2.latency_cycles``, ``dram.latency_cycles``); queueing at a busy server
  adds to them: a request starts at ``max(arrival, server free)`` and holds the
  server for ``bytes / (bytes per cycle)``. This is Little's law in
  mechanism: bandwidth = bytes in flight / latency until a server saturates.

Every launch starts with empty caches, as Nsight Compute's default
``--cache-control all`` flushes them before each profiled kernel.

Imports numpy and gpusim.config only; never simpy or cupy.
"""

from __future__ import annotations

import collections

import numpy as np

from gpusim.config import GPUConfig

__all__ = ["SectorCache", "MemorySystem", "LOCAL_BASE"]

#: Base of the address range that local memory is mapped to for the caches: per warp, the
#: same local word of 32 lanes is 128 consecutive bytes (local memory is interleaved so
#: that uniform per-thread offsets coalesce, as in CUDA's local-memory layout).
LOCAL_BASE = 1 << 52
_LOCAL_SECTOR = LOCAL_BASE // 32


class SectorCache:
    """A fully associative LRU cache of lines with per-sector valid and dirty bits.

    Args:
        capacity_lines: lines it holds (>= 1).

    Lines are integers (byte address // line size); sector masks are ints with
    one bit per sector of the line (4 bits for 128 B lines of 32 B sectors).
    """

    def __init__(self, capacity_lines: int):
        self.capacity = max(1, int(capacity_lines))
        self.lines: collections.OrderedDict[int, list[int]] = collections.OrderedDict()

    def dirty_sectors(self) -> int:
        """Sectors held dirty (written, not yet written back)."""
        return sum(_POPCOUNT[d] for _, d in self.lines.values())

    @property
    def full(self) -> bool:
        """Every line is in use (the next fill of a new line evicts one)."""
        return len(self.lines) >= self.capacity

    def lookup(self, line: int, mask: int) -> int:
        """The sectors of ``mask`` present in ``line`` (a hit refreshes its LRU position)."""
        entry = self.lines.get(line)
        if entry is None:
            return 0
        self.lines.move_to_end(line)
        return entry[0] & mask

    def fill(self, line: int, mask: int, dirty: bool = False) -> tuple[int, int] | None:
        """Make sectors ``mask`` of ``line`` present (and dirty if ``dirty``).

        Returns the evicted ``(line, dirty sector mask)`` if a line had to go, else ``None``.
        """
        entry = self.lines.get(line)
        if entry is not None:
            entry[0] |= mask
            if dirty:
                entry[1] |= mask
            self.lines.move_to_end(line)
            return None
        self.lines[line] = [mask, mask if dirty else 0]
        if len(self.lines) > self.capacity:
            old, (_, d) = self.lines.popitem(last=False)
            return old, d
        return None


def _lines(sectors: np.ndarray) -> tuple[list[int], list[int]]:
    """Group sorted distinct sector numbers into (lines, 4-bit sector masks)."""
    lines = sectors >> 2
    if lines[0] == lines[-1]:
        return [int(lines[0])], [int(np.bitwise_or.reduce(1 << (sectors & 3)))]
    uniq, start = np.unique(lines, return_index=True)
    masks = np.bitwise_or.reduceat(1 << (sectors & 3), start)
    return uniq.tolist(), masks.tolist()


_POPCOUNT = [bin(m).count("1") for m in range(16)]
#: 4-bit sector mask -> the 64 B DRAM granules (sector pairs) it touches, as a sector mask.
_PAIRS = [(0b0011 if m & 0b0011 else 0) | (0b1100 if m & 0b1100 else 0) for m in range(16)]


class MemorySystem:
    """L1s, L2 and DRAM of one GPU for one launch.

    Args:
        cfg: the GPU configuration.
        l1_bytes: L1 data capacity per SM for this launch (unified array minus
            the shared-memory carveout), bytes.

    Methods take ``sectors``: the distinct 32 B sector numbers (byte address
    // 32) of one warp access, a sorted int64 array, and return the cycle the
    access completes (data in registers for loads, accepted by L2 for stores).
    """

    def __init__(self, cfg: GPUConfig, l1_bytes: int):
        self.l1_lines = max(1, l1_bytes // cfg.l1.line_bytes)
        self.l1: dict[int, SectorCache] = {}
        self.l1_free: dict[int, int] = collections.defaultdict(int)
        self.l2 = SectorCache(cfg.l2.size_bytes // cfg.l2.line_bytes)
        self.l2_free = 0.0
        self.dram_free = 0.0
        self.sector = cfg.l2.sector_bytes
        self.l2_bpc = cfg.l2.bandwidth_bytes_per_s / cfg.clock_hz
        self.dram_bpc = cfg.dram.bandwidth_bytes_per_s * cfg.dram.efficiency / cfg.clock_hz
        self.granule = cfg.dram.access_granularity_bytes
        self.lat_l1, self.lat_l2, self.lat_dram = cfg.l1.latency_cycles, cfg.l2.latency_cycles, cfg.dram.latency_cycles
        self.tag_lines = cfg.l1.tag_lines_per_cycle
        self.count = collections.Counter()
        #: When a dict, loads and atomics record where each 32 B sector was served:
        #: sector number (address // 32) -> ``"L1"``, ``"L2"`` or ``"DRAM"`` (for the diagrams).
        self.served: dict[int, str] | None = None

    # ---------------------------------------------------------------- servers
    def _l1_stage(self, sm: int, now: int, cycles: float) -> float:
        t = max(now, self.l1_free[sm])
        self.l1_free[sm] = t + cycles
        return t

    def _l2_serve(self, t: float, n_sectors: int) -> float:
        start = max(t, self.l2_free)
        self.l2_free = start + n_sectors * self.sector / self.l2_bpc
        return start

    def _dram_serve(self, t: float, nbytes: int) -> float:
        start = max(t, self.dram_free)
        self.dram_free = start + nbytes / self.dram_bpc
        return start

    def _l2_fill(self, line: int, mask: int, dirty: bool, t: float) -> None:
        ev = self.l2.fill(line, mask, dirty)
        if ev is not None and ev[1]:
            nbytes = _POPCOUNT[ev[1]] * self.sector
            self.count["dram_write_bytes"] += nbytes
            self._dram_serve(t, nbytes)

    def _granules(self, miss: int) -> int:
        """The sectors DRAM delivers for the missed sectors ``miss`` of a line (whole 64 B granules)."""
        return _PAIRS[miss] if self.granule > self.sector else miss

    def _serve(self, line: int, mask: int, level: str) -> None:
        for k in range(4):
            if mask >> k & 1:
                self.served[line * 4 + k] = level

    def _l2_read(self, t: float, lines: list[int], masks: list[int], op: str = "read") -> float:
        """Read sectors through L2 (filling misses from DRAM); return completion.
        ``op`` names the counters (``read``, ``atom``, ``red``)."""
        c = self.count
        n = sum(_POPCOUNT[m] for m in masks)
        start = self._l2_serve(t, n)
        done = start + self.lat_l2
        dram_bytes = 0
        for line, mask in zip(lines, masks):
            hit = self.l2.lookup(line, mask)
            miss = mask & ~hit
            c[f"l2_{op}_hits"] += _POPCOUNT[hit]
            if self.served is not None:
                self._serve(line, hit, "L2")
                self._serve(line, miss, "DRAM")
            if miss:
                fetch = self._granules(miss)
                dram_bytes += _POPCOUNT[fetch] * self.sector
                self._l2_fill(line, fetch, False, start)
        c[f"l2_{op}_sectors"] += n
        c[f"l2_{op}_requests"] += len(lines)
        if dram_bytes:
            c["dram_read_bytes"] += dram_bytes
            done = self._dram_serve(start, dram_bytes) + self.lat_dram
        return done

    # ---------------------------------------------------------------- accesses
    def load(self, sm: int, now: int, sectors: np.ndarray, cache_l1: bool = True,
             wavefronts: int | None = None) -> float:
        """A warp's global (or local) load; returns the cycle its data is ready.

        The L1 takes ``max(wavefronts, lines / l1.tag_lines_per_cycle)`` cycles for it: the data
        stage's bank wavefronts (``wavefronts``, shared memory's rule; None counts a cycle per
        line) or the tag stage's lookups, whichever is longer (measured on the H100:
        ``validation/probes/l1_stride.py``)."""
        lines, masks = _lines(sectors)
        c = self.count
        stage = len(lines) if wavefronts is None else max(wavefronts, len(lines) / self.tag_lines)
        t = self._l1_stage(sm, now, stage)
        n = len(sectors)
        c["l1_ld_sectors"] += n
        dram_before = c["dram_read_bytes"]
        done = self._load(sm, t, lines, masks, cache_l1)
        if sectors[0] < _LOCAL_SECTOR:
            c["dram_read_bytes_global_ld"] += c["dram_read_bytes"] - dram_before
        return done

    def _load(self, sm: int, t: int, lines: list[int], masks: list[int], cache_l1: bool) -> float:
        c = self.count
        if not cache_l1:
            return self._l2_read(t, lines, masks)
        l1 = self.l1.get(sm)
        if l1 is None:
            l1 = self.l1[sm] = SectorCache(self.l1_lines)
        miss_lines, miss_masks = [], []
        hits = 0
        for line, mask in zip(lines, masks):
            hit = l1.lookup(line, mask)
            hits += _POPCOUNT[hit]
            if self.served is not None:
                self._serve(line, hit, "L1")
            if hit != mask:
                miss_lines.append(line)
                miss_masks.append(mask & ~hit)
        c["l1_ld_hits"] += hits
        done = t + self.lat_l1
        if miss_lines:
            done = max(done, self._l2_read(t, miss_lines, miss_masks))
            for line, mask in zip(miss_lines, miss_masks):
                l1.fill(line, mask)
        return done

    def store(self, sm: int, now: int, sectors: np.ndarray) -> float:
        """A warp's global (or local) store: through L1 (no allocate) into L2 (write-back)."""
        lines, masks = _lines(sectors)
        c = self.count
        t = self._l1_stage(sm, now, len(lines))
        n = len(sectors)
        c["l1_st_sectors"] += n
        c["l2_write_sectors"] += n
        start = self._l2_serve(t, n)
        for line, mask in zip(lines, masks):
            self._l2_fill(line, mask, True, start)
        return start + self.lat_l2

    def atomic(self, sm: int, now: int, sectors: np.ndarray, serial: int, reduction: bool) -> float:
        """A warp's global ``atom``/``red``, executed in L2.

        ``serial``: the most lanes updating one address (they are applied one
        after the other, one L2 cycle each, ASSUMED).
        """
        lines, masks = _lines(sectors)
        t = self._l1_stage(sm, now, len(lines))
        done = self._l2_read(t, lines, masks, "red" if reduction else "atom")
        for line, mask in zip(lines, masks):
            self._l2_fill(line, mask, True, t)
        return done + serial - 1

    def warm(self, sectors: np.ndarray, stored: bool = False) -> None:
        """Sectors that CTAs of SMs not simulated load (``stored`` False) or store (sampled timing):
        make them present in L2 as their accesses would, load misses fetched from DRAM in granules,
        stores dirty (written whole, no fetch), without holding any server (their bandwidth is not
        the simulated SMs' share). Counted apart: ``shadow_dram_read_bytes``, and the write-backs of
        the dirty lines their fills evict, ``shadow_dram_write_bytes``."""
        lines, masks = _lines(sectors)
        l2 = self.l2
        dram = written = 0
        for line, mask in zip(lines, masks):
            if stored:
                ev = l2.fill(line, mask, True)
            else:
                miss = mask & ~l2.lookup(line, mask)
                if not miss:
                    continue
                fetch = self._granules(miss)
                dram += _POPCOUNT[fetch] * self.sector
                ev = l2.fill(line, fetch)
            if ev is not None and ev[1]:
                written += _POPCOUNT[ev[1]] * self.sector
        self.count["shadow_dram_read_bytes"] += dram
        self.count["shadow_dram_write_bytes"] += written

    # ---------------------------------------------------------------- counters
    def metrics(self) -> dict[str, float]:
        """Counters under Nsight Compute names (hardware-facts.md §7); rates in percent."""
        c = self.count

        def pct(a: int, b: int) -> float:
            return 100.0 * a / b if b else 0.0
        lookups = c["l1_ld_sectors"] + c["l1_st_sectors"]
        return {
            "l1tex__t_sector_hit_rate.pct": pct(c["l1_ld_hits"], lookups),
            "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct": pct(c["l1_ld_hits"], c["l1_ld_sectors"]),
            "lts__t_sectors_op_read.sum": c["l2_read_sectors"],
            "lts__t_sectors_op_write.sum": c["l2_write_sectors"],
            "lts__t_sectors_op_atom.sum": c["l2_atom_sectors"],
            "lts__t_sectors_op_red.sum": c["l2_red_sectors"],
            "lts__t_requests_srcunit_tex_op_read.sum": c["l2_read_requests"],
            "lts__t_sector_op_read_hit_rate.pct": pct(c["l2_read_hits"], c["l2_read_sectors"]),
            "dram__bytes_read.sum": c["dram_read_bytes"],
            "dram__bytes_write.sum": c["dram_write_bytes"],
        }
