"""The global-memory hierarchy of the timing model: per-SM sectored L1, a shared
sectored L2, and DRAM, each a cache and/or a bandwidth server.

Owns: cache state (which 32 B sectors of which 128 B lines are present), the
time a warp's global access completes, and the hit/miss/byte counters under
their Nsight Compute names (hardware-facts.md §7). It does not decide which
sectors a warp touches (that is the address pattern, :mod:`gpusim.memmodel`)
nor when a warp may issue (that is :mod:`gpusim.timing.sm`).

Components, each behind a small request/response interface (a request is the
lines and sector masks of one warp access arriving at a cycle; the response is
the cycle it completes), composed by :class:`MemorySystem`: :class:`L1` (one
per SM; ``load``, ``store``, ``atomic``), :class:`L2` (``read``, ``write``,
``atomic``, ``warm``) and :class:`DRAM` (``read``, ``write``); all count into
one shared counter. A component knows only the one below it.

The model, with its sources (hardware-facts.md section numbers):

* L1 (§2): 128 B lines of four 32 B sectors, capacity ``l1.unified_bytes``
  minus the shared-memory carveout of the launch; fully associative, LRU
  (associativity is not modelled); allocate on load miss, write-through and no
  allocate on store (the NVIDIA L1 policy for global stores, NCU
  #memory-tables). Its tag stage handles one 128 B line per cycle, so a warp
  access that touches k lines occupies it k cycles (§6: the uncoalesced rows).
  ``ld.global.cg``, ``.cv`` and ``.volatile`` loads bypass it.
* L2 (§2): a device-wide sectored cache of ``l2.size_bytes`` (fully associative LRU; slices
  are not modelled). With ``l2.localizes_far_reads`` it is ``l2.partitions`` caches of equal
  size: a hash homes each line (or each ``l2.partition_granule_bytes`` granule) in one
  (:func:`home_partition`), each SM is near one
  (:func:`side_of`, ``l2.sm_partitions``), and a read of a line homed far looks up the near
  partition's copy first, then the home, and leaves a copy near (the A100 whitepaper's "localize"
  rule); writes and atomics go home and drop the copies. Measured: random loads over 8-48 MiB
  from all SMs (``validation/probes/random_access.py``) read from DRAM what this predicts (28 MiB:
  H100 49.0 MB, the model 45.8; one cache with far lines taking two places gave 29.4). A read
  served at a far home, hit or DRAM miss, takes ``l2.far_latency_cycles - l2.latency_cycles``
  longer (``validation/probes/far_hit.py``: +182 cycles a hit, +187 a miss on the H100).
  Nsight Compute's ``lts__t_sectors_op_read`` and ``_op_write`` count a far line's sectors at
  both partitions, a read when it misses the near copy, a write when it is not joined to the
  SM's recent request for the line. Write-back
  and write-allocate, with a bandwidth server that reads and writes share (a
  sector read holds it ``sector / l2.bandwidth_bytes_per_s``, one written
  ``sector / l2.write_bandwidth_bytes_per_s``), and in front of it, for stores,
  a write-request port of ``l2.write_requests_per_cycle`` (the L1 combines a
  store's lines with its recent ones first, ``l1.write_combine_lines``) and a
  write-data path of ``l2.write_data_bytes_per_s``. Measured on the H100
  (``validation/probes/l2_bandwidth.py``): reads alone 107 sectors a cycle,
  stores alone 62, a copy 46 of each at once: stores have a path of their own
  that reads do not hold, and share the slices with them.
  A sector written in part while not present is completed from DRAM when it
  is evicted or read. Atomics and reductions execute there. With the contended-atomics
  fields (``l2.atomic_address_cycles``, ``atomic_slice_cycles``, ``atomic_requests_per_cycle``;
  set on the H100 from ``validation/probes/atomic_contention.py``) the L1 sends a warp's lanes on
  one address as separate requests (:func:`atomic_requests`), and each request waits for the
  GPU-wide request port, its slice's atomic unit (a hash of its 512 B granule, ASSUMED) and its
  addresses' previous updates (:meth:`L2.atomic`); a read request takes its turn at its slice's
  atomic unit too (``l2.slice_read_cycles``, ``validation/probes/slice_turns.py``), and an SM's L1
  holds while more than ``l2.atomic_queue_requests`` of its atomic requests wait. Without them
  lanes updating one address are applied one after the other, ``l2.atomic_serial_cycles`` each
  (ASSUMED 1).
  Irregular access (``validation/probes/random_access.py``): an SM's L1 sends at most
  ``l1.miss_requests_per_cycle`` line requests of loads a cycle, the L2 takes
  ``l2.read_requests_per_cycle`` read requests a cycle GPU-wide, and with
  ``l2.shared_request_port`` reads, writes and atomics take turns at one port, each request
  holding it 1 / its kind's rate; stores and atomics wait while DRAM is booked more than
  ``l2.writeback_queue_cycles`` ahead (:meth:`L2.backlog`).
* DRAM (§2): a bandwidth server of ``dram.bandwidth_bytes_per_s`` x ``dram.efficiency`` (the
  sustained share of the peak: 0.886 measured on the H100 by a 1 GiB copy; reads alone
  ``dram.read_efficiency``, 0.93, writes what leaves a copy at 0.886) that moves
  ``dram.access_granularity_bytes`` (64 B on the H100: a missed 32 B sector
  fetches its aligned 64 B pair, MEAS §6 row "32i"); dirty L2 sectors are
  written back on eviction (32 B each). With ``dram.row_bytes`` it keeps ``dram.open_rows``
  rows open, and a row not open costs an activation beside the bytes (:meth:`DRAM.activations`). Data still dirty when a kernel ends is
  not counted as written (the L2 keeps it). Its latency grows with its
  utilisation (``dram.queue_cycles``, the loaded-latency curve, :class:`DRAM`).
* Latencies are the measured load-to-use figures of §3 (``l1.latency_cycles``,
  ``l2.latency_cycles``, ``dram.latency_cycles``); queueing at a busy server
  adds to them: a request starts at ``max(arrival, server free)`` and holds the
  server for ``bytes / (bytes per cycle)``. This is Little's law in
  mechanism: bandwidth = bytes in flight / latency until a server saturates.

Every launch starts with empty caches, as Nsight Compute's default
``--cache-control all`` flushes them before each profiled kernel.

Imports numpy, gpusim.config and gpusim.memmodel only; never simpy or cupy.
"""

from __future__ import annotations

import collections
import heapq
import math

import numpy as np

from gpusim.config import GPUConfig
from gpusim.memmodel.coalesce import FULL_SECTOR

__all__ = ["InFlight", "SectorCache", "DRAM", "L2", "L1", "MemorySystem", "LOCAL_BASE", "far_line", "home_partition",
           "side_of", "atomic_requests"]

#: Base of the address range that local memory is mapped to for the caches: per warp, the
#: same local word of 32 lanes is 128 consecutive bytes (local memory is interleaved so
#: that uniform per-thread offsets coalesce, as in CUDA's local-memory layout).
LOCAL_BASE = 1 << 52
_LOCAL_LINE = LOCAL_BASE >> 7
_LOCAL_SECTOR = LOCAL_BASE // 32


def _forget_done(entries: dict, t: float, bound: int) -> int:
    """Drop the entries of ``entries`` (line -> (mask, cycle ready, ...)) whose data was ready by
    cycle ``t`` once there are more than ``bound``; returns the next bound (amortised: it doubles
    with what is left)."""
    if len(entries) <= bound:
        return bound
    for line in [ln for ln, p in entries.items() if p[1] <= t]:
        del entries[line]
    return max(1 << 16, 2 * len(entries))


class InFlight:
    """The fills a cache has in flight: line -> (4-bit sector mask, cycle the data arrives). A hit
    on sectors whose fill is still in flight gets its data when the fill does, not a hit's latency
    after the lookup (the cache holds the tag, not yet the data)."""

    def __init__(self):
        self.lines: dict[int, tuple[int, float]] = {}
        self._prune_at = 1 << 16

    def wait(self, line: int, mask: int, t: float, done: float) -> float:
        """``done`` or, if sectors ``mask`` of ``line`` are in flight at cycle ``t``, the later of it
        and their arrival."""
        p = self.lines.get(line)
        if p is not None and p[1] > done and p[1] > t and p[0] & mask:
            return p[1]
        return done

    def note(self, lines: list[int], masks: list[int], t: float, ready: float) -> None:
        """Sectors ``masks`` of ``lines`` were requested at cycle ``t`` and arrive at ``ready``."""
        inflight = self.lines
        self._prune_at = _forget_done(inflight, t, self._prune_at)
        for line, mask in zip(lines, masks):
            p = inflight.get(line)
            inflight[line] = (mask | p[0], max(ready, p[1])) if p is not None and p[1] > t else (mask, ready)


class SectorCache:
    """A fully associative LRU cache of lines with per-sector valid and dirty bits.

    Args:
        capacity_lines: lines it holds (>= 1).

    Lines are integers (byte address // line size); sector masks are ints with
    one bit per sector of the line (4 bits for 128 B lines of 32 B sectors).
    """

    def __init__(self, capacity_lines: int, dirty_places: int = 1):
        self.capacity = max(1, int(capacity_lines))
        #: places a written line takes (:class:`L2`: ``l2.dirty_places``)
        self.dirty_places = dirty_places
        #: line -> [valid sector mask, dirty sector mask, places it takes (1; :attr:`dirty_places`
        #: once written)]
        self.lines: collections.OrderedDict[int, list[int]] = collections.OrderedDict()
        self.used = 0   # places taken: the sum of the lines' third fields

    def dirty_sectors(self) -> int:
        """Sectors held dirty (written, not yet written back)."""
        return sum(_POPCOUNT[e[1]] for e in self.lines.values())

    @property
    def full(self) -> bool:
        """Every place is in use (the next fill of a new line evicts one)."""
        return self.used >= self.capacity

    def lookup(self, line: int, mask: int) -> int:
        """The sectors of ``mask`` present in ``line`` (a hit refreshes its LRU position)."""
        entry = self.lines.get(line)
        if entry is None:
            return 0
        self.lines.move_to_end(line)
        return entry[0] & mask

    def fill(self, line: int, mask: int, dirty: bool = False) -> list[tuple[int, int]]:
        """Make sectors ``mask`` of ``line`` present (and dirty if ``dirty``); a new line takes one
        place, and a write leaves any line :attr:`dirty_places`.

        Returns the evicted ``(line, dirty sector mask)`` pairs, least recently used first.
        """
        entry = self.lines.get(line)
        if entry is not None:
            entry[0] |= mask
            if dirty:
                entry[1] |= mask
                self.used += self.dirty_places - entry[2]
                entry[2] = self.dirty_places
            self.lines.move_to_end(line)
            return self._evict()   # a line written grows to dirty_places
        places = self.dirty_places if dirty else 1
        self.lines[line] = [mask, mask if dirty else 0, places]
        self.used += places
        return self._evict()

    def drop(self, line: int) -> None:
        """Forget ``line`` (a clean copy: :class:`L2` drops a far line's copies when it is written)."""
        entry = self.lines.pop(line, None)
        if entry is not None:
            self.used -= entry[2]

    def _evict(self) -> list[tuple[int, int]]:
        """Evict least recently used lines (not the last one left) until the places in use fit the
        capacity; returns their ``(line, dirty sector mask)`` pairs."""
        out = []
        while self.used > self.capacity and len(self.lines) > 1:
            old, (_, d, k) = self.lines.popitem(last=False)
            self.used -= k
            out.append((old, d))
        return out


def home_partition(line: int, partitions: int, side: int = 0, granule: int = 1) -> int:
    """The L2 partition (0 .. ``partitions`` - 1) that homes 128 B ``line``: a hash of its granule of
    ``granule`` lines (``l2.partition_granule_bytes``), all of whose lines share a home. The hash is
    ASSUMED (the H100's is not known: its 4 KiB granules alternate in runs of one and two,
    ``validation/probes/far_hit.py``); each partition homes 1 / ``partitions`` of any large range.
    Local memory (per-thread, one SM's) is homed at its SM's partition ``side``."""
    if partitions < 2:
        return 0
    return side if line >= _LOCAL_LINE else (line // granule * 2654435761 >> 16) % partitions


def _book(free: list[float], t: float, n: int, cycles: float) -> float:
    """``n`` requests arrive at cycle ``t`` at a server free again at ``free[0]``, each holding it
    ``cycles``: books them (first come, first served) and returns the cycle the last one starts."""
    free[0] = max(t, free[0]) + n * cycles
    return free[0] - cycles


def side_of(sm: int, partitions: int, sides: tuple[int, ...] | None = None) -> int:
    """The L2 partition near SM ``sm``: ``sides[sm]`` (``l2.sm_partitions``, measured per chip:
    ``validation/probes/far_hit.py``) or, where not given, ``sm % partitions`` (ASSUMED)."""
    if partitions < 2 or sm < 0:
        return 0
    return sides[sm % len(sides)] if sides else sm % partitions


def far_line(line: int, partitions: int, granule: int = 1) -> bool:
    """Whether 128 B ``line``'s home is in another of ``partitions`` L2 partitions than partition
    0's SMs: (partitions - 1) / partitions of the lines, as for an SM chosen at random."""
    return home_partition(line, partitions, 0, granule) != 0


def _lines(sectors: np.ndarray) -> tuple[list[int], list[int]]:
    """Group sorted distinct sector numbers into (lines, 4-bit sector masks)."""
    lines = sectors >> 2
    if lines[0] == lines[-1]:
        return [int(lines[0])], [int(np.bitwise_or.reduce(1 << (sectors & 3)))]
    uniq, start = np.unique(lines, return_index=True)
    masks = np.bitwise_or.reduceat(1 << (sectors & 3), start)
    return uniq.tolist(), masks.tolist()


def atomic_requests(addrs: np.ndarray) -> list[tuple[int, int, list[int]]]:
    """The L2 requests the L1 makes of one warp's global ``atom``/``red`` when contended atomics are
    modelled (``l2.atomic_address_cycles``, ``atomic_slice_cycles`` or ``atomic_requests_per_cycle``):
    lanes on different addresses of one 128 B line share a request, lanes on one address do not --
    the k-th lane on an address goes in the k-th request of its line. Measured on the H100
    (``validation/probes/atomic_contention.py``, ``lts__t_requests_srcunit_tex_op_red/atom``):
    32 lanes on one address make 32 requests, on 32 words of one line 1.

    Args:
        addrs: the active lanes' byte addresses, uint64 (or int64), in lane order.

    Returns:
        ``(line, 4-bit sector mask, byte addresses)`` per request, ordered by the lanes' rank on
        their address, then by line.
    """
    rank: dict[int, int] = {}
    reqs: dict[tuple[int, int], list] = {}
    for a in addrs.tolist():
        r = rank.get(a, 0)
        rank[a] = r + 1
        g = reqs.get((r, a >> 7))
        if g is None:
            g = reqs[(r, a >> 7)] = [0, []]
        g[0] |= 1 << ((a >> 5) & 3)
        g[1].append(a)
    return [(line, g[0], g[1]) for (_, line), g in sorted(reqs.items())]


_POPCOUNT = [bin(m).count("1") for m in range(16)]
#: Cap of the utilisation the loaded-latency curve sees (the server itself queues what exceeds the
#: sustained rate; the cap keeps u / (1 - u) finite when a burst is served back to back).
_MAX_UTILISATION = 0.95
#: 4-bit sector mask -> the 64 B DRAM granules (sector pairs) it touches, as a sector mask.
_PAIRS = [(0b0011 if m & 0b0011 else 0) | (0b1100 if m & 0b1100 else 0) for m in range(16)]


def _shared(owner: dict[int, int], key: int, sm: int) -> bool:
    """Note that ``sm`` updates ``key`` (an address or a granule) in ``owner``; True once two SMs have."""
    o = owner.setdefault(key, sm)
    if o != sm and o != -1:
        o = owner[key] = -1
    return o == -1


def _lru_misses(lru: collections.OrderedDict, keys, limit: int) -> int:
    """Touch each of ``keys`` in ``lru`` (a key present moves to its end; a key absent is added, and the
    least recent key leaves once there are more than ``limit``); returns how many were absent."""
    missed = 0
    for key in keys:
        if key in lru:
            lru.move_to_end(key)
            continue
        missed += 1
        lru[key] = None
        if len(lru) > limit:
            lru.popitem(last=False)
    return missed


def _record(served: dict[int, str], line: int, mask: int, level: str) -> None:
    """Note in ``served`` that the sectors ``mask`` of ``line`` were served by ``level``."""
    for k in range(4):
        if mask >> k & 1:
            served[line * 4 + k] = level


class DRAM:
    """Device memory: a bandwidth server whose latency grows with its utilisation.

    Args:
        cfg: the GPU configuration: ``dram.bandwidth_bytes_per_s`` x ``dram.efficiency`` (bytes/s,
            the sustained share of the peak) over ``clock_hz``, ``dram.latency_cycles`` and
            ``dram.queue_cycles`` (both scaled by ``clock_hz / dram.latency_clock_hz`` where that is
            set: a clock what-if keeps DRAM's latency in nanoseconds).
        count: the memory system's counters (``dram_read_bytes``, ``dram_write_bytes``; bytes).

    A request starts at ``max(arrival, free)`` and holds the server ``bytes / bytes_per_cycle``
    cycles (fractional); ``free`` is the cycle it is free again. Reads move
    ``dram.read_efficiency`` of the peak a cycle (what a stream of reads alone sustains: 0.92-0.94
    on the H100, ``validation/probes/dram_mix.py`` and the seeds' reductions); writes the share
    that leaves a copy at ``dram.efficiency`` (0.886, a 1 GiB copy): 1 / e_write = 2 / e - 1 / e_read.
    A read's data arrives
    ``dram.latency_cycles + dram.queue_cycles x u / (1 - u)`` after its start: the loaded-latency
    curve, an M/M/1 queue's wait with ``u`` the utilisation of the *peak* bandwidth by reads and
    writes, an exponential average of the bytes served with time constant ``dram.latency_cycles``
    (one round trip). The server alone is a queue that waits only once demand exceeds the sustained
    rate; the H100 waits earlier: loads with 4 KiB to 16 KiB in flight per SM reach 41 % to 93 % of
    the sustained rate with 860 to 1,600 cycles a round trip (``validation/probes/cta_timeline.py``,
    ``benchmarks/results/memory_latency_h100.md``).

    Rows (``dram.row_bytes`` set): an access also holds the server for each row it opens
    (:meth:`activations`: ``1 / dram.row_activations_per_s`` a read, ``1 /
    dram.write_row_activations_per_s`` a write-back; random 64 B reads over 1-8 GiB took 32-33 ps
    each on the H100, ``validation/probes/random_access.py``); a stream opens one row per
    ``row_bytes`` and its measured efficiency already includes that, so its bytes move that much
    faster. Translation (``dram.translation_pages`` set): a read an SM caused, of a page outside
    the last pages read, holds the server longer still (:meth:`translations`). Read channels
    (``dram.read_channel_bytes`` set): after the server, each line queues at its channel
    (:meth:`_queue`).
    """

    def __init__(self, cfg: GPUConfig, count: collections.Counter):
        self.count = count
        self.peak_bytes_per_cycle = cfg.dram.bandwidth_bytes_per_s / cfg.clock_hz
        e = cfg.dram.efficiency
        e_read = cfg.dram.read_efficiency or e
        #: bytes a cycle of reads, and of writes: a copy's bytes (half read, half written) move at
        #: ``efficiency`` of the peak, a stream of reads alone at ``read_efficiency``
        self.read_bytes_per_cycle = self.peak_bytes_per_cycle * e_read
        self.write_bytes_per_cycle = self.peak_bytes_per_cycle * (e if e_read == e else 1 / (2 / e - 1 / e_read))
        #: SM cycles a nanosecond of DRAM latency takes at this clock over the measured one (1.0 when
        #: ``dram.latency_clock_hz`` is unset: the latency is held in cycles)
        held = cfg.clock_hz / cfg.dram.latency_clock_hz if cfg.dram.latency_clock_hz else 1.0
        self.latency = cfg.dram.latency_cycles * held
        self.queue = cfg.dram.queue_cycles * held
        self.free = 0.0
        self._recent = 0.0     # bytes served, exponentially decayed with time constant ``latency``
        self._last = 0.0       # cycle of the last update of ``_recent``
        d = cfg.dram
        #: rows: L2 lines a DRAM row holds (0: rows not modelled), the rows open (LRU), and
        #: the server cycles a read's / a write's row activation takes
        self.row_lines = d.row_bytes // cfg.l2.line_bytes if d.row_bytes and d.row_activations_per_s else 0
        self.open_rows: collections.OrderedDict[int, None] = collections.OrderedDict()
        #: the rows write-backs opened, apart: the L2 drains its write-backs in batches, so the row a
        #: read opened (the rest of a partly written sector, read to complete it) is closed again
        #: when that sector's write-back reaches DRAM (:meth:`activations`)
        self.open_write_rows: collections.OrderedDict[int, None] = collections.OrderedDict()
        self.open_limit = d.open_rows
        #: write drains (``dram.channels``, ``dram.write_drain_bytes``): per channel, the write-back
        #: bytes gathered and the cycle its last drain ends; a drain writes its bytes at the
        #: channel's share of the write rate. Evenly hashed write-backs fill every channel at the
        #: same pace, so the drains run in step unless ``dram.staggered_drains`` starts channel ``c``
        #: with ``c / channels`` of a drain gathered (the H100's spread in a copy's write-back
        #: regime is unordered: docs/model/memory.md, session 54)
        self.channels = d.channels if d.channels and d.write_drain_bytes else 0
        self.drain_bytes = d.write_drain_bytes
        self.gathered = ([d.write_drain_bytes * c / self.channels for c in range(self.channels)]
                         if d.staggered_drains else [0.0] * self.channels)
        self.channel_lines = d.channel_bytes // cfg.l2.line_bytes
        self.draining = [0.0] * self.channels
        #: read queues (``dram.read_channel_bytes``): the channels reads queue at, the lines of a
        #: range one serves, the cycle each is free again, and the cycles a byte takes at one
        self.read_channels = (d.read_channels or d.channels) if d.read_channel_bytes else 0
        self.read_channel_lines = d.read_channel_bytes // cfg.l2.line_bytes if self.read_channels else 0
        self.read_free = [0.0] * self.read_channels
        self.read_byte_cycles = self.read_channels / self.read_bytes_per_cycle if self.read_channels else 0.0
        #: translation (``dram.translation_*``): L2 lines a page holds (0: not modelled), the pages
        #: DRAM reads touched last (LRU), and the server cycles a read outside them takes
        self.page_lines = (d.translation_page_bytes // cfg.l2.line_bytes
                           if d.translation_pages and d.translation_misses_per_s else 0)
        self.pages: collections.OrderedDict[int, None] = collections.OrderedDict()
        self.page_limit = d.translation_pages
        self.translate = cfg.clock_hz / d.translation_misses_per_s if self.page_lines else 0.0
        if self.row_lines:
            self.activate = cfg.clock_hz / d.row_activations_per_s
            self.activate_write = cfg.clock_hz / (d.write_row_activations_per_s or d.row_activations_per_s)
            # the efficiencies were measured on streams, which open a row every row_bytes: the
            # bytes themselves move that much faster
            self.read_bytes_per_cycle = 1 / (1 / self.read_bytes_per_cycle - self.activate / d.row_bytes)
            self.write_bytes_per_cycle = 1 / (1 / self.write_bytes_per_cycle - self.activate_write / d.row_bytes)

    def activations(self, lines, write: bool = False) -> float:
        """Server cycles the row activations of an access to ``lines`` (128-byte line numbers)
        take: one ``dram.row_activations_per_s`` (``write_row_activations_per_s`` for a write)
        per row not among the last ``dram.open_rows`` rows opened (LRU; the row is ``line x
        l2.line_bytes // dram.row_bytes``) by reads, or for a write by writes; 0 where rows are
        not modelled. Writes keep their own rows: a random 4-byte store over 1-8 GiB costs the
        H100 a read's activation *and* a write's (73-74 ps, ``dram.write_row_activations_per_s``),
        though its sector's rest is read and the sector written back in the same eviction."""
        if not self.row_lines:
            return 0.0
        rows, n = self.open_write_rows if write else self.open_rows, self.row_lines
        opened = _lru_misses(rows, (line // n for line in lines), self.open_limit)
        return opened * (self.activate_write if write else self.activate)

    def translations(self, lines) -> float:
        """Server cycles the translation misses of a read of ``lines`` (128-byte line numbers) take:
        one ``1 / dram.translation_misses_per_s`` per line whose page (``line x l2.line_bytes //
        dram.translation_page_bytes``) is not among the last ``dram.translation_pages`` pages read
        (LRU); 0 where translation is not modelled. ASSUMED mechanism (a TLB's reach, its misses'
        page-table reads taking DRAM's time), charged only to the reads an SM's load or atomic
        causes (the L2's own reads of evicted lines are physically addressed); the reach and the
        cost are fitted to random 64 B reads by footprint: ``validation/probes/footprint_cost.py``
        on an H200 (23.5 ps a read at 64 MiB, 27.2 at 8 GiB) and
        ``validation/probes/random_access.py``'s rows on the H100."""
        if not self.page_lines:
            return 0.0
        n = self.page_lines
        return _lru_misses(self.pages, (line // n for line in lines), self.page_limit) * self.translate

    def channel(self, line: int) -> int:
        """The DRAM channel of 128 B ``line``: ASSUMED, a multiplicative hash of its
        ``dram.channel_bytes`` range (every channel alike; 512 puts a warp's coalesced 512 bytes on
        one channel, 128 each line on its own)."""
        return (line // self.channel_lines * 0x9E3779B1 >> 7) % self.channels

    def _gather(self, t: float, nbytes: float, lines) -> None:
        """Write-back bytes of ``lines`` (evenly) join their channels' drains; a channel that has
        gathered ``dram.write_drain_bytes`` drains them from cycle ``t`` (or its last drain's end)."""
        if not lines:
            return
        each = nbytes / len(lines)
        rate = self.write_bytes_per_cycle / self.channels
        gathered, draining, batch = self.gathered, self.draining, self.drain_bytes
        for line in lines:
            c = self.channel(line)
            gathered[c] += each
            if gathered[c] >= batch:
                gathered[c] -= batch
                draining[c] = max(t, draining[c]) + batch / rate

    def _queue(self, start: float, nbytes: float, lines) -> float:
        """The cycle the last of ``lines`` (``nbytes`` evenly) has been served by its read channel,
        the read having left the device-wide server at ``start``: each ``dram.read_channel_bytes``
        range of lines goes to one of the read channels, which serves its share of the read
        bandwidth first come, first served. A CTA's loads of one range come back one after the
        other, in warp order; the H100's spread as widely but in no order (``benchmarks/
        latency_spread.py``: a warp's index against its latency's difference from its CTA's mean,
        r 0.04-0.05 on the H100, 0.46-0.52 here with 4 KiB ranges), so this is not how the H100
        spreads them (session 54). ASSUMED mapping: each aligned group of ``read_channels``
        consecutive ranges takes every channel once (range ``r`` goes to ``(r + hash(r //
        read_channels)) mod read_channels``), so a footprint spreads evenly over the channels."""
        each = nbytes / len(lines) * self.read_byte_cycles
        free, n, per = self.read_free, self.read_channels, self.read_channel_lines
        end = start
        for line in lines:
            q, c = divmod(line // per, n)
            c = (c + (q * 0x9E3779B1 >> 7)) % n
            done = (free[c] if free[c] > start else start) + each
            free[c] = done
            if done > end:
                end = done
        return end

    def _drained(self, start: float, lines) -> float:
        """The cycle the reads of ``lines`` may start at: ``start``, or the end of a drain one of
        their channels is in."""
        draining = self.draining
        for line in lines:
            end = draining[self.channel(line)]
            if end > start:
                start = end
        return start

    def _serve(self, t: float, nbytes: float, rate: float, extra: float = 0.0) -> float:
        start = max(t, self.free)
        self.free = start + nbytes / rate + extra
        if self.queue:
            if start > self._last:
                self._recent *= math.exp((self._last - start) / self.latency)
                self._last = start
            self._recent += nbytes
        return start

    def utilisation(self) -> float:
        """The share of the peak bandwidth used over about the last ``dram.latency_cycles`` (0-1)."""
        return min(self._recent / (self.latency * self.peak_bytes_per_cycle), _MAX_UTILISATION)

    def read(self, t: float, nbytes: int, lines=(), merge: bool = False) -> float:
        """Read ``nbytes`` of ``lines`` (arriving at cycle ``t``); returns the cycle the data reaches
        L2 and the requester: start of service + ``dram.latency_cycles`` (the load-to-use latency
        of an idle DRAM) + the loaded-latency curve's wait. The server is held for the bytes, the
        rows the read opens (:meth:`activations`) and, unless ``merge`` (the L2's own read that
        completes an evicted line's partly written sectors), the read's translation misses
        (:meth:`translations`)."""
        self.count["dram_read_bytes"] += nbytes
        extra = self.activations(lines) + (0.0 if merge else self.translations(lines))
        start = self._serve(t, nbytes, self.read_bytes_per_cycle, extra)
        if self.read_channels and lines:
            start = self._queue(start, nbytes, lines)
        if self.channels:
            start = self._drained(start, lines)
        if not self.queue:
            return start + self.latency
        u = self.utilisation()
        return start + self.latency + self.queue * u / (1.0 - u)

    def write(self, t: float, nbytes: int, lines=()) -> None:
        """Write ``nbytes`` of ``lines`` back (an L2 eviction at cycle ``t``); nothing waits for it
        (the L2's write-back queue holds the writers, :meth:`L2.backlog`)."""
        self.count["dram_write_bytes"] += nbytes
        self._serve(t, nbytes, self.write_bytes_per_cycle, self.activations(lines, True))
        if self.channels:
            self._gather(t, nbytes, lines)

    def occupy(self, t: float, merge: float, written: float, lines=(), share: float = 1.0) -> None:
        """Hold the server for ``share`` of evictions' traffic counted elsewhere (sampled timing's
        share, :attr:`L2.eviction_share`): ``merge`` bytes read to complete partly written
        sectors and ``written`` bytes written back, of ``lines``, as :meth:`read` and :meth:`write`
        would; nothing waits for it."""
        if merge:
            self._serve(t, merge * share, self.read_bytes_per_cycle, self.activations(lines) * share)
        if written:
            self._serve(t, written * share, self.write_bytes_per_cycle, self.activations(lines, True) * share)
            if self.channels:
                self._gather(t, written * share, lines)


class L2:
    """The device-wide sectored L2: a cache (:class:`SectorCache`, write-back, write-allocate) in
    front of :class:`DRAM`, with a bandwidth server of its own.

    Args:
        cfg: the GPU configuration: ``l2.size_bytes``, ``l2.line_bytes``, ``l2.sector_bytes``,
            ``l2.latency_cycles``, ``l2.bandwidth_bytes_per_s`` over ``clock_hz``,
            ``l2.atomic_serial_cycles`` and ``dram.access_granularity_bytes``.
        dram: the DRAM it misses to and writes back to.
        count: the memory system's counters.

    Requests are lists of 128 B lines with 4-bit sector masks (:func:`_lines`) arriving at a
    cycle; each method returns the cycle the request completes. ``served``, when a dict,
    receives the level that served each sector (``"L2"`` or ``"DRAM"``).
    """

    def __init__(self, cfg: GPUConfig, dram: DRAM, count: collections.Counter):
        far, parts = cfg.l2.far_latency_cycles, cfg.l2.partitions
        self.parts = parts
        #: ``l2.localizes_far_reads``: one cache per partition, each 1 / ``partitions`` of the
        #: capacity, holding the lines homed there (:func:`home_partition`) and copies of the far
        #: lines its own SMs read (:func:`side_of`); else one cache of the whole capacity
        self.localize = bool(cfg.l2.localizes_far_reads and parts > 1)
        #: lines of a partition granule (``l2.partition_granule_bytes``): all of them share a home
        self.granule = max(1, cfg.l2.partition_granule_bytes // cfg.l2.line_bytes)
        lines = cfg.l2.size_bytes // cfg.l2.line_bytes
        self.caches = ([SectorCache(lines // parts, cfg.l2.dirty_places) for _ in range(parts)] if self.localize
                       else [SectorCache(lines, cfg.l2.dirty_places)])
        self.dram, self.count = dram, count
        self.sector = cfg.l2.sector_bytes
        #: the slices' server: bytes of sectors read / written it takes a cycle
        self.read_bytes_per_cycle = cfg.l2.bandwidth_bytes_per_s / cfg.clock_hz
        self.write_bytes_per_cycle = (cfg.l2.write_bandwidth_bytes_per_s or cfg.l2.bandwidth_bytes_per_s) / cfg.clock_hz
        #: the write-data path: bytes of sectors written it takes a cycle (None: not modelled)
        self.write_data_bytes_per_cycle = (cfg.l2.write_data_bytes_per_s / cfg.clock_hz
                                           if cfg.l2.write_data_bytes_per_s else None)
        self.latency = cfg.l2.latency_cycles
        self.pairs = cfg.dram.access_granularity_bytes > self.sector
        self.atomic_serial = cfg.l2.atomic_serial_cycles
        self._init_contended_atomics(cfg)
        #: what a read served at a far home pays over a near one, hit or DRAM miss (its request
        #: crosses to the other partition and back): ``far_latency_cycles - latency_cycles``.
        #: Measured on the H100 (``validation/probes/far_hit.py``): +182 cycles a hit, +187 a miss.
        self.far_extra = float(far - self.latency) if far and parts > 1 else 0.0
        #: ``l2.sm_partitions``: the partition near each SM (None: SM s near s % partitions)
        self.sm_sides = cfg.l2.sm_partitions
        #: ``l2.coalesce_window_cycles``: line -> (sectors requested, cycle their data is ready, cycle
        #: requested, requesting SM) of the L1-bypassing reads in flight, which a later such read of
        #: the same sectors joins (None: reads are not coalesced)
        self.pending: dict[int, tuple[int, float, float, int]] | None = {} if cfg.l2.coalesce_window_cycles else None
        self.window = cfg.l2.coalesce_window_cycles
        self._prune_at = 1 << 16
        #: ``l2.hits_wait_for_fills``: line -> (sectors, cycle) of the DRAM fills in flight (None: not modelled)
        self.fills: InFlight | None = InFlight() if cfg.l2.hits_wait_for_fills else None
        self.free = 0.0
        self.write_request_cycles = 1.0 / cfg.l2.write_requests_per_cycle if cfg.l2.write_requests_per_cycle else 0.0
        #: the cycle the L2's request port takes the next request of each kind (read, write, atom);
        #: with ``l2.shared_request_port`` one port for all kinds, each request holding it for
        #: 1 / its kind's rate
        shared = [0.0]
        self.port_free = ({k: shared for k in ("read", "write", "atom")} if cfg.l2.shared_request_port
                          else {k: [0.0] for k in ("read", "write", "atom")})
        #: with a shared port, the cycle it would take the next write request were there only writes
        #: (a store holds its SM's L1 by its place among the writes: the reads queued at the port
        #: ahead of it hold no SM's stores; None: a port per kind)
        self.writes_alone: list[float] | None = [0.0] if cfg.l2.shared_request_port else None
        self.data_free = 0.0       # the cycle the write-data path takes the next sector
        self.write_queue = cfg.l2.write_queue_cycles
        self.writeback_queue = cfg.l2.writeback_queue_cycles
        #: the read-request port: cycles a request (a line) of a load takes, GPU-wide (0: no limit)
        self.read_request_cycles = 1.0 / cfg.l2.read_requests_per_cycle if cfg.l2.read_requests_per_cycle else 0.0
        #: Sectors written in part while not present: line -> 4-bit sector mask, and sector -> the
        #: 32-bit mask of its bytes written. The rest of such a sector is read from DRAM when it is
        #: evicted or read (the L2 merges the write into the whole sector).
        self.partial_lines: dict[int, int] = {}
        self.partial_bytes: dict[int, int] = {}
        #: None: an eviction's DRAM traffic (write-back, completing reads) holds DRAM's server
        #: itself. Sampled timing sets the slice's share of the GPU (k / N): every eviction, by the
        #: slice's fills or the shadows', then holds it for that share of its traffic, whoever's
        #: fill evicted (which fill meets a dirty line is a matter of phase, not of share).
        self.eviction_share: float | None = None

    @property
    def full(self) -> bool:
        """Every place of every partition is in use (the next fill of a new line evicts one)."""
        return all(c.full for c in self.caches)

    def dirty_sectors(self) -> int:
        """Sectors held dirty (written, not yet written back)."""
        return sum(c.dirty_sectors() for c in self.caches)

    def side(self, sm: int) -> int:
        """The partition near SM ``sm`` (:func:`side_of` with ``l2.sm_partitions``)."""
        return side_of(sm, self.parts, self.sm_sides)

    def home(self, line: int, side: int | None = None) -> int:
        """The index in :attr:`caches` of the cache that homes ``line`` (0 with one cache);
        ``side``: the partition of the SM that reads or writes it (for local memory)."""
        return home_partition(line, self.parts, side or 0, self.granule) if self.localize else 0

    def _look(self, line: int, mask: int, side: int | None) -> tuple[int, int, int]:
        """Look sectors ``mask`` of ``line`` up for a reader near partition ``side`` (None: at
        home): in its partition's copy first when the line is homed far, then at home. Returns
        (the home's index, the sectors present, the sectors looked up at home)."""
        h = self.home(line, side)
        caches = self.caches
        if side is None or side == h or not self.localize:
            return h, caches[h].lookup(line, mask), mask
        hit = caches[side].lookup(line, mask)
        rest = mask & ~hit
        if rest:
            hit |= caches[h].lookup(line, rest)
        return h, hit, rest

    def _copy(self, line: int, mask: int, side: int | None, h: int, t: float) -> None:
        """A read near ``side`` of sectors ``mask`` of ``line``, homed at partition ``h``, leaves
        them in ``side``'s partition too (nothing where the line is homed there)."""
        if mask and self.localize and side is not None and side != h:
            self._fill(side, line, mask, False, t)

    def _write_line(self, line: int, mask: int, t: float, side: int | None = None) -> None:
        """Sectors ``mask`` of ``line`` written at its home, dirty; its copies elsewhere are dropped."""
        h = self.home(line, side)
        self._fill(h, line, mask, True, t)
        self._drop_copies(line, h)

    def _drop_copies(self, line: int, h: int) -> None:
        """Forget the copies of ``line`` (homed at partition ``h``) in the other partitions."""
        if self.localize:
            for p, cache in enumerate(self.caches):
                if p != h:
                    cache.drop(line)

    def _serve(self, t: float, n_sectors: int, bytes_per_cycle: float) -> float:
        """``n_sectors`` through the slices' server at ``bytes_per_cycle`` from cycle ``t``: returns their start."""
        start = max(t, self.free)
        self.free = start + n_sectors * self.sector / bytes_per_cycle
        return start

    def _evicted(self, evicted: list[tuple[int, int]], part: int = 0) -> tuple[int, int, list[int]]:
        """Evicted ``(line, dirty mask)`` pairs: returns (bytes DRAM reads to complete their
        partially written sectors; bytes they write back; the lines with such traffic), a sector
        at a time: at footprints of 256 MiB and more the H100 reads 31 B and writes 31-32 B per
        random 4-byte store or atomic (``validation/probes/random_access.py``), where a load's
        miss reads ``dram.access_granularity_bytes``). ``part``: the partition they left; a copy
        of a line homed elsewhere goes without traffic."""
        merge = written = 0
        lines = []
        for line, dirty in evicted:
            if self.localize and line < _LOCAL_LINE and home_partition(line, self.parts, 0, self.granule) != part:
                continue
            m = _POPCOUNT[self._merged(line, 0b1111)] * self.sector
            if m or dirty:
                merge += m
                written += _POPCOUNT[dirty] * self.sector
                lines.append(line)
        return merge, written, lines

    def _merged(self, line: int, mask: int) -> int:
        """Forget the partial writes to sectors ``mask`` of ``line`` (their rest is being read from
        DRAM); returns the sectors that had one."""
        part = self.partial_lines.get(line, 0) & mask
        if part:
            left = self.partial_lines[line] & ~part
            if left:
                self.partial_lines[line] = left
            else:
                del self.partial_lines[line]
            for k in range(4):
                if part >> k & 1:
                    del self.partial_bytes[line * 4 + k]
        return part

    def far(self, line: int, side: int | None = None) -> bool:
        """Whether ``line`` is homed in another partition than ``side``'s (None: partition 0's)."""
        return home_partition(line, self.parts, side or 0, self.granule) != (side or 0)

    def _fill(self, part: int, line: int, mask: int, dirty: bool, t: float) -> None:
        """Sectors ``mask`` of ``line`` into cache ``part``; what it evicts goes to DRAM at ``t``."""
        merge, written, lines = self._evicted(self.caches[part].fill(line, mask, dirty), part)
        if not lines:
            return
        if self.eviction_share is not None:
            self.count["dram_read_bytes"] += merge
            self.count["dram_write_bytes"] += written
            self.dram.occupy(t, merge, written, lines, self.eviction_share)
            return
        if merge:
            self.dram.read(t, merge, lines, merge=True)
        if written:
            self.dram.write(t, written, lines)

    def backlog(self) -> float:
        """The cycle until which a store or atomic whose data the L2 would have to write back must
        wait: DRAM's server ``l2.writeback_queue_cycles`` before it is free (the L2's queue of
        write-backs is full beyond that); 0 where not modelled. Measured: random 4-byte stores and
        atomics over 256 MiB-8 GiB run at 6.7-7.2 a cycle on the H100 (30-42 while the L2 holds
        them), as fast as DRAM reads each sector's rest and writes it back
        (``validation/probes/random_access.py``)."""
        return self.dram.free - self.writeback_queue if self.writeback_queue else 0.0

    def granules(self, miss: int) -> int:
        """The sectors DRAM delivers for the missed sectors ``miss`` of a line (whole
        ``dram.access_granularity_bytes`` granules: sector pairs when it is 64 B)."""
        return _PAIRS[miss] if self.pairs else miss

    def read(self, t: float, lines: list[int], masks: list[int], op: str = "read",
             served: dict[int, str] | None = None, source: int | None = None, side: int | None = None) -> float:
        """Read sectors (filling misses from DRAM, in granules); return the cycle the data is
        ready. ``op`` names the counters (``read``, ``atom``, ``red``). With
        ``l2.coalesce_window_cycles``, the sectors of a ``read`` still in flight for an earlier read
        by another ``source`` join it (:meth:`_join`); ``source``: the SM of a read that bypasses
        its L1 (``ld.global.cg``, ``cp.async.cg``), None for the other reads, which the coalescer
        leaves alone (measured: the gmem_offset probe's L1-allocating loads are looked up 16 x 33
        times on the H100, their sectors shared by neighbouring SMs' warps counted twice).
        ``side``: the partition of the reading SM (:meth:`_look`; None: looked up at home, as for
        atomics)."""
        c = self.count
        joined = None
        if self.pending is not None and source is not None:
            lines, masks, joined = self._join(t, lines, masks, served, source)
            if not lines:
                return joined
        n = sum(_POPCOUNT[m] for m in masks)
        if self.read_request_cycles and op == "read":
            t = self._take("read", t, len(lines), self.read_request_cycles)
        start = self._serve(t, n, self.read_bytes_per_cycle)
        done = start + self.latency
        if self.slice_read and op == "read":
            done = self._take_turns(start, lines, masks, done)
        dram_bytes = 0
        dram_lines = []
        dram_masks = []
        partial = self.partial_lines
        fills = self.fills
        far_extra = self.far_extra if side is not None and self.localize else 0.0
        # no reading SM (atomics) or one L2 cache: a DRAM read pays the far homes' average share
        far_miss = 0.0 if far_extra else self.far_extra * (self.parts - 1) / max(1, self.parts)
        for line, mask in zip(lines, masks):
            h, hit, rest = self._look(line, mask, side)
            if partial:
                hit &= ~self._merged(line, hit)
            if fills is not None and hit:
                done = fills.wait(line, hit, start, done)
            miss = mask & ~hit
            if far_extra and h != side and rest:  # served at a far home
                if rest & hit:
                    done = max(done, start + self.latency + far_extra)
                if miss:
                    far_miss = far_extra
            c[f"l2_{op}_hits"] += _POPCOUNT[hit]
            if op == "read" and self.far(line, side):  # looked up again at its home
                c["l2_read_far_sectors"] += _POPCOUNT[rest]
            if served is not None:
                _record(served, line, hit, "L2")
                _record(served, line, miss, "DRAM")
            if miss:
                fetch = self.granules(miss)
                dram_bytes += _POPCOUNT[fetch] * self.sector
                dram_lines.append(line)
                dram_masks.append(fetch)
                if partial:
                    self._merged(line, fetch)  # the granules complete the partly written sectors they hold
                self._fill(h, line, fetch, False, start)
                rest |= fetch
            self._copy(line, rest, side, h, start)
        c[f"l2_{op}_sectors"] += n
        c[f"l2_{op}_requests"] += len(lines)
        if dram_bytes:
            done = max(done, self.dram.read(start, dram_bytes, dram_lines) + far_miss)
            if fills is not None:
                fills.note(dram_lines, dram_masks, start, done)
        if self.pending is not None and source is not None:
            self._note_pending(t, lines, masks, done, source)
        return done if joined is None else max(done, joined)

    def _take_turns(self, start: float, lines: list[int], masks: list[int], done: float) -> float:
        """``l2.slice_read_cycles``: each line of a read reaching the slices at ``start`` waits for its
        slice's atomic unit (:meth:`atomic_slice`) and holds it that long, or
        ``slice_read_sector_cycles`` a sector if longer (times :attr:`address_share`: in a sampled
        slice every SM's reads reach every slice); returns ``done`` delayed by the longest wait."""
        slices, share, hold = self.atom_slices, self.address_share, self.read_hold
        wait = 0.0
        for line, mask in zip(lines, masks):
            k = self.atomic_slice(line)
            s = slices[k]
            if s > start:
                if s - start > wait:
                    wait = s - start
            else:
                s = start
            slices[k] = s + hold[mask] * share
        return done + wait

    def _join(self, t: float, lines: list[int], masks: list[int], served: dict[int, str] | None,
              source: int) -> tuple[list[int], list[int], float | None]:
        """The L2 request coalescer (``l2.coalesce_window_cycles``): the sectors of an L1-bypassing
        read at cycle ``t`` that such a read by another SM requested at most the window before,
        and whose data is not yet ready, are served with that request: they hold no L2 bandwidth
        and are not counted as lookups (``lts__t_sectors`` counts after the coalescer, NCU "lrc"
        unit); their data returns with that request's, and at least one L2 latency after ``t``
        (a read joining a DRAM miss waits for the DRAM). Returns the lines and masks left to look
        up, and the cycle the joined data is ready (None: none joined). Evidence: ``validation/probes/l2_bandwidth.py`` --
        Triton's 2048^3 fp16 matmul on the H100 moves 268 MB over the crossbar to the SMs
        (``l1tex__m_xbar2l1tex_read_bytes``) for 153 MB of L2 lookups
        (``lts__t_sectors_srcunit_tex_op_read``), its 256 CTAs reading the same tiles at about the
        same time."""
        pending = self.pending
        left_lines, left_masks = [], []
        coalesced = 0
        ready = t + self.latency
        for line, mask in zip(lines, masks):
            p = pending.get(line)
            if p is not None and p[3] != source and t - p[2] <= self.window and p[1] > t and mask & p[0]:
                both = mask & p[0]
                coalesced += _POPCOUNT[both]
                ready = max(ready, p[1])
                if served is not None:
                    _record(served, line, both, "L2")
                mask &= ~both
            if mask:
                left_lines.append(line)
                left_masks.append(mask)
        if not coalesced:
            return left_lines, left_masks, None
        self.count["l2_read_coalesced_sectors"] += coalesced
        return left_lines, left_masks, ready

    def _note_pending(self, t: float, lines: list[int], masks: list[int], ready: float, source: int) -> None:
        """Sectors ``masks`` of ``lines`` are in flight until ``ready`` (for :meth:`_join`)."""
        pending = self.pending
        self._prune_at = _forget_done(pending, t, self._prune_at)
        for line, mask in zip(lines, masks):
            p = pending.get(line)
            if p is not None and t - p[2] <= self.window and p[1] > t:
                pending[line] = (p[0] | mask, max(p[1], ready), p[2], p[3])
            else:
                pending[line] = (mask, ready, t, source)

    def _take(self, kind: str, t: float, n: int, cycles: float) -> float:
        """``n`` requests of ``kind`` arrive at the request port at cycle ``t``, each holding it
        ``cycles``: returns the cycle the last is taken."""
        return _book(self.port_free[kind], t, n, cycles)

    def take_writes(self, t: float, n: int, sectors: int) -> tuple[float, float]:
        """``n`` write requests of ``sectors`` sectors in all arrive at cycle ``t``; returns the
        cycles the last is taken by the request port (``l2.write_requests_per_cycle`` requests a
        cycle, GPU-wide) and then by the write-data path (``l2.write_data_bytes_per_s``); ``t``
        where one is not limited."""
        self.count["l2_write_requests"] += n
        port = t
        if self.write_request_cycles and n:
            c = self.write_request_cycles
            # the port is shared: the SM waits only behind the writes
            alone = _book(self.writes_alone, t, n, c) if self.writes_alone is not None else None
            t = self._take("write", t, n, c)
            port = t if alone is None else alone
        if self.write_data_bytes_per_cycle and sectors:
            per = self.sector / self.write_data_bytes_per_cycle
            start = max(t, self.data_free)
            self.data_free = start + sectors * per
            t = self.data_free - per
        return port, t

    def write(self, t: float, lines: list[int], masks: list[int], n: int,
              partial: list[tuple[int, int]] = (), fresh: list[int] | None = None, side: int | None = None) -> float:
        """Write ``n`` sectors (``masks`` of ``lines``), dirty, without fetching them; ``partial``:
        the sectors written only in part, with their byte masks
        (:func:`gpusim.memmodel.partial_sectors`). A sector written in part while not present stays
        partial until its other bytes are written too; its rest is read from DRAM when it is evicted or read. Returns the cycle L2 has
        accepted the write.

        ``fresh``: the lines that came in a request of their own (None: all), not joined to the
        SM's recent request for the line (:meth:`L1.store`): the sectors of those that are
        :meth:`far` from the writer's partition ``side`` are counted again at their home partition.
        Written lines go to their home partition; copies elsewhere are dropped."""
        self.count["l2_write_sectors"] += n
        if self.parts > 1:
            fresh = set(lines if fresh is None else fresh)
            self.count["l2_write_far_sectors"] += sum(_POPCOUNT[m] for ln, m in zip(lines, masks)
                                                      if ln in fresh and self.far(ln, side))
        start = self._serve(t, n, self.write_bytes_per_cycle)
        self._note_partial(lines, masks, partial, side)
        for line, mask in zip(lines, masks):
            self._write_line(line, mask, start, side)
        return start + self.latency

    def _note_partial(self, lines: list[int], masks: list[int], partial, side: int | None = None) -> None:
        """Before sectors ``masks`` of ``lines`` are written (``partial``: those written only in
        part, with their byte masks; ``side``: the writer's partition): the sectors written whole
        complete any earlier partial write; those written in part while not present at their home
        become (or stay) partial."""
        if self.partial_lines:
            mine: dict[int, int] = {}
            for sec, _ in partial:
                mine[sec >> 2] = mine.get(sec >> 2, 0) | 1 << (sec & 3)
            for line, mask in zip(lines, masks):
                self._merged(line, mask & ~mine.get(line, 0))
        if partial:
            self._track_partial(partial, side)

    def _track_partial(self, partial: list[tuple[int, int]], side: int | None = None) -> None:
        for sec, bits in partial:
            line, k = sec >> 2, sec & 3
            entry = self.caches[self.home(line, side)].lines.get(line)
            if entry is not None and entry[0] >> k & 1 and not self.partial_lines.get(line, 0) >> k & 1:
                continue  # the sector is present whole: the write merges into it
            bits |= self.partial_bytes.get(sec, 0)
            if bits == FULL_SECTOR:
                self._merged(line, 1 << k)
            else:
                self.partial_bytes[sec] = bits
                self.partial_lines[line] = self.partial_lines.get(line, 0) | 1 << k


    def _init_contended_atomics(self, cfg: GPUConfig) -> None:
        """State of the contended-atomics model (``l2.atomic_*``; off unless
        ``l2.atomic_address_cycles``, ``atomic_slice_cycles`` or ``atomic_requests_per_cycle`` is set)."""
        l2 = cfg.l2
        #: contended atomics modelled (lanes on one address are separate requests, serialised per
        #: address, per slice and by the GPU-wide request rate)
        self.contended = bool(l2.atomic_address_cycles or l2.atomic_slice_cycles or l2.atomic_requests_per_cycle)
        #: cycles an address is busy per update: (integer, float)
        self.atom_address = (l2.atomic_address_cycles, l2.atomic_address_cycles_float or l2.atomic_address_cycles)
        #: cycles a one-sector request holds its slice's atomic unit: (integer, float)
        self.atom_slice = (l2.atomic_slice_cycles, l2.atomic_slice_cycles_float or l2.atomic_slice_cycles)
        self.atom_sector = l2.atomic_sector_cycles
        #: cycles a sector whose words a request all updates holds the unit (0: the first sector
        #: atom_slice, each further one atom_sector); one it updates in part, atomic_slice_cycles
        self.atom_full = l2.atomic_full_sector_cycles
        self.atom_part = l2.atomic_slice_cycles
        #: lines per slice granule (``l2.atomic_granule_bytes``)
        self.atom_granule = max(1, l2.atomic_granule_bytes // l2.line_bytes)
        #: the cycle each slice's atomic unit is free again (None: no per-slice limit)
        self.atom_slices: list[float] | None = [0.0] * (l2.slices or 1) if l2.atomic_slice_cycles else None
        #: sector mask -> cycles a read request of those sectors holds its slice's atomic unit
        self.read_hold = [max(l2.slice_read_cycles, l2.slice_read_sector_cycles * _POPCOUNT[m]) for m in range(16)]
        #: reads take turns with atomics at their slice (``l2.slice_read_cycles``; needs the slices)
        self.slice_read = self.atom_slices is not None and any(self.read_hold)
        red = 1.0 / l2.atomic_requests_per_cycle if l2.atomic_requests_per_cycle else 0.0
        ret = l2.atomic_return_requests_per_cycle
        #: cycles of the GPU-wide request port per request: (red, atom)
        self.atom_port = (red, 1.0 / ret if ret else red)
        #: byte address -> the cycle its last update is done (the next one starts no earlier)
        self.address_free: dict[int, float] = {}
        #: byte address -> the SM that updated it, or -1 once a second SM has
        self.address_sm: dict[int, int] = {}
        #: how many SMs of the GPU one SM here stands for: 1, or N / k in a sampled slice of k of
        #: N SMs (set by gpusim.timing.sampling). An address that two SMs update is taken as
        #: updated by all of them: it, and its slice's atomic unit for the requests on it, are busy
        #: that many times longer an update (the slice's share of them); a request on addresses a
        #: single SM updates keeps its costs (a COO SpMV's rows, which one warp updates, came out
        #: 9x slower than in the detailed engine when every address and slice was scaled)
        self.address_share = 1.0
        #: ``l2.atomic_queue_requests``: the requests an SM may have waiting before its L1 holds
        self.atom_queue_limit = l2.atomic_queue_requests

    def atomic_slice(self, line: int) -> int:
        """The slice whose atomic unit executes the updates of ``line`` (ASSUMED hash: the
        ``l2.atomic_granule_bytes`` granule number g, x = g ^ g >> 5, x ^ x >> 11, modulo
        ``l2.slices``; the H100's hash is not known. It gives consecutive granules and granules
        1-32 apart distinct slices, as the H100's lts__t_requests per slice show for the
        atomic_contention probe's 4 KB- and 32 KB-spread lines)."""
        x = line // self.atom_granule
        x ^= x >> 5
        x ^= x >> 11
        return x % len(self.atom_slices)

    def atomic(self, t: float, lines: list[int], masks: list[int], serial: int, reduction: bool,
               served: dict[int, str] | None = None, requests: list[tuple[int, int, list[int]]] | None = None,
               float_op: bool = False, sm: int = -1, queue: list[float] | None = None) -> float:
        """A warp's ``atom`` (``reduction`` False) or ``red`` on the sectors, executed here: read
        (counted as ``atom``/``red``), then the sectors are dirty. Returns the cycle the old values
        are ready.

        Without ``requests`` (or with the contended-atomics model off): ``serial``, the most lanes
        updating one address, are applied one after the other, ``l2.atomic_serial_cycles`` each
        after the first. With ``requests`` (``(line, sector mask, byte addresses)`` each, the L1's
        split, :func:`atomic_requests`) and the model on: each request is taken by the GPU-wide
        port (``l2.atomic_requests_per_cycle``, ``atomic_return_requests_per_cycle`` for ``atom``),
        then starts when its slice's atomic unit (:meth:`atomic_slice`) and each of its addresses
        are free; it holds the unit ``atomic_slice_cycles`` (+ ``atomic_sector_cycles`` per further
        sector; with ``atomic_full_sector_cycles`` set, per sector: that for a sector whose eight
        words it all updates, ``atomic_slice_cycles`` for one it updates in part, integer and float
        alike: measured on the H100 by ``validation/probes/atomic_lanes.py``) and each address
        ``atomic_address_cycles`` (``*_float`` for ``float_op``; times
        :attr:`address_share` once SMs other than ``sm`` have updated it too). The
        warp's data are ready an L2 access (:meth:`read`, at ``t``) after ``t`` plus the wait of its
        last request. ``lts__t_requests``/``sectors`` count every request; a request's sectors
        of a line :meth:`far` from SM ``sm``'s partition are counted again (``l2_{op}_far_sectors``:
        looked up at both partitions, as the H100 counts them: validation/probes/atomic_contention.py's
        1,081,344 red or atom requests of every SM are 1,622,016 ``lts__t_sectors_op_red``/``atom``,
        1.5 each, half the SMs being far from the line's home; ``sm`` -1: none counted again).
        ``queue``: the SM's heap of its requests' start cycles (:attr:`L1.atom_queue`), which the
        contended requests' starts are pushed onto."""
        op = "red" if reduction else "atom"
        done = self.read(t, lines, masks, op, served)
        for line, mask in zip(lines, masks):
            self._write_line(line, mask, t)
        contended = requests is not None and self.contended
        if self.parts > 1 and sm >= 0:
            side = self.side(sm)
            sent = [(r[0], r[1]) for r in requests] if contended else zip(lines, masks)
            self.count[f"l2_{op}_far_sectors"] += sum(_POPCOUNT[m] for ln, m in sent if self.far(ln, side))
        if contended:
            last = self._contend(t, requests, reduction, float_op, sm, queue)
            c = self.count
            c[f"l2_{op}_requests"] += len(requests) - len(lines)
            c[f"l2_{op}_sectors"] += sum(_POPCOUNT[m] for _, m, _ in requests) - sum(_POPCOUNT[m] for m in masks)
            return done + (last - t)
        c = self.atomic_serial
        return done + serial * c - c  # (done + serial) - 1 when c = 1, as the golden cycles were computed

    def _contend(self, t: float, requests: list[tuple[int, int, list[int]]], reduction: bool,
                 float_op: bool, sm: int = -1, queue: list[float] | None = None) -> float:
        """Book ``requests`` arriving at ``t`` on the port, the slices and the addresses (see
        :meth:`atomic`); returns the cycle the last one starts."""
        port = self.atom_port[0 if reduction else 1]
        per_addr = self.atom_address[float_op]
        per_slice = self.atom_slice[float_op]
        per_sector = self.atom_sector
        per_full, per_part = self.atom_full, self.atom_part
        slices = self.atom_slices
        free = self.address_free
        owner = self.address_sm
        last = t
        for line, mask, addrs in requests:
            s = t
            if port:
                s = self._take("atom", s, 1, port)
            if slices is not None:
                k = self.atomic_slice(line)
                s = max(s, slices[k])
            for a in addrs:
                f = free.get(a)
                if f is not None and f > s:
                    s = f
            # (the whole GPU is simulated: every address at its own cost)
            hot = [_shared(owner, a, sm) for a in addrs] if self.address_share != 1.0 else [False] * len(addrs)
            share = self.address_share if any(hot) else 1.0
            if slices is not None:
                n = _POPCOUNT[mask]
                if per_full:
                    full = 0
                    if len(addrs) >= 8:  # (a request's addresses are distinct: 8 fill a sector)
                        words = collections.Counter((a >> 5) & 3 for a in addrs)
                        full = sum(c >= 8 for c in words.values())
                    hold = per_full * full + per_part * (n - full)
                else:
                    hold = per_slice + per_sector * (n - 1)
                slices[k] = s + hold * share
            if per_addr:
                for a, h in zip(addrs, hot):
                    free[a] = s + per_addr * (self.address_share if h else 1.0)
            if queue is not None:
                heapq.heappush(queue, s)
            if s > last:
                last = s
        return last

    def warm(self, lines: list[int], masks: list[int], stored: bool,
             partial: list[tuple[int, int]] = (), side: int | None = None) -> tuple[int, int, int, list[int]]:
        """Make sectors present without holding any server (see :meth:`MemorySystem.warm`;
        ``partial`` as for :meth:`write`; ``side`` the reading SM's partition, as for
        :meth:`read`); returns (bytes DRAM reads: load misses and the rest of the partially
        written sectors evicted; bytes of dirty sectors evicted; bytes read to complete partly
        written sectors evicted; the lines evicted with traffic)."""
        traffic = [0, 0, 0]   # DRAM reads, write-backs, merge reads
        evicted_lines: list[int] = []

        def put(part: int, line: int, mask: int, dirty: bool) -> None:
            merge, wb, ev_lines = self._evicted(self.caches[part].fill(line, mask, dirty), part)
            traffic[0] += merge
            traffic[1] += wb
            traffic[2] += merge
            evicted_lines.extend(ev_lines)

        if stored:
            self._note_partial(lines, masks, partial)
        for line, mask in zip(lines, masks):
            if stored:
                h = self.home(line, side)
                put(h, line, mask, True)
                self._drop_copies(line, h)
                continue
            h, hit, rest = self._look(line, mask, side)
            miss = mask & ~hit
            if miss:
                fetch = self.granules(miss)
                traffic[0] += _POPCOUNT[fetch] * self.sector
                put(h, line, fetch, False)
                rest |= fetch
            if rest and self.localize and side is not None and side != h:
                put(side, line, rest, False)
        return traffic[0], traffic[1], traffic[2], evicted_lines


class L1:
    """One SM's sectored L1 data cache: a tag/data stage (a server of one request at a time) and a
    cache (:class:`SectorCache`, allocate on load miss, write-through, no allocate on store) in
    front of :class:`L2`.

    Args:
        cfg: the GPU configuration: ``l1.latency_cycles`` and ``l1.tag_lines_per_cycle``.
        capacity_lines: 128 B lines it holds for this launch (unified array minus carveout).
        l2: the L2 it misses to.
        count: the memory system's counters.
        sm: the SM it belongs to (the L2's request coalescer joins the L1-bypassing reads of
            different SMs only).

    Attributes:
        free: the cycle the tag stage is free again (the SM's ``lg_throttle`` compares its
            backlog with ``sm.lg_queue_cycles``).
        data_free: the cycle the data stage is free again: one wavefront a cycle, shared by the
            SM's shared-memory accesses (:meth:`gpusim.timing.sm.SM._memory`; a full MIO queue,
            :meth:`gpusim.timing.sm.Scheduler.queue_shared`, is ``mio_throttle``) and the data
            wavefronts of global loads.
            One stage for both, measured on the H100 (``validation/probes/data_stage.py``): 4 or 16
            conflict-free shared loads and a 32-wavefront global load an iteration take the sum of
            their wavefronts (2,318 and 3,101 cycles an iteration for 2,304 and 3,072), not the larger.

    Requests are lists of 128 B lines with 4-bit sector masks arriving at cycle ``now``; each
    method returns the cycle the request completes.
    """

    def __init__(self, cfg: GPUConfig, capacity_lines: int, l2: L2, count: collections.Counter, sm: int = -1):
        self.cache = SectorCache(capacity_lines)
        self.l2, self.count, self.sm = l2, count, sm
        #: the L2 partition near this SM (its reads look up the copies there first)
        self.side = l2.side(sm) if sm >= 0 else None
        self.latency = cfg.l1.latency_cycles
        self.tag_lines = cfg.l1.tag_lines_per_cycle
        self.combine = cfg.l1.write_combine_lines
        self.recent_writes: collections.OrderedDict[int, None] = collections.OrderedDict()
        #: ``l1.store_merge_lines``: warp -> (seq, {line: sectors written in part}) of its last narrow store
        #: (insertion order: the least recent first; at most one entry a resident warp)
        self.merge_lines = cfg.l1.store_merge_lines
        self.merge_width = cfg.l1.store_merge_lane_bytes
        self.merge_distance = cfg.l1.store_merge_instructions
        self.merge_warps = cfg.sm.max_warps
        self.merge_open: dict[object, tuple[int, dict[int, int]]] = {}
        self.free = 0
        self.data_free = 0
        #: the SM's miss path: cycles a line request of a load to L2 takes (0: no limit)
        self.miss_cycles = 1.0 / cfg.l1.miss_requests_per_cycle if cfg.l1.miss_requests_per_cycle else 0.0
        self.miss_free = 0.0
        #: ``l1.hits_wait_for_fills``: line -> (sectors, cycle) of this L1's misses in flight (None: not modelled)
        self.fills: InFlight | None = InFlight() if cfg.l1.hits_wait_for_fills else None
        #: the cycles this SM's contended atomic requests waiting in the L2 start (a heap)
        self.atom_queue: list[float] = []

    def _miss(self, t: float, n: int) -> float:
        """``n`` line requests of a load leave for L2 at ``t``: returns the cycle the last leaves
        (``l1.miss_requests_per_cycle`` a cycle)."""
        if not self.miss_cycles or not n:
            return t
        t = max(t, self.miss_free)
        self.miss_free = t + n * self.miss_cycles
        return self.miss_free - self.miss_cycles

    def _stage(self, now: int, cycles: float) -> float:
        t = max(now, self.free)
        self.free = t + cycles
        return t

    def load(self, now: int, lines: list[int], masks: list[int], cache_l1: bool = True,
             wavefronts: int | None = None, served: dict[int, str] | None = None) -> float:
        """A warp's load of ``lines``/``masks``; returns the cycle its data is ready.

        The stage takes ``max(wavefronts, lines / l1.tag_lines_per_cycle)`` cycles for it: the
        data stage's bank wavefronts (``wavefronts``, shared memory's rule; None counts a cycle
        per line) or the tag stage's lookups, whichever is longer (measured on the H100:
        ``validation/probes/l1_stride.py``). The wavefronts also hold the data stage
        (:attr:`data_free`), after the shared accesses booked on it; the data is ready
        ``l1.latency_cycles`` after they start. ``cache_l1`` False (``.cg``, ``.cv``, volatile)
        goes to L2 without looking up or filling the cache."""
        if wavefronts is None:
            t = start = self._stage(now, len(lines))
        else:
            t = self._stage(now, max(wavefronts, len(lines) / self.tag_lines))
            start = self.data_free if self.data_free > t else t  # behind shared accesses' wavefronts
            self.data_free = start + wavefronts
        if not cache_l1:
            return self.l2.read(self._miss(t, len(lines)), lines, masks, served=served, source=self.sm, side=self.side)
        cache = self.cache
        entries = cache.lines  # cache.lookup, inlined (a call per line was a tenth of a global load)
        miss_lines, miss_masks = [], []
        hits = 0
        for line, mask in zip(lines, masks):
            entry = entries.get(line)
            if entry is None:
                hit = 0
            else:
                entries.move_to_end(line)
                hit = entry[0] & mask
            hits += _POPCOUNT[hit]
            if served is not None:
                _record(served, line, hit, "L1")
            if hit != mask:
                miss_lines.append(line)
                miss_masks.append(mask & ~hit)
        self.count["l1_ld_hits"] += hits
        done = start + self.latency
        fills = self.fills
        if fills is not None and hits:
            for line, mask in zip(lines, masks):
                done = fills.wait(line, mask, start, done)
        if miss_lines:
            fetched = self.l2.read(self._miss(t, len(miss_lines)), miss_lines, miss_masks, served=served, side=self.side)
            done = max(done, fetched)
            for line, mask in zip(miss_lines, miss_masks):
                cache.fill(line, mask)
            if fills is not None:
                fills.note(miss_lines, miss_masks, start, fetched)
        return done

    def store(self, now: int, lines: list[int], masks: list[int], n: int,
              partial: list[tuple[int, int]] = (), width: int = 0, warp: object = None, seq: int = 0,
              prev: int = -1) -> float:
        """A warp's store of ``n`` sectors (``width``: bytes a lane, 0 unknown; ``warp``: the storing
        warp, None unknown; ``seq``: the instructions the warp has issued, this one included; ``prev``:
        that count at its previous global or local memory instruction): through the stage (a cycle
        per line, no allocate) into L2.

        Write combining: a line among the SM's last ``l1.write_combine_lines`` stored lines (LRU)
        joins that line's request; every other line is an L2 write request, and the L2 takes
        ``l2.write_requests_per_cycle`` of them a cycle GPU-wide, and the sectors at
        ``l2.write_data_bytes_per_s`` (:meth:`L2.take_writes`). The stage stays busy until the
        request port is no more than ``l2.write_queue_cycles`` behind taking this store's
        requests (its backlog throttles the SM's loads and stores; the write-data path's backlog
        delays only the store's arrival in L2, and so the launch's end). Measured on
        the H100 (``validation/probes/store_scatter.py``): 4-byte stores spread over 32 lines a warp
        send L2 one request per lane and run at ~30 requests a cycle; spread over 8 lines they join
        the other warps' requests and cost no more than a coalesced store.

        Merging (``l1.store_merge_lines``, :meth:`_merge`): a warp's narrow store to the lines its
        previous such store wrote in part joins that request (no request of its own), and the
        sectors both write in part add nothing (no L2 sector, no write data)."""
        t = self._stage(now, len(lines))
        self.count["l1_st_sectors"] += n
        joined: dict[int, int] = {}
        if self.merge_lines and partial and width == self.merge_width and warp is not None:
            joined = self._merge(warp, seq, prev, lines, partial)
            n -= sum(_POPCOUNT[m] for m in joined.values())
        recent = self.recent_writes
        fresh = []  # the lines that make a request of their own
        for line in lines:
            if line in recent:
                recent.move_to_end(line)
            elif line in joined:
                continue
            else:
                fresh.append(line)
                recent[line] = None
                if len(recent) > self.combine:
                    recent.popitem(last=False)
        port, taken = self.l2.take_writes(t, len(fresh), n)
        done = self.l2.write(taken, lines, masks, n, partial, fresh, self.side)
        self.free = max(self.free, port - self.l2.write_queue, self.l2.backlog())
        return done

    def _merge(self, warp: object, seq: int, prev: int, lines: list[int],
               partial: list[tuple[int, int]]) -> dict[int, int]:
        """``l1.store_merge_lines``: the lines of a store of ``l1.store_merge_lane_bytes`` a lane by
        ``warp`` as its ``seq``-th instruction (``lines``; ``partial``: the sectors it writes in part)
        that join the warp's previous such store's request, each with the sectors both write in part
        (they merge): where that store was the warp's previous memory instruction (its ``seq`` is
        ``prev``), at most ``l1.store_merge_instructions`` instructions before this one, and both span
        at most ``store_merge_lines`` lines. The warp's record becomes this store's ``seq``, lines and
        the sectors written in part there.

        Measured on an H200 (``validation/probes/store_merge.py``,
        ``validation/reports/h200/store_merge``): two or four adjacent 4-byte stores a thread filling
        a sector between them (2-4 lines an instruction, written out or in a loop) reach L2 as one
        write a sector when they do not queue (1.00-1.01) and 1.22-1.37 in a burst that saturates the
        L2's write path; with 8 dependent FMAs or more between the two, as 8-byte and 16-byte stores
        and 4-byte stores over 8 lines always do, one write a store. ASSUMED: any other memory
        instruction between the two breaks the merge (the probe has none between its stores)."""
        last, before = self.merge_open.pop(warp, (0, {}))
        if len(lines) > self.merge_lines:
            return {}
        mine: dict[int, int] = {}
        for sec, _ in partial:
            mine[sec >> 2] = mine.get(sec >> 2, 0) | 1 << (sec & 3)
        if last != prev or seq - last > self.merge_distance:
            before = {}
        self.merge_open[warp] = (seq, {line: m | before.get(line, 0) for line, m in mine.items()})
        if len(self.merge_open) > self.merge_warps:
            del self.merge_open[next(iter(self.merge_open))]
        return {line: before[line] & m for line, m in mine.items() if line in before}

    def atomic(self, now: int, lines: list[int], masks: list[int], serial: int, reduction: bool,
               served: dict[int, str] | None = None, requests: list[tuple[int, int, list[int]]] | None = None,
               float_op: bool = False) -> float:
        """A warp's global ``atom``/``red``: through the stage (a cycle per line, or per request
        where the L2 models contended atomics and ``requests`` is given: the L1 sends lanes on one
        address as separate requests, :func:`atomic_requests`) to L2, which executes it."""
        if requests is not None and self.l2.contended:
            t = self._stage(now, len(requests))
            queue = self.atom_queue
            done = self.l2.atomic(t, lines, masks, serial, reduction, served, requests, float_op, self.sm, queue)
            # back-pressure: the SM's requests wait in the L2's queues (the port, their slice's
            # atomic unit, their address); past l2.atomic_queue_requests of them the stage holds
            # until they fall back to that many (validation/probes/hot_atomic.py)
            while queue and queue[0] <= t:
                heapq.heappop(queue)
            held = 0.0
            while len(queue) > self.l2.atom_queue_limit:
                held = heapq.heappop(queue)
            self.free = max(self.free, held, self.l2.backlog())
            return done
        t = self._stage(now, len(lines))
        return self.l2.atomic(t, lines, masks, serial, reduction, served, sm=self.sm)


class MemorySystem:
    """L1s, L2 and DRAM of one GPU for one launch: one :class:`L1` per SM (made on first use),
    one :class:`L2`, one :class:`DRAM`, sharing one counter.

    Args:
        cfg: the GPU configuration.
        l1_bytes: L1 data capacity per SM for this launch (unified array minus
            the shared-memory carveout), bytes.

    Methods take ``sectors``: the distinct 32 B sector numbers (byte address
    // 32) of one warp access, a sorted int64 array, and return the cycle the
    access completes (data in registers for loads, accepted by L2 for stores).
    """

    def __init__(self, cfg: GPUConfig, l1_bytes: int):
        self.cfg = cfg
        self.l1_lines = max(1, l1_bytes // cfg.l1.line_bytes)
        self.count = collections.Counter()
        self.dram = DRAM(cfg, self.count)
        self.l2 = L2(cfg, self.dram, self.count)
        self.l1s: dict[int, L1] = {}
        #: The cycle the last store or atomic so far was accepted by L2 (a kernel ends only after
        #: its writes are performed: the launch's end waits for it).
        self.writes_done = 0.0
        #: When a dict, loads and atomics record where each 32 B sector was served:
        #: sector number (address // 32) -> ``"L1"``, ``"L2"`` or ``"DRAM"`` (for the diagrams).
        self.served: dict[int, str] | None = None

    def l1(self, sm: int) -> L1:
        """SM ``sm``'s L1 (made empty on first use)."""
        l1 = self.l1s.get(sm)
        if l1 is None:
            l1 = self.l1s[sm] = L1(self.cfg, self.l1_lines, self.l2, self.count, sm)
        return l1

    # ---------------------------------------------------------------- accesses
    def load(self, sm: int, now: int, sectors: np.ndarray, cache_l1: bool = True,
             wavefronts: int | None = None) -> float:
        """A warp's global (or local) load on SM ``sm`` at cycle ``now``; returns the cycle its data
        is ready (:meth:`L1.load`)."""
        lines, masks = _lines(sectors)
        return self.load_lines(sm, now, lines, masks, len(sectors), int(sectors[0]), cache_l1, wavefronts)

    def load_lines(self, sm: int, now: int, lines: list[int], masks: list[int], n_sectors: int, first: int,
                   cache_l1: bool = True, wavefronts: int | None = None) -> float:
        """:meth:`load` of the sectors already grouped into ``lines``/``masks`` (:func:`_lines`):
        ``n_sectors`` of them, the lowest ``first``."""
        c = self.count
        c["l1_ld_sectors"] += n_sectors
        dram_before = c["dram_read_bytes"]
        done = self.l1(sm).load(now, lines, masks, cache_l1, wavefronts, self.served)
        if first < _LOCAL_SECTOR:
            c["dram_read_bytes_global_ld"] += c["dram_read_bytes"] - dram_before
        return done

    def store(self, sm: int, now: int, sectors: np.ndarray, partial: list[tuple[int, int]] = (),
              width: int = 0, warp: object = None, seq: int = 0, prev: int = -1) -> float:
        """A warp's global (or local) store of ``width`` bytes a lane: through L1 (no allocate) into
        L2 (write-back); ``partial``: the sectors it writes only in part
        (:func:`gpusim.memmodel.partial_sectors`); ``warp``, ``seq``, ``prev``: the storing warp, how
        many instructions it has issued and that count at its previous memory instruction
        (:meth:`L1.store`)."""
        lines, masks = _lines(sectors)
        c = self.count
        dram_before = c["dram_read_bytes"]
        done = self.l1(sm).store(now, lines, masks, len(sectors), partial, width, warp, seq, prev)
        # the reads that complete the partially written sectors its fills evict
        c["dram_read_bytes_global_ld"] += c["dram_read_bytes"] - dram_before
        self.writes_done = max(self.writes_done, done)
        return done

    def atomic(self, sm: int, now: int, sectors: np.ndarray, serial: int, reduction: bool,
               addrs: np.ndarray | None = None, float_op: bool = False) -> float:
        """A warp's global ``atom``/``red``, executed in L2 (:meth:`L2.atomic`); ``addrs``: the
        lanes' byte addresses (uint64; with them and ``l2.atomic_address_cycles``,
        ``atomic_slice_cycles`` or ``atomic_requests_per_cycle`` set, contended atomics are
        modelled, :func:`atomic_requests`);
        ``float_op``: a floating-point update (``l2.atomic_*_float`` costs)."""
        lines, masks = _lines(sectors)
        requests = atomic_requests(addrs) if addrs is not None and self.l2.contended else None
        done = self.l1(sm).atomic(now, lines, masks, serial, reduction, self.served, requests, float_op)
        self.writes_done = max(self.writes_done, done)
        return done

    def warm(self, sectors: np.ndarray, stored: bool = False, written: np.ndarray | None = None,
             now: float = 0.0, side: int | None = None) -> None:
        """Sectors that CTAs of SMs not simulated load (``stored`` False) or store (sampled timing):
        make them present in L2 as their accesses would, load misses fetched from DRAM in granules,
        stores dirty (no fetch; ``written``: the 32-bit masks of the bytes stored, one per sector,
        or None for whole sectors), without holding any server (their bandwidth is not the
        simulated SMs' share). Counted apart: ``shadow_dram_read_bytes`` (with the reads that
        complete partially written sectors their fills evict), and the write-backs of the dirty
        lines their fills evict, ``shadow_dram_write_bytes``; the traffic of those evictions holds
        DRAM's server at cycle ``now`` for the slice's share (:attr:`L2.eviction_share`). ``side``:
        the L2 partition near the SM whose CTA loads them (:func:`side_of`; None: at home)."""
        partial = ()
        if written is not None:
            part = written != FULL_SECTOR
            partial = list(zip(sectors[part].tolist(), written[part].tolist()))
        dram, written, merge, lines = self.l2.warm(*_lines(sectors), stored, partial, side)
        self.count["shadow_dram_read_bytes"] += dram
        self.count["shadow_dram_write_bytes"] += written
        if self.l2.eviction_share is not None:
            self.dram.occupy(now, merge, written, lines, self.l2.eviction_share)

    def warm_load(self, sm: int, sectors: np.ndarray, cache_l1: bool) -> tuple[int, int]:
        """One warp's global load of ``sectors`` (sorted, distinct sector numbers) made present
        as :meth:`load` would: in SM ``sm``'s L1 when ``cache_l1``, and its L1 misses in L2, DRAM's
        granules for L2's misses, holding no server and counting nothing (the loop sampler's
        skipped iterations, :mod:`gpusim.timing.itersampling`, whose counts are extrapolated).
        Returns (sectors the L1 held, bytes DRAM would have read)."""
        lines, masks = _lines(sectors)
        hits = 0
        if cache_l1:
            cache = self.l1(sm).cache
            miss_lines, miss_masks = [], []
            for line, mask in zip(lines, masks):
                hit = cache.lookup(line, mask)
                hits += _POPCOUNT[hit]
                if hit != mask:
                    miss_lines.append(line)
                    miss_masks.append(mask & ~hit)
                    cache.fill(line, mask & ~hit)
            lines, masks = miss_lines, miss_masks
        return hits, (self.l2.warm(lines, masks, False, side=self.l2.side(sm))[0] if lines else 0)

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
            # the L1s' requests (srcunit_tex, hardware-facts.md §6), and all sources: a sector of a line
            # homed in the other partition is looked up at both partitions' slices (L2.far)
            "lts__t_sectors_srcunit_tex_op_read.sum": c["l2_read_sectors"],
            "lts__t_sectors_srcunit_tex_op_write.sum": c["l2_write_sectors"],
            "lts__t_sectors_op_read.sum": c["l2_read_sectors"] + c["l2_read_far_sectors"],
            "lts__t_sectors_op_write.sum": c["l2_write_sectors"] + c["l2_write_far_sectors"],
            "lts__t_sectors_op_atom.sum": c["l2_atom_sectors"] + c["l2_atom_far_sectors"],
            "lts__t_sectors_op_red.sum": c["l2_red_sectors"] + c["l2_red_far_sectors"],
            "lts__t_requests_srcunit_tex_op_read.sum": c["l2_read_requests"],
            "lts__t_requests_srcunit_tex_op_write.sum": c["l2_write_requests"],
            "lts__t_requests_srcunit_tex_op_atom.sum": c["l2_atom_requests"],
            "lts__t_requests_srcunit_tex_op_red.sum": c["l2_red_requests"],
            "lts__t_sector_op_read_hit_rate.pct": pct(c["l2_read_hits"], c["l2_read_sectors"] + c["l2_read_far_sectors"]),
            "dram__bytes_read.sum": c["dram_read_bytes"],
            "dram__bytes_write.sum": c["dram_write_bytes"],
        }
