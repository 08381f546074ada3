"""Error types users of gpusim can see.

Owns: the exception hierarchy. Every error a user can cause (bad PTX, bad
arguments, bad configuration, a faulting kernel) is a :class:`GpusimError`
subclass whose message names the place (file, line, column, field or argument)
and the rule broken; malformed or unsupported PTX raises
:class:`isa.errors.PTXError`, which :data:`USER_ERRORS` adds. Imports only
:mod:`isa.errors`.
"""

from __future__ import annotations

from isa.errors import PTXError

__all__ = ["GpusimError", "ConfigError", "LaunchError", "KernelFault", "PTXError", "USER_ERRORS"]


class GpusimError(Exception):
    """Base class of every error gpusim reports to its users."""


class ConfigError(GpusimError, ValueError):
    """A GPU configuration file or override is invalid (names the field path)."""


class LaunchError(GpusimError, ValueError):
    """A kernel launch is impossible (like CUDA's launch-time errors)."""


class KernelFault(GpusimError, RuntimeError):
    """A kernel faulted while running (out-of-bounds/misaligned access, deadlock)."""


#: Every exception type that reports a user's mistake (catch these, not Exception).
USER_ERRORS = (GpusimError, PTXError)
