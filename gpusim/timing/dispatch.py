"""The CTA dispatcher of the timing model: the GPU's block scheduler.

Owns: which CTA of the grid starts next, on which SM, and when. CTAs are placed like the
hardware's block scheduler does: after the launch overhead (``launch_overhead_cycles``, MEAS
on the H100) first one per SM in SM order, round after round, up to the occupancy limit
(``blocks_per_sm``: :func:`gpusim.occupancy.max_active_blocks`, the ``cuda_occupancy.h``
algorithm); afterwards each finished CTA's SM takes the next CTA of the grid
``sm.cta_launch_cycles`` later, so a grid larger than one wave runs in waves. The block
scheduler dispatches one CTA per ``cta_dispatch_cycles`` GPU-wide (MEAS on the H100), which
bounds grids of many short CTAs. The CTA is reserved when its SM is chosen (so no CTA starts
twice or past the grid) and started, after the waits, by the ``start`` callback the launch
gives (:meth:`gpusim.timing.gpu.Launch` builds the CTA's warps on the SM).

It does not know what a CTA executes or when it retires (the SM tells the launch, which
calls :meth:`CTADispatcher.refill`). Imports numpy and the timing package's ``eventloop`` only;
never simpy or cupy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from gpusim.timing.eventloop import EventLoop, Process

__all__ = ["CTADispatcher"]


class CTADispatcher:
    """The block scheduler of one launch.

    Args:
        env: the launch's event loop (:class:`gpusim.timing.eventloop.EventLoop`, cycles).
        cfg: the GPU configuration (``launch_overhead_cycles``, ``cta_dispatch_cycles``,
            ``sm.cta_launch_cycles``; cycles).
        blocks_per_sm: CTAs resident per SM at most (the launch's occupancy, >= 1).
        blocks: the CTAs to run, linear ids in increasing order.
        start: ``start(sm, block, now)`` makes CTA ``block`` resident on ``sm`` at cycle ``now``.

    Attributes:
        next_block: how many of ``blocks`` have been reserved for an SM so far.
        limit: how many of ``blocks`` are dispatched in all (the sampler,
            :mod:`gpusim.timing.sampling`, may lower it while the launch runs).
        free: the cycle (possibly fractional) the block scheduler may dispatch the next CTA.
    """

    def __init__(self, env: EventLoop, cfg: Any, blocks_per_sm: int, blocks: np.ndarray,
                 start: Callable[[Any, int, int], None]):
        self.env, self.blocks, self.blocks_per_sm, self._start = env, blocks, blocks_per_sm, start
        self.overhead = cfg.launch_overhead_cycles
        self.interval = cfg.cta_dispatch_cycles
        self.relaunch = cfg.sm.cta_launch_cycles
        self.next_block = 0
        self.limit = len(blocks)
        self.free = 0.0

    def take(self) -> int:
        """Reserve the next CTA to run for an SM; returns its linear id."""
        b = int(self.blocks[self.next_block])
        self.next_block += 1
        return b

    def _slot(self):
        """Wait for the block scheduler: it dispatches one CTA every ``cta_dispatch_cycles`` GPU-wide,
        so the CTAs of a wave start one after another."""
        t = max(float(self.env.now), self.free)
        self.free = t + self.interval
        wait = int(np.ceil(t)) - self.env.now
        if wait > 0:
            yield wait

    def first_wave(self, sms: Iterable[Any]):
        """A process (:class:`gpusim.timing.eventloop.Process`): after the launch overhead, fill every SM of ``sms`` up to
        ``blocks_per_sm`` CTAs, one CTA per SM per round, at the block scheduler's rate."""
        sms = list(sms)
        yield self.overhead
        for _ in range(self.blocks_per_sm):
            for sm in sms:
                if self.next_block < self.limit:
                    b = self.take()
                    yield from self._slot()
                    self._start(sm, b, self.env.now)

    def refill(self, sm: Any) -> bool:
        """A CTA of ``sm`` retired: reserve the next CTA for it and start it ``sm.cta_launch_cycles``
        later (and after the block scheduler's wait). Returns False when no CTA is left to
        dispatch (``next_block == limit``)."""
        if self.next_block >= self.limit:
            return False
        Process(self.env, self._delayed_start(sm, self.take()))
        return True

    def _delayed_start(self, sm: Any, b: int):
        yield self.relaunch
        yield from self._slot()
        self._start(sm, b, self.env.now)
