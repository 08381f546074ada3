"""Warp-scheduler selection policies of the timing model, one class per policy,
chosen by name from ``sm.scheduler.policy`` of the configuration.

Owns: the order in which one warp scheduler (SM sub-partition) considers its
warps for issue each cycle, and the registry of policies by name
(:func:`register_policy`, :func:`make_policy`). It does not decide whether a
warp *can* issue (operands, pipes, queues: :class:`gpusim.timing.sm.Scheduler`);
the scheduler issues the first warp of the policy's order that can.

A policy is a class with ``__init__(self, cfg)`` (the :class:`gpusim.config.GPUConfig`)
and ``order(self, warps, last) -> list``: ``warps`` are the scheduler's resident
warps, oldest first (the list itself: do not modify it), and ``last`` the warp it
issued last (``None`` before the first issue; it may have exited, ``last.done``).
Every scheduler gets its own instance, so a policy may keep state. ``order`` runs
once per scheduler per issue attempt, so keep it cheap; a policy whose order depends on
``(warps, last)`` alone sets ``cached = True``, and the scheduler then asks it once per warp
and change of its warps. Warps carry ``cta`` (their CTA: the same object for warps of one CTA).

Imports nothing of gpusim but :mod:`gpusim.errors` (the policies see warps only
through their ``done`` and ``cta`` attributes); never simpy or cupy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpusim.errors import ConfigError

__all__ = ["GTO", "LRR", "OldestCTA", "SchedulerPolicy", "TwoLevel", "make_policy", "policy_names",
           "register_policy"]


class SchedulerPolicy:
    """Base class of a warp selection policy (see the module docstring for the contract).

    Args:
        cfg: the GPU configuration (:class:`gpusim.config.GPUConfig`); policies read their
            parameters from it (e.g. ``cfg.sm.scheduler.group_warps``).
    """

    #: the order is a function of ``(warps, last)`` alone (the scheduler may keep it)
    cached = False

    def __init__(self, cfg: Any):
        self.cfg = cfg

    def order(self, warps: list, last: Any) -> list:
        """The scheduler's warps in the order it tries them this cycle (the first that can issue
        issues). Default: oldest first."""
        return warps


class GTO(SchedulerPolicy):
    """Greedy then oldest: the last issued warp while it can issue, then the others oldest first
    (Rogers et al., MICRO 2012). A model choice, not a hardware fact."""

    cached = True

    def order(self, warps: list, last: Any) -> list:
        return ([last] + warps) if last is not None and not last.done else warps


class LRR(SchedulerPolicy):
    """Loose round robin: from the warp after the last issued one, wrapping around."""

    cached = True

    def order(self, warps: list, last: Any) -> list:
        if last is None or last.done or last not in warps:
            return warps
        i = warps.index(last) + 1
        return warps[i:] + warps[:i]


class TwoLevel(SchedulerPolicy):
    """Two-level round robin (Narasiman et al., MICRO 2011): round robin inside the fetch group
    of ``sm.scheduler.group_warps`` warps holding the last issued warp, moving to the next group
    only when no warp of the current one can issue."""

    cached = True

    def __init__(self, cfg: Any):
        super().__init__(cfg)
        self.size = cfg.sm.scheduler.group_warps

    def order(self, warps: list, last: Any) -> list:
        if last is None or last.done or last not in warps:
            return warps
        i = warps.index(last) + 1
        size = self.size
        g = (i - 1) // size
        lo, hi = g * size, min(len(warps), (g + 1) * size)
        group = warps[lo:hi]
        j = i - lo
        return group[j:] + group[:j] + warps[hi:] + warps[:lo]


class OldestCTA(SchedulerPolicy):
    """The oldest CTA's warps first, round robin among a CTA's warps: from the warp after the last
    issued one inside its CTA; the warps of older CTAs before them, of younger ones after.

    Measured on the H100 (``validation/probes/lds_width.py``, clock stamps of 8 CTAs of 256 threads
    an SM): under an issue-bound ``FFMA`` loop an SM's CTAs end one after another in the order they
    started (97.6k to 627.7k cycles; the youngest starts its loop 98k cycles late), and the warps of
    one CTA together; one CTA's warps alone interleave (``xu_pipe.py``: warp 0's span is its CTA's
    whole time), as round robin gives."""

    cached = True

    def order(self, warps: list, last: Any) -> list:
        if last is None or last.done or last not in warps:
            return warps
        i = warps.index(last)
        cta = last.cta
        lo, hi = i, i + 1
        while lo > 0 and warps[lo - 1].cta is cta:
            lo -= 1
        while hi < len(warps) and warps[hi].cta is cta:
            hi += 1
        j = i + 1
        return warps[:lo] + warps[j:hi] + warps[lo:j] + warps[hi:]


_POLICIES: dict[str, Callable[[Any], SchedulerPolicy]] = {"gto": GTO, "lrr": LRR, "two_level": TwoLevel,
                                                          "oldest_cta": OldestCTA}


def register_policy(name: str, cls: Callable[[Any], SchedulerPolicy]) -> None:
    """Make ``cls`` the policy that ``sm.scheduler.policy = name`` selects (replacing any policy of
    that name). ``cls(cfg)`` must return an object with the ``order(warps, last)`` method of
    :class:`SchedulerPolicy`."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a scheduler policy name must be a non-empty string, got {name!r}")
    if not callable(cls):
        raise TypeError(f"scheduler policy {name!r}: {cls!r} is not a class (or a callable taking the config)")
    _POLICIES[name] = cls


def policy_names() -> list[str]:
    """The registered policy names, sorted."""
    return sorted(_POLICIES)


def make_policy(cfg: Any) -> SchedulerPolicy:
    """A new instance of the policy ``cfg.sm.scheduler.policy`` names.

    Raises:
        gpusim.errors.ConfigError: no policy of that name is registered (the message names the
            field and lists the registered names).
    """
    name = cfg.sm.scheduler.policy
    cls = _POLICIES.get(name)
    if cls is None:
        raise ConfigError(f"{cfg.name}: sm.scheduler.policy = {name!r} is not a registered scheduler policy; "
                          f"known policies: {', '.join(policy_names())} "
                          f"(gpusim.timing.policies.register_policy adds one)")
    return cls(cfg)
