"""Warp-level instructions of the functional engine: shfl.sync, vote.sync, match.sync,
redux.sync, activemask, and the tensor cores' mma.sync.

Owns: lane exchange within a warp (PTX ISA 9.0 §9.7.9.6 pseudo-code for
``shfl.sync``), warp votes (§9.7.13.9), and the check that every lane named in
a ``membermask`` executes the instruction together with the others. A lane
that is named but still running elsewhere in the kernel (diverged) is an
error; lanes that have exited or do not exist (a partial last warp) are not
waited for, and their register values are used as they are. Imports numpy and
isa only.
"""

from __future__ import annotations

import numpy as np

from gpusim.errors import KernelFault
from gpusim.functional.executor import Executor
from isa import mma as mmaops
from isa.ir import Instr, PredPair
from isa.types import TYPES

__all__ = ["shfl", "vote", "activemask", "match", "redux", "mma", "check_members"]


def _lanes(ex: Executor, sel) -> np.ndarray:
    return np.arange(ex.T) if sel is None else sel


def _warp_bits(ex: Executor, lanes: np.ndarray) -> np.ndarray:
    """Per warp of the chunk: bit mask (uint32) of the given lanes."""
    nw = ex.T // 32
    w = lanes >> 5
    bits = np.bincount(w, weights=(np.uint64(1) << ex.lane[lanes].astype(np.uint64)).astype(np.float64), minlength=nw)
    return bits.astype(np.uint64).astype(np.uint32)


def check_members(ex: Executor, ins: Instr, lanes: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Return the active-lane mask of each lane's warp; raise if a lane named in
    ``mask`` is live but not executing this instruction."""
    active = _warp_bits(ex, lanes)
    live = _warp_bits(ex, np.flatnonzero(ex.live))
    w = lanes >> 5
    act_w = active[w]
    missing = mask & live[w] & ~act_w
    own = (mask >> ex.lane[lanes]) & np.uint32(1)
    if missing.any() or not own.all():
        i = int(np.argmax((missing != 0) | (own == 0)))
        t = int(lanes[i])
        block = ex.grid.block_coords(ex.block_ids[ex.block_of[t]])
        why = (f"lanes {_fmt_lanes(int(missing[i]))} named in the member mask {int(mask[i]):#010x} are not converged "
               f"with it" if missing[i] else f"its own lane {int(ex.lane[t])} is not in the member mask {int(mask[i]):#010x}")
        raise KernelFault(f"kernel {ex.kernel.name}: {ins.op}.sync at {ins.loc.file}:{ins.loc.line} in block {block}, "
                          f"warp {int(ex.lin_tid[t]) // 32}: {why}")
    return act_w


def _fmt_lanes(bits: int) -> str:
    return ",".join(str(i) for i in range(32) if bits >> i & 1)


def shfl(ex: Executor, ins: Instr, sel) -> None:
    """``shfl.sync.{up,down,bfly,idx}.b32 d[|p], a, b, c, membermask``."""
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        dst, a_op, b_op, c_op, m_op = ins.operands
        lanes = _lanes(ex, g)
        mask = ex.read(m_op, "b32", g)
        check_members(ex, ins, lanes, mask)
        a_all = ex.read(a_op, "b32", None)
        lane = ex.lane[lanes].astype(np.int64)
        b = ex.read(b_op, "b32", g).astype(np.int64) & 31
        c = ex.read(c_op, "b32", g).astype(np.int64)
        cval = c & 31
        segmask = (c >> 8) & 31
        max_lane = (lane & segmask) | (cval & ~segmask)
        min_lane = lane & segmask
        if ins.has("up"):
            j = lane - b
            ok = j >= max_lane
        elif ins.has("down"):
            j = lane + b
            ok = j <= max_lane
        elif ins.has("bfly"):
            j = lane ^ b
            ok = j <= max_lane
        else:
            j = min_lane | (b & ~segmask)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        src = (lanes - lane) + j
        val = a_all[src]
        if isinstance(dst, PredPair):
            ex.write(dst.first, val, "b32", g)
            ex.write(dst.second, ok, "pred", g)
        else:
            ex.write(dst, val, "b32", g)
    ex.advance(sel, ins.index + 1)


def vote(ex: Executor, ins: Instr, sel) -> None:
    """``vote.sync.{all,any,uni}.pred d, a, membermask`` and ``vote.sync.ballot.b32``
    (``match`` and ``redux`` rows share the opcode table's VOTE kind and go to their own functions)."""
    if ins.op == "match":
        return match(ex, ins, sel)
    if ins.op == "redux":
        return redux(ex, ins, sel)
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        dst, p_op, m_op = ins.operands
        lanes = _lanes(ex, g)
        mask = ex.read(m_op, "b32", g)
        act = check_members(ex, ins, lanes, mask)
        p = ex.read(p_op, "pred", g)
        ballot = _warp_bits(ex, lanes[p])[lanes >> 5] & mask
        members = act & mask
        if ins.has("ballot"):
            ex.write(dst, ballot, "b32", g)
        else:
            res = {"all": ballot == members, "any": ballot != 0,
                   "uni": (ballot == members) | (ballot == 0)}[next(m for m in ("all", "any", "uni") if ins.has(m))]
            ex.write(dst, res, "pred", g)
    ex.advance(sel, ins.index + 1)


def activemask(ex: Executor, ins: Instr, sel) -> None:
    """``activemask.b32 d``: the lanes of the warp executing this instruction."""
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        lanes = _lanes(ex, g)
        ex.write(ins.operands[0], _warp_bits(ex, lanes)[lanes >> 5], "b32", g)
    ex.advance(sel, ins.index + 1)


def _group_by_warp(lanes: np.ndarray, mask: np.ndarray):
    """Per lane: (index of its warp row, active-and-member bits (uint32) of its warp)."""
    w = lanes >> 5
    row = np.concatenate(([0], np.cumsum(w[1:] != w[:-1]))) if lanes.size else w
    return row, w


def match(ex: Executor, ins: Instr, sel) -> None:
    """``match.any.sync.b32/b64 d, a, membermask`` (d = the lanes of membermask executing it
    whose ``a`` equals this lane's) and ``match.all.sync d{|p}, a, membermask`` (d = membermask
    if all those lanes' ``a`` are equal, else 0; p = whether they are). PTX ISA 9.0 §9.7.13.8."""
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        dst, a_op, m_op = ins.operands
        lanes = _lanes(ex, g)
        mask = ex.read(m_op, "b32", g)
        act = check_members(ex, ins, lanes, mask)
        a = ex.read(a_op, ins.ty, g).astype(np.uint64)
        row, _ = _group_by_warp(lanes, mask)
        nrow = int(row[-1]) + 1 if lanes.size else 0
        vals = np.zeros((nrow, 32), np.uint64)
        present = np.zeros((nrow, 32), np.bool_)
        ln = ex.lane[lanes].astype(np.int64)
        vals[row, ln] = a
        present[row, ln] = True
        members = act & mask
        inm = ((members[:, None] >> np.arange(32, dtype=np.uint32)) & np.uint32(1)).astype(np.bool_)  # (n, 32)
        same = (vals[row] == a[:, None]) & present[row] & inm
        if ins.has("any"):
            bits = (same.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
            ex.write(dst, bits, "b32", g)
        else:
            alleq = (same == inm).all(axis=1)
            d = np.where(alleq, mask, np.uint32(0)).astype(np.uint32)
            if isinstance(dst, PredPair):
                ex.write(dst.first, d, "b32", g)
                ex.write(dst.second, alleq, "pred", g)
            else:
                ex.write(dst, d, "b32", g)
    ex.advance(sel, ins.index + 1)


def redux(ex: Executor, ins: Instr, sel) -> None:
    """``redux.sync.{add,min,max}.{u32,s32}`` / ``.{and,or,xor}.b32 d, a, membermask``: d = the
    operation over ``a`` of the lanes of membermask (add wraps modulo 2^32). PTX ISA 9.0 §9.7.13.12."""
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        dst, a_op, m_op = ins.operands
        lanes = _lanes(ex, g)
        mask = ex.read(m_op, "b32", g)
        act = check_members(ex, ins, lanes, mask)
        ty = ins.ty
        a = ex.read(a_op, ty, g)
        row, _ = _group_by_warp(lanes, mask)
        nrow = int(row[-1]) + 1 if lanes.size else 0
        ln = ex.lane[lanes].astype(np.int64)
        op = next(m for m in ("add", "min", "max", "and", "or", "xor") if ins.has(m))
        wide = np.int64 if ty == "s32" else np.uint64
        ident = {"add": 0, "and": 0xFFFFFFFF, "or": 0, "xor": 0,
                 "min": (2**31 - 1) if ty == "s32" else 0xFFFFFFFF, "max": -2**31 if ty == "s32" else 0}[op]
        vals = np.full((nrow, 32), ident, wide)
        vals[row, ln] = a.astype(wide)
        inm = ((act & mask)[:, None] >> np.arange(32, dtype=np.uint32)) & np.uint32(1)
        own = np.zeros((nrow, 32), np.bool_)
        own[row, ln] = True
        full = np.where(own[row] & inm.astype(np.bool_), vals[row], np.array(ident, wide))  # (n, 32)
        red = {"add": lambda v: v.sum(axis=1), "min": lambda v: v.min(axis=1), "max": lambda v: v.max(axis=1),
               "and": lambda v: np.bitwise_and.reduce(v, axis=1), "or": lambda v: np.bitwise_or.reduce(v, axis=1),
               "xor": lambda v: np.bitwise_xor.reduce(v, axis=1)}[op](full)
        res = (red.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)
        ex.write(dst, res.view(np.int32) if ty == "s32" else res, "s32" if ty == "s32" else ty, g)
    ex.advance(sel, ins.index + 1)


def _warp_regs(ex: Executor, ops, ty: str, warps: np.ndarray) -> np.ndarray:
    """Registers ``ops`` (a Vec's items) of every lane of ``warps`` as (len(warps), 32, len(ops))
    arrays of ``ty``; lanes past the last thread of the chunk read 0."""
    out = np.zeros((warps.size, 32, len(ops)), TYPES[ty].dtype)
    idx = (warps[:, None] * 32 + np.arange(32)[None, :])
    ok = idx < ex.T
    for j, op in enumerate(ops):
        v = ex.read(op, ty, None)
        out[:, :, j][ok] = v[idx[ok]]
    return out


def mma(ex: Executor, ins: Instr, sel) -> None:
    """``mma.sync.aligned.m16n8k16.row.col.dtype.atype.btype.ctype d, a, b, c``: one matrix
    multiply-accumulate per warp (PTX ISA 9.0 §9.7.14.5.14), every lane of the warp taking part
    (a live lane that is not converged with the others is an error, as for shfl.sync). The
    fragments and the H100's arithmetic are :mod:`isa.mma`'s."""
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        d_op, a_op, b_op, c_op = ins.operands
        lanes = _lanes(ex, g)
        check_members(ex, ins, lanes, np.full(lanes.size, 0xFFFFFFFF, np.uint32))
        d_ty, ab, _, c_ty = ins.types
        warps = np.unique(lanes >> 5)
        a = _warp_regs(ex, a_op.items, "b32", warps)
        b = _warp_regs(ex, b_op.items, "b32", warps)
        c = _warp_regs(ex, c_op.items, "f32" if c_ty == "f32" else "b32", warps)
        d = mmaops.mma_m16n8k16(a, b, c, ab, d_ty)
        row = np.searchsorted(warps, lanes >> 5)
        reg_ty = "f32" if d_ty == "f32" else "b32"
        for j, r in enumerate(d_op.items):
            ex.write(r, d[row, lanes & 31, j], reg_ty, g)
    ex.advance(sel, ins.index + 1)
