"""The root of gpusim's error hierarchy, and the error raised for PTX text
gpusim cannot read or does not support.

Owns: :class:`GpusimError` (the base class of every error gpusim reports to its
users) and :class:`PTXError`. The root lives here, in the lowest layer, so that
isa can raise errors of the one hierarchy without importing gpusim: isa must
stay usable without gpusim (it needs only numpy and lark), and this module
imports only the standard library. :mod:`gpusim.errors` re-exports both and
defines the other errors under :class:`GpusimError`::

    GpusimError (Exception)
    +-- PTXError     (also ValueError)     isa: malformed or unsupported PTX
    +-- ConfigError  (also ValueError)     gpusim.errors
    +-- LaunchError  (also ValueError)     gpusim.errors
    +-- KernelFault  (also RuntimeError)   gpusim.errors
"""

from __future__ import annotations

__all__ = ["GpusimError", "PTXError"]


class GpusimError(Exception):
    """Base class of every error gpusim reports to its users (catch this, not Exception).

    Defined in :mod:`isa.errors` so that :class:`PTXError` can derive from it
    without isa importing gpusim; use it as ``gpusim.GpusimError``.
    """


class PTXError(GpusimError, ValueError):
    """Malformed or unsupported PTX.

    Attributes:
        file, line, column: where (1-based); ``line``/``column`` may be 0 when
            the problem is not tied to one place.
        reason: the rule broken, without the location.
    """

    def __init__(self, file: str, line: int, column: int, reason: str, source_line: str | None = None):
        self.file, self.line, self.column, self.reason = file, line, column, reason
        msg = f"{file}:{line}:{column}: {reason}"
        if source_line is not None and line > 0:
            msg += f"\n    {source_line.rstrip()}\n    {' ' * max(0, column - 1)}^"
        super().__init__(msg)
