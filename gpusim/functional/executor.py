"""What the instruction handlers see of the executor: the launch geometry and a Protocol.

Owns: :class:`Grid` (launch geometry) and :class:`Executor`, the part of
:class:`gpusim.functional.engine.ChunkExecutor` that the memory and warp-level
instruction handlers (:mod:`gpusim.functional.memops`,
:mod:`gpusim.functional.warpops`) use. The engine imports those handlers, so
they type their ``ex`` argument with this Protocol rather than import the
engine (which would make an import circle). Imports numpy, isa and the engine's
memory and register-file modules (which import no other part of the engine).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from gpusim.functional.memory import GlobalMemory
from gpusim.functional.regfile import RegisterFile
from isa.ir import Instr, Kernel

__all__ = ["Grid", "Executor"]


@dataclass(frozen=True)
class Grid:
    """Launch geometry: ``grid`` and ``block`` as 3-tuples (x, y, z)."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def warps_per_block(self) -> int:
        return -(-self.threads_per_block // 32)

    @property
    def n_blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    def block_coords(self, linear: int) -> tuple[int, int, int]:
        linear = int(linear)
        gx, gy, _ = self.grid
        return linear % gx, linear // gx % gy, linear // (gx * gy)

    def thread_coords(self, linear: int) -> tuple[int, int, int]:
        bx, by, _ = self.block
        return linear % bx, linear // bx % by, linear // (bx * by)


class Executor(Protocol):
    """The executor state and operations instruction handlers use (see
    :class:`gpusim.functional.engine.ChunkExecutor` for their meaning).

    Lane selections ``sel`` are index arrays into the chunk's T threads, ``None``
    meaning all of them.
    """

    kernel: Kernel
    instrs: list[Instr]
    grid: Grid
    first_block: int
    block_ids: np.ndarray
    T: int
    block_of: np.ndarray
    lin_tid: np.ndarray
    lane: np.ndarray
    live: np.ndarray
    params: np.ndarray
    memory: GlobalMemory
    regs: RegisterFile
    shared: np.ndarray
    shared_bytes: int
    shared_stride: int
    local: np.ndarray
    local_stride: int
    stats: collections.Counter[str]
    accesses: list | None
    mem_plans: dict[int, tuple]
    mem_plan_bytes: int

    def read(self, op, ty: str, sel: np.ndarray | None) -> np.ndarray: ...

    def write(self, op, value: np.ndarray, ty: str, sel: np.ndarray | None) -> None: ...

    def guarded(self, ins: Instr, sel: np.ndarray | None) -> np.ndarray | None: ...

    def advance(self, sel: np.ndarray | None, pc: int) -> None: ...

    def count(self, sel: np.ndarray | None) -> int: ...

    def symbol_address(self, name: str) -> int: ...
