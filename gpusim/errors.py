"""Error types users of gpusim can see.

Owns: the exception hierarchy. Every error a user can cause (bad PTX, bad
arguments, bad configuration, a faulting kernel) is a :class:`GpusimError`
subclass whose message names the place (file, line, column, field or argument)
and the rule broken. Imports nothing from gpusim.
"""

from __future__ import annotations

__all__ = ["GpusimError", "ConfigError", "LaunchError", "KernelFault"]


class GpusimError(Exception):
    """Base class of every error gpusim reports to its users."""


class ConfigError(GpusimError, ValueError):
    """A GPU configuration file or override is invalid (names the field path)."""


class LaunchError(GpusimError, ValueError):
    """A kernel launch is impossible (like CUDA's launch-time errors)."""


class KernelFault(GpusimError, RuntimeError):
    """A kernel faulted while running (out-of-bounds/misaligned access, deadlock)."""
