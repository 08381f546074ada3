"""Error types users of gpusim can see.

Owns: the exception hierarchy below the root. Every error a user can cause (bad
PTX, bad arguments, bad configuration, a faulting kernel) is a
:class:`GpusimError` subclass whose message names the place (file, line, column,
field or argument) and the rule broken::

    GpusimError                         root (defined in isa.errors, re-exported here)
    +-- PTXError     (ValueError)       malformed or unsupported PTX (isa.errors)
    +-- ConfigError  (ValueError)       a configuration file or override is invalid
    +-- LaunchError  (ValueError)       a kernel launch is impossible
    +-- KernelFault  (RuntimeError)     a kernel faulted while running

The root and :class:`PTXError` live in :mod:`isa.errors` because isa, the
lowest layer, must not import gpusim; they are the same classes here. All five
are exported from :mod:`gpusim`. Imports only :mod:`isa.errors`.
"""

from __future__ import annotations

from isa.errors import GpusimError, PTXError

__all__ = ["GpusimError", "ConfigError", "LaunchError", "KernelFault", "PTXError", "USER_ERRORS"]


class ConfigError(GpusimError, ValueError):
    """A GPU configuration file or override is invalid (names the field path)."""


class LaunchError(GpusimError, ValueError):
    """A kernel launch is impossible (like CUDA's launch-time errors)."""


class KernelFault(GpusimError, RuntimeError):
    """A kernel faulted while running (out-of-bounds/misaligned access, deadlock)."""


#: Every exception type that reports a user's mistake (catch these, not Exception).
#: Kept for compatibility: every such error is now a :class:`GpusimError`.
USER_ERRORS: tuple[type[Exception], ...] = (GpusimError,)
