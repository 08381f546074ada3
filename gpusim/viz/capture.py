"""Recording a timing-mode launch for the visualizations: events plus per-lane addresses.

Owns: :class:`Recording` (one kernel launch: its decoded kernel, launch shape, GPU
configuration, the timing-mode :class:`~gpusim.functional.launch.LaunchResult` with its
issue events, and one :class:`WarpStep` per executed warp instruction with the per-lane
addresses of its memory accesses), :func:`record_launch` (record one launch of a
:class:`gpusim.RawKernel`), :func:`record_case` (record every launch of a suite case) and
the ``xp`` proxy that lets a suite case's own code be recorded unchanged.

The per-lane addresses come with the timing engine's issue events
(:attr:`gpusim.timing.sm.IssueEvent.accesses`, recorded with ``record_events=True``), so
a recording is one timing launch: nothing is executed twice.

Must not import: simpy, cupy (the timing engine is reached only through
``gpusim.Device(mode="timing")``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

import gpusim
from gpusim.errors import GpusimError
from gpusim.functional.engine import Grid
from gpusim.functional.launch import LaunchResult
from isa.ir import Instr, Kernel

__all__ = ["MemAccess", "WarpStep", "Recording", "record_launch", "record_case", "RecordingXP"]


@dataclass(frozen=True)
class MemAccess:
    """One warp's access to one state space by one memory instruction.

    Attributes:
        op: ``"ld"``, ``"st"`` or ``"atom"``.
        space: ``"global"``, ``"shared"`` or ``"local"``.
        addrs: int64 (32,): byte address per lane (offset in the CTA's shared window for
            shared memory); 0 for inactive lanes.
        active: bool (32,): lanes that performed the access.
        width: bytes per lane (element size times vector length).
    """

    op: str
    space: str
    addrs: np.ndarray
    active: np.ndarray
    width: int


@dataclass(frozen=True)
class WarpStep:
    """One issued warp instruction (from its :class:`gpusim.timing.sm.IssueEvent`).

    Attributes:
        cta, warp: linear CTA id and warp index in the CTA.
        seq: this warp's step number (0 = its first instruction); equals the position of
            the matching :class:`gpusim.timing.sm.IssueEvent` among the warp's events.
        pc: instruction index (``len(kernel.instrs)`` for the implicit return at the end).
        active: threads that executed it.
        accesses: its memory accesses (empty tuple for other instructions).
    """

    cta: int
    warp: int
    seq: int
    pc: int
    active: int
    accesses: tuple[MemAccess, ...]


@dataclass
class Recording:
    """One recorded timing-mode launch.

    Attributes:
        label: a name for reports (the suite case, or the kernel name).
        kernel: the decoded kernel (:class:`isa.ir.Kernel`); ``kernel.instrs[pc]``.
        source_files: ``.file`` index -> path of the CUDA source named by ``.loc``.
        ptx_lines: the PTX file's lines (``ptx_lines[line - 1]``).
        ptx_path: the PTX file's path.
        grid, block: launch shape (3-tuples); shared_mem: dynamic shared memory (bytes).
        config: the :class:`gpusim.config.GPUConfig` it ran on.
        result: the timing-mode :class:`LaunchResult` (``events`` and ``cta_spans`` set).
        steps: every issued warp instruction, CTA by CTA (:func:`warp_steps`).
    """

    label: str
    kernel: Kernel
    source_files: dict[int, str]
    ptx_lines: list[str]
    ptx_path: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    config: Any
    result: LaunchResult
    steps: list[WarpStep] = field(default_factory=list)

    # ------------------------------------------------------------ look-ups
    def instr(self, pc: int) -> Instr | None:
        """The instruction at ``pc`` (``None`` for the implicit return past the end)."""
        return self.kernel.instrs[pc] if 0 <= pc < len(self.kernel.instrs) else None

    def pcs_of_line(self, line: int) -> list[int]:
        """The PCs of the instructions written on PTX line ``line``."""
        return [i.index for i in self.kernel.instrs if i.loc.line == line]

    def memory_lines(self, space: str) -> list[int]:
        """PTX lines of instructions that accessed ``space`` (``"shared"``, ``"global"``)."""
        pcs = sorted({s.pc for s in self.steps if any(a.space == space for a in s.accesses)})
        return sorted({self.kernel.instrs[p].loc.line for p in pcs})

    def warps_that_ran(self) -> list[tuple[int, int]]:
        """``(cta, warp)`` pairs that issued at least one instruction, sorted."""
        return sorted({(e.cta, e.warp) for e in self.result.events})

    def cuda_line(self, pc: int) -> str:
        """``"file.cu:LINE"`` of the instruction's ``.loc`` debug info, or ``""``."""
        ins = self.instr(pc)
        if ins is None or ins.src is None:
            return ""
        path = self.source_files.get(ins.src[0], "?")
        return f"{path.rsplit('/', 1)[-1]}:{ins.src[1]}"


# --------------------------------------------------------------------------- steps
def _warp_accesses(raw) -> tuple[MemAccess, ...]:
    out = []
    for acc in raw:
        lanes = np.asarray(acc.lanes, np.int64) & 31
        addrs = np.zeros(32, np.int64)
        act = np.zeros(32, np.bool_)
        addrs[lanes] = np.asarray(acc.addrs).astype(np.int64)
        act[lanes] = True
        out.append(MemAccess(acc.op, acc.space, addrs, act, int(acc.width)))
    return tuple(out)


def warp_steps(events: Sequence[Any]) -> list[WarpStep]:
    """One :class:`WarpStep` per issue event, CTA by CTA, then by step number and warp.

    Args:
        events: a timing launch's :class:`gpusim.timing.sm.IssueEvent` list (issue order).
    """
    seq: dict[tuple[int, int], int] = {}
    steps = []
    for e in events:
        k = seq[e.cta, e.warp] = seq.get((e.cta, e.warp), -1) + 1
        steps.append(WarpStep(e.cta, e.warp, k, e.pc, e.active, _warp_accesses(e.accesses)))
    steps.sort(key=lambda s: (s.cta, s.seq, s.warp))
    return steps


# --------------------------------------------------------------------------- recording
def _check_device(dev: gpusim.Device) -> None:
    if dev.mode != "timing" or not dev.record_events:
        raise GpusimError("recording needs a timing-mode device with events: "
                          "gpusim.Device('h100', 'timing', record_events=True)")


def record_launch(kernel: "gpusim.RawKernel", grid, block, args: Sequence[Any], shared_mem: int = 0, *,
                  label: str | None = None) -> Recording:
    """Launch ``kernel`` on the current device (timing mode with ``record_events=True``) and record it.

    Args:
        kernel: a :class:`gpusim.RawKernel`.
        grid, block, args, shared_mem: as for ``kernel(grid, block, args, shared_mem=...)``.
        label: name shown in reports (default: the kernel name).

    Returns:
        :class:`Recording`; the launch's results are in device memory as after a plain launch.

    Raises:
        gpusim.errors.GpusimError: the current device is not timing mode with events;
            launch errors and kernel faults as for a plain launch.
    """
    from gpusim.device import get_device
    from gpusim.module import _dims

    dev = get_device()
    _check_device(dev)
    res = kernel(grid, block, args, shared_mem=shared_mem)
    g = Grid(_dims(grid, "grid"), _dims(block, "block"))
    steps = warp_steps(res.events)
    mod = kernel.module.module
    return Recording(label or kernel.name, kernel.kernel, dict(mod.files), list(mod.source_lines), str(mod.path),
                     g.grid, g.block, int(shared_mem), dev.config, res, steps)


class _RecKernel:
    def __init__(self, owner: "RecordingXP", k):
        self._owner, self._k = owner, k

    def __getattr__(self, name):
        return getattr(self._k, name)

    def __setattr__(self, name, value):  # e.g. max_dynamic_shared_size_bytes: set on the real kernel
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._k, name, value)

    def __call__(self, grid, block, args, *, shared_mem: int = 0, stream=None):
        n = len(self._owner.recordings)
        label = self._owner.label if n == 0 else f"{self._owner.label}#{n}"
        rec = record_launch(self._k, grid, block, args, shared_mem, label=label)
        self._owner.recordings.append(rec)
        return rec.result


class _RecModule:
    def __init__(self, owner: "RecordingXP", mod):
        self._owner, self._mod = owner, mod

    def __getattr__(self, name):
        return getattr(self._mod, name)

    def get_function(self, name: str):
        return _RecKernel(self._owner, self._mod.get_function(name))


class RecordingXP:
    """An ``xp`` module for suite cases (:mod:`gpusim.suite`): ``gpusim`` itself, except that
    every kernel launch is recorded with :func:`record_launch` into :attr:`recordings`."""

    def __init__(self, label: str):
        self.label = label
        self.recordings: list[Recording] = []

    def __getattr__(self, name):
        return getattr(gpusim, name)

    def RawModule(self, *a, **kw):  # noqa: N802 - mirrors cupy.RawModule
        return _RecModule(self, gpusim.RawModule(*a, **kw))


def record_case(name: str, n: int | None = None, *, gpu: str = "h100", seed: int = 0,
                overrides: dict | None = None, regs_per_thread: int | None = None) -> list[Recording]:
    """Run suite case ``name`` in timing mode and record each of its launches.

    Args:
        name: a key of :data:`gpusim.suite.CASES`.
        n: problem size (default: the case's small ``test_n``, not its ``default_n``).
        gpu, overrides: the configuration (as for :class:`gpusim.Device`).
        seed: seed of the random inputs.
        regs_per_thread: registers per thread for the occupancy (default: ``ptxas -v``, else 32).

    Returns:
        One :class:`Recording` per launch, in launch order (labels ``name``, ``name#1``...).

    Raises:
        gpusim.errors.GpusimError: unknown case (the message lists the cases); the case's
            output does not match its oracle.
    """
    from gpusim.suite import CASES, SizeError, check, run_case

    if name not in CASES:
        raise GpusimError(f"unknown suite case {name!r}; cases: {', '.join(CASES)}")
    case = CASES[name]
    xp = RecordingXP(name)
    with gpusim.Device(gpu, "timing", overrides=overrides, record_events=True, regs_per_thread=regs_per_thread):
        try:
            r = run_case(case, xp, case.test_n if n is None else n, seed)
        except SizeError as exc:  # a ValueError of the suite's (which imports no gpusim): the user's -n
            raise GpusimError(f"-n {n}: {exc}") from None
    ok, msg = check(r)
    if not ok:
        raise GpusimError(f"suite case {name}: wrong result in timing mode ({msg})")
    return xp.recordings
