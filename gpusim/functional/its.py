"""Independent thread scheduling (Volta and later): a thread that spins lets the others run.

Owns: finding the threads of a chunk that spin in a loop -- they take a loop's backward branch
with the loop's registers exactly as they were one iteration before, so the loop waits on memory
that only another thread can change -- and the bookkeeping of parking them.

Why: the engines run the threads at the lowest PC first (:mod:`gpusim.functional.engine`), which
reconverges branches as the SIMT stack of pre-Volta GPUs did. With it, a lane that spins on a lock
or a flag that another lane of its own warp must release never lets that lane run: a livelock.
Since Volta, "the scheduler ... ensures that all threads eventually make forward progress" (CUDA
C++ Programming Guide, "Independent Thread Scheduling"; PTX ISA 9.0 §3.2 "SIMT architecture":
threads of a warp may diverge and execute independently), so a spin lock within a warp and a
flag wait between lanes work on the H100. Here a spinning thread is *parked* (its PC set to
:data:`PARKED`, above every real PC and below "done"), so the lowest-PC rule runs the other threads
first; when only parked threads are left to run, they resume. Parking changes the order in which
threads run, never what an instruction computes, so outputs of kernels that do not spin are
unchanged, and the check costs a few array operations on one backward branch in 16.

Detection is exact for the loops it targets and errs only towards parking: a thread is parked
when, at the same backward branch, one iteration apart, every register the loop's instructions
name has the same value (compared through a 64-bit hash of them). A loop that counts, accumulates
or walks a pointer changes a register every iteration and is never parked.

Imports numpy and isa only; never simpy or cupy.
"""

from __future__ import annotations

import numpy as np

from isa.ir import Addr, Kernel, PredPair, Reg, Vec

__all__ = ["PARKED", "CHECK_EVERY", "SpinDetector"]

#: The PC of a parked thread: above every instruction, below the engines' "cannot run" value.
PARKED = np.int32(np.iinfo(np.int32).max - 1)
#: A thread's loop registers are compared at one backward branch in this many (its iterations
#: 16k and 16k + 1 of any backward branch): the cost stays small, a spin is found within 17.
CHECK_EVERY = 16


def _regs_of(op) -> list[str]:
    if isinstance(op, Reg):
        return [op.name]
    if isinstance(op, Vec):
        return [r.name for r in op.items if r is not None]
    if isinstance(op, PredPair):
        return [r.name for r in (op.first, op.second) if r is not None]
    if isinstance(op, Addr) and isinstance(op.base, Reg):
        return [op.base.name]
    return []


class SpinDetector:
    """Per-thread state of the spin check for the T threads of a chunk.

    Args:
        kernel: the kernel (its instructions name the loop registers).
        T: threads of the chunk.
    """

    def __init__(self, kernel: Kernel, T: int):
        self.kernel = kernel
        self.iters = np.zeros(T, np.int32)        # backward branches taken, any loop
        self.hash = np.zeros(T, np.uint64)        # loop registers' hash at the last record
        self.at = np.full(T, -1, np.int32)        # the branch PC of that record
        self._loop_regs: dict[int, list[str]] = {}

    def loop_regs(self, pc: int, target: int) -> list[str]:
        """The registers named by the instructions ``target .. pc`` (the loop's body as laid out)."""
        regs = self._loop_regs.get(pc)
        if regs is None:
            names = {n for ins in self.kernel.instrs[target:pc + 1] for op in ins.operands for n in _regs_of(op)}
            regs = self._loop_regs[pc] = sorted(names)
        return regs

    def spinning(self, data: dict[str, np.ndarray], pc: int, target: int, lanes: np.ndarray) -> np.ndarray:
        """``lanes`` take the backward branch at ``pc`` (to ``target``); returns those of them that
        spin (int64 indices, maybe empty). ``data``: the register file's arrays by name."""
        it = self.iters[lanes] + 1
        self.iters[lanes] = it
        phase = it % CHECK_EVERY
        due = phase <= 1
        if not due.any():
            return lanes[:0]
        chk, ph = lanes[due], phase[due]
        h = np.zeros(chk.size, np.uint64)
        with np.errstate(over="ignore"):
            for name in self.loop_regs(pc, target):
                h = h * np.uint64(0x100000001B3) ^ data[name][chk].astype(np.uint64)
        second = ph == 1
        cmp = chk[second]
        spin = cmp[(self.at[cmp] == pc) & (self.hash[cmp] == h[second])]
        self.hash[chk], self.at[chk] = h, pc
        return spin

    def resume(self, lanes: np.ndarray) -> None:
        """Parked ``lanes`` resume: their next iteration is compared with the one that parked them,
        so a lane still spinning is parked again after one iteration, not after up to 17."""
        self.iters[lanes] = 0
