"""Asynchronous copies and warpgroup tensor cores of the functional engine: ``cp.async`` with its
commit/wait groups (sm_80+) and ``wgmma.mma_async`` (sm_90a).

Owns:

* ``cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size | ignore-src}{, policy}``
  (PTX ISA 9.0 "cp.async"): ``src-size`` bytes (all ``cp-size`` when absent, none with a true
  ``ignore-src``) are read from global memory and the rest of the ``cp-size`` bytes are zeros. The
  copy is done when the instruction executes, and ``cp.async.commit_group`` /
  ``cp.async.wait_group N`` / ``cp.async.wait_all`` do nothing functionally. That is observably
  the same as the hardware for every correct program: PTX gives a program no way to see the
  destination before a ``wait_group`` that covers the copy (reading it, or writing the source
  or destination, earlier is a data race with undefined results); the timing model still makes
  ``wait_group`` wait for the copies (:mod:`gpusim.timing.sm`). Masked-off lanes Triton emits with
  ``src-size`` 0 read nothing, so their (possibly invalid) source addresses never fault.
* ``wgmma.mma_async.sync.aligned.m64nNk16.{f32,f16}.{f16,bf16}.{f16,bf16} d, a, b-desc, scale-d,
  imm-scale-a, imm-scale-b{, imm-trans-a}, imm-trans-b`` (PTX ISA 9.0 "wgmma.mma_async"): a
  warpgroup-collective operation of the four consecutive warps ``4k .. 4k+3`` of a CTA. gpusim
  executes it when all live warps of the warpgroup execute it together (as ``mma.sync`` needs
  its warp's lanes converged): then D is computed at once from the shared memory the descriptors
  name and written to the 128 threads' registers, and ``wgmma.fence`` /
  ``wgmma.commit_group`` / ``wgmma.wait_group`` order nothing (the same argument as for cp.async:
  a correct program reads D and rewrites the operands only after a ``wait_group`` covering it).
  A warpgroup only part of whose live warps are at the instruction is an error (a
  :class:`~gpusim.errors.KernelFault` naming the warps), as are descriptors that differ between
  the threads of a warpgroup and a descriptor base offset other than 0. The functional engine's
  min-PC order and :class:`gpusim.functional.warpstep.CTAStepper` bring the warps of a warpgroup
  to the instruction together.

Counters: a cp.async counts ``smsp__inst_executed_op_ldgsts.sum`` and its global sectors under
``l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum`` / ``..._requests_...`` (Nsight Compute's
LDGSTS names); its timing sees a global load and a shared store (:class:`~gpusim.functional.memops.Access`).

Imports numpy, isa, gpusim.memmodel and the engine's memops/warpops/memory modules; never simpy or cupy.
"""

from __future__ import annotations

import numpy as np

from gpusim.errors import KernelFault
from gpusim.functional.executor import Executor
from gpusim.functional.memops import Access, _parts, effective_addresses
from gpusim.functional.memory import MemoryFault, check_aligned
from gpusim.functional.warpops import _warp_regs, check_members
from gpusim.memmodel import global_sectors, shared_wavefronts
from isa import mma as mmaops
from isa.ir import Imm, Instr, Reg

__all__ = ["cp_async", "wgmma"]


def _stat(ex: Executor, pc: int, name: str, v: int) -> None:
    ex.stats[name] += v
    ex.stats[name, pc] += v


def cp_async(ex: Executor, ins: Instr, sel) -> None:
    """``cp.async`` (the copy, done now) and ``cp.async.commit_group`` / ``wait_group`` /
    ``wait_all`` (nothing to do functionally); see the module docstring."""
    if ins.op != "cp.async":
        return ex.advance(sel, ins.index + 1)
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        _copy(ex, ins, g)
    ex.advance(sel, ins.index + 1)


def _copy(ex: Executor, ins: Instr, g) -> None:
    ops = ins.operands
    dst_op, src_op, size_op = ops[0], ops[1], ops[2]
    if not isinstance(size_op, Imm) or int(size_op.value) not in (4, 8, 16):
        raise KernelFault(f"kernel {ex.kernel.name}: {ins.mnemonic} at {ins.loc.file}:{ins.loc.line}: cp-size must "
                          f"be the constant 4, 8 or 16 (PTX ISA 9.0 cp.async)")
    cp = int(size_op.value)
    if ins.has("cg") and cp != 16:
        raise KernelFault(f"kernel {ex.kernel.name}: {ins.mnemonic} at {ins.loc.file}:{ins.loc.line}: .cg copies "
                          f"16 bytes, not {cp} (PTX ISA 9.0 cp.async)")
    n = ex.count(g)
    extra = ops[3:-1] if ins.has("L2::cache_hint") else ops[3:]              # src-size or ignore-src
    src_size = np.full(n, cp, np.int64)
    if extra:
        op = extra[0]
        if isinstance(op, Reg) and ex.regs.bits[op.name] == 1:            # ignore-src predicate
            src_size = np.where(ex.read(op, "pred", g), 0, cp).astype(np.int64)
        else:
            src_size = np.minimum(ex.read(op, "u32", g).astype(np.int64), cp)
    dst = effective_addresses(ex, ins, dst_op, g)
    src = effective_addresses(ex, ins, src_op, g)
    check_aligned(dst, cp, "shared")
    lanes = np.arange(ex.T) if g is None else g
    data = np.zeros((n, cp), np.uint8)
    reading = src_size > 0
    if reading.any():
        check_aligned(src[reading], cp, "global")
        for s in np.unique(src_size[reading]).tolist():
            idx = np.flatnonzero(src_size == s)
            width = 4 if s % 4 == 0 else 1
            u = np.dtype(f"u{width}")
            words = np.zeros((idx.size, s // width), u)
            try:
                for j in range(s // width):
                    for view, eidx, sub in _parts(ex, "global", src[idx] + np.uint64(j * width), idx, u):
                        if sub is None:
                            words[:, j] = view[eidx]
                        else:
                            words[sub, j] = view[eidx]
            except MemoryFault as f:
                f.lane = int(idx[f.lane]) if f.lane >= 0 else f.lane
                raise
            data[idx, :s] = words.view(np.uint8).reshape(idx.size, s)
    # The destination: 4-byte words of shared memory (cp-size is 4, 8 or 16 and dst is aligned to it).
    out = data.view(np.uint32)
    writes = []
    for j in range(cp // 4):
        for view, eidx, sub in _parts(ex, "shared", dst + np.uint64(4 * j), g, np.dtype(np.uint32)):
            writes.append((view, eidx, out[:, j] if sub is None else out[sub, j]))
    _account(ex, ins.index, src[reading], lanes[reading], dst, lanes, cp)
    for view, eidx, vals in writes:
        view[eidx] = vals


def _account(ex: Executor, pc: int, src: np.ndarray, src_lanes: np.ndarray, dst: np.ndarray, lanes: np.ndarray,
             width: int) -> None:
    """Counters and timing records of a cp.async: one LDGSTS instruction per warp, the global
    sectors its reading lanes touch, and the shared wavefronts of the stores."""
    w = np.unique(lanes >> 5)
    _stat(ex, pc, "smsp__inst_executed_op_ldgsts.sum", int(w.size))
    if src_lanes.size:
        rows, act = _rows(src_lanes, src)
        cost = global_sectors(rows, width, act)
        _stat(ex, pc, "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum", int(cost.requests.sum()))
        _stat(ex, pc, "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum", int(cost.sectors.sum()))
    if ex.accesses is None:
        return
    if src_lanes.size:
        ex.accesses.append(Access("ld", "global", src, src_lanes, width))
    rows, act = _rows(lanes, dst)
    cost = shared_wavefronts(rows.astype(np.int64), width, False, act)
    ex.accesses.append(Access("st", "shared", dst, lanes, width, int(cost.wavefronts.sum()),
                              np.asarray(cost.wavefronts, np.int64)))


def _rows(lanes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-lane ``values`` of sorted thread indices as (warps, 32) rows and their active mask."""
    w = lanes >> 5
    row = np.concatenate(([0], np.cumsum(w[1:] != w[:-1]))) if lanes.size else w
    n_w = int(row[-1]) + 1 if lanes.size else 0
    out = np.zeros((n_w, 32), values.dtype)
    act = np.zeros((n_w, 32), np.bool_)
    out[row, lanes & 31] = values
    act[row, lanes & 31] = True
    return out, act


# ---------------------------------------------------------------------------- wgmma
def _fault(ex: Executor, ins: Instr, why: str) -> KernelFault:
    return KernelFault(f"kernel {ex.kernel.name}: {ins.mnemonic} at {ins.loc.file}:{ins.loc.line}: {why}")


def _imm(ex: Executor, ins: Instr, op, allowed: tuple[int, ...], what: str) -> int:
    if not isinstance(op, Imm) or int(op.value) not in allowed:
        raise _fault(ex, ins, f"{what} must be the constant {' or '.join(map(str, allowed))} (PTX ISA 9.0 wgmma.mma_async)")
    return int(op.value)


def _groups(ex: Executor, ins: Instr, lanes: np.ndarray) -> np.ndarray:
    """The warpgroups (as the index of their first warp in the chunk) executing ``ins``; raises
    if a live warp of one of them is not executing it with the others."""
    wpb = ex.grid.warps_per_block
    warp = lanes >> 5
    cta, wic = warp // wpb, warp % wpb
    first = cta * wpb + (wic // 4) * 4
    groups = np.unique(first)
    here = np.zeros(ex.T // 32, np.bool_)
    here[np.unique(warp)] = True
    live = ex.live.reshape(-1, 32).any(axis=1)
    for f in groups.tolist():
        members = np.arange(f, min(f + 4, (f // wpb + 1) * wpb))
        missing = members[live[members] & ~here[members]]
        if missing.size:
            block = ex.grid.block_coords(ex.block_ids[int(f // wpb)])
            raise _fault(ex, ins, f"warps {', '.join(str(int(m % wpb)) for m in missing)} of block {block} belong to "
                                  f"the warpgroup of warp {int(f % wpb)} but are not executing it with the others "
                                  f"(wgmma is warpgroup-collective: gpusim runs it when the group's warps are at it "
                                  f"together)")
    return groups


def _uniform(ex: Executor, ins: Instr, op, groups: np.ndarray, what: str) -> list[int]:
    """A 64-bit descriptor operand, one value per warpgroup (it must be the same in all its threads)."""
    v = ex.read(op, "b64", None) if isinstance(op, Reg) else np.full(ex.T, int(op.value) & (2**64 - 1), np.uint64)
    out = []
    for f in groups.tolist():
        idx = np.arange(f * 32, min(f * 32 + 128, ex.T))
        vals = v[idx][ex.live[idx]]
        if vals.size and (vals != vals[0]).any():
            raise _fault(ex, ins, f"the {what} descriptor differs between the threads of a warpgroup")
        out.append(int(vals[0]) if vals.size else 0)
    return out


#: wgmma operand addresses by (descriptor, rows, MN-major?): a pure function of those
#: (:func:`isa.mma.wgmma_smem_offsets`), and a loop's descriptors repeat from one k-step to the next.
_SMEM_OFFSETS: dict[tuple, np.ndarray] = {}


def _smem_tile(ex: Executor, ins: Instr, desc: int, group_first: int, mn: int, mn_major: bool, what: str) -> np.ndarray:
    """The mn x 16 tile of 16-bit values a descriptor names, from the shared memory of the CTA of
    warp ``group_first``: (mn, 16) uint16."""
    key = (desc, mn, mn_major)
    offs = _SMEM_OFFSETS.get(key)
    if offs is None:
        try:
            offs = mmaops.wgmma_smem_offsets(desc, mn, mn_major)
        except ValueError as e:
            raise _fault(ex, ins, f"{what}: {e}") from None
        offs.flags.writeable = False
        if len(_SMEM_OFFSETS) >= 4096:
            _SMEM_OFFSETS.clear()
        _SMEM_OFFSETS[key] = offs
    if (offs < 0).any() or (offs + 2 > ex.shared_bytes).any():
        raise _fault(ex, ins, f"the {what} descriptor addresses bytes {int(offs.min())}..{int(offs.max()) + 1} of "
                              f"shared memory, which is {ex.shared_bytes} bytes")
    cta = group_first // ex.grid.warps_per_block
    return ex.shared.view(np.uint16)[(cta * ex.shared_stride + offs) // 2]


def wgmma(ex: Executor, ins: Instr, sel) -> None:
    """``wgmma.mma_async`` (see the module docstring): per warpgroup, D = A * B (+ D with a true
    ``scale-d``), A and B from shared-memory descriptors (A from registers in the 7-operand form),
    ``imm-scale-a/b`` = -1 negating A/B, ``imm-trans-a/b`` = 1 for MN-major operands."""
    if ins.guard is not None:
        raise _fault(ex, ins, "a predicated wgmma.mma_async is not supported")
    lanes = np.arange(ex.T) if sel is None else sel
    check_members(ex, ins, lanes, np.full(lanes.size, 0xFFFFFFFF, np.uint32))
    groups = _groups(ex, ins, lanes)
    ops = ins.operands
    d_op, a_op, b_op, sd_op = ops[0], ops[1], ops[2], ops[3]
    a_regs = len(ops) == 7
    sa = _imm(ex, ins, ops[4], (1, -1), "imm-scale-a")
    sb = _imm(ex, ins, ops[5], (1, -1), "imm-scale-b")
    ta = 0 if a_regs else _imm(ex, ins, ops[6], (0, 1), "imm-trans-a")
    tb = _imm(ex, ins, ops[-1], (0, 1), "imm-trans-b")
    dty, ab, _ = ins.types
    n = int(next(m for m in ins.mods if m.startswith("m64n"))[4:-3])
    n_regs = n // 2 if dty == "f32" else n // 4
    if len(d_op.items) != n_regs:
        raise _fault(ex, ins, f"D has {len(d_op.items)} registers; .m64n{n}k16.{dty} needs {n_regs}")
    G = groups.size
    th = (groups[:, None] * 32 + np.arange(128)[None, :])                    # (G, 128) thread indices
    ok = th < ex.T
    thc = np.minimum(th, ex.T - 1)
    # A: (G, 64, 16) bits
    if a_regs:
        if len(a_op.items) != 4:
            raise _fault(ex, ins, "a register A operand is four .b32 registers")
        regs = _warp_regs(ex, a_op.items, "b32", np.unique(thc >> 5))         # (warps, 32, 4)
        wrow = np.searchsorted(np.unique(thc >> 5), thc >> 5)
        vals = regs[wrow, thc & 31].astype(np.uint32)                          # (G, 128, 4)
        halves = np.stack([vals & 0xFFFF, vals >> 16], -1).reshape(G, 128, 8).astype(np.uint16)
        lay = mmaops.wgmma_a_layout()
        A = np.zeros((G, 64, 16), np.uint16)
        A[:, lay[..., 0], lay[..., 1]] = halves
    else:
        A = np.stack([_smem_tile(ex, ins, dsc, f, 64, bool(ta), "A")
                      for dsc, f in zip(_uniform(ex, ins, a_op, groups, "A"), groups.tolist())])
    Bt = np.stack([_smem_tile(ex, ins, dsc, f, n, bool(tb), "B")               # (G, N, 16)
                   for dsc, f in zip(_uniform(ex, ins, b_op, groups, "B"), groups.tolist())])
    sign = np.uint16(0x8000)
    if sa == -1:
        A = A ^ sign
    if sb == -1:
        Bt = Bt ^ sign
    B = np.swapaxes(Bt, 1, 2)                                                  # (G, 16, N)
    scale_d = ex.read(sd_op, "pred", None)[thc[:, 0]] if isinstance(sd_op, Reg) else \
        np.full(G, bool(int(sd_op.value)), np.bool_)
    dl = mmaops.wgmma_d_layout(n)                                              # (128, N/2, 2)
    if dty == "f32":
        C = np.zeros((G, 64, n), np.float32)
        for j, r in enumerate(d_op.items):
            C[:, dl[:, j, 0], dl[:, j, 1]] = ex.read(r, "f32", None)[thc]
        D = mmaops.wgmma_m64k16(A, B, C, ab, "f32", scale_d)
        for j, r in enumerate(d_op.items):
            vals = D[:, dl[:, j, 0], dl[:, j, 1]]
            ex.write(r, vals[ok], "f32", th[ok])
    else:
        C = np.zeros((G, 64, n), np.uint16)
        for j, r in enumerate(d_op.items):
            v = ex.read(r, "b32", None)[thc].astype(np.uint32)
            C[:, dl[:, 2 * j, 0], dl[:, 2 * j, 1]] = (v & 0xFFFF).astype(np.uint16)
            C[:, dl[:, 2 * j + 1, 0], dl[:, 2 * j + 1, 1]] = (v >> 16).astype(np.uint16)
        D = mmaops.wgmma_m64k16(A, B, C, ab, "f16", scale_d)
        for j, r in enumerate(d_op.items):
            lo = D[:, dl[:, 2 * j, 0], dl[:, 2 * j, 1]].astype(np.uint32)
            hi = D[:, dl[:, 2 * j + 1, 0], dl[:, 2 * j + 1, 1]].astype(np.uint32)
            ex.write(r, (lo | (hi << np.uint32(16)))[ok], "b32", th[ok])
    ex.advance(sel, ins.index + 1)

