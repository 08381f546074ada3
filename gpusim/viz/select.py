"""Choosing one warp's execution of one memory instruction in a recording (for the diagrams).

Owns: :func:`select_access` -- from a PTX line (or automatically: the worst one), a CTA, a
warp and an instance number to the recorded :class:`~gpusim.viz.capture.WarpStep` and its
:class:`~gpusim.viz.capture.MemAccess`, with one-line errors that list what is available.

Must not import: simpy, cupy, matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.errors import GpusimError
from gpusim.memmodel import global_sectors, shared_wavefronts
from gpusim.viz.capture import MemAccess, Recording, WarpStep

__all__ = ["Selected", "select_access", "access_cost"]


@dataclass(frozen=True)
class Selected:
    """One selected access: the step, the access, and where it comes from."""

    rec: Recording
    step: WarpStep
    access: MemAccess

    @property
    def pc(self) -> int:
        return self.step.pc

    @property
    def line(self) -> int:
        return self.rec.kernel.instrs[self.step.pc].loc.line

    def describe(self) -> str:
        """``"ld.shared.f32, PTX line 138 (shared.cu:33), CTA 0 warp 1"``."""
        ins = self.rec.kernel.instrs[self.step.pc]
        cl = self.rec.cuda_line(self.step.pc)
        return (f"{ins.mnemonic}, PTX line {ins.loc.line}" + (f" ({cl})" if cl else "")
                + f", CTA {self.step.cta} warp {self.step.warp}")


def access_cost(a: MemAccess) -> int:
    """Wavefronts (shared) or 32 B sectors (global/local) of one warp access."""
    if not a.active.any():
        return 0
    if a.space == "shared":
        return int(shared_wavefronts(a.addrs, max(4, min(a.width, 16)), a.op != "st", a.active).wavefronts[0])
    return int(global_sectors(a.addrs.astype("uint64"), min(a.width, 16), a.active).sectors[0])


def _spaces(space: str) -> tuple[str, ...]:
    return ("global", "local") if space == "global" else (space,)


def _short(items, n=16) -> str:
    items = list(items)
    return ", ".join(map(str, items[:n])) + (f" ... ({len(items)} in all)" if len(items) > n else "")


def select_access(rec: Recording, space: str, line: int | None = None, cta: int | None = 0, warp: int | None = 0,
                  instance: int = 0) -> Selected:
    """The ``instance``-th execution by warp ``warp`` of CTA ``cta`` of the ``space`` access on PTX ``line``.

    Args:
        rec: a recording.
        space: ``"shared"`` or ``"global"`` (global includes local).
        line: PTX line; ``None`` picks the line whose access costs most per execution
            (wavefronts or sectors; ties: loads first, then the earliest line).
        cta, warp: linear CTA id and warp index in the CTA; ``None`` for both: the first warp
            (in recording order) that executed the line.
        instance: which execution by that warp (0 = first; loops execute a line many times).

    Returns:
        :class:`Selected`.

    Raises:
        gpusim.errors.GpusimError: no instruction of that space (names the kernel), the line
            has no such access (lists the lines that have), the warp never ran (lists the
            warps that did), or fewer executions than ``instance`` + 1 (gives the count).
    """
    spaces = _spaces(space)
    mem = [s for s in rec.steps if any(a.space in spaces for a in s.accesses)]
    lines = sorted({rec.kernel.instrs[s.pc].loc.line for s in mem})
    if not lines:
        raise GpusimError(f"{rec.label}: kernel {rec.kernel.name} executed no {space}-memory access")
    if line is None:
        best: dict[int, tuple] = {}
        for s in mem:
            a = next(a for a in s.accesses if a.space in spaces)
            key = (-access_cost(a), a.op != "ld", rec.kernel.instrs[s.pc].loc.line)
            ln = rec.kernel.instrs[s.pc].loc.line
            best[ln] = min(best.get(ln, key), key)
        line = min(best.values())[2]
    elif line not in lines:
        raise GpusimError(f"{rec.label}: PTX line {line} has no {space}-memory access; "
                          f"lines with one: {_short(lines)}")
    pcs = set(rec.pcs_of_line(line))
    if cta is None or warp is None:
        first = next(s for s in mem if s.pc in pcs)
        cta, warp = first.cta, first.warp
    ran = rec.warps_that_ran()
    if (cta, warp) not in ran:
        raise GpusimError(f"{rec.label}: CTA {cta} warp {warp} never ran; warps that ran (CTA, warp): "
                          f"{_short(ran, 12)}")
    mine = [s for s in mem if s.cta == cta and s.warp == warp and s.pc in pcs]
    if not mine:
        others = sorted({(s.cta, s.warp) for s in mem if s.pc in pcs})
        raise GpusimError(f"{rec.label}: CTA {cta} warp {warp} never executed the {space} access on PTX line "
                          f"{line}; warps that did (CTA, warp): {_short(others, 12)}")
    if not 0 <= instance < len(mine):
        raise GpusimError(f"{rec.label}: CTA {cta} warp {warp} executed PTX line {line} {len(mine)} time(s); "
                          f"choose an instance 0..{len(mine) - 1}")
    step = mine[instance]
    acc = next(a for a in step.accesses if a.space in spaces)
    return Selected(rec, step, acc)
