"""Device memory of the functional engine: global allocations and the address map.

Owns: the flat, byte-addressed global memory (allocations aligned like
``cudaMalloc``), the generic-address windows of shared and local memory, and
vectorised, bounds- and alignment-checked loads and stores. Faults are
reported as :class:`MemoryFault` carrying the offending lane, so that the
engine can name the thread.

On Linux the allocations' bytes live in shared anonymous mappings (``mmap``,
``MAP_SHARED``), small ones packed into arenas: processes forked during a launch
(:mod:`gpusim.functional.parallel`) then read and write the device memory itself,
with nothing to copy in or back. Elsewhere they are ordinary numpy arrays.
Imports numpy and the standard library; never simpy or cupy.
"""

from __future__ import annotations

import mmap
import sys
import weakref
from dataclasses import dataclass

import numpy as np

__all__ = [
    "GLOBAL_BASE", "SHARED_WINDOW", "LOCAL_WINDOW", "WINDOW_SIZE", "ALLOC_ALIGN",
    "MemoryFault", "Allocation", "GlobalMemory", "check_aligned", "SHARED_ALLOCATIONS", "ARENA_BYTES", "SMALL_ALLOC",
]

#: First global address handed out. Like a real device pointer it is far from 0,
#: so that a null or small integer pointer faults.
GLOBAL_BASE = 0x7F00_0000_0000
#: Generic addresses ``[SHARED_WINDOW, SHARED_WINDOW + WINDOW_SIZE)`` are shared
#: memory of the executing CTA (``cvta.shared`` adds the base, PTX ISA 9.0 §6.4.1.1).
SHARED_WINDOW = 0x7E00_0000_0000
#: Generic addresses of the executing thread's local memory.
LOCAL_WINDOW = 0x7D00_0000_0000
WINDOW_SIZE = 1 << 32
#: Alignment of every allocation; cudaMalloc guarantees at least 256 bytes
#: (CUDA C++ Programming Guide, "Device Memory Accesses").
ALLOC_ALIGN = 256
#: Whether allocations live in shared anonymous mappings that forked processes write through
#: (Linux, where :mod:`gpusim.functional.parallel` forks its workers).
SHARED_ALLOCATIONS = sys.platform.startswith("linux")
#: Allocations of at most this many (padded) bytes are packed into a shared arena of
#: :data:`ARENA_BYTES`; larger ones get a mapping of their own. Packing keeps the number of
#: mappings low (Linux allows about 65,000 per process) and a small allocation from taking a page.
SMALL_ALLOC = 64 * 1024
#: Bytes of one arena of small allocations. An arena is unmapped when all its allocations are freed.
ARENA_BYTES = 1 << 20


def _shared_zeros(nbytes: int) -> memoryview:
    """``nbytes`` zero bytes in a new shared anonymous mapping (zero-filled by the kernel; unmapped
    when the last view of it is collected)."""
    return memoryview(mmap.mmap(-1, nbytes))


class MemoryFault(Exception):
    """An invalid access by lane ``lane`` (an index into the addresses passed).

    Attributes: lane, address, size (bytes), reason (one sentence), space.
    The engine turns it into a :class:`gpusim.errors.KernelFault`.
    """

    def __init__(self, lane: int, address: int, size: int, reason: str, space: str):
        super().__init__(reason)
        self.lane, self.address, self.size, self.reason, self.space = lane, address, size, reason, space
        #: the faulting thread's index in the chunk, once known (set by the handlers of guarded
        #: accesses, whose ``lane`` indexes the lanes the guard let through)
        self.thread: int | None = None


def check_aligned(addrs: np.ndarray, size: int, space: str) -> None:
    """Raise :class:`MemoryFault` if any address is not a multiple of ``size``
    (PTX ISA 9.0 §5.4.1: accesses must be naturally aligned)."""
    bad = (addrs & np.uint64(size - 1)) != 0
    if bad.any():
        lane = int(np.argmax(bad))
        raise MemoryFault(lane, int(addrs[lane]), size, f"misaligned {size}-byte access", space)


@dataclass(eq=False)
class Allocation:
    """One device allocation: ``nbytes`` usable bytes starting at ``base``.
    ``data`` is a uint8 array padded to a multiple of 16 bytes so that it can
    be viewed as any element type."""

    base: int
    nbytes: int
    data: np.ndarray

    def view(self, dtype: np.dtype) -> np.ndarray:
        """The allocation as an array of ``dtype`` elements (no copy)."""
        return self.data.view(dtype)


class GlobalMemory:
    """The global memory of one simulated device.

    Addresses are Python ints / numpy uint64 values; allocations never move.
    Freed allocations leave a hole, so that a dangling pointer faults.
    """

    def __init__(self) -> None:
        self._allocs: dict[int, Allocation] = {}
        self._bases = np.zeros(0, np.uint64)
        self._ends = np.zeros(0, np.uint64)
        self._order: list[Allocation] = []
        self._next = GLOBAL_BASE
        self._arena: memoryview | None = None  # the shared arena small allocations are cut from
        self._arena_used = 0
        #: Module-level ``.global``/``.const`` variables (:class:`isa.ir.Variable`, by identity)
        #: -> their device address, as bound by the module that launches (``RawModule``).
        self.symbols: dict = {}

    # ---------------------------------------------------------------- allocation
    def allocate(self, nbytes: int, owner: object | None = None) -> Allocation:
        """Allocate ``nbytes`` zero-filled bytes (aligned to :data:`ALLOC_ALIGN`).
        If ``owner`` is given, the memory is freed when ``owner`` is collected."""
        nbytes = int(nbytes)
        if nbytes < 0:
            raise ValueError(f"cannot allocate a negative number of bytes ({nbytes})")
        padded = max(16, -(-nbytes // 16) * 16)
        alloc = Allocation(self._next, nbytes, self._zeros(padded))
        # Leave a gap after every allocation so that overruns fault instead of
        # silently landing in the next buffer.
        self._next += -(-(padded + ALLOC_ALIGN) // ALLOC_ALIGN) * ALLOC_ALIGN
        self._allocs[alloc.base] = alloc
        self._reindex()
        if owner is not None:
            weakref.finalize(owner, self.free, alloc.base)
        return alloc

    def _zeros(self, padded: int) -> np.ndarray:
        """``padded`` zero bytes for a new allocation: shared where :data:`SHARED_ALLOCATIONS` (small ones cut
        from the current arena, never reused: a freed piece is unmapped with its arena), else numpy's."""
        if not SHARED_ALLOCATIONS:
            return np.zeros(padded, np.uint8)
        if padded > SMALL_ALLOC:
            return np.frombuffer(_shared_zeros(padded), np.uint8)
        if self._arena is None or self._arena_used + padded > ARENA_BYTES:
            self._arena, self._arena_used = _shared_zeros(ARENA_BYTES), 0
        # A numpy array over a memoryview (not a view of another array): numpy views of the allocation
        # then have ``data`` itself as their base, as for an allocation of its own (gpusim.ndarray relies on it).
        data = np.frombuffer(self._arena[self._arena_used:self._arena_used + padded], np.uint8)
        self._arena_used += padded  # a multiple of 16: every piece is 16-byte aligned
        return data

    def free(self, base: int) -> None:
        """Free the allocation starting at ``base`` (no-op if already freed)."""
        if self._allocs.pop(base, None) is not None:
            self._reindex()

    def _reindex(self) -> None:
        order = sorted(self._allocs.values(), key=lambda a: a.base)
        bases = np.array([a.base for a in order], np.uint64)
        ends = np.array([a.base + a.nbytes for a in order], np.uint64)
        self._order, self._bases, self._ends = order, bases, ends

    def snapshot(self) -> "GlobalMemory":
        """A copy of this memory (same allocations at the same addresses, their bytes copied):
        kernels can run on it without touching this one."""
        copy = GlobalMemory()
        copy._allocs = {}
        for b, a in self._allocs.items():  # in shared mappings too, like every allocation
            data = copy._zeros(a.data.size)
            data[:] = a.data
            copy._allocs[b] = Allocation(a.base, a.nbytes, data)
        copy._next = self._next
        copy.symbols = dict(self.symbols)
        copy._reindex()
        return copy

    @property
    def allocations(self) -> list[Allocation]:
        """Live allocations, by address."""
        return list(self._order)

    def find(self, address: int) -> Allocation | None:
        """The allocation containing ``address``, or ``None``."""
        i = int(np.searchsorted(self._bases, np.uint64(address), side="right")) - 1
        if i >= 0 and address < int(self._ends[i]):
            return self._order[i]
        return None

    # ---------------------------------------------------------------- access
    def _locate(self, addrs: np.ndarray, size: int) -> list[tuple[Allocation, np.ndarray, np.ndarray | None]]:
        """Split lanes by allocation: [(allocation, element index, lanes or None)].
        Raises MemoryFault for unaligned or out-of-bounds lanes."""
        check_aligned(addrs, size, "global")
        # One consistent index: a collected owner may free an allocation (and re-index) at any time.
        bases, ends, order = self._bases, self._ends, self._order
        if len(bases) == 0:
            raise MemoryFault(0, int(addrs[0]), size, "access to unallocated global memory", "global")
        if addrs.size and size & (size - 1) == 0:
            # Every lane in one allocation (the usual case): no per-lane search. Same result as below.
            lo, hi = int(addrs.min()), int(addrs.max())
            i = int(np.searchsorted(bases, np.uint64(lo), side="right")) - 1
            if i >= 0 and hi + size <= int(ends[i]):
                a = order[i]
                idx = (addrs - np.uint64(a.base)) >> np.uint64(size.bit_length() - 1)
                return [(a, idx.view(np.int64), None)]
        which = np.searchsorted(bases, addrs, side="right").astype(np.int64) - 1
        ok = which >= 0
        end = np.where(ok, ends[np.maximum(which, 0)], 0)
        ok &= (addrs + np.uint64(size)) <= end
        if not ok.all():
            lane = int(np.argmin(ok))
            raise MemoryFault(lane, int(addrs[lane]), size, "out-of-bounds access", "global")
        first = int(which[0])
        if (which == first).all():
            a = order[first]
            return [(a, ((addrs - np.uint64(a.base)) // np.uint64(size)).astype(np.int64), None)]
        out = []
        for w in np.unique(which):
            lanes = np.flatnonzero(which == w)
            a = order[int(w)]
            out.append((a, ((addrs[lanes] - np.uint64(a.base)) // np.uint64(size)).astype(np.int64), lanes))
        return out

    def load(self, addrs: np.ndarray, dtype: np.dtype) -> np.ndarray:
        """Load one ``dtype`` element per address (uint64 array, shape (n,)).
        Returns shape (n,). Raises :class:`MemoryFault`."""
        dtype = np.dtype(dtype)
        out = np.empty(addrs.shape, dtype)
        for alloc, idx, lanes in self._locate(addrs, dtype.itemsize):
            vals = alloc.view(dtype)[idx]
            if lanes is None:
                return vals
            out[lanes] = vals
        return out

    def store(self, addrs: np.ndarray, values: np.ndarray) -> None:
        """Store ``values[i]`` at ``addrs[i]``; all checks happen before any byte
        is written. When lanes collide, the highest lane wins (the hardware
        picks one; PTX leaves it undefined)."""
        parts = self._locate(addrs, values.dtype.itemsize)
        for alloc, idx, lanes in parts:
            alloc.view(values.dtype)[idx] = values if lanes is None else values[lanes]

    def views(self, addrs: np.ndarray, dtype: np.dtype) -> list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        """For atomics: [(element view of an allocation, element index, lanes)]."""
        dtype = np.dtype(dtype)
        return [(a.view(dtype), idx, lanes) for a, idx, lanes in self._locate(addrs, dtype.itemsize)]
