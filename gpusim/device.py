"""The simulated device: a GPU configuration, an engine mode and global memory.

Owns: :class:`Device` (usable as a context manager, like ``cupy.cuda.Device``)
and the notion of the *current* device that array creation and launches use.
Imports gpusim.config and the functional memory; never simpy or cupy.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

from gpusim import config as _config
from gpusim.errors import ConfigError, GpusimError
from gpusim.functional.memory import GlobalMemory
from gpusim.functional.parallel import default_jobs, parse_jobs

__all__ = ["Device", "get_device", "MODES", "MAX_STEPS", "MAX_CYCLES"]

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
        max_steps: the watchdog's step budget: a launch that needs more instruction steps
            than this per chunk of CTAs (functional mode; the functional run-ahead of timing
            mode too) is stopped with a :class:`~gpusim.errors.KernelFault` naming the PTX
            lines and warps; ``0`` or ``None``: unlimited. Default :data:`MAX_STEPS`.
        max_cycles: timing mode: the watchdog's cycle budget: a launch still running after
            this many SM cycles is stopped likewise; ``0`` or ``None``: unlimited. Default
            :data:`MAX_CYCLES`. Whatever the budgets, a launch whose state repeats exactly
            with no memory written in between (``loop: bra loop;``, a spin on a flag no
            thread sets) is stopped within about a second (:mod:`gpusim.functional.watchdog`).
        record_events: timing mode: keep one event per issued warp instruction
            in the launch result (for timelines).
        sampling: timing mode: ``True`` (default) times large grids from a slice of SMs and
            waves (:mod:`gpusim.timing.sampling`) and the long main loop of smaller ones from its
            first iterations (:mod:`gpusim.timing.itersampling`); results and instruction counters
            stay exact, ``result.sampling`` says what was simulated. ``False`` simulates every
            instruction of every CTA on every SM; a :class:`gpusim.timing.Policy` sets slice
            sizes and tolerances (``Policy(iterations=False)``: no loop sampling).
        regs_per_thread: registers per thread for the occupancy of timing-mode
            launches; ``None`` asks ``ptxas -v`` (see :mod:`gpusim.ptxas`) and,
            where there is no ptxas, assumes 32 with a warning.
        sass: ``True`` (default): instructions cost what ptxas makes of them
            (:mod:`gpusim.sass`: one issue cycle per SASS instruction, expansion
            latencies), and ``smsp__inst_executed.sum`` counts SASS-equivalent
            instructions as the hardware does (the PTX count is
            ``gpusim__ptx_inst_executed.sum``); ``False``: one issue cycle and one
            count per PTX instruction.
        jobs: worker processes that run a launch's CTAs (functional mode, and the functional run
            of a sampled timing launch; :mod:`gpusim.functional.parallel`): outputs, counters and
            cycles are identical whatever the number; kernels whose CTAs may communicate (global
            atomics, fences, volatile or acquire/release accesses, clock reads) and small launches
            run in this process, and ``result.parallel`` says which path a launch took. ``None``
            (default): the environment variable ``GPUSIM_JOBS``, else 1 (workers are processes: a
            script, notebook or sweep gets them only when it asks). Needs Linux (fork); elsewhere 1.

    Raises:
        gpusim.errors.ConfigError: unknown configuration or bad override.
        gpusim.errors.GpusimError: unknown mode; ``jobs`` (or ``GPUSIM_JOBS``) not an integer >= 1.

    ``with gpusim.Device("a100"):`` makes it the current device: arrays created
    and kernels launched inside the block use it.
    """

    def __init__(self, gpu: str | Any = _config.DEFAULT, mode: str = "functional", *,
                 overrides: Mapping[str, Any] | None = None, max_steps: int | None = None,
                 max_cycles: int | None = None, record_events: bool = False, regs_per_thread: int | None = None,
                 sampling: Any = True, sass: bool = True, jobs: int | None = None):
        if not isinstance(mode, str) or mode not in MODES:
            raise GpusimError(f"Device(mode=...): unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        if not isinstance(gpu, (str, os.PathLike, _config.GPUConfig)):
            raise ConfigError(f"Device(gpu): expected a configuration name ({', '.join(_config.available())}), the "
                              f"path of a .toml file or a gpusim.config.GPUConfig, got {type(gpu).__name__} {gpu!r}")
        if overrides is not None and not isinstance(overrides, Mapping):
            raise ConfigError(f"Device(overrides=...): expected a mapping of dotted field paths to values "
                              f"({{'sm.max_warps': 48}}), got {type(overrides).__name__}")
        cfg = gpu if isinstance(gpu, _config.GPUConfig) else _config.load(gpu)
        if overrides:
            cfg = cfg.with_overrides(dict(overrides))
        max_steps = _budget(max_steps, MAX_STEPS, "max_steps")
        max_cycles = _budget(max_cycles, MAX_CYCLES, "max_cycles")
        if regs_per_thread is not None and (isinstance(regs_per_thread, bool) or not isinstance(
                regs_per_thread, (int, np.integer)) or not 1 <= regs_per_thread <= cfg.sm.max_registers_per_thread):
            raise GpusimError(f"regs_per_thread must be 1..{cfg.sm.max_registers_per_thread} on {cfg.name}, "
                              f"got {regs_per_thread!r}")
        self.config = cfg
        self.mode = mode
        self.max_steps = max_steps
        self.max_cycles = max_cycles
        self.record_events = bool(record_events)
        # Checked by name: importing gpusim.timing here would load SimPy for functional-mode users.
        if not isinstance(sampling, bool) and type(sampling).__name__ != "Policy":
            raise GpusimError(f"sampling must be True, False or a gpusim.timing.Policy, got {sampling!r}")
        self.sampling = sampling
        self.regs_per_thread = None if regs_per_thread is None else int(regs_per_thread)
        if not isinstance(sass, bool):
            raise GpusimError(f"sass must be True or False, got {sass!r}")
        self.sass = sass
        #: Worker processes a launch may use (see ``jobs`` above).
        self.jobs = default_jobs() if jobs is None else parse_jobs(jobs, "Device(jobs=...)")
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


#: Default step budget of the watchdog (``Device(max_steps=...)``): instruction steps per chunk of CTAs.
#: One step runs one instruction for every thread of the chunk at the lowest PC, so a chunk needs about
#: as many steps as one of its threads executes instructions. The suite's launches need at most 9,165 at
#: their test sizes (matmul_smem_regtile, N = 256), but a grid-stride loop of a few CTAs over a large
#: array needs about (elements / threads of the grid) x the loop's instructions (a 2^26-element sum by 8
#: CTAs of 256 threads with a 6-instruction loop: about 200 K), so the budget stays at 5 M, as before the
#: repeat check existed; an endless loop whose state repeats is stopped by that check within about a
#: second, and only one whose state never repeats (a counter that runs forever) waits for this budget
#: (8-12 us a step: 40-60 s).
MAX_STEPS = 5_000_000
#: Default cycle budget of the watchdog in timing mode (``Device(max_cycles=...)``): 50 M SM cycles
#: (25 ms of an H100), over 5 times the scale tier's longest launch (8.8 M cycles,
#: benchmarks/results/scale_h100.json).
MAX_CYCLES = 50_000_000
#: What 0 and None stand for: no budget (the repeat check still stops a provably endless loop).
UNLIMITED = 1 << 62


def _budget(value: Any, default: int, name: str) -> int:
    """``Device(max_steps=/max_cycles=)``: None -> the default, 0 -> unlimited, else a positive integer."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise GpusimError(f"Device({name}=...): expected a positive integer, or 0 for no limit, got {value!r}")
    return UNLIMITED if value == 0 else int(value)


def get_device() -> Device:
    """The current device: the innermost ``with Device(...)``, else the default
    (created on first use with the ``h100`` configuration)."""
    global _default
    if _stack:
        return _stack[-1]
    if _default is None:
        _default = Device()
    return _default
