"""What the timing model's SMs see of the launch they run: :class:`LaunchContext`.

Owns: the one type that :mod:`gpusim.timing.sm` (the SMs) and :mod:`gpusim.timing.gpu` (the
launch driver, which implements it as :class:`gpusim.timing.gpu.Launch`) both name, so that
``sm`` needs nothing of ``gpu`` and the two modules import in one direction only
(``gpu`` -> ``sm`` -> ``context``).

Imports only ``typing`` and ``collections.abc`` at run time (the annotated types are
imported for type checkers only); never simpy,
numpy or cupy, and no other timing module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from gpusim.config import GPUConfig
    from gpusim.functional.engine import Grid
    from gpusim.timing.decode import Timed
    from gpusim.timing.eventloop import EventLoop
    from gpusim.timing.memsys import MemorySystem
    from isa.ir import Kernel

__all__ = ["LaunchContext"]


class LaunchContext(Protocol):
    """One kernel launch, as its SMs use it.

    Attributes:
        env: the event loop (:class:`gpusim.timing.eventloop.EventLoop`; one time unit = one SM cycle).
        cfg: the GPU configuration.
        kernel, grid: the kernel and its launch shape.
        timed: per PC, the decoded timing of the instruction (:mod:`gpusim.timing.decode`);
            one more entry for the end of the kernel.
        order, block, region_end, overtaken: per PC, ptxas's issue order inside straight-line
            regions, the region, whether the PC ends one, and whether a later PC of its region
            was scheduled before it (empty without a SASS listing).
        in_order: per PC and the implicit return, whether a warp with no candidates
            (:meth:`gpusim.timing.sm.SM._sass_next`) at it issues it next (the region's end, or
            no later PC of the region overtakes it).
        plans: a cache the SMs fill (:meth:`gpusim.timing.sm.SM._plan`), per region entry PC.
        mem: the global-memory hierarchy (:class:`gpusim.timing.memsys.MemorySystem`).
        stalls: per PC, warp-cycles per stall reason (``gpusim.timing.sm.REASONS`` order).
        events: the issue log (``None`` when not recorded).
        branches, divergent_branches: branch instructions issued, and those whose threads
            went both ways.
        on_global_access: the sampler's hook, ``on_global_access(cta, j)`` or ``None``.
        on_back_edge: the loop sampler's hook (:mod:`gpusim.timing.itersampling`),
            ``on_back_edge(warp, cycle, pc)`` after a warp issued a branch at ``pc`` that took it
            back to a PC no later (a loop's back edge), or ``None``.
        aggregated_atoms: PCs of the atomics ptxas warp-aggregates
            (:func:`gpusim.timing.decode.aggregated_atoms`).
    """

    env: EventLoop
    cfg: GPUConfig
    kernel: Kernel
    grid: Grid
    timed: list[Timed]
    order: Any
    block: Any
    region_end: list
    overtaken: list
    in_order: list
    plans: dict
    mem: MemorySystem
    stalls: list
    events: list | None
    branches: int
    divergent_branches: int
    on_global_access: Callable | None
    on_back_edge: Callable | None
    aggregated_atoms: frozenset[int]

    def cta_done(self, sm: Any, cta: Any, now: int) -> None:
        """Called by ``sm`` when the last warp of ``cta`` exits at cycle ``now``."""
