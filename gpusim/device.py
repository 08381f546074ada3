"""The simulated device: a GPU configuration, an engine mode and global memory.

Owns: :class:`Device` (usable as a context manager, like ``cupy.cuda.Device``)
and the notion of the *current* device that array creation and launches use.
Imports gpusim.config and the functional memory; never simpy or cupy.
"""

from __future__ import annotations

from typing import Any, Mapping

from gpusim import config as _config
from gpusim.errors import GpusimError
from gpusim.functional.memory import GlobalMemory

__all__ = ["Device", "get_device", "MODES"]

#: Engine modes. ``"timing"`` (the SimPy timing model) arrives with issue 4.
MODES = ("functional",)

_stack: list["Device"] = []
_default: "Device | None" = None


class Device:
    """A simulated GPU.

    Args:
        gpu: a configuration name (``"h100"``, ``"a100"``, ...; see
            :func:`gpusim.config.available`), a path to a TOML file, or a
            :class:`gpusim.config.GPUConfig`.
        mode: the engine: ``"functional"`` computes results and instruction
            counts.
        overrides: what-if changes to the configuration, by dotted field path
            (``{"sm.max_warps": 48}``).
        max_steps: a launch that needs more instruction steps than this per
            chunk of CTAs is reported as hung (a spin loop, a missed exit).

    Raises:
        gpusim.errors.ConfigError: unknown configuration or bad override.
        gpusim.errors.GpusimError: unknown mode.

    ``with gpusim.Device("a100"):`` makes it the current device: arrays created
    and kernels launched inside the block use it.
    """

    def __init__(self, gpu: str | Any = _config.DEFAULT, mode: str = "functional", *,
                 overrides: Mapping[str, Any] | None = None, max_steps: int = 5_000_000):
        if mode not in MODES:
            if mode == "timing":
                raise GpusimError("mode='timing' is not available yet: the SimPy timing engine is a later "
                                  "milestone; use mode='functional'")
            raise GpusimError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        cfg = gpu if isinstance(gpu, _config.GPUConfig) else _config.load(gpu)
        if overrides:
            cfg = cfg.with_overrides(dict(overrides))
        if int(max_steps) < 1:
            raise GpusimError(f"max_steps must be a positive integer, got {max_steps!r}")
        self.config = cfg
        self.mode = mode
        self.max_steps = int(max_steps)
        self.memory = GlobalMemory()

    def __enter__(self) -> "Device":
        _stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _stack.remove(self)

    def use(self) -> "Device":
        """Make this the default device outside any ``with`` block; returns it."""
        global _default
        _default = self
        return self

    def __repr__(self) -> str:
        return f"<gpusim.Device {self.config.name} mode={self.mode}>"


def get_device() -> Device:
    """The current device: the innermost ``with Device(...)``, else the default
    (created on first use with the ``h100`` configuration)."""
    global _default
    if _stack:
        return _stack[-1]
    if _default is None:
        _default = Device()
    return _default
