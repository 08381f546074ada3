"""Shared-memory bank model of one warp-level ``ld.shared`` / ``st.shared`` instruction.

Owns: how many *wavefronts* (conflict-free passes through the 32 banks, one per cycle) a
warp's shared-memory access takes, the conflict-free ("ideal") count, Nsight Compute's bank
conflict count, and which lanes each wavefront serves (for the bank diagrams). Pure numpy,
vectorised over warps; imports only numpy and :mod:`gpusim.errors`.

Source: shared/reference/hardware-facts.md §5 (documented rules of PG13 §5.x, FORUM-LDS, and
the H100-measured table, MEAS). The model below is §5's "Model that reproduces all 48
measured cases", rule by rule:

1. **Units** (§5 rule 1). The warp is split into units of ``banks * bank_bytes / width``
   consecutive lanes (128 B of data per wavefront): 32 lanes for 1/2/4-byte accesses,
   half-warps (lanes 0-15, 16-31) for 8 bytes, quarter-warps of 8 lanes for 16 bytes.
   Sub-word (1/2-byte) accesses behave like 4-byte ones on the 32-bit word that holds them.
2. **Load pair merge** (§5 rule 2, FORUM-LDS). Loads only: if every lane pair (t, t^1) has
   equal addresses, or every pair (t, t^2) has, units merge pairwise once (8 B: half-warps ->
   whole warp; 16 B: quarter-warps -> half-warps). Stores never merge. *Inactive lanes:*
   a pair with an inactive lane does not break the condition (only pairs of two active lanes
   are compared). This choice was not measured (§5 caveat: rule 2 was exercised only with
   fully active pair/broadcast patterns); it is the choice under which switching lanes off
   never raises the cost, because merging never raises it.
3. **Wavefronts per unit** (§5 rule 3, PG13 banks/broadcast). For each unit with at least one
   active lane: ``max over banks of the number of distinct 32-bit words requested in that
   bank``. Word ``a // bank_bytes`` lives in bank ``word % banks``; an 8/16-byte access
   touches 2/4 consecutive words (banks). Lanes asking for the same word share it (broadcast
   on loads, one winner on stores). A unit with no active lane costs 0.
4. **Totals** (§5 rule 4). ``wavefronts = Σ units``; ncu's bank conflicts
   ``= Σ (wavefronts_unit - 1) = wavefronts - active units``.

Nsight Compute metrics (hardware-facts.md §7), per executed instruction:

* ``wavefronts`` = ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`` (also the
  SourceCounters ``memory_l1_wavefronts_shared``);
* ``conflicts`` = ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum``;
* ``ideal`` = active units after rule 2, the conflict-free count: 1 / 2 / 4 for a full warp of
  32 / 64 / 128-bit accesses (§5 "Ideal"), ncu's ``memory_l1_wavefronts_shared_ideal``. It is
  defined so that ``conflicts == wavefronts - ideal`` and so that broadcast/pair loads, which
  ncu reports with 0 conflicts, have ``ideal == wavefronts`` (e.g. an 8-byte broadcast load:
  1 wavefront, ideal 1). That ncu's source-level ideal equals it for partially active warps
  and merged loads is not measured.
* ``wavefronts / instructions`` is ``derived__memory_l1_conflicts_shared_nway`` ("N-way").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpusim.errors import KernelFault

__all__ = ["SharedCost", "shared_wavefronts", "shared_lane_wavefront", "shared_wavefront_lanes"]

WARP = 32
_WIDTHS = (1, 2, 4, 8, 16)
_SENTINEL = np.iinfo(np.int64).max


@dataclass(frozen=True)
class SharedCost:
    """Cost of one shared-memory instruction for each of W warps (all arrays have W rows).

    Attributes:
        wavefronts: int64 (W,). Wavefronts (cycles of the shared-memory data stage); ncu
            ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`` per instruction.
        ideal: int64 (W,). Active units after the load merge: the conflict-free wavefront
            count (ncu ``memory_l1_wavefronts_shared_ideal``; 1/2/4 for a full 32/64/128-bit
            warp without merging).
        conflicts: int64 (W,). ``wavefronts - ideal``; ncu
            ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum``.
        unit_lanes: int64 (W,). Lanes per unit after rule 2 (32, 16 or 8).
        merged: bool (W,). Whether rule 2 merged the units (loads only).
        unit_wavefronts: int64 (W, U), U = 32 // unmerged unit size. Entry ``[w, u]`` is the
            wavefront count of warp w's unit u (lanes ``u*unit_lanes[w]`` to
            ``(u+1)*unit_lanes[w]-1``); 0 for units without active lanes and for ``u`` past
            the last unit of a merged warp.
    """

    wavefronts: np.ndarray
    ideal: np.ndarray
    conflicts: np.ndarray
    unit_lanes: np.ndarray
    merged: np.ndarray
    unit_wavefronts: np.ndarray


def _prepare(addrs, width, active, banks, bank_bytes):
    """Validate and normalise the inputs; return (addrs int64 (W,32), active bool (W,32), base unit lanes)."""
    a = np.asarray(addrs)
    if a.dtype.kind not in "iu":
        raise ValueError(f"shared addresses must be an integer array, got dtype {a.dtype}")
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != WARP:
        raise ValueError(f"shared addresses must have shape (W, 32) or (32,), got {np.shape(addrs)}")
    if a.dtype == np.uint64 and a.size and a.max() > np.iinfo(np.int64).max:
        raise ValueError("shared address does not fit in int64")
    a = a.astype(np.int64, copy=False)
    if active is None:
        act = np.ones(a.shape, dtype=bool)
    else:
        act = np.asarray(active, dtype=bool)
        if act.ndim == 1:
            act = act[None, :]
        if act.shape != a.shape:
            raise ValueError(f"active must have the shape of addrs {a.shape}, got {np.shape(active)}")
    if width not in _WIDTHS:
        raise ValueError(f"width must be one of {_WIDTHS} bytes, got {width!r}")
    if banks < 1 or bank_bytes < 1 or banks & (banks - 1) or bank_bytes & (bank_bytes - 1):
        raise ValueError(f"banks ({banks}) and bank_bytes ({bank_bytes}) must be powers of two")
    if width > bank_bytes * banks:
        raise ValueError(f"width {width} exceeds one wavefront ({banks} banks x {bank_bytes} B)")
    if (a[act] < 0).any():
        raise ValueError("shared addresses must be non-negative")
    bad = act & (a % width != 0)
    if bad.any():
        w, lane = np.argwhere(bad)[0]
        raise KernelFault(f"misaligned shared access: warp {w} lane {lane} address {int(a[w, lane]):#x} "
                          f"is not a multiple of the access width {width} B")
    base = min(WARP, banks * bank_bytes // width)
    return a, act, base


def _units(a, act, base, is_load):
    """Rule 1 + 2: per warp, (merged bool (W,), unit lanes int64 (W,))."""
    W = a.shape[0]
    if not is_load or base >= WARP:
        merged = np.zeros(W, dtype=bool)
    else:
        lanes = np.arange(WARP)

        def pairs_equal(k):
            p = lanes ^ k
            both = act & act[:, p]
            return np.all(~both | (a == a[:, p]), axis=1)

        merged = pairs_equal(1) | pairs_equal(2)
    return merged, np.where(merged, 2 * base, base).astype(np.int64)


def shared_wavefronts(addrs, width: int, is_load: bool, active=None, banks: int = 32,
                      bank_bytes: int = 4) -> SharedCost:
    """Wavefronts and bank conflicts of one shared-memory instruction, for W warps at once.

    Args:
        addrs: integer array (W, 32), or (32,) for one warp: byte address in shared memory
            (offset in the CTA's window) of each lane. Must be a multiple of ``width`` for
            active lanes (the hardware faults otherwise).
        width: bytes per lane: 1, 2, 4, 8 or 16 (``.v2``/``.v4`` vectors count as one access of
            the total size, e.g. ``ld.shared.v4.u32`` is 16).
        is_load: True for ``ld.shared`` (LDS), False for ``st.shared`` (STS); only loads merge
            units (rule 2).
        active: bool array of addrs' shape; inactive lanes do not count. Default all active.
        banks, bank_bytes: bank count and bank width (32 x 4 B on sm_70..sm_90, PG13 §5.x).

    Returns:
        :class:`SharedCost` with per-warp int64 arrays of shape (W,) (a 1-D input gives W=1).

    Raises:
        ValueError: bad shape, dtype, width or negative address.
        gpusim.errors.KernelFault: an active lane's address is not a multiple of ``width``.

    Fully vectorised: one row-wise sort of a (W, 32) key array, no loop over warps or lanes.
    """
    a, act, base = _prepare(addrs, width, active, banks, bank_bytes)
    W = a.shape[0]
    n_units = WARP // base                    # units before merging (max units per warp)
    merged, unit_lanes = _units(a, act, base, is_load)
    unit = np.arange(WARP)[None, :] // unit_lanes[:, None]          # (W, 32)

    # Rule 3. An aligned access of cb = max(width, bank_bytes) bytes covers the cb/bank_bytes
    # consecutive words ("chunk") of one aligned bank group; two lanes' words in a bank of the
    # group differ exactly when their chunks differ, so "distinct words per bank, max over
    # banks" equals "distinct chunks per bank group, max over groups" (one entry per lane).
    cb = max(width, bank_bytes)
    ng = banks * bank_bytes // cb             # bank groups
    chunk = a >> (cb.bit_length() - 1)
    grp = chunk & (ng - 1)
    hi = chunk >> (ng.bit_length() - 1)       # distinct chunks of one group differ here
    if W and act.any():
        lo = np.where(act, hi, _SENTINEL).min(axis=1, keepdims=True)
        rel = np.where(act, hi - lo, 0)
        sbits = int(rel.max()).bit_length()
    else:
        rel, sbits = np.zeros_like(hi), 0
    G = n_units * ng                          # (unit, group) pairs per warp
    if G.bit_length() + sbits > 62:
        raise ValueError("shared addresses of one warp span too wide a range to model")
    key = ((unit * ng + grp) << sbits) | rel
    key = np.where(act, key, _SENTINEL)
    key.sort(axis=1)
    new = key != _SENTINEL                    # first occurrence of each (unit, group, chunk)
    new[:, 1:] &= key[:, 1:] != key[:, :-1]
    r, c = np.nonzero(new)                    # row-major: ascending (row, unit, group)
    gid = r * G + (key[r, c] >> sbits)
    unit_wf = np.zeros(W * n_units, dtype=np.int64)
    if gid.size:
        start = np.flatnonzero(np.r_[True, gid[1:] != gid[:-1]])
        counts = np.diff(np.r_[start, gid.size])              # distinct chunks per group
        uid = gid[start] // ng                                # row * n_units + unit
        ustart = np.flatnonzero(np.r_[True, uid[1:] != uid[:-1]])
        unit_wf[uid[ustart]] = np.maximum.reduceat(counts, ustart)
    unit_wf = unit_wf.reshape(W, n_units)
    wavefronts = unit_wf.sum(axis=1)
    ideal = (unit_wf > 0).sum(axis=1).astype(np.int64)
    return SharedCost(wavefronts=wavefronts, ideal=ideal, conflicts=wavefronts - ideal,
                      unit_lanes=unit_lanes, merged=merged, unit_wavefronts=unit_wf)


def shared_lane_wavefront(addrs, width: int, is_load: bool, active=None, banks: int = 32,
                          bank_bytes: int = 4) -> np.ndarray:
    """For ONE warp: the wavefront (0-based) in which each lane is served; -1 if inactive.

    Args as :func:`shared_wavefronts`, with ``addrs`` of shape (32,) (or (1, 32)).

    Returns: int64 (32,). Units are served one after the other in lane order (unit 0 first).
    Within a unit, each bank group (the ``width // bank_bytes`` consecutive banks an aligned
    access covers; one bank for <= 4 bytes) serves its distinct words one per wavefront, in the
    order of the lowest lane asking for them; lanes asking for the same word are served
    together (broadcast). All words of one lane are served in the same wavefront, and the
    number of wavefronts used equals :func:`shared_wavefronts`'s count exactly. The order
    within a unit is a diagram convention: the hardware's order is not measured (§5 gives
    counts only).
    """
    a, act, base = _prepare(addrs, width, active, banks, bank_bytes)
    if a.shape[0] != 1:
        raise ValueError(f"shared_lane_wavefront takes one warp, got {a.shape[0]}")
    a, act = a[0], act[0]
    _, unit_lanes = _units(a[None], act[None], base, is_load)
    ul = int(unit_lanes[0])
    chunk_bytes = max(width, bank_bytes)
    chunk = a // chunk_bytes                                  # the aligned word group a lane reads
    group = (a // bank_bytes % banks) // max(1, width // bank_bytes)
    out = np.full(WARP, -1, dtype=np.int64)
    offset = 0
    for u in range(WARP // ul):
        lanes = np.arange(u * ul, (u + 1) * ul)
        lanes = lanes[act[lanes]]
        if lanes.size == 0:
            continue
        depth = 0
        for g in np.unique(group[lanes]):
            sel = lanes[group[lanes] == g]
            # distinct chunks of this bank group, ranked by their lowest lane
            _, first, inv = np.unique(chunk[sel], return_index=True, return_inverse=True)
            rank = np.argsort(np.argsort(first))
            out[sel] = offset + rank[inv]
            depth = max(depth, len(first))
        offset += depth
    return out


def shared_wavefront_lanes(addrs, width: int, is_load: bool, active=None, banks: int = 32,
                           bank_bytes: int = 4) -> list[frozenset[int]]:
    """For ONE warp: the lanes served by each wavefront, in order (for the bank diagram).

    ``result[i]`` is the frozenset of lanes served in wavefront i; every active lane is in
    exactly one set and ``len(result) == shared_wavefronts(...).wavefronts[0]``. See
    :func:`shared_lane_wavefront` for the ordering convention.
    """
    per_lane = shared_lane_wavefront(addrs, width, is_load, active, banks, bank_bytes)
    n = int(per_lane.max()) + 1 if (per_lane >= 0).any() else 0
    return [frozenset(int(t) for t in np.flatnonzero(per_lane == i)) for i in range(n)]
