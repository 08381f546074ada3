"""The error raised for PTX text gpusim cannot read or does not support.

Owns: :class:`PTXError`. Imports only the standard library: isa must stay
usable without gpusim (``gpusim.errors.USER_ERRORS`` includes this class).
"""

from __future__ import annotations

__all__ = ["PTXError"]


class PTXError(ValueError):
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
