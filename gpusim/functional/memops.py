"""Memory instructions of the functional engine: ld, st, atom, red.

Owns: effective-address computation for every state space (param, global,
shared, local, generic; PTX ISA 9.0 §5.1, §6.4), vector accesses
(``.v2``/``.v4``), bounds and alignment checks, atomics with a defined
serialisation (lanes in ascending thread order), and the address-pattern
counters of loads and stores under their Nsight Compute names (costs from
:mod:`gpusim.memmodel`). Imports numpy, isa and gpusim.memmodel only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpusim.errors import KernelFault
from gpusim.functional.executor import Executor
from gpusim.functional.memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE, MemoryFault, check_aligned
from gpusim.functional.warpops import check_members
from gpusim.functional.watchdog import EPOCH
from gpusim.memmodel import constant_transactions, global_sectors, shared_wavefronts
from isa import fp, mma
from isa.ir import Addr, Instr, Reg, Sym, Vec
from isa.types import TYPES

__all__ = ["Access", "load", "ldmatrix", "stmatrix", "store", "atomic", "state_space", "effective_addresses"]

_SPACES = ("global", "shared", "local", "param", "const")


@dataclass(slots=True)
class Access:
    """One memory instruction's accesses to one state space, as the timing
    engine consumes them (recorded only when ``ex.accesses`` is a list).

    Attributes:
        op: ``"ld"``, ``"st"`` or ``"atom"`` (``atom`` and ``red``).
        space: ``"global"``, ``"shared"``, ``"local"`` (generic addresses are split) or
            ``"const"`` (indexed ``ld.const`` only).
        addrs: uint64 byte addresses in that space, one per lane of ``lanes``.
        lanes: thread indices (of the executor) performing the access.
        width: bytes per lane (element size times vector length).
        wavefronts: shared-memory wavefronts of the access (hardware-facts.md §5); for
            ``"const"``: constant-cache transactions (one per distinct address of a warp);
            or ``None`` where not computed (other spaces, atomics).
        warp_wavefronts: the same per warp of ``lanes`` (int64, one entry per
            warp, in lane order), or ``None``.
    """

    op: str
    space: str
    addrs: np.ndarray
    lanes: np.ndarray
    width: int
    wavefronts: int | None = None
    warp_wavefronts: np.ndarray | None = None


def state_space(ins: Instr) -> str:
    """The state space an ld/st/atom names (``"generic"`` if none)."""
    for m in ins.mods:
        s = m.split("::")[0]
        if s in _SPACES:
            return s
    return "generic"


def _vec_len(ins: Instr) -> int:
    return 4 if ins.has("v4") else 2 if ins.has("v2") else 1


def effective_addresses(ex: Executor, ins: Instr, addr: Addr, lanes) -> np.ndarray:
    """Addresses (uint64, one per lane of ``lanes``) of memory operand ``addr``."""
    n = ex.count(lanes)
    if isinstance(addr.base, Reg):
        a = ex.regs.read(addr.base, "u64", lanes)
    elif isinstance(addr.base, Sym):
        a = np.full(n, ex.symbol_address(addr.base.name), np.uint64)
    else:
        a = np.zeros(n, np.uint64)
    return a + np.uint64(addr.offset & 0xFFFF_FFFF_FFFF_FFFF)


def _param_value(ex: Executor, ins: Instr, addr: Addr, dtype: np.dtype, k: int, n: int) -> list[np.ndarray]:
    if not isinstance(addr.base, Sym):
        raise KernelFault(f"kernel {ex.kernel.name}: ld.param through a register is not supported ({ins.loc})")
    p = next((p for p in ex.kernel.params if p.name == addr.base.name), None)
    if p is None:
        raise KernelFault(f"kernel {ex.kernel.name}: {addr.base.name!r} is not a parameter ({ins.loc})")
    out = []
    for j in range(k):
        off = p.offset + addr.offset + j * dtype.itemsize
        if off < 0 or off + dtype.itemsize > len(ex.params):
            raise KernelFault(f"kernel {ex.kernel.name}: ld.param outside the parameter buffer ({ins.loc})")
        v = ex.params[off:off + dtype.itemsize].view(dtype)[0]
        out.append(np.full(n, v, dtype))
    return out


def _split_generic(a: np.ndarray) -> list[tuple[str, np.ndarray | None, np.ndarray]]:
    """Classify generic addresses: [(space, lanes or None for all, space addresses)]."""
    sh = (a >= np.uint64(SHARED_WINDOW)) & (a < np.uint64(SHARED_WINDOW + WINDOW_SIZE))
    lo = (a >= np.uint64(LOCAL_WINDOW)) & (a < np.uint64(LOCAL_WINDOW + WINDOW_SIZE))
    if not sh.any() and not lo.any():
        return [("global", None, a)]
    out = []
    for space, m, base in (("shared", sh, SHARED_WINDOW), ("local", lo, LOCAL_WINDOW), ("global", ~(sh | lo), 0)):
        idx = np.flatnonzero(m)
        if idx.size:
            out.append((space, idx, a[idx] - np.uint64(base)))
    return out


def _window_index(ex: Executor, space: str, offs: np.ndarray, lanes, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(backing uint8 array, element indices) for shared/local offsets."""
    check_aligned(offs, size, space)
    limit = ex.shared_bytes if space == "shared" else ex.kernel.local_bytes
    bad = offs + np.uint64(size) > np.uint64(limit)
    if bad.any():
        lane = int(np.argmax(bad))
        raise MemoryFault(lane, int(offs[lane]), size, f"out-of-bounds access ({space} memory is {limit} bytes)", space)
    if space == "shared":
        owner = ex.block_of if lanes is None else ex.block_of[lanes]
        return ex.shared, (owner * ex.shared_stride + offs.astype(np.int64)) // size
    owner = np.arange(ex.T) if lanes is None else lanes
    return ex.local, (owner * ex.local_stride + offs.astype(np.int64)) // size


def _parts(ex, space: str, a: np.ndarray, lanes, dtype: np.dtype):
    """Yield (element view, element index, sub-lanes or None) for every piece of
    an access of ``dtype`` elements at addresses ``a`` of lanes ``lanes``."""
    pieces = _split_generic(a) if space == "generic" else [(space, None, a)]
    for sp, sub, addrs in pieces:
        sub_lanes = lanes if sub is None else (sub if lanes is None else lanes[sub])
        try:
            if sp in ("global", "const"):  # module .const variables live in global memory
                for view, idx, inner in ex.memory.views(addrs, dtype):
                    yield view, idx, _compose(sub, inner)
            elif sp in ("shared", "local"):
                buf, idx = _window_index(ex, sp, addrs, sub_lanes, dtype.itemsize)
                yield buf.view(dtype), idx, sub
            else:
                raise KernelFault(f"kernel {ex.kernel.name}: .{sp} memory is not supported")
        except MemoryFault as f:
            if sub is not None:
                f.lane = int(sub[f.lane])
            raise


def _compose(outer, inner):
    if outer is None:
        return inner
    return outer if inner is None else outer[inner]


_LANE_BYTES = {w: np.arange(32, dtype=np.int64) * w for w in (4, 8, 16)}


def _by_warp(lanes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-lane ``values`` of sorted thread indices ``lanes`` as (W, 32) rows,
    one per warp touched, and the active mask (``None``: every lane active)."""
    n = lanes.size
    if n % 32 == 0 and n and lanes[0] % 32 == 0 and lanes[-1] - lanes[0] == n - 1:
        return values.reshape(-1, 32), None  # whole, consecutive warps
    w = lanes >> 5
    row = np.concatenate(([0], np.cumsum(w[1:] != w[:-1]))) if n else lanes
    n_w = int(row[-1]) + 1 if n else 0
    out = np.zeros((n_w, 32), values.dtype)
    act = np.zeros((n_w, 32), np.bool_)
    out[row, lanes & 31] = values
    act[row, lanes & 31] = True
    return out, act


def _account(ex: Executor, pc: int, op: str, space: str, a: np.ndarray, lanes, width: int,
             log: list | None = None) -> None:
    """Add the warp-level counters of instruction ``pc`` (``op`` "ld"/"st") to
    ``ex.stats``, under their Nsight Compute name for the launch and under
    ``(name, pc)`` for its PTX line: requests and 32 B sectors of global
    accesses, wavefronts and bank conflicts of shared accesses
    (hardware-facts.md §5, §6). ``log``: a list that receives each ``(name, value)`` added."""
    lanes = np.arange(ex.T) if lanes is None else lanes
    pieces = _split_generic(a) if space == "generic" else [(space, None, a)]
    stats = ex.stats

    def add(name: str, v: int) -> None:
        stats[name] += v
        stats[name, pc] += v
        if log is not None:
            log.append((name, v))
    for sp, sub, addrs in pieces:
        if sp == "const":
            _account_const(ex, pc, addrs, lanes, add)
            continue
        if ex.accesses is not None:
            ex.accesses.append(Access(op, sp, addrs, lanes if sub is None else lanes[sub], width))
        if sp not in ("global", "shared"):
            continue
        rows, act = _by_warp(lanes if sub is None else lanes[sub], addrs)
        add(f"smsp__inst_executed_op_{sp}_{op}.sum", rows.shape[0])
        if sp == "global":
            requests, sectors = _global_cost(rows, min(width, 16), act)
            add(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum", requests)
            add(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum", sectors)
            continue
        rows = rows.astype(np.int64)
        if width < 4:   # 8- and 16-bit accesses: the 4-byte bank word they fall in (no conflict within a word)
            rows = rows & ~np.int64(3)
        width = max(4, width)
        per_warp = np.full(rows.shape[0], width // 4, np.int64)
        conflicts = 0
        rest = None
        if width in _LANE_BYTES:
            # Fast path: full warps reading consecutive elements are conflict-free
            # (128 / width lanes per wavefront; §5 rule 3).
            plain = (rows == rows[:, :1] + _LANE_BYTES[width]).all(axis=1)
            if act is not None:
                plain &= act.all(axis=1)
            if not plain.all():
                rest = ~plain
        else:
            rest = slice(None)
        if rest is not None:
            sub_act = None if act is None else act[rest]
            try:
                wf, conf = _shared_cost(rows[rest], width, op == "ld", sub_act)
            except KernelFault:  # raise what the model says of the whole access (the same warp and lane)
                shared_wavefronts(rows[rest], width, op == "ld", sub_act)
                raise
            per_warp[rest] = wf
            conflicts += conf
        wavefronts = int(per_warp.sum())
        if ex.accesses is not None:
            ex.accesses[-1].wavefronts = wavefronts
            ex.accesses[-1].warp_wavefronts = per_warp
        add(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum", wavefronts)
        add(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum", conflicts)


#: Costs of one warp's access pattern seen before (see :func:`_by_phase`), keyed by (space, width,
#: load?, the addresses less the first active lane's, the active lanes (None: all), that lane's
#: address modulo the period): (requests, sectors)
#: of a global access, (wavefronts, bank conflicts) of a shared one.
_PATTERNS: dict[tuple, tuple[int, int]] = {}


def _by_phase(rows: np.ndarray, period: int, act: np.ndarray | None):
    """When every row of ``rows`` (W, 32) has the same active lanes (``act``: None, all lanes, or
    a (W, 32) mask whose rows are equal) and is row 0 moved by a constant on them (every warp
    makes the same pattern of addresses, as warp-regular code does, warp after warp and CTA after
    CTA, also inside a branch all warps take alike): ``(rel, first, counts, ref, mask)``, the
    pattern (row 0 less the address of its first active lane ``ref``; 0 on inactive lanes), the
    index of one row per distinct address of lane ``ref`` modulo ``period`` (ascending), the
    number of rows of each, and the active lanes (bool (32,), or None: all). ``None`` otherwise."""
    if rows.shape[0] < 2:
        return None
    ref, mask = 0, None
    if act is not None:
        if not (act == act[0]).all() or not act[0].any():
            return None
        mask = act[0]
        ref = int(np.argmax(mask))
    rel = rows - rows[:, ref:ref + 1]
    if mask is not None:
        rel = np.where(mask, rel, rel.dtype.type(0))
    if not (rel == rel[0]).all():
        return None
    _, first, counts = np.unique(rows[:, ref] & (period - 1), return_index=True, return_counts=True)
    return rel[0], first, counts, ref, mask


def _remember(key: tuple, cost: tuple[int, int]) -> tuple[int, int]:
    if len(_PATTERNS) >= 4096:
        _PATTERNS.clear()
    _PATTERNS[key] = cost
    return cost


_ADDRESS_END = int(np.iinfo(np.uint64).max)


def _global_cost(rows: np.ndarray, width: int, act: np.ndarray | None) -> tuple[int, int]:
    """Total requests and 32-byte sectors of the global access of ``rows`` (W, 32) uint64
    addresses, as :func:`gpusim.memmodel.global_sectors` counts them. A warp's requests and
    sectors depend on its addresses only through the 32-byte sectors they touch, so two warps with
    the same pattern and active lanes (:func:`_by_phase`) whose first addresses agree modulo 32 cost the same: one
    row per phase is costed, once per pattern (:data:`_PATTERNS`)."""
    ph = _by_phase(rows, 32, act)
    if ph is not None:
        rel, first, counts, ref, mask = ph
        rs = rel.view(np.int64)                                     # signed differences
        base = rows[:, ref]
        # global_sectors refuses an access past the end of the 64-bit space: leave that to it
        if int(base.min()) + int(rs.min()) >= 0 and int(base.max()) + int(rs.max()) <= _ADDRESS_END - width:
            req = sec = 0
            mkey = None if mask is None else mask.tobytes()
            for i, n in zip(first.tolist(), counts.tolist()):
                key = ("global", width, rel.tobytes(), mkey, int(base[i]) & 31)
                hit = _PATTERNS.get(key)
                if hit is None:
                    cost = global_sectors(rows[i:i + 1], width, None if mask is None else mask[None])
                    hit = _remember(key, (int(cost.requests[0]), int(cost.sectors[0])))
                req += hit[0] * n
                sec += hit[1] * n
            return req, sec
    cost = global_sectors(rows, width, act)
    return int(cost.requests.sum()), int(cost.sectors.sum())


def _shared_cost(rows: np.ndarray, width: int, is_load: bool, act: np.ndarray | None) -> tuple[np.ndarray, int]:
    """Per-warp wavefronts (int64, one per row) and the total bank conflicts of the shared access of
    ``rows`` (W, 32) int64 addresses, as :func:`gpusim.memmodel.shared_wavefronts` gives them.

    The model's cost of a warp depends on its addresses only through their differences, their
    banks (address / 4 mod 32) and their 16-byte chunks within 128-byte lines, so two warps with
    the same pattern and active lanes (:func:`_by_phase`) whose first addresses agree modulo 128 cost the same (and
    are misaligned alike): one row per phase is costed, once per pattern (:data:`_PATTERNS`).
    Raises what :func:`gpusim.memmodel.shared_wavefronts` raises for the rows costed (the caller
    then costs them all, to raise what it says of the whole access)."""
    ph = _by_phase(rows, 128, act)
    if ph is not None:
        rel, first, counts, ref, mask = ph
        if int(rows[:, ref].min()) + int(rel.min()) >= 0:           # (negative addresses: its error)
            per_warp = np.empty(rows.shape[0], np.int64)
            conflicts = 0
            phase = rows[:, ref] & 127
            mkey = None if mask is None else mask.tobytes()
            for i, n in zip(first.tolist(), counts.tolist()):
                p = int(phase[i])
                key = ("shared", width, is_load, rel.tobytes(), mkey, p)
                hit = _PATTERNS.get(key)
                if hit is None:
                    cost = shared_wavefronts(rows[i:i + 1], width, is_load, None if mask is None else mask[None])
                    hit = _remember(key, (int(cost.wavefronts[0]), int(cost.conflicts[0])))
                per_warp[phase == p] = hit[0]
                conflicts += hit[1] * n
            return per_warp, conflicts
    cost = shared_wavefronts(rows, width, is_load, act)
    return cost.wavefronts, int(cost.conflicts.sum())


def _account_const(ex: Executor, pc: int, addrs: np.ndarray, lanes: np.ndarray, add) -> None:
    """Constant-cache counters of an indexed ``ld.const`` (ptxas's LDC; a load at a symbol
    address becomes a constant-bank operand and is not counted): ``idc__requests.sum``, one
    per warp, and ``gpusim__idc_transactions.sum``, one per distinct address of the warp's
    active lanes (a warp-uniform address is broadcast in one transaction; divergent
    addresses are serialised: CUDA C++ Programming Guide, "Constant Memory")."""
    ins = ex.instrs[pc]
    if isinstance(ins.operands[1], Addr) and not isinstance(ins.operands[1].base, Reg):
        return
    rows, act = _by_warp(lanes, addrs)
    per_warp = constant_transactions(rows, act)
    add("idc__requests.sum", rows.shape[0])
    add("gpusim__idc_transactions.sum", int(per_warp.sum()))
    if ex.accesses is not None:
        ex.accesses.append(Access("ld", "const", addrs, lanes, 0, int(per_warp.sum()), per_warp))


def _names_thread(handler):
    """Wrap a handler of a guarded access so that a :class:`MemoryFault` names the faulting thread
    (its ``lane`` indexes the lanes the guard let through, not ``sel``; a faulting access writes no
    register, so the guard reads the same again)."""
    def run(ex: Executor, ins: Instr, sel) -> None:
        try:
            return handler(ex, ins, sel)
        except MemoryFault as f:
            if f.thread is None and f.lane >= 0:
                g = ex.guarded(ins, sel)
                f.thread = f.lane if g is None else int(g[f.lane])
            raise
    run.__doc__, run.__name__ = handler.__doc__, handler.__name__
    return run


#: Bytes of element indices :func:`_plan` may keep per executor.
PLAN_BYTES = 64 * 2**20


def _plan(ex: Executor, ins: Instr, addr: Addr, sel, space: str):
    """``(cached plan or None, key)`` of a ``.shared`` access by every thread of the chunk (``sel``
    ``None``, no guard, no access records) at a register address: the plan is ``(register's write
    count, [(element view, element indices) per vector element], [(counter, value) added])``,
    valid while the register is not written (:attr:`RegisterFile.version`): the same addresses
    give the same checks, indices and counters, so a tiled kernel's loop-invariant ``ld.shared``
    / ``st.shared`` addresses are computed, checked and costed once. ``key`` is ``None`` where
    no plan applies."""
    plans = getattr(ex, "mem_plans", None)
    if (plans is None or sel is not None or ins.guard is not None or ex.accesses is not None or space != "shared"
            or not isinstance(addr.base, Reg) or addr.base.neg):
        return None, None
    ver = ex.regs.version[addr.base.name]
    plan = plans.get(ins.index)
    return (plan if plan is not None and plan[0] == ver else None), ver


def _keep_plan(ex: Executor, ins: Instr, ver: int, parts: list, log: list) -> None:
    """Remember a plan (see :func:`_plan`) if every element is one piece of all lanes and the
    executor's budget (:data:`PLAN_BYTES`) allows."""
    if any(len(p) != 1 or p[0][2] is not None for p in parts):
        return
    size = sum(p[0][1].nbytes for p in parts)
    old = ex.mem_plans.get(ins.index)
    used = ex.mem_plan_bytes - (sum(i.nbytes for _, i in old[1]) if old else 0)
    if used + size > PLAN_BYTES:
        return
    ex.mem_plans[ins.index] = (ver, [(p[0][0], p[0][1]) for p in parts], log)
    ex.mem_plan_bytes = used + size


def _replay(ex: Executor, pc: int, log: list) -> None:
    stats = ex.stats
    for name, v in log:
        stats[name] += v
        stats[name, pc] += v


@_names_thread
def load(ex: Executor, ins: Instr, sel) -> None:
    """``ld``: d = memory[a] (vectors: d_j = memory[a + j * size]); ``ldmatrix`` goes to :func:`ldmatrix`."""
    if ins.op == "ldmatrix":
        return ldmatrix(ex, ins, sel)
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        dst, addr = ins.operands
        ty = ins.ty
        dtype = TYPES[ty].dtype
        k = _vec_len(ins)
        n = ex.count(g)
        space = state_space(ins)
        plan, ver = (None, None) if space == "param" else _plan(ex, ins, addr, sel, space)
        if space == "param":
            vals = _param_value(ex, ins, addr, dtype, k, n)
        elif plan is not None:
            _replay(ex, ins.index, plan[2])
            vals = [view[idx] for view, idx in plan[1]]
        else:
            a = effective_addresses(ex, ins, addr, g)
            if k > 1:
                check_aligned(a, dtype.itemsize * k, space)
            log = None if ver is None else []
            _account(ex, ins.index, "ld", space, a, g, dtype.itemsize * k, log)
            vals, parts = [], []
            for j in range(k):
                aj = a + np.uint64(j * dtype.itemsize)
                out = np.empty(n, dtype)
                pieces = list(_parts(ex, space, aj, g, dtype))
                for view, idx, lanes in pieces:
                    if lanes is None:
                        out = view[idx]
                    else:
                        out[lanes] = view[idx]
                vals.append(out)
                parts.append(pieces)
            if ver is not None:
                _keep_plan(ex, ins, ver, parts, log)
        regs = dst.items if isinstance(dst, Vec) else (dst,)
        for r, v in zip(regs, vals):
            if r is not None:
                ex.write(r, v, ty, g)
    ex.advance(sel, ins.index + 1)


def _matrix_rows(ex: Executor, ins: Instr, addr, g):
    """What ldmatrix and stmatrix share: the warp's lanes (all must execute it, as for shfl.sync),
    the matrix count (``.x1/.x2/.x4``), the state space, the warps, the address lanes ``8j .. 8j+7``
    of each warp (matrix ``j``'s rows) and their 16-byte-aligned addresses."""
    lanes = np.arange(ex.T) if g is None else g
    check_members(ex, ins, lanes, np.full(lanes.size, 0xFFFFFFFF, np.uint32))
    n_mat = 4 if ins.has("x4") else 2 if ins.has("x2") else 1
    space = state_space(ins)
    a_all = np.zeros(ex.T, np.uint64)
    a_all[lanes] = effective_addresses(ex, ins, addr, g)
    warps = np.unique(lanes >> 5)
    rows = (warps[:, None] * 32 + np.arange(8 * n_mat)[None, :]).reshape(-1)
    rows = rows[rows < ex.T]
    a = a_all[rows]
    check_aligned(a, 16, space)
    return lanes, n_mat, space, warps, rows, a


def ldmatrix(ex: Executor, ins: Instr, sel) -> None:
    """``ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 d, [a]``: lanes
    ``8j .. 8j+7`` of each warp give the 16-byte-aligned addresses of the rows of matrix ``j``;
    every lane receives its mma fragment of each matrix (layout: :func:`isa.mma.ldmatrix_layout`,
    PTX ISA 9.0 §9.7.14.5.15). The warp's lanes must all execute it (as for shfl.sync). Counted
    and timed as a shared load of 16 bytes per address lane."""
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        dst, addr = ins.operands
        lanes, n_mat, space, warps, src, a = _matrix_rows(ex, ins, addr, g)
        _account(ex, ins.index, "ld", space, a, src, 16)
        rows = np.zeros((src.size, 8), np.uint16)
        u16 = np.dtype(np.uint16)
        for k in range(8):
            for view, idx, sub in _parts(ex, space, a + np.uint64(2 * k), src, u16):
                if sub is None:
                    rows[:, k] = view[idx]
                else:
                    rows[sub, k] = view[idx]
        table = np.zeros((warps.size, 32, 8), np.uint16)
        wrow = np.searchsorted(warps, src >> 5)
        table[wrow, src & 31] = rows
        lay = mma.ldmatrix_layout(n_mat, ins.has("trans"))                          # (32, n, 2, 2)
        row = np.searchsorted(warps, lanes >> 5)
        ln = lanes & 31
        for j, r in enumerate(dst.items):
            lo = table[row, lay[ln, j, 0, 0], lay[ln, j, 0, 1]].astype(np.uint32)
            hi = table[row, lay[ln, j, 1, 0], lay[ln, j, 1, 1]].astype(np.uint32)
            ex.write(r, lo | (hi << np.uint32(16)), "b32", g)
    ex.advance(sel, ins.index + 1)


def stmatrix(ex: Executor, ins: Instr, sel) -> None:
    """``stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 [a], r``: the inverse of
    :func:`ldmatrix` (PTX ISA 9.0 stmatrix): lanes ``8j .. 8j+7`` give the 16-byte-aligned addresses
    of the rows of matrix ``j``, and each lane's fragment values are stored where ldmatrix would have
    loaded them from (:func:`isa.mma.stmatrix_layout`). The warp's lanes must all execute it.
    Counted and timed as a shared store of 16 bytes per address lane."""
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        addr, src = ins.operands
        lanes, n_mat, space, warps, srcl, a = _matrix_rows(ex, ins, addr, g)
        table = np.zeros((warps.size, 32, 8), np.uint16)
        lay = mma.stmatrix_layout(n_mat, ins.has("trans"))                          # (32, n, 2, 2)
        row = np.searchsorted(warps, lanes >> 5)
        ln = lanes & 31
        for j, r in enumerate(src.items if isinstance(src, Vec) else (src,)):
            v = ex.read(r, "b32", g).astype(np.uint32)
            table[row, lay[ln, j, 0, 0], lay[ln, j, 0, 1]] = (v & np.uint32(0xFFFF)).astype(np.uint16)
            table[row, lay[ln, j, 1, 0], lay[ln, j, 1, 1]] = (v >> np.uint32(16)).astype(np.uint16)
        wrow = np.searchsorted(warps, srcl >> 5)
        rows = table[wrow, srcl & 31]                                               # (address lanes, 8)
        u16 = np.dtype(np.uint16)
        writes = []
        for k in range(8):
            writes.extend((view, idx, rows[:, k] if sub is None else rows[sub, k])
                          for view, idx, sub in _parts(ex, space, a + np.uint64(2 * k), srcl, u16))
        _account(ex, ins.index, "st", space, a, srcl, 16)
        for view, idx, vals in writes:
            view[idx] = vals
    ex.advance(sel, ins.index + 1)


@_names_thread
def store(ex: Executor, ins: Instr, sel) -> None:
    """``st``: memory[a] = b. All lanes are checked before anything is written; ``stmatrix`` goes to
    :func:`stmatrix`."""
    if ins.op == "stmatrix":
        return stmatrix(ex, ins, sel)
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        addr, src = ins.operands
        ty = ins.ty
        dtype = TYPES[ty].dtype
        space = state_space(ins)
        if space in ("param", "const"):
            raise KernelFault(f"kernel {ex.kernel.name}: st.{space} is not supported ({ins.loc})")
        k = _vec_len(ins)
        items = src.items if isinstance(src, Vec) else (src,)
        plan, ver = _plan(ex, ins, addr, sel, space)
        if plan is not None:
            writes = [(view, idx, ex.read(item, ty, g)) for (view, idx), item in zip(plan[1], items)]
            _replay(ex, ins.index, plan[2])
            for view, idx, vals in writes:
                view[idx] = vals
            return ex.advance(sel, ins.index + 1)
        a = effective_addresses(ex, ins, addr, g)
        if k > 1:
            check_aligned(a, dtype.itemsize * k, space)
        writes, parts = [], []
        for j, item in enumerate(items):
            vals = ex.read(item, ty, g)
            aj = a + np.uint64(j * dtype.itemsize)
            pieces = list(_parts(ex, space, aj, g, dtype))
            writes.extend((view, idx, vals if lanes is None else vals[lanes]) for view, idx, lanes in pieces)
            parts.append(pieces)
        log = None if ver is None else []
        _account(ex, ins.index, "st", space, a, g, dtype.itemsize * k, log)
        for view, idx, vals in writes:
            view[idx] = vals
        if ver is not None:
            _keep_plan(ex, ins, ver, parts, log)
    ex.advance(sel, ins.index + 1)


def _atomic_op(ins: Instr, ty: str):
    op = next(m for m in ins.mods if m in ("add", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec"))
    t = TYPES[ty]
    if op == "add":
        if t.is_float:
            # atom.add.f32 rounds to nearest even and flushes subnormals (PTX ISA 9.0 §9.7.13.5).
            return op, lambda cur, b, c: fp.add(cur, b, "rn", ftz=(ty == "f32" and not ins.has("noftz")), ty=ty)
        return op, lambda cur, b, c: cur + b
    funcs = {
        "min": lambda cur, b, c: np.minimum(cur, b),
        "max": lambda cur, b, c: np.maximum(cur, b),
        "exch": lambda cur, b, c: b,
        "cas": lambda cur, b, c: np.where(cur == b, c, cur),
        "and": lambda cur, b, c: cur & b,
        "or": lambda cur, b, c: cur | b,
        "xor": lambda cur, b, c: cur ^ b,
        "inc": lambda cur, b, c: np.where(cur >= b, 0, cur + 1).astype(cur.dtype),
        "dec": lambda cur, b, c: np.where((cur == 0) | (cur > b), b, cur - 1).astype(cur.dtype),
    }
    if t.is_float and op not in ("exch", "min", "max"):
        raise KernelFault(f"atom.{op}.{ty} is not supported ({ins.loc})")
    return op, funcs[op]


#: ``atom``/``red`` operations whose updates of one address in lane order are one accumulate
#: (``exch``: each lane gets the previous lane's value); ``cas``, ``inc``, ``dec`` run a scalar loop.
_ACCUMULATE = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
               "or": np.bitwise_or, "xor": np.bitwise_xor}


def _serialised(view: np.ndarray, idx: np.ndarray, b: np.ndarray, c: np.ndarray | None, f,
                op: str | None = None) -> np.ndarray:
    """Apply ``view[idx[i]] = f(view[idx[i]], b[i], c[i])`` one lane at a time in
    lane order; return the old values. Lanes hitting distinct addresses are
    done together, so the number of numpy rounds is the largest collision count;
    where that is large and few addresses are hit (a lock, a global counter), the
    integer operations ``op`` go address by address instead (:func:`_by_address`)."""
    n = idx.size
    order = np.argsort(idx, kind="stable")
    sidx = idx[order]
    start = np.ones(n, np.bool_)
    start[1:] = sidx[1:] != sidx[:-1]
    first = np.maximum.accumulate(np.where(start, np.arange(n), 0))
    rank = np.arange(n) - first
    if op is not None and view.dtype.kind in "iu" and int(rank.max()) >= 32 and np.count_nonzero(start) <= 64:
        return _by_address(view, order, sidx, np.flatnonzero(start), b, c, op)
    by_rank = order[np.argsort(rank, kind="stable")]
    counts = np.bincount(rank)
    old = np.empty(n, view.dtype)
    pos = 0
    with np.errstate(all="ignore"):
        for cnt in counts:
            lanes = by_rank[pos:pos + cnt]
            pos += cnt
            i = idx[lanes]
            cur = view[i]
            old[lanes] = cur
            view[i] = f(cur, b[lanes], None if c is None else c[lanes])
    return old


def _by_address(view: np.ndarray, order: np.ndarray, sidx: np.ndarray, starts: np.ndarray, b: np.ndarray,
                c: np.ndarray | None, op: str) -> np.ndarray:
    """:func:`_serialised` for integer ``op`` one address at a time (``order``: the lanes sorted by
    address, stable; ``sidx``: their addresses; ``starts``: where each address's lanes begin)."""
    old = np.empty(order.size, view.dtype)
    for s, e in zip(starts.tolist(), starts[1:].tolist() + [order.size]):
        lanes, a = order[s:e], int(sidx[s])
        vals = np.concatenate([view[a:a + 1], b[lanes].astype(view.dtype)])
        if op in _ACCUMULATE:
            with np.errstate(over="ignore"):
                seq = _ACCUMULATE[op].accumulate(vals, dtype=view.dtype)
        elif op == "exch":
            seq = vals
        else:  # cas, inc, dec: scalar, in lane order (values stay within the type)
            cur, bs, cs = int(vals[0]), vals[1:].tolist(), None if c is None else c[lanes].tolist()
            out = [cur]
            for i, bi in enumerate(bs):
                if op == "cas":
                    cur = cs[i] if cur == bi else cur
                elif op == "inc":
                    cur = 0 if cur >= bi else cur + 1
                else:
                    cur = bi if cur == 0 or cur > bi else cur - 1
                out.append(cur)
            seq = np.array(out, view.dtype)
        old[lanes] = seq[:-1]
        view[a] = seq[-1]
    return old


@_names_thread
def atomic(ex: Executor, ins: Instr, sel) -> None:
    """``atom`` (returns the old value) and ``red``; PTX ISA 9.0 §9.7.13.5-6.
    Colliding lanes are serialised in ascending thread order."""
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        is_red = ins.op == "red"
        ops = ins.operands
        dst, addr, rest = (None, ops[0], ops[1:]) if is_red else (ops[0], ops[1], ops[2:])
        ty = ins.ty
        dtype = TYPES[ty].dtype
        space = state_space(ins)
        op, f = _atomic_op(ins, ty)
        b = ex.read(rest[0], ty, g)
        c = ex.read(rest[1], ty, g) if len(rest) > 1 else None
        a = effective_addresses(ex, ins, addr, g)
        if ex.accesses is not None:
            lanes = np.arange(ex.T) if g is None else g
            ex.accesses.extend(Access("atom", sp, addrs, lanes if sub is None else lanes[sub], dtype.itemsize)
                               for sp, sub, addrs in (_split_generic(a) if space == "generic" else [(space, None, a)]))
        old = np.empty(ex.count(g), dtype)
        pieces = list(_parts(ex, space, a, g, dtype))
        # The watchdog's epoch: a cas writes memory only where its comparison holds (watchdog._cas).
        before = [view[idx].copy() for view, idx, _ in pieces] if op == "cas" else None
        for view, idx, lanes in pieces:
            if lanes is None:
                old = _serialised(view, idx, b, c, f, op)
            else:
                old[lanes] = _serialised(view, idx, b[lanes], None if c is None else c[lanes], f, op)
        if before is not None and any((v[i] != prev).any() for (v, i, _), prev in zip(pieces, before)):
            EPOCH.n += 1
        if dst is not None:
            ex.write(dst, old, ty, g)
    ex.advance(sel, ins.index + 1)
