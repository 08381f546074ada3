"""The SIMT executor: runs one kernel over a chunk of CTAs, vectorised.

Owns: thread state (PC, live, barrier wait) of every thread of a chunk of
consecutive CTAs, the choice of what executes next, reconvergence, barriers,
instruction counters, and faults. Each step executes ONE instruction for all
threads of the chunk that are at the lowest runnable PC: per warp this is the
"min-PC" policy, which reconverges a divergent branch at its immediate
post-dominator for the block layouts nvcc emits (Diamos et al., "SIMD
re-convergence at thread frontiers", MICRO 2011); the threads of one warp are
therefore always executed together whenever they are at the same PC, which is
what ``shfl.sync``/``vote.sync`` checks rely on.

Semantics come from the opcode table (:mod:`isa.opcodes`) and, for memory and
warp-level instructions, from :mod:`gpusim.functional.memops` and
:mod:`gpusim.functional.warpops`. Imports numpy and isa; never simpy or cupy.
"""

from __future__ import annotations

import collections

import numpy as np

from gpusim.errors import KernelFault
from gpusim.functional import asyncops, memops, warpops
from gpusim.functional.executor import Grid
from gpusim.functional.its import PARKED, SpinDetector
from gpusim.functional.memory import LOCAL_WINDOW, SHARED_WINDOW, GlobalMemory, MemoryFault
from gpusim.functional.regfile import RegisterFile, immediate
from gpusim.functional.watchdog import EPOCH, Watchdog, checkable, fingerprint, impure_pcs
from isa.ir import Imm, Instr, Kernel, PredPair, Reg, Special, Sym, Vec
from isa.opcodes import Kind, contracted

__all__ = ["Grid", "ChunkExecutor"]

_DONE = np.int32(np.iinfo(np.int32).max)  # PC of a thread that cannot run

#: Bytes of reserved shared memory a kernel that reads ``%reserved_smem_offset_*`` gets after
#: its own shared memory (gpusim's layout; cooperative groups keep a barrier word there).
RESERVED_SMEM_BYTES = 16


class ChunkExecutor:
    """Executes ``kernel`` for CTAs ``first_block .. first_block + n_blocks - 1`` (or the CTAs
    ``block_ids`` names).

    Threads are laid out CTA after CTA, each CTA padded to whole warps, so
    thread ``t`` is lane ``t % 32`` of warp ``t // 32`` and the per-thread
    arrays below all have shape (T,) with T = n_blocks * warps_per_block * 32.

    Args:
        kernel: the decoded kernel.
        grid: launch geometry.
        first_block, n_blocks: the CTAs (linear ids, x fastest) of this chunk.
        params: the packed parameter buffer (uint8).
        memory: global memory of the device.
        dynamic_shared: bytes of dynamic shared memory per CTA.
        counters: per-PC (warp instructions, thread instructions) int64 arrays,
            shape (len(kernel.instrs),), accumulated in place.
        stats: launch-wide counters by Nsight Compute metric name, accumulated
            in place (memory counters of :mod:`gpusim.functional.memops`).
        sm_count: SMs of the simulated GPU (for ``%smid``, ``%nsmid``).
        max_warps: warp slots per SM (for ``%nwarpid``).
        max_steps: steps after which the launch is declared hung.
        block_ids: the chunk's CTAs' linear ids when they are not consecutive (int64, shape
            (n_blocks,), ``block_ids[0] == first_block``; a timing slice's CTAs in dispatch
            order); ``None``: ``first_block .. first_block + n_blocks - 1``.
    """

    #: When a list, memory instructions append their :class:`gpusim.functional.memops.Access`
    #: records to it (the timing engine's view of an instruction); ``None`` records nothing.
    accesses: list | None = None

    def __init__(self, kernel: Kernel, grid: Grid, first_block: int, n_blocks: int, params: np.ndarray,
                 memory: GlobalMemory, dynamic_shared: int, counters: tuple[np.ndarray, np.ndarray],
                 stats: "collections.Counter[str]", sm_count: int, max_warps: int, max_steps: int,
                 block_ids: np.ndarray | None = None):
        self.kernel, self.instrs, self.grid = kernel, kernel.instrs, grid
        self.first_block, self.nb = first_block, n_blocks
        #: Linear id of each of the chunk's CTAs, shape (n_blocks,).
        self.block_ids = np.arange(first_block, first_block + n_blocks) if block_ids is None else block_ids
        self.params, self.memory = params, memory
        self.warp_counts, self.thread_counts = counters
        self.stats = stats
        self.sm_count, self.max_warps, self.max_steps = sm_count, max_warps, max_steps
        tpb = grid.threads_per_block
        self.tpbp = grid.warps_per_block * 32
        self.T = T = n_blocks * self.tpbp
        t = np.arange(T, dtype=np.int64)
        self.block_of = t // self.tpbp
        lin = t % self.tpbp
        self.lin_tid = lin
        valid = lin < tpb
        bx, by, _ = grid.block
        self.tid = (lin % bx).astype(np.uint32), (lin // bx % by).astype(np.uint32), (lin // (bx * by)).astype(np.uint32)
        gx, gy, _ = grid.grid
        blin = self.block_ids[self.block_of]
        self.ctaid = (blin % gx).astype(np.uint32), (blin // gx % gy).astype(np.uint32), (blin // (gx * gy)).astype(np.uint32)
        self.lane = (t & 31).astype(np.uint32)
        self.regs = RegisterFile(kernel.regs, T)
        #: Per PC: a plan of a shared-memory access at an unchanged address register
        #: (:func:`gpusim.functional.memops._plan`), and the bytes those plans hold.
        self.mem_plans: dict[int, tuple] = {}
        self.mem_plan_bytes = 0
        # Shared memory: static variables, then dynamic (extern) at its alignment.
        dyn_base = kernel.static_shared_bytes
        if kernel.dynamic_shared_align:
            a = kernel.dynamic_shared_align
            dyn_base = -(-dyn_base // a) * a
        self.dynamic_base = dyn_base
        self.shared_bytes = dyn_base + dynamic_shared if kernel.dynamic_shared_align or dynamic_shared else kernel.static_shared_bytes
        self.shared_stride = max(16, -(-self.shared_bytes // 16) * 16)
        self.shared = np.zeros(n_blocks * self.shared_stride, np.uint8)
        self.local_stride = max(16, -(-kernel.local_bytes // 16) * 16) if kernel.local_bytes else 0
        self.local = np.zeros(T * self.local_stride, np.uint8)
        # Control state.
        self.live = valid.copy()
        self.n_live = int(valid.sum())
        self.live_per_block = np.full(n_blocks, tpb, np.int64)
        self.converged = True
        self.pc = 0
        self.pcs: np.ndarray | None = None
        self.live_idx = None if self.n_live == T else np.flatnonzero(self.live)
        self.live_warps = n_blocks * grid.warps_per_block
        self.waiting = np.zeros(T, np.bool_)
        self.bar_pc = np.zeros(T, np.int32)
        # Named barriers (ids other than 0, thread counts) and bar.red take the general path.
        self.named_barriers = any(i.spec.kind is Kind.BAR and (len(i.operands) > 1 or i.op.endswith(".red")
                                                               or not (isinstance(i.operands[0], Imm) and i.operands[0].value == 0))
                                  for i in kernel.instrs)
        if self.named_barriers:
            self.bar_id = np.zeros(T, np.int64)
            self.bar_count = np.zeros(T, np.int64)  # 0: every live thread of the CTA
            self.bar_val = np.zeros(T, np.bool_)
        # Reserved shared memory (%reserved_smem_offset_*): 16 bytes after the CTA's own.
        self.reserved_base = -(-self.shared_bytes // 8) * 8
        if any(isinstance(op, Special) and op.name.startswith("reserved_smem") for i in kernel.instrs for op in i.operands):
            self.shared_bytes = self.reserved_base + RESERVED_SMEM_BYTES
            self.shared_stride = max(16, -(-self.shared_bytes // 16) * 16)
            self.shared = np.zeros(n_blocks * self.shared_stride, np.uint8)
        self.wait_per_block = np.zeros(n_blocks, np.int64)
        self.n_waiting = 0
        self.steps = 0
        # The watchdog (gpusim.functional.watchdog): which PCs have effects outside the state it fingerprints.
        self.impure = impure_pcs(kernel)
        self.watchdog = Watchdog(checkable(kernel))
        # Independent thread scheduling (gpusim.functional.its): spinning threads are parked.
        self.spin: SpinDetector | None = None
        self.parked_pc = np.zeros(T, np.int32)   # where a parked thread resumes
        self.n_parked = 0
        self.idle_unparks = 0                    # resumptions in a row with nothing run while parked
        self.parked_at_step = 0

    # ---------------------------------------------------------------- main loop
    def run(self) -> None:
        """Run the chunk to completion. Raises :class:`KernelFault`."""
        instrs = self.instrs
        n_instr = len(instrs)
        handlers = _HANDLERS
        impure, watchdog = self.impure, self.watchdog
        while True:
            if self.converged:
                if self.n_live == 0:
                    return
                pc, sel = self.pc, self.live_idx
                warps = self.live_warps
            else:
                pc = int(self.pcs.min())
                if pc == PARKED:  # only parked threads can run: they resume
                    self._unpark(np.flatnonzero(self.pcs == PARKED))
                    continue
                if pc == _DONE:
                    if self.n_waiting:
                        self._deadlock()
                    return
                m = self.pcs == pc
                sel = np.flatnonzero(m)
                if self.n_waiting == 0 and sel.size == self.n_live:
                    self._reconverge(pc)
                    sel, warps = self.live_idx, self.live_warps
                else:
                    w = sel >> 5
                    warps = 1 + int(np.count_nonzero(w[1:] != w[:-1])) if sel.size else 0
            self.steps += 1
            if self.steps > self.max_steps:
                self._hung(pc)
            if pc >= n_instr:  # falling off the end of the kernel is a return
                self._exit(sel)
                continue
            ins = instrs[pc]
            if ins.spec.kind is Kind.BRA and watchdog.due():
                self._watch(pc)
            self.warp_counts[pc] += warps
            self.thread_counts[pc] += self.T if sel is None else sel.size
            try:
                handlers[ins.spec.kind](self, ins, sel)
            except MemoryFault as f:
                raise self._fault(ins, sel, f) from None
            if impure[pc]:
                EPOCH.n += 1
            if self.accesses:
                self.consume_accesses()

    def consume_accesses(self) -> None:
        """Called after a step that recorded memory accesses (only when :attr:`accesses` is a
        list): subclasses that record them take them here and empty the list."""
        self.accesses.clear()

    # ---------------------------------------------------------------- control helpers
    def _reconverge(self, pc: int) -> None:
        self.converged, self.pc, self.pcs = True, pc, None
        self.live_idx = None if self.n_live == self.T else np.flatnonzero(self.live)  # threads may have exited

    def _diverge(self) -> None:
        pcs = np.full(self.T, _DONE, np.int32)
        if self.live_idx is None:
            pcs[:] = self.pc
        else:
            pcs[self.live_idx] = self.pc
        self.pcs, self.converged = pcs, False

    def advance(self, sel: np.ndarray | None, pc: int) -> None:
        """Lanes ``sel`` (at the current PC) continue at ``pc``."""
        if self.converged:
            self.pc = pc
        else:
            self.pcs[sel] = pc

    def branch(self, sel: np.ndarray | None, taken: np.ndarray | None, target: int, fallthrough: int) -> None:
        """Lanes ``taken`` (a subset of ``sel``) jump to ``target``; the rest fall through."""
        n_sel = self.T if sel is None else sel.size
        n_taken = self.T if taken is None else taken.size
        if n_taken == 0:
            return self.advance(sel, fallthrough)
        if n_taken == n_sel:
            self.advance(sel, target)
        else:
            if self.converged:
                self._diverge()
            self.pcs[sel] = fallthrough
            self.pcs[taken] = target
        if target < fallthrough and not self.converged:  # a loop's branch while other threads are elsewhere
            self._park_spinning(fallthrough - 1, target, sel if n_taken == n_sel else taken)

    # ---------------------------------------------------------------- independent thread scheduling
    def _park_spinning(self, pc: int, target: int, lanes: np.ndarray) -> None:
        """``lanes`` took the backward branch at ``pc`` while other threads of the chunk are
        elsewhere: park those that spin (:mod:`gpusim.functional.its`), so the others run first."""
        if self.spin is None:
            self.spin = SpinDetector(self.kernel, self.T)
        spin = self.spin.spinning(self.regs.data, pc, target, lanes)
        if spin.size:
            self.parked_pc[spin] = target
            self.pcs[spin] = PARKED
            self.n_parked += int(spin.size)
            self.parked_at_step = self.steps

    def _unpark(self, lanes: np.ndarray) -> None:
        """Parked ``lanes`` resume. Raises :class:`KernelFault` when the chunk's parked threads
        have resumed 8 times in a row with no other thread able to run in between: they spin on
        memory that no thread of the chunk will write (a lock never released, a flag never set)."""
        if self.steps == self.parked_at_step and self.n_parked == lanes.size:
            self.idle_unparks += 1
            # Only the chunked engine runs every thread that could write: in timing mode another
            # SM's CTAs still may (the launch's watchdog and budgets judge there).
            if self.idle_unparks >= 8 and type(self) is ChunkExecutor:
                self._spin_deadlock(lanes)
        else:
            self.idle_unparks = 0
        self.pcs[lanes] = self.parked_pc[lanes]
        self.n_parked -= int(lanes.size)
        self.spin.resume(lanes)

    def _spin_deadlock(self, lanes: np.ndarray) -> None:
        lines = sorted({self.instrs[int(p)].loc.line for p in self.parked_pc[lanes]})
        self.pcs[lanes] = self.parked_pc[lanes]
        raise KernelFault(
            f"kernel {self.kernel.name}: deadlock: {lanes.size} threads spin in a loop (PTX lines "
            f"{', '.join(map(str, lines))}) waiting for memory that no other running thread will write (a lock "
            f"never released, a flag never set; gpusim runs the CTAs of a launch in order, so a CTA cannot wait "
            f"for a later one). {self.where()}")

    def guarded(self, ins: Instr, sel: np.ndarray | None) -> np.ndarray | None:
        """The lanes of ``sel`` whose guard predicate holds (``None`` = all T lanes)."""
        if ins.guard is None:
            return sel
        p = self.regs.read(ins.guard, "pred", sel)
        if p.all():
            return sel
        return np.flatnonzero(p) if sel is None else sel[p]

    def count(self, sel: np.ndarray | None) -> int:
        return self.T if sel is None else int(sel.size)

    def _exit(self, lanes: np.ndarray | None) -> None:
        if lanes is None:
            lanes = np.arange(self.T)
        if lanes.size == 0:
            return
        self.live[lanes] = False
        self.n_live -= int(lanes.size)
        self.live_per_block -= np.bincount(self.block_of[lanes], minlength=self.nb)
        live_w = self.live.reshape(-1, 32).any(axis=1)
        self.live_warps = int(live_w.sum())
        if self.converged:
            self.live_idx = None if self.n_live == self.T else np.flatnonzero(self.live)
        else:
            self.pcs[lanes] = _DONE
        if self.n_waiting:
            self._release_barriers()

    # ---------------------------------------------------------------- barriers
    def barrier(self, ins: Instr, sel: np.ndarray | None, bar_id: int = 0, count: int = 0,
                value: np.ndarray | None = None) -> None:
        """Lanes ``sel`` arrive at barrier ``bar_id`` of their CTA, expecting ``count``
        threads (0: every live thread of the CTA); ``value`` is each lane's predicate of a
        ``bar.red`` (whose result is written when the barrier completes)."""
        if self.named_barriers:
            return self._named_barrier(ins, sel, bar_id, count, value)
        if self.converged:
            # Every live thread of every CTA of the chunk is here: release at once.
            return self.advance(sel, ins.index + 1)
        self.waiting[sel] = True
        self.bar_pc[sel] = ins.index
        self.pcs[sel] = _DONE
        self.n_waiting += int(sel.size)
        self.wait_per_block += np.bincount(self.block_of[sel], minlength=self.nb)
        self._release_barriers()

    def _release_barriers(self) -> None:
        if self.named_barriers:
            return self._release_named()
        full = np.flatnonzero((self.wait_per_block > 0) & (self.wait_per_block >= self.live_per_block))
        if full.size == 0:
            return
        rel = self.waiting & np.isin(self.block_of, full)
        lanes = np.flatnonzero(rel)
        pcs = self.bar_pc[lanes]
        if pcs.min() != pcs.max():
            blk = self.block_of[lanes]
            lo = np.full(self.nb, np.iinfo(np.int32).max, np.int64)
            hi = np.full(self.nb, -1, np.int64)
            np.minimum.at(lo, blk, pcs)
            np.maximum.at(hi, blk, pcs)
            bad = int(np.flatnonzero((hi >= 0) & (lo != hi))[0])
            lines = sorted({self.instrs[int(p)].loc.line for p in pcs[blk == bad]})
            raise KernelFault(
                f"kernel {self.kernel.name}: threads of block {self.grid.block_coords(self.block_ids[bad])} wait at "
                f"different barriers (PTX lines {', '.join(map(str, lines))}): bar.sync in divergent code")
        self.waiting[lanes] = False
        self.n_waiting -= int(lanes.size)
        self.wait_per_block[full] = 0
        self.pcs[lanes] = pcs + 1

    def _named_barrier(self, ins: Instr, sel, bar_id: int, count: int, value) -> None:
        if self.converged:
            # Every live thread of every CTA of the chunk is here: each barrier completes at once.
            if value is not None:
                self._bar_red_result(ins, np.arange(self.T) if sel is None else sel, value)
            return self.advance(sel, ins.index + 1)
        self.waiting[sel] = True
        self.bar_pc[sel] = ins.index
        self.bar_id[sel] = bar_id
        self.bar_count[sel] = count
        if value is not None:
            self.bar_val[sel] = value
        self.pcs[sel] = _DONE
        self.n_waiting += int(sel.size)
        self._release_barriers()

    def _bar_red_result(self, ins: Instr, lanes: np.ndarray, vals: np.ndarray) -> None:
        """Write ``bar.red``'s result to ``lanes``: per CTA, the popc/and/or of ``vals`` over them."""
        blk = self.block_of[lanes]
        ones = np.bincount(blk, weights=vals.astype(np.float64), minlength=self.nb).astype(np.int64)
        total = np.bincount(blk, minlength=self.nb)
        if ins.has("popc"):
            res, ty = ones[blk].astype(np.uint32), "u32"
        else:
            res, ty = ((ones == total) if ins.has("and") else (ones > 0))[blk], "pred"
        self.regs.write(ins.operands[0], res, ty, lanes)

    def _release_named(self) -> None:
        lanes = np.flatnonzero(self.waiting)
        if lanes.size == 0:
            return
        key = self.block_of[lanes] * 16 + self.bar_id[lanes]
        order = np.argsort(key, kind="stable")
        lanes, key = lanes[order], key[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        for grp in np.split(lanes, starts[1:]):
            b = int(self.block_of[grp[0]])
            count = int(self.bar_count[grp[0]])
            if count:  # arrivals are counted per warp (PTX ISA 9.0 §9.7.13.1)
                arrived = 32 * np.unique(grp >> 5).size
                need = min(count, 32 * int(np.unique(np.flatnonzero(self.live[b * self.tpbp:(b + 1) * self.tpbp]) >> 5).size))
            else:
                arrived, need = grp.size, int(self.live_per_block[b])
            if arrived < need:
                continue
            pcs = self.bar_pc[grp]
            if pcs.min() != pcs.max() and not count:
                lines = sorted({self.instrs[int(p)].loc.line for p in pcs})
                raise KernelFault(
                    f"kernel {self.kernel.name}: threads of block {self.grid.block_coords(self.block_ids[b])} wait "
                    f"at different barriers (PTX lines {', '.join(map(str, lines))}): bar.sync in divergent code")
            for pc in np.unique(pcs):
                sub = grp[pcs == pc]
                ins = self.instrs[int(pc)]
                if ins.op.endswith(".red"):
                    self._bar_red_result(ins, sub, self.bar_val[sub])
            self.waiting[grp] = False
            self.n_waiting -= int(grp.size)
            self.pcs[grp] = pcs + 1

    def _deadlock(self) -> None:
        lanes = np.flatnonzero(self.waiting)
        b = int(self.block_of[lanes[0]])
        lines = sorted({self.instrs[int(p)].loc.line for p in self.bar_pc[lanes]})
        raise KernelFault(
            f"kernel {self.kernel.name}: deadlock: {lanes.size} threads wait at bar.sync (PTX lines "
            f"{', '.join(map(str, lines))}) for threads of their block that never arrive "
            f"(first: block {self.grid.block_coords(self.block_ids[b])})")

    def _hung(self, pc: int) -> None:
        raise KernelFault(
            f"kernel {self.kernel.name}: watchdog: no completion after {self.max_steps:,} instruction steps "
            f"(max_steps); it is probably stuck in a loop. {self.where()}. If the kernel is just long, raise the "
            f"limit: gpusim.Device(max_steps=N) or 'gpusim run --max-steps N' (0 = unlimited)")

    def _watch(self, pc: int) -> None:
        """Fingerprint the chunk's state at the branch ``pc``; raise if it repeats (see
        :mod:`gpusim.functional.watchdog`)."""
        import time

        t0 = time.perf_counter()
        digest = fingerprint(self).digest()
        if self.watchdog.seen(pc, digest, self.steps, time.perf_counter() - t0):
            raise KernelFault(
                f"kernel {self.kernel.name}: watchdog: endless loop: the state of every thread (PCs, registers) "
                f"repeats with no memory written in between, so the kernel can never finish. {self.where()}. "
                f"(No limit to raise: the loop needs a write by another thread that no thread will make.)")

    def where(self, most: int = 6) -> str:
        """Where the live threads are: 'at FILE:LINE 'ptx' (warps: block (x, y, z) warp W, ...)' per
        PC, lowest first (threads waiting at a barrier are at the barrier)."""
        live = np.flatnonzero(self.live)
        if live.size == 0:
            return "No thread is live"
        if self.converged:
            pcs = np.full(live.size, self.pc, np.int64)
        else:
            pcs = self.pcs[live]
            pcs = np.where(self.waiting[live], self.bar_pc[live], np.where(pcs == PARKED, self.parked_pc[live], pcs))
            pcs = pcs.astype(np.int64)
        n = len(self.instrs)
        parts = []
        upcs = np.unique(pcs)
        for p in upcs[:most].tolist():
            warps = np.unique(live[pcs == p] >> 5)
            names = [f"block {self.grid.block_coords(self.block_ids[int(w) * 32 // self.tpbp])} warp "
                     f"{int(w) * 32 % self.tpbp // 32}" for w in warps[:4].tolist()]
            more = f" and {warps.size - 4} more" if warps.size > 4 else ""
            if p >= n:
                at = "past the last instruction"
            else:
                ins = self.instrs[p]
                at = f"at {ins.loc.file}:{ins.loc.line} '{ins.to_ptx()}'"
            parts.append(f"{at} (warps: {', '.join(names)}{more})")
        extra = f"; and {upcs.size - most} more PCs" if upcs.size > most else ""
        return "Warps " + "; ".join(parts) + extra

    # ---------------------------------------------------------------- faults
    def _fault(self, ins: Instr, lanes: np.ndarray | None, f: MemoryFault) -> KernelFault:
        if f.thread is not None:
            t = f.thread
        else:
            t = int(f.lane if lanes is None else lanes[f.lane]) if f.lane >= 0 else 0
        block = self.grid.block_coords(self.block_ids[self.block_of[t]])
        thread = self.grid.thread_coords(int(self.lin_tid[t]))
        return KernelFault(
            f"kernel {self.kernel.name}: {f.reason} ({f.space}, {f.size} bytes at address {f.address:#x}) "
            f"at {ins.loc.file}:{ins.loc.line} '{ins.to_ptx()}' by block {block} thread {thread}")

    # ---------------------------------------------------------------- operands
    def read(self, op, ty: str, sel: np.ndarray | None) -> np.ndarray:
        """Operand ``op`` of lanes ``sel`` as PTX type ``ty``."""
        n = self.count(sel)
        if isinstance(op, Reg):
            return self.regs.read(op, ty, sel)
        if isinstance(op, Imm):
            return immediate(op, ty, n)
        if isinstance(op, Special):
            return self.special(op, sel).astype(_dtype(ty))
        if isinstance(op, Sym):
            return np.full(n, self.symbol_address(op.name), np.uint64).astype(_dtype(ty))
        raise KernelFault(f"kernel {self.kernel.name}: operand {op} cannot be used as a .{ty} value")

    def write(self, op, value: np.ndarray, ty: str, sel: np.ndarray | None) -> None:
        """Write ``value`` (type ``ty``) to destination operand ``op``."""
        if isinstance(op, Reg):
            self.regs.write(op, value, ty, sel)
        elif op is not None:
            raise KernelFault(f"kernel {self.kernel.name}: {op} is not a register destination")

    def special(self, op: Special, sel: np.ndarray | None) -> np.ndarray:
        """Special register values (PTX ISA 9.0 chapter 10) for lanes ``sel``."""
        name, comp = op.name, op.comp
        if comp == "w" and name in ("tid", "ntid", "ctaid", "nctaid"):
            # PTX ISA 9.0 ch. 10 (%tid, %ntid, %ctaid, %nctaid): "the fourth element is unused and always returns zero"
            return np.zeros(self.count(sel), np.uint32)
        xyz = "xyz".index(comp) if comp in ("x", "y", "z") else 0

        def pick(a):
            return a if sel is None else a[sel]
        n = self.count(sel)
        if name == "tid":
            return pick(self.tid[xyz])
        if name == "ctaid":
            return pick(self.ctaid[xyz])
        if name == "ntid":
            return np.full(n, self.grid.block[xyz], np.uint32)
        if name == "nctaid":
            return np.full(n, self.grid.grid[xyz], np.uint32)
        if name == "laneid":
            return pick(self.lane)
        if name == "warpid":
            return (pick(self.lin_tid) >> 5).astype(np.uint32)
        if name == "nwarpid":
            return np.full(n, self.max_warps, np.uint32)
        if name == "smid":
            return (self.block_ids[pick(self.block_of)] % self.sm_count).astype(np.uint32)
        if name == "nsmid":
            return np.full(n, self.sm_count, np.uint32)
        if name in ("clock", "clock64", "globaltimer"):
            return np.full(n, self.steps, np.uint64 if name != "clock" else np.uint32)
        if name == "gridid":
            return np.zeros(n, np.uint64)
        if name.startswith("lanemask_"):
            lane = pick(self.lane).astype(np.uint64)
            one = np.uint64(1)
            eq = one << lane
            m = {"eq": eq, "lt": eq - one, "le": (eq << one) - one, "ge": ~(eq - one), "gt": ~((eq << one) - one)}[name[9:]]
            return (m & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        if name.startswith("reserved_smem_offset_"):
            # gpusim's layout: the reserved words follow the CTA's shared memory; _<n> is word n.
            which = name[len("reserved_smem_offset_"):]
            off = {"begin": 0, "end": RESERVED_SMEM_BYTES, "cap": RESERVED_SMEM_BYTES}.get(which)
            off = 8 * int(which) if off is None else off
            if off >= RESERVED_SMEM_BYTES and which not in ("end", "cap"):
                raise KernelFault(f"kernel {self.kernel.name}: {op} is past gpusim's {RESERVED_SMEM_BYTES} reserved bytes")
            return np.full(n, self.reserved_base + off, np.uint32)
        if name == "dynamic_smem_size":
            return np.full(n, self.shared_bytes - self.dynamic_base, np.uint32)
        if name == "total_smem_size":
            return np.full(n, self.shared_bytes, np.uint32)
        raise KernelFault(f"kernel {self.kernel.name}: special register {op} is not supported")

    def symbol_address(self, name: str) -> int:
        """The address a variable symbol stands for: its offset in its state
        space (``.shared``: offset in the CTA's shared memory; ``.local``:
        offset in the thread's local memory)."""
        var = self.kernel.variables.get(name)
        if var is None:
            raise KernelFault(f"kernel {self.kernel.name}: taking the address of parameter {name!r} is not supported")
        if var.space in ("global", "const"):
            # Module variables live in global memory; a .const address is its global address.
            addr = self.memory.symbols.get(var)
            if addr is None:
                raise KernelFault(f"kernel {self.kernel.name}: module variable {name!r} has no device address "
                                  f"(launch kernels through gpusim.RawModule, which places module variables)")
            return addr
        return self.dynamic_base if var.size is None else var.offset


def _dtype(ty: str) -> np.dtype:
    from isa.types import TYPES
    return TYPES[ty].dtype


# ---------------------------------------------------------------------- handlers
def _alu(ex: ChunkExecutor, ins: Instr, sel) -> None:
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        dst_tys, src_tys = ins.spec.sig(ins)
        if ins.contract is not None:  # an add/sub ptxas fuses with the mul feeding it
            k = ins.contract
            res = contracted(ins, *(ex.read(op, src_tys[0], g) for op in (k.a, k.b, k.c)))
        else:
            srcs = [ex.read(op, ty, g) for op, ty in zip(ins.operands[1:], src_tys)]
            res = ins.spec.fn(ins, *srcs)
        dst = ins.operands[0]
        if isinstance(res, tuple):
            if isinstance(dst, PredPair):
                ex.write(dst.first, res[0], dst_tys[0], g)
                ex.write(dst.second, res[1], dst_tys[1], g)
            else:
                ex.write(dst, res[0], dst_tys[0], g)
        else:
            ex.write(dst, res, dst_tys[0], g)
    ex.advance(sel, ins.index + 1)


def _mov(ex: ChunkExecutor, ins: Instr, sel) -> None:
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        dst, src = ins.operands
        ty = ins.ty
        if isinstance(src, Vec):  # pack: element 0 in the low bits
            parts = [ex.read(r, _raw_ty(ex, r), g) for r in src.items]
            out = np.zeros(ex.count(g), np.uint64)
            shift = 0
            for r, p in zip(src.items, parts):
                out |= p.astype(np.uint64) << np.uint64(shift)
                shift += ex.regs.bits[r.name]
            ex.write(dst, out.astype(_dtype(f"b{shift}")), f"b{shift}", g)
        elif isinstance(dst, Vec):  # unpack
            val = ex.read(src, f"b{_bits(ty)}", g).astype(np.uint64)
            shift = 0
            for r in dst.items:
                w = _bits(_raw_ty(ex, r)) if r is not None else _bits(ty) // len(dst.items)
                if r is not None:
                    part = (val >> np.uint64(shift)) & np.uint64((1 << w) - 1)
                    ex.write(r, part.astype(_dtype(f"b{w}")), f"b{w}", g)
                shift += w
        else:
            ex.write(dst, ex.read(src, ty, g), ty, g)
    ex.advance(sel, ins.index + 1)


def _bits(ty: str) -> int:
    from isa.types import TYPES
    return TYPES[ty].bits


def _raw_ty(ex: ChunkExecutor, r: Reg) -> str:
    b = ex.regs.bits[r.name]
    return "pred" if b == 1 else f"b{b}"


def _cvta(ex: ChunkExecutor, ins: Instr, sel) -> None:
    g = ex.guarded(ins, sel)
    if g is None or g.size:
        dst, src = ins.operands
        space = next(m for m in ins.mods if m != "to").split("::")[0]
        if space == "param":
            raise KernelFault(f"kernel {ex.kernel.name}: cvta for .{space} is not supported ({ins.loc})")
        a = ex.read(src, "u64", g)
        # .const addresses are global addresses in gpusim (module .const variables live in global memory).
        base = {"global": 0, "const": 0, "shared": SHARED_WINDOW, "local": LOCAL_WINDOW}[space]
        res = a - np.uint64(base) if ins.has("to") else a + np.uint64(base)
        ex.write(dst, res.astype(_dtype(ins.ty)), ins.ty, g)
    ex.advance(sel, ins.index + 1)


def _bra(ex: ChunkExecutor, ins: Instr, sel) -> None:
    target = ex.kernel.labels[ins.operands[0].name]
    ex.branch(sel, ex.guarded(ins, sel), target, ins.index + 1)


def _exit(ex: ChunkExecutor, ins: Instr, sel) -> None:
    g = ex.guarded(ins, sel)
    n_sel, n_g = ex.count(sel), ex.count(g)
    if n_g < n_sel:
        ex.advance(sel, ins.index + 1)
    ex._exit(g)


def _bar(ex: ChunkExecutor, ins: Instr, sel) -> None:
    """``bar{rier}.sync a{, b}`` and ``bar{rier}.red.{popc,and,or} d, a{, b}, {!}c`` (PTX ISA
    9.0 §9.7.13.1): barrier ``a`` (0-15) completes when ``b`` threads (a multiple of 32,
    counted per arriving warp) or, without ``b``, every live thread of the CTA arrived."""
    if ins.guard is not None:
        raise KernelFault(f"kernel {ex.kernel.name}: predicated {ins.op} is not supported ({ins.loc})")
    ops = ins.operands[1:] if ins.op.endswith(".red") else ins.operands
    value = None
    if ins.op.endswith(".red"):
        ops, pred = ops[:-1], ops[-1]
        value = ex.read(pred, "pred", sel)
    bar_id, count = ops[0], ops[1] if len(ops) > 1 else None
    if not isinstance(bar_id, Imm) or not (count is None or isinstance(count, Imm)):
        raise KernelFault(f"kernel {ex.kernel.name}: {ins.op} with a barrier id or thread count in a register "
                          f"is not supported ({ins.loc})")
    if not 0 <= int(bar_id.value) < 16 or (count is not None and (int(count.value) <= 0 or int(count.value) % 32)):
        raise KernelFault(f"kernel {ex.kernel.name}: {ins.to_ptx()} at {ins.loc}: the barrier id must be 0-15 and "
                          f"the thread count a positive multiple of the warp size (PTX ISA 9.0 §9.7.13.1)")
    ex.barrier(ins, sel, int(bar_id.value), 0 if count is None else int(count.value), value)


def _fence(ex: ChunkExecutor, ins: Instr, sel) -> None:
    if ins.op == "trap":
        g = ex.guarded(ins, sel)
        if g is None or g.size:
            t = 0 if g is None else int(g[0])
            block = ex.grid.block_coords(ex.block_ids[ex.block_of[t]])
            thread = ex.grid.thread_coords(int(ex.lin_tid[t]))
            raise KernelFault(f"kernel {ex.kernel.name}: trap executed at {ins.loc.file}:{ins.loc.line} by block "
                              f"{block} thread {thread} (the launch fails, as cudaErrorLaunchFailure on a GPU)")
    ex.advance(sel, ins.index + 1)


_HANDLERS = {
    Kind.ALU: _alu, Kind.MOV: _mov, Kind.CVTA: _cvta, Kind.BRA: _bra, Kind.EXIT: _exit,
    Kind.BAR: _bar, Kind.FENCE: _fence,
    Kind.LD: memops.load, Kind.ST: memops.store, Kind.ATOM: memops.atomic,
    Kind.SHFL: warpops.shfl, Kind.VOTE: warpops.vote, Kind.ACTIVEMASK: warpops.activemask,
    Kind.MMA: warpops.mma, Kind.CPASYNC: asyncops.cp_async, Kind.WGMMA: asyncops.wgmma,
}
