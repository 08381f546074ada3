"""Global-memory coalescing model of one warp-level ``ld.global`` / ``st.global`` instruction.

Owns: the address-pattern part of a global access: requests, distinct 32-byte sectors and
distinct 128-byte lines a warp touches, and the bytes of each sector it covers. Whether those sectors hit in L1/L2 is cache state and
belongs to the cache model (which can take :func:`global_sector_addresses` as its input).
Pure numpy, vectorised over warps; imports only numpy.

Source: shared/reference/hardware-facts.md §6 (H100 ground truth, MEAS) and §9 ("requests =
warp-level global instructions; sectors = distinct 32 B sectors touched by active lanes; L2
requests = distinct 128 B lines per request"). Per instruction and warp, with the Nsight
Compute metrics of §7 (``_op_st`` variants for stores):

* ``requests`` = ``l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum``: 1 if any lane is active
  (a ``.v2``/``.v4`` access is still one request), else 0.
* ``sectors`` = ``l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum`` (§6 "L1 sectors/req"): the
  distinct ``sector_bytes``-aligned sectors touched by active lanes; an access that straddles a
  sector boundary counts in every sector it touches (hit or miss alike: this is a lookup count).
* ``lines`` = distinct ``line_bytes``-aligned lines: §6 "L2 req/L1 req" when every sector
  misses in L1 (``lts__t_requests_srcunit_tex_op_read.sum`` per L1 request). With L1 hits the
  L2 requests are the lines holding at least one *missed* sector: pass the missed lanes as
  ``active`` to get them.
* ``lane_bytes`` = bytes the active lanes asked for; ``100 * lane_bytes / (sectors *
  sector_bytes)`` is ``smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct`` for the
  §6 stride rows (100 / 50 / 25 / 12.5 % for strides 1/2/4/8); not checked for patterns where
  lanes share bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["GlobalCost", "global_sectors", "global_sector_addresses", "sector_byte_masks", "partial_sectors"]

WARP = 32
_SENTINEL = np.iinfo(np.uint64).max


@dataclass(frozen=True)
class GlobalCost:
    """Address-pattern cost of one global-memory instruction for each of W warps.

    Attributes (all int64 arrays of shape (W,)):
        requests: 1 if the warp has an active lane, else 0
            (``l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}.sum``).
        sectors: distinct 32 B sectors touched by active lanes
            (``l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum``).
        lines: distinct 128 B lines touched by active lanes (L2 requests if all sectors miss).
        lane_bytes: ``size`` x number of active lanes (bytes asked for).
    """

    requests: np.ndarray
    sectors: np.ndarray
    lines: np.ndarray
    lane_bytes: np.ndarray


def _prepare(addrs, size, active, sector_bytes, line_bytes):
    a = np.asarray(addrs)
    if a.dtype.kind not in "iu":
        raise ValueError(f"global addresses must be an integer array, got dtype {a.dtype}")
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != WARP:
        raise ValueError(f"global addresses must have shape (W, 32) or (32,), got {np.shape(addrs)}")
    if a.dtype.kind == "i" and a.size and a.min() < 0:
        raise ValueError("global addresses must be non-negative")
    a = a.astype(np.uint64, copy=False)
    if active is None:
        act = np.ones(a.shape, dtype=bool)
    else:
        act = np.asarray(active, dtype=bool)
        if act.ndim == 1:
            act = act[None, :]
        if act.shape != a.shape:
            raise ValueError(f"active must have the shape of addrs {a.shape}, got {np.shape(active)}")
    if not isinstance(size, (int, np.integer)) or not 1 <= size <= 16:
        raise ValueError(f"size must be 1..16 bytes per lane, got {size!r}")
    for name, v in (("sector_bytes", sector_bytes), ("line_bytes", line_bytes)):
        if v < 1 or v & (v - 1):
            raise ValueError(f"{name} must be a power of two, got {v}")
    if line_bytes < sector_bytes:
        raise ValueError(f"line_bytes ({line_bytes}) must be >= sector_bytes ({sector_bytes})")
    if act.any() and int(a[act].max()) > int(_SENTINEL) - size:
        raise ValueError("global access runs past the end of the 64-bit address space")
    return a, act, int(size)


def _blocks(a, act, size, gran):
    """Indices of the gran-byte blocks each active lane touches: uint64 (W, 32*n), inactive = sentinel."""
    shift = np.uint64(gran.bit_length() - 1)            # gran is a power of two
    first = a >> shift
    if size == 1:
        return np.where(act, first, _SENTINEL)
    last = (a + np.uint64(size - 1)) >> shift
    if (first == last).all():                          # no access straddles a block: 1 per lane
        return np.where(act, first, _SENTINEL)
    n = (size - 1) // gran + 2                         # most blocks one access can touch
    idx = np.minimum(first[:, :, None] + np.arange(n, dtype=np.uint64), last[:, :, None])
    idx = np.where(act[:, :, None], idx, _SENTINEL)
    return idx.reshape(a.shape[0], -1)


def _count_sorted(s, valid):
    """Distinct values among the valid entries of each row of a row-sorted (W, N) array."""
    new = valid.copy()
    new[:, 1:] &= s[:, 1:] != s[:, :-1]
    return new.sum(axis=1).astype(np.int64)


def global_sectors(addrs, size: int, active=None, sector_bytes: int = 32,
                   line_bytes: int = 128) -> GlobalCost:
    """Requests, sectors and lines of one global-memory instruction, for W warps at once.

    Args:
        addrs: unsigned (or non-negative signed) integer array (W, 32), or (32,) for one warp:
            the byte address each lane accesses (generic or global; only the value matters).
        size: bytes per lane, 1..16; a ``.v2``/``.v4`` access is one request of the vector's
            total size (``ld.global.v4.f32`` is 16). Alignment is not required: a straddling
            access counts in every sector and line it touches.
        active: bool array of addrs' shape; inactive lanes touch nothing. Default all active.
        sector_bytes, line_bytes: 32 and 128 on sm_70..sm_90 (§6).

    Returns:
        :class:`GlobalCost` of int64 arrays of shape (W,).

    Vectorised: one row-wise sort of a (W, 32*n) array of sector indices (n = 1, or 2 if some
    access straddles a sector), no loop over warps or lanes.
    """
    a, act, size = _prepare(addrs, size, active, sector_bytes, line_bytes)
    n_act = act.sum(axis=1).astype(np.int64)
    sec = np.sort(_blocks(a, act, size, sector_bytes), axis=1)
    valid = sec != _SENTINEL
    # a line's sectors are contiguous, so the line indices of the sorted sectors stay sorted
    lin = sec >> np.uint64((line_bytes // sector_bytes).bit_length() - 1)
    return GlobalCost(requests=(n_act > 0).astype(np.int64),
                      sectors=_count_sorted(sec, valid),
                      lines=_count_sorted(lin, valid),
                      lane_bytes=n_act * size)


def global_sector_addresses(addrs, size: int, active=None, sector_bytes: int = 32,
                            line_bytes: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """For ONE warp: the sorted unique byte addresses of the sectors and lines it touches.

    Args as :func:`global_sectors`, with ``addrs`` of shape (32,) (or (1, 32)).

    Returns:
        ``(sectors, lines)``: uint64 1-D arrays of the start addresses (multiples of
        ``sector_bytes`` / ``line_bytes``), ascending; their lengths are
        :func:`global_sectors`'s ``sectors`` and ``lines`` for this warp.
    """
    a, act, size = _prepare(addrs, size, active, sector_bytes, line_bytes)
    if a.shape[0] != 1:
        raise ValueError(f"global_sector_addresses takes one warp, got {a.shape[0]}")
    out = []
    for gran in (sector_bytes, line_bytes):
        idx = _blocks(a, act, size, gran)[0]
        out.append(np.unique(idx[idx != _SENTINEL]) * np.uint64(gran))
    return out[0], out[1]


#: A 32 B sector's bytes, all written, as a byte mask.
FULL_SECTOR = 0xFFFFFFFF


def sector_byte_masks(addrs: np.ndarray, width: int) -> np.ndarray:
    """The bytes each lane's access of ``width`` bytes (1 to 16, aligned) at ``addrs`` (uint64 byte
    addresses) covers in its 32 B sector, as 32-bit masks (uint64, same shape as ``addrs``)."""
    return ((np.uint64(1) << np.uint64(width)) - np.uint64(1)) << (addrs & np.uint64(31))


def partial_sectors(addrs: np.ndarray, width: int, n_sectors: int) -> list[tuple[int, int]]:
    """The 32 B sectors a warp's store writes only part of.

    Args:
        addrs: the active lanes' byte addresses (uint64; aligned to ``width``).
        width: bytes each lane writes (1 to 16).
        n_sectors: how many distinct sectors the store touches (``len`` of its sector list).

    Returns ``[(sector number = address // 32, 32-bit mask of its bytes written), ...]`` for the
    sectors whose 32 bytes are not all written, sorted by sector; ``[]`` when every sector is
    written whole (the common case, decided from the distinct addresses alone). Which bytes an
    L2 must complete from DRAM follows from it (hardware-facts.md §6: 32 B sectors;
    ``validation/probes/store_scatter.py``).
    """
    uniq = np.unique(addrs)
    if len(uniq) * width == 32 * n_sectors:
        return []
    sec = (uniq >> np.uint64(5)).astype(np.int64)
    first = np.flatnonzero(np.r_[True, sec[1:] != sec[:-1]])
    masks = np.bitwise_or.reduceat(sector_byte_masks(uniq, width), first)
    part = masks != np.uint64(FULL_SECTOR)
    return list(zip(sec[first][part].tolist(), masks[part].tolist()))
