"""gpusim.memmodel against the H100 ground truth of hardware-facts.md §5 (shared banking) and §6
(global coalescing), plus hypothesis properties and a plain-Python reference of the same rules."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusim.errors import KernelFault
from gpusim.memmodel import (
    global_sector_addresses,
    global_sectors,
    shared_lane_wavefront,
    shared_wavefront_lanes,
    shared_wavefronts,
)

t = np.arange(32)

# ---------------------------------------------------------------------------------------------
# §5: every row of the H100 table. (name, byte address of lane t, width,
#      load wavefronts, load conflicts, store wavefronts, store conflicts)
SHARED_TABLE = [
    ("t*4", t * 4, 4, 1, 0, 1, 0),
    ("t*8", t * 8, 4, 2, 1, 2, 1),
    ("t*16", t * 16, 4, 4, 3, 4, 3),
    ("t*32", t * 32, 4, 8, 7, 8, 7),
    ("t*64", t * 64, 4, 16, 15, 16, 15),
    ("t*128", t * 128, 4, 32, 31, 32, 31),
    ("t*132", t * 132, 4, 1, 0, 1, 0),
    ("0", 0 * t, 4, 1, 0, 1, 0),
    ("(t/2)*4", (t // 2) * 4, 4, 1, 0, 1, 0),
    ("(t%2)*128", (t % 2) * 128, 4, 2, 1, 2, 1),
    ("t*8", t * 8, 8, 2, 0, 2, 0),
    ("t*16", t * 16, 8, 4, 2, 4, 2),
    ("t*32", t * 32, 8, 8, 6, 8, 6),
    ("t*128", t * 128, 8, 32, 30, 32, 30),
    ("(t%16)*16+(t/16)*8", (t % 16) * 16 + (t // 16) * 8, 8, 4, 2, 4, 2),
    ("0", 0 * t, 8, 1, 0, 2, 0),
    ("(t/2)*8", (t // 2) * 8, 8, 1, 0, 2, 0),
    ("t*16", t * 16, 16, 4, 0, 4, 0),
    ("t*32", t * 32, 16, 8, 4, 8, 4),
    ("t*128", t * 128, 16, 32, 28, 32, 28),
    ("(t%8)*32+((t/8)%2)*16+(t/16)*256", (t % 8) * 32 + ((t // 8) % 2) * 16 + (t // 16) * 256, 16, 8, 4, 8, 4),
    ("0", 0 * t, 16, 2, 0, 4, 0),
    ("(t/2)*16", (t // 2) * 16, 16, 2, 0, 4, 0),
]
SHARED_CASES = [(name, a, w, True, lw, lc) for name, a, w, lw, lc, _, _ in SHARED_TABLE] + \
               [(name, a, w, False, sw, sc) for name, a, w, _, _, sw, sc in SHARED_TABLE]


@pytest.mark.parametrize("name,addrs,width,is_load,wf,conf", SHARED_CASES,
                         ids=[f"{'ld' if c[3] else 'st'}{c[2] * 8}-{c[0]}" for c in SHARED_CASES])
def test_shared_h100_table(name, addrs, width, is_load, wf, conf):
    c = shared_wavefronts(addrs.astype(np.int64), width, is_load)
    assert (int(c.wavefronts[0]), int(c.conflicts[0])) == (wf, conf)
    assert c.ideal[0] == wf - conf
    lanes = shared_wavefront_lanes(addrs, width, is_load)
    assert len(lanes) == wf and sorted(x for s in lanes for x in s) == list(range(32))


def test_shared_table_vectorised_and_offset():
    """All rows at once, as one (W, 32) call per width and direction; shifting the whole warp by a
    multiple of 128 B (a bank-neutral offset) changes nothing."""
    assert len(SHARED_CASES) == 46  # 23 pattern rows x {load, store}
    for width in (4, 8, 16):
        for is_load in (True, False):
            rows = [c for c in SHARED_CASES if c[2] == width and c[3] == is_load]
            a = np.stack([c[1] for c in rows]).astype(np.int64)
            for base in (0, 128 * 37):
                got = shared_wavefronts(a + base, width, is_load)
                assert got.wavefronts.tolist() == [c[4] for c in rows]
                assert got.conflicts.tolist() == [c[5] for c in rows]


def test_shared_units_merge_and_partial_warps():
    # 16 B loads: quarter-warps; with (t, t^1) pairs equal they merge into half-warps.
    c = shared_wavefronts((t // 2) * 16, 16, True)
    assert c.merged[0] and c.unit_lanes[0] == 16 and c.unit_wavefronts[0].tolist() == [1, 1, 0, 0]
    c = shared_wavefronts((t // 2) * 16, 16, False)
    assert not c.merged[0] and c.unit_lanes[0] == 8 and c.unit_wavefronts[0].tolist() == [1, 1, 1, 1]
    # (t, t^2) pairs also merge: lanes 0,2 / 1,3 share.
    a = ((t // 4) * 2 + t % 2) * 16
    assert shared_wavefronts(a, 16, True).merged[0]
    # units without an active lane cost nothing
    act = t < 8
    c = shared_wavefronts(t * 16, 16, False, active=act)
    assert (c.wavefronts[0], c.ideal[0], c.conflicts[0]) == (1, 1, 0)
    c = shared_wavefronts(t * 4, 4, True, active=np.zeros(32, bool))
    assert (c.wavefronts[0], c.ideal[0]) == (0, 0)
    assert shared_wavefront_lanes(t * 4, 4, True, active=np.zeros(32, bool)) == []
    # sub-word accesses behave like 4-byte ones on their word: bytes 0..31 are words 0..7
    assert shared_wavefronts(t, 1, True).wavefronts[0] == 1
    assert shared_wavefronts(t * 128 + 2, 2, False).wavefronts[0] == 32


def test_shared_schedule_order():
    lanes = shared_wavefront_lanes((t % 2) * 128, 4, True)
    assert lanes == [frozenset(range(0, 32, 2)), frozenset(range(1, 32, 2))]
    per = shared_lane_wavefront(t * 32, 16, False)
    assert per.tolist() == [u * 2 + (t_ % 8 >= 4) for u, t_ in zip(t // 8, t)]


def test_shared_errors():
    with pytest.raises(KernelFault, match="lane 1"):
        shared_wavefronts(t * 4 + (t == 1) * 2, 4, True)
    shared_wavefronts(t * 4 + (t == 1) * 2, 4, True, active=t != 1)  # inactive lane: no fault
    with pytest.raises(ValueError):
        shared_wavefronts(t * 4, 3, True)
    with pytest.raises(ValueError):
        shared_wavefronts(np.zeros((2, 16), np.int64), 4, True)
    with pytest.raises(ValueError):
        shared_lane_wavefront(np.zeros((2, 32), np.int64), 4, True)


# --- plain-Python reference of §5's four rules (one warp) ------------------------------------
def ref_shared(addrs, width, is_load, active):
    base = min(32, 128 // width)
    ul = base
    if is_load and base < 32:
        def pairs(k):
            return all(not (active[i] and active[i ^ k]) or addrs[i] == addrs[i ^ k] for i in range(32))
        if pairs(1) or pairs(2):
            ul = 2 * base
    wavefronts = units = 0
    for u in range(32 // ul):
        banks = defaultdict(set)
        for i in range(u * ul, (u + 1) * ul):
            if active[i]:
                for j in range(max(1, width // 4)):
                    w = addrs[i] // 4 + j
                    banks[w % 32].add(w)
        if banks:
            wavefronts += max(len(s) for s in banks.values())
            units += 1
    return wavefronts, units


@st.composite
def shared_warp(draw, width=None):
    w = draw(st.sampled_from([1, 2, 4, 8, 16])) if width is None else width
    hi = draw(st.sampled_from([4, 40, 300]))
    a = np.array(draw(st.lists(st.integers(0, hi), min_size=32, max_size=32)), dtype=np.int64) * w
    shape = draw(st.sampled_from(["random", "pair1", "pair2", "broadcast"]))
    if shape == "pair1":
        a = a[t & ~1]
    elif shape == "pair2":
        a = a[t & ~2]
    elif shape == "broadcast":
        a = np.full(32, a[0])
    if draw(st.booleans()):
        act = np.ones(32, bool)
    else:
        act = np.array(draw(st.lists(st.booleans(), min_size=32, max_size=32)))
    return w, a, act


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([1, 2, 4, 8, 16]).flatmap(
    lambda w: st.lists(shared_warp(w), min_size=1, max_size=5)), st.booleans())
def test_shared_matches_reference(warps, is_load):
    width = warps[0][0]
    a = np.stack([x[1] for x in warps])
    act = np.stack([x[2] for x in warps])
    c = shared_wavefronts(a, width, is_load, active=act)
    for i in range(len(warps)):
        wf, units = ref_shared(a[i].tolist(), width, is_load, act[i].tolist())
        assert (c.wavefronts[i], c.ideal[i]) == (wf, units)
    assert (c.wavefronts >= c.ideal).all() and (c.conflicts >= 0).all()
    assert (c.conflicts == c.wavefronts - c.ideal).all()
    assert (c.wavefronts <= act.sum(axis=1)).all()


@settings(max_examples=50, deadline=None)
@given(shared_warp(), st.randoms(use_true_random=False))
def test_shared_store_permutation_within_units(warp, rnd):
    width, a, act = warp
    ul = min(32, 128 // width)
    perm = np.arange(32)
    for u in range(32 // ul):
        seg = list(range(u * ul, (u + 1) * ul))
        rnd.shuffle(seg)
        perm[u * ul:(u + 1) * ul] = seg
    c0 = shared_wavefronts(a, width, False, active=act)
    c1 = shared_wavefronts(a[perm], width, False, active=act[perm])
    assert c0.wavefronts[0] == c1.wavefronts[0] and c0.conflicts[0] == c1.conflicts[0]


@settings(max_examples=50, deadline=None)
@given(shared_warp(), st.booleans(), st.integers(0, 31))
def test_shared_one_active_lane(warp, is_load, lane):
    width, a, _ = warp
    c = shared_wavefronts(a, width, is_load, active=t == lane)
    assert (c.wavefronts[0], c.ideal[0], c.conflicts[0]) == (1, 1, 0)


@settings(max_examples=50, deadline=None)
@given(shared_warp(), st.booleans(), st.lists(st.booleans(), min_size=32, max_size=32),
       st.lists(st.integers(0, 1000), min_size=32, max_size=32))
def test_shared_inactive_lanes(warp, is_load, off, junk):
    """Switching lanes off never raises the cost; inactive lanes' addresses do not matter."""
    width, a, act = warp
    c = shared_wavefronts(a, width, is_load, active=act)
    fewer = act & ~np.array(off)
    assert shared_wavefronts(a, width, is_load, active=fewer).wavefronts[0] <= c.wavefronts[0]
    b = np.where(act, a, np.array(junk) * width)
    assert shared_wavefronts(b, width, is_load, active=act).wavefronts[0] == c.wavefronts[0]


@settings(max_examples=60, deadline=None)
@given(shared_warp(), st.booleans())
def test_shared_schedule_is_conflict_free(warp, is_load):
    width, a, act = warp
    c = shared_wavefronts(a, width, is_load, active=act)
    lanes = shared_wavefront_lanes(a, width, is_load, active=act)
    assert len(lanes) == c.wavefronts[0]
    assert sorted(x for s in lanes for x in s) == np.flatnonzero(act).tolist()
    ul = int(c.unit_lanes[0])
    for s in lanes:
        assert s and len({x // ul for x in s}) == 1          # one unit per wavefront
        words = defaultdict(set)
        for x in s:
            for j in range(max(1, width // 4)):
                w = int(a[x]) // 4 + j
                words[w % 32].add(w)
        assert all(len(v) == 1 for v in words.values())     # at most one word per bank


# ---------------------------------------------------------------------------------------------
# §6: out[i] = a[f(i)], 4,194,304 threads = 131072 warps in blocks of 256 (8 warps), a = 256 MiB
# float32. Sectors and lines per request are per-warp address properties: computed here over all
# 131072 warps of the grid and averaged exactly as ncu does (metric sum / request sum).
N_WARPS, WARPS_PER_BLOCK, N_FLOATS = 131072, 8, 64 * 2**20
A_BASE = 2**40  # any 512-byte-aligned allocation gives the same counts


def grid_addrs(f, size=4):
    """(131072, 32) byte addresses of a[f(i)] for the grid's threads i (elements of `size` B)."""
    i = np.arange(N_WARPS * 32, dtype=np.uint64)
    return (np.uint64(A_BASE) + f(i) * np.uint64(size)).reshape(N_WARPS, 32)


def block_l1(addrs, size, reverse=False):
    """A per-block L1 that keeps every sector a block touched (footprints here are <= 33 sectors)
    and no sharing between blocks (different SMs, or disjoint in time). Warps of a block run in
    order (or reverse order); a sector's first toucher misses, later ones hit. Returns
    (sector lookups, missed sectors = L2 sectors, L2 requests = lines with a missed sector)."""
    assert ((addrs % 32) + size <= 32).all()  # every lane touches exactly one sector
    sec = (addrs // 32).reshape(-1, WARPS_PER_BLOCK, 32)
    if reverse:
        sec = sec[:, ::-1]
    n = WARPS_PER_BLOCK * 32
    key = np.sort(sec.reshape(sec.shape[0], n) * np.uint64(n) + np.arange(n, dtype=np.uint64), axis=1)
    s, pos = key // np.uint64(n), (key % np.uint64(n)).astype(np.intp)
    first = np.ones(s.shape, bool)
    first[:, 1:] = s[:, 1:] != s[:, :-1]              # lowest position touching the sector
    miss = np.empty_like(first)
    np.put_along_axis(miss, pos, first, axis=1)
    miss = miss.reshape(-1, WARPS_PER_BLOCK, 32)
    if reverse:
        miss = miss[:, ::-1]
    missed = global_sectors(addrs, size, active=miss.reshape(-1, 32))
    return int(global_sectors(addrs, size).sectors.sum()), int(missed.sectors.sum()), int(missed.lines.sum())


# (name, index expression, bytes per lane, L1 sectors/req, L2 req/L1 req, L2 sectors, bytes/sector %)
GLOBAL_ROWS = [
    ("i", lambda i: i, 4, 4, 1, 524288, 100.0),
    ("2i", lambda i: 2 * i, 4, 8, 2, 1048576, 50.0),
    ("4i", lambda i: 4 * i, 4, 16, 4, 2097152, 25.0),
    ("8i", lambda i: 8 * i, 4, 32, 8, 4194304, 12.5),
    # 32i exceeds the 64 Mi-float array past warp 65535; the index wraps modulo N_FLOATS, which
    # keeps each warp's 4 KiB footprint intact (4 KiB divides 256 MiB)
    ("32i", lambda i: (32 * i) % np.uint64(N_FLOATS), 4, 32, 32, 4194304, None),
    ("float4 i", lambda i: i, 16, 16, 4, 2097152, None),
]


@pytest.mark.parametrize("name,f,size,spr,l2pr,l2sec,pct", GLOBAL_ROWS, ids=[r[0] for r in GLOBAL_ROWS])
def test_global_h100_strides(name, f, size, spr, l2pr, l2sec, pct):
    addrs = grid_addrs(f, size)
    c = global_sectors(addrs, size)
    req = c.requests.sum()
    assert req == N_WARPS                                    # 131072 requests
    assert (c.sectors == spr).all() and c.sectors.sum() / req == spr
    assert (c.lines == l2pr).all()                           # L1 hit 0 %: every line goes to L2
    if pct is not None:
        assert 100 * c.lane_bytes.sum() / (32 * c.sectors.sum()) == pct
    # no sector is shared between warps of a block, so the L1 cannot hit (measured 0 %), and the
    # L2 sectors equal all sectors (measured exactly these L2 sector counts)
    looked, missed, l2req = block_l1(addrs, size)
    assert looked == missed == l2sec and l2req / req == l2pr


def test_global_h100_warp_uniform():
    """i/32: every warp reads one float -> 1 sector, 1 line per request (intrinsic). The measured
    87.5 % L1 hit rate and 0.125 L2 requests/request are cache effects: the 8 warps of a block
    read 8 consecutive floats = one sector, so only the block's first warp misses. The per-block
    L1 reproduces all three measured values exactly (hit 7/8, 16384 L2 sectors, 0.125)."""
    addrs = grid_addrs(lambda i: i // np.uint64(32))
    c = global_sectors(addrs, 4)
    assert (c.sectors == 1).all() and (c.lines == 1).all()
    for reverse in (False, True):
        looked, missed, l2req = block_l1(addrs, 4, reverse)
        assert 1 - missed / looked == 0.875 and missed == 16384 and l2req / N_WARPS == 0.125


def test_global_h100_misaligned():
    """i+1: each warp reads bytes 4..131 of its own 128 B line: the 4 sectors of line w plus
    sector 0 of line w+1 -> exactly 5 sectors and 2 lines for every warp (measured: 5 sectors/req;
    the average is 5 because every warp has 5).

    The measured 17.5 % L1 hit rate, 540667 L2 sectors and 1.42 L2 requests/request depend on
    the L1: sector 0 of line w+1 is read by warp w (bytes 0-3) and warp w+1 (bytes 4-31). With
    a per-block L1 the block's 8 warps read 33 distinct sectors in 40 lookups whatever the warp
    order: hit rate 7/40 = 17.5 % exactly, 16384 x 33 = 540672 L2 sectors (measured 540667:
    5 more hits, i.e. 5 of the 16384 block boundaries whose shared sector also hit, because
    the neighbouring blocks ran on the same SM). L2 requests depend on the order in which the
    two warps sharing a sector reach the L1: if warp w goes first it sends a request for line
    w+1 (2 per warp, 16 per block); if warp w+1 goes first, warp w's sector 0 of line w+1 hits
    and it only requests line w (9 per block). That is timing (the later SimPy model), so only
    the bounds are tested: 9/8 = 1.125 <= 1.42 <= 2 = 16/8."""
    addrs = grid_addrs(lambda i: i + np.uint64(1))
    c = global_sectors(addrs, 4)
    assert (c.sectors == 5).all() and (c.lines == 2).all() and c.sectors.sum() / c.requests.sum() == 5
    fwd, rev = block_l1(addrs, 4), block_l1(addrs, 4, reverse=True)
    for looked, missed, _ in (fwd, rev):
        assert looked == 5 * N_WARPS and missed == 16384 * 33
        assert 1 - missed / looked == pytest.approx(0.175, abs=1e-12)
        assert abs(missed - 540667) / 540667 < 1e-4
    assert fwd[2] / N_WARPS == 2.0 and rev[2] / N_WARPS == 1.125
    assert rev[2] / N_WARPS <= 1.42 <= fwd[2] / N_WARPS


def test_global_basic_and_helper():
    s, l = global_sector_addresses(t * 4 + 4, 4)
    assert s.tolist() == [0, 32, 64, 96, 128] and l.tolist() == [0, 128] and s.dtype == np.uint64
    c = global_sectors(np.stack([t * 4, t * 4]), 4, active=np.stack([np.zeros(32, bool), t == 3]))
    assert c.requests.tolist() == [0, 1] and c.sectors.tolist() == [0, 1] and c.lines.tolist() == [0, 1]
    assert c.lane_bytes.tolist() == [0, 4]
    # a straddling access counts in both sectors and both lines
    c = global_sectors(np.full(32, 126), 4)
    assert (c.sectors[0], c.lines[0]) == (2, 2)
    with pytest.raises(ValueError):
        global_sectors(t * 4, 17)
    with pytest.raises(ValueError):
        global_sectors(t * 4 - 4, 4)


def ref_global(addrs, size, active, gran):
    return sorted({b for i in range(32) if active[i]
                   for b in range(addrs[i] // gran, (addrs[i] + size - 1) // gran + 1)})


@st.composite
def global_warp(draw):
    base = draw(st.integers(0, 2**40))
    spread = draw(st.sampled_from([7, 64, 4096]))
    offs = draw(st.lists(st.integers(0, spread), min_size=32, max_size=32))
    act = draw(st.one_of(st.just([True] * 32), st.lists(st.booleans(), min_size=32, max_size=32)))
    return [base + o for o in offs], act


@settings(max_examples=60, deadline=None)
@given(st.lists(global_warp(), min_size=1, max_size=4), st.integers(1, 16))
def test_global_matches_reference(warps, size):
    rows, acts = [w[0] for w in warps], [w[1] for w in warps]
    a = np.array(rows, dtype=np.uint64)
    act = np.array(acts)
    c = global_sectors(a, size, active=act)
    for w in range(len(rows)):
        secs = ref_global(rows[w], size, acts[w], 32)
        lines = ref_global(rows[w], size, acts[w], 128)
        assert (c.sectors[w], c.lines[w], c.requests[w]) == (len(secs), len(lines), int(any(acts[w])))
        assert c.lane_bytes[w] == size * sum(acts[w])
        s, l = global_sector_addresses(a[w], size, active=act[w])
        assert s.tolist() == [x * 32 for x in secs] and l.tolist() == [x * 128 for x in lines]
        if any(acts[w]):
            distinct = len({b for i in range(32) if acts[w][i] for b in range(rows[w][i], rows[w][i] + size)})
            lane_sectors = sum((rows[w][i] + size - 1) // 32 - rows[w][i] // 32 + 1 for i in range(32) if acts[w][i])
            assert math.ceil(distinct / 32) <= c.sectors[w] <= lane_sectors
            assert math.ceil(c.sectors[w] / 4) <= c.lines[w] <= c.sectors[w]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**40), st.sampled_from([1, 2, 4, 8, 16]), st.integers(1, 4))
def test_global_contiguous_span_bounds(base, size, stride):
    """Lanes at base + t*size*stride: sectors lie between ceil(span/32) and ceil(span/32)+1 for
    a dense warp (stride 1), and are the sectors of the span's first..last byte when stride*size
    <= 32."""
    a = np.uint64(base) + (t * size * stride).astype(np.uint64)
    c = global_sectors(a, size)
    span = 31 * size * stride + size
    first, last = base // 32, (base + span - 1) // 32
    if stride == 1:
        assert math.ceil(span / 32) <= c.sectors[0] <= math.ceil(span / 32) + 1
    if size * stride <= 32:
        assert c.sectors[0] == last - first + 1
    assert c.lines[0] == (base + span - 1) // 128 - base // 128 + 1 or size * stride > 128


def test_memmodel_imports_only_numpy():
    """The package must stay importable without simpy/cupy and independent of the engines."""
    import ast
    from pathlib import Path

    import gpusim.memmodel as mm
    allowed = {"numpy", "gpusim.errors", "gpusim.memmodel", "__future__", "dataclasses"}
    for path in Path(mm.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) else []
            for n in names:
                assert any(n == a or n.startswith(a + ".") for a in allowed), f"{path.name} imports {n}"
