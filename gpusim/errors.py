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
    +-- CompileError (ValueError)       NVRTC rejected CUDA C source (carries its log)
    +-- ArrayIndexError (IndexError)    an array index out of range or of a wrong kind (like CuPy's IndexError)
    +-- OutOfMemoryError (MemoryError)  an allocation beyond the device's memory (cudaErrorMemoryAllocation)

The root and :class:`PTXError` live in :mod:`isa.errors` because isa, the
lowest layer, must not import gpusim; they are the same classes here. All of them
are exported from :mod:`gpusim`. Imports only :mod:`isa.errors`.
"""

from __future__ import annotations

from isa.errors import GpusimError, PTXError

__all__ = ["GpusimError", "ConfigError", "LaunchError", "KernelFault", "CompileError", "PTXError", "ArrayIndexError",
           "OutOfMemoryError", "USER_ERRORS"]


class ConfigError(GpusimError, ValueError):
    """A GPU configuration file or override is invalid (names the field path)."""


class LaunchError(GpusimError, ValueError):
    """A kernel launch is impossible (like CUDA's launch-time errors)."""


class KernelFault(GpusimError, RuntimeError):
    """A kernel faulted while running (out-of-bounds/misaligned access, deadlock)."""


class CompileError(GpusimError, ValueError):
    """CUDA C source did not compile (like ``cupy.cuda.compiler.CompileException``).

    Attributes:
        log: the compiler's log, whose lines name the source as ``file(line): error: ...``.
        options: the options the compiler received.
    """

    def __init__(self, message: str, *, log: str = "", options: tuple[str, ...] = ()):
        super().__init__(message)
        self.log, self.options = log, options


class ArrayIndexError(GpusimError, IndexError):
    """An array index out of range, or of a kind arrays do not take (names the index and the axis);
    an ``IndexError`` too, as CuPy and numpy raise."""


class OutOfMemoryError(GpusimError, MemoryError):
    """An allocation does not fit in the device's memory (``cudaErrorMemoryAllocation``); a
    ``MemoryError`` too, as ``cupy.cuda.memory.OutOfMemoryError`` is."""


#: Every exception type that reports a user's mistake (catch these, not Exception).
#: Kept for compatibility: every such error is now a :class:`GpusimError`.
USER_ERRORS: tuple[type[Exception], ...] = (GpusimError,)
