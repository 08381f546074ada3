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

#: Engine modes: ``"functional"`` (results and instruction counts) and ``"timing"``
#: (the SimPy cycle model of :mod:`gpusim.timing`, which also computes the results).
MODES = ("functional", "timing")

_stack: list["Device"] = []
_default: "Device | None" = None


class Device:
    """A simulated GPU.

    Args:
        gpu: a configuration name (``"h100"``, ``"a100"``, ...; see
            :func:`gpusim.config.available`), a path to a TOML file, or a
            :class:`gpusim.config.GPUConfig`.
        mode: the engine: ``"functional"`` computes results and instruction
            counts; ``"timing"`` also simulates every SM cycle by cycle and
            reports cycles, stall reasons and cache counters (slower: about
            10^4 to 10^5 warp instructions per second).
        overrides: what-if changes to the configuration, by dotted field path
            (``{"sm.max_warps": 48}``).
        max_steps: a launch that needs more instruction steps than this per
            chunk of CTAs is reported as hung (a spin loop, a missed exit).
        max_cycles: timing mode: a launch still running after this many SM
            cycles is reported as hung, naming its waiting warps and their PCs.
        record_events: timing mode: keep one event per issued warp instruction
            in the launch result (for timelines).
        sampling: timing mode: ``True`` (default) times large grids from a slice of SMs and
            waves (:mod:`gpusim.timing.sampling`; results and instruction counters stay exact,
            ``result.sampling`` says what was simulated), ``False`` simulates every CTA on every
            SM, or a :class:`gpusim.timing.Policy` for other slice sizes and tolerances.
        regs_per_thread: registers per thread for the occupancy of timing-mode
            launches; ``None`` asks ``ptxas -v`` (see :mod:`gpusim.ptxas`) and,
            where there is no ptxas, assumes 32 with a warning.
        sass: ``True`` (default): instructions cost what ptxas makes of them
            (:mod:`gpusim.sass`: one issue cycle per SASS instruction, expansion
            latencies), and ``smsp__inst_executed.sum`` counts SASS-equivalent
            instructions as the hardware does (the PTX count is
            ``gpusim__ptx_inst_executed.sum``); ``False``: one issue cycle and one
            count per PTX instruction.

    Raises:
        gpusim.errors.ConfigError: unknown configuration or bad override.
        gpusim.errors.GpusimError: unknown mode.

    ``with gpusim.Device("a100"):`` makes it the current device: arrays created
    and kernels launched inside the block use it.
    """

    def __init__(self, gpu: str | Any = _config.DEFAULT, mode: str = "functional", *,
                 overrides: Mapping[str, Any] | None = None, max_steps: int = 5_000_000,
                 max_cycles: int = 50_000_000, record_events: bool = False, regs_per_thread: int | None = None,
                 sampling: Any = True, sass: bool = True):
        if mode not in MODES:
            raise GpusimError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        cfg = gpu if isinstance(gpu, _config.GPUConfig) else _config.load(gpu)
        if overrides:
            cfg = cfg.with_overrides(dict(overrides))
        if int(max_steps) < 1:
            raise GpusimError(f"max_steps must be a positive integer, got {max_steps!r}")
        if int(max_cycles) < 1:
            raise GpusimError(f"max_cycles must be a positive integer, got {max_cycles!r}")
        if regs_per_thread is not None and not 1 <= int(regs_per_thread) <= cfg.sm.max_registers_per_thread:
            raise GpusimError(f"regs_per_thread must be 1..{cfg.sm.max_registers_per_thread} on {cfg.name}, "
                              f"got {regs_per_thread!r}")
        self.config = cfg
        self.mode = mode
        self.max_steps = int(max_steps)
        self.max_cycles = int(max_cycles)
        self.record_events = bool(record_events)
        # Checked by name: importing gpusim.timing here would load SimPy for functional-mode users.
        if not isinstance(sampling, bool) and type(sampling).__name__ != "Policy":
            raise GpusimError(f"sampling must be True, False or a gpusim.timing.Policy, got {sampling!r}")
        self.sampling = sampling
        self.regs_per_thread = None if regs_per_thread is None else int(regs_per_thread)
        if not isinstance(sass, bool):
            raise GpusimError(f"sass must be True or False, got {sass!r}")
        self.sass = sass
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
