"""The timing model's discrete-event loop: :class:`EventLoop`, what the SMs' warp schedulers
and the CTA dispatcher wait on (one time unit = one SM cycle).

Owns: the order in which things that happen in the same cycle run. It is SimPy's order
(``simpy.Environment`` with ``NORMAL`` timeouts and ``URGENT`` interrupts and process starts),
which the engine used before and whose cycles the golden runs (``tests/timing/golden.py``)
pin: events of one cycle run in the order they were scheduled, and an *urgent* event (a woken
scheduler, a process start; scheduled for the current cycle only) runs before the cycle's
remaining ordinary events. Without SimPy's event objects, callbacks and generator
trampolines, one scheduled wake-up costs a list append instead of about ten Python calls.

Events are ``(fn, arg)`` pairs run as ``fn(arg)``; stale wake-ups (a sleeping scheduler
woken earlier) are told apart by the callee (:class:`gpusim.timing.sm.Scheduler` passes a
token). :class:`Process` drives a generator that yields cycle counts to wait (the dispatcher).

Imports only the standard library; never simpy, numpy, cupy or another timing module.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator
from heapq import heappop, heappush
from typing import Any

__all__ = ["EventLoop", "Process"]


class EventLoop:
    """Cycles and the events scheduled at them.

    Attributes:
        now: the current cycle (int).
        stopped: set by :meth:`stop`; :meth:`run` returns after the event that set it.
        buckets: cycle -> its ordinary events, in the order scheduled, for the cycles after
            :attr:`now`; ``times``: a heap of those cycles. :meth:`at` for a later cycle is
            ``buckets.setdefault(t, [])`` (pushing ``t`` on ``times`` when new) and an append: the
            warp schedulers inline it (:meth:`gpusim.timing.sm.Scheduler._run`).
    """

    __slots__ = ("now", "stopped", "buckets", "times", "_urgent", "_cur", "_i")

    def __init__(self) -> None:
        self.now = 0
        self.stopped = False
        self.buckets: dict[int, list] = {}  # cycle -> its ordinary events, in the order scheduled
        self.times: list[int] = []          # heap of the cycles in buckets (but the current one)
        self._urgent: deque = deque()        # urgent events of the current cycle, in order
        self._cur: list = []                 # the current cycle's ordinary events
        self._i = 0                          # how many of them have run

    def at(self, t: int, fn: Callable[[Any], Any], arg: Any = None) -> None:
        """Run ``fn(arg)`` at cycle ``t`` (>= :attr:`now`), after the events already scheduled then."""
        if t == self.now:
            self._cur.append((fn, arg))
            return
        b = self.buckets.get(t)
        if b is None:
            self.buckets[t] = b = []
            heappush(self.times, t)
        b.append((fn, arg))

    def urgent(self, fn: Callable[[Any], Any], arg: Any = None) -> None:
        """Run ``fn(arg)`` in the current cycle, before its remaining ordinary events (after the
        urgent ones already scheduled)."""
        self._urgent.append((fn, arg))

    def stop(self) -> None:
        """Make :meth:`run` return after the current event."""
        self.stopped = True

    def peek(self) -> float:
        """The cycle of the next event (``inf`` if none is scheduled)."""
        if self._urgent or self._i < len(self._cur):
            return self.now
        return self.times[0] if self.times else float("inf")

    def run(self, until: int) -> None:
        """Run events until :meth:`stop` is called, or up to (not including) cycle ``until``, when
        :attr:`now` becomes ``until``."""
        urgent, times, buckets = self._urgent, self.times, self.buckets
        cur, i = self._cur, self._i
        try:
            while not self.stopped:
                if urgent:
                    fn, arg = urgent.popleft()
                    fn(arg)
                elif i < len(cur):
                    fn, arg = cur[i]
                    i += 1
                    fn(arg)
                else:
                    if not times or times[0] >= until:
                        if self.now < until:
                            self.now = until
                            self._cur = cur = []
                            i = 0
                        break
                    t = heappop(times)
                    cur = buckets.pop(t)
                    self._cur, i = cur, 0
                    self.now = t
        finally:
            self._i = i


class Process:
    """Drives ``gen``, a generator that yields how many cycles to wait (ints >= 1) until it
    returns. It starts with an urgent event of the current cycle (as a SimPy process does).

    Attributes:
        triggered: whether the generator has returned.
    """

    __slots__ = ("loop", "gen", "triggered")

    def __init__(self, loop: EventLoop, gen: Generator[int, None, None]):
        self.loop, self.gen, self.triggered = loop, gen, False
        loop.urgent(self._resume)

    def _resume(self, _arg: Any) -> None:
        try:
            delay = next(self.gen)
        except StopIteration:
            self.triggered = True
            return
        loop = self.loop
        loop.at(loop.now + delay, self._resume)
