"""A functional-mode launch: the grid in chunks of CTAs, and its counters.

Owns: splitting a grid into chunks of consecutive CTAs so that host memory
stays bounded whatever the grid size, running each chunk with
:class:`ChunkExecutor` (in this process, or in worker processes through
:mod:`gpusim.functional.parallel`), and the launch's metrics under Nsight Compute names.
Imports numpy, isa and the functional engine; never simpy or cupy.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field

import numpy as np

from gpusim.functional import parallel
from gpusim.functional.engine import ChunkExecutor, Grid
from gpusim.functional.memory import GlobalMemory
from isa.ir import Kernel

__all__ = ["LaunchResult", "run_functional", "run_blocks", "chunk_blocks", "memory_counters", "split_counters"]

#: Host-memory budget of one chunk's registers, shared and local memory (bytes).
CHUNK_BYTES = 256 * 2**20
#: Threads per chunk above which numpy calls no longer get cheaper per thread.
CHUNK_THREADS = 1 << 17


@dataclass
class LaunchResult:
    """What a launch returns.

    Attributes:
        kernel: kernel name.
        grid, block: launch shape as 3-tuples.
        shared_mem: dynamic shared memory per CTA (bytes).
        metrics: counters keyed by Nsight Compute metric name. Functional mode:
            ``smsp__inst_executed.sum`` (warp-level instructions executed) and
            ``smsp__thread_inst_executed.sum`` (thread-level: active threads
            summed over executed instructions; predicated-off threads count, as
            in Nsight Compute), both counted in PTX instructions (the hardware
            counts SASS instructions, which ptxas makes from them); and the
            address-pattern counters of loads and stores, which do not depend
            on timing: ``smsp__inst_executed_op_{global,shared}_{ld,st}.sum``,
            ``l1tex__t_{requests,sectors}_pipe_lsu_mem_global_op_{ld,st}.sum``,
            ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`` and
            ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum``
            (atomics are not included).
        inst_executed: per PTX instruction (PC order), warp-level executions;
            int64 array of shape (number of instructions,).
        thread_inst_executed: the same, thread-level.
        pc_metrics: the address-pattern counters of ``metrics`` per PTX instruction
            (``{name: int64 array of shape (number of instructions,)}``, PC order),
            for source views.
        host_seconds: wall-clock time the simulation took.
        mode: ``"functional"`` or ``"timing"``.
        cycles: timing mode: SM cycles from launch to the last CTA's end
            (``sm__cycles_elapsed.avg``); ``None`` in functional mode.
        stalls: timing mode: per PTX instruction (PC order), warp-cycles spent in
            each warp state (``selected``, ``not_selected``, ``long_scoreboard``...,
            :data:`gpusim.timing.sm.REASONS`) while that instruction was the warp's
            next one; int64 arrays of shape (number of instructions,).
        events: timing mode with ``Device(record_events=True)``: one
            :class:`gpusim.timing.sm.IssueEvent` per issued warp instruction, in
            issue order (cycle, SM, warp slot, CTA, warp, pc, active threads, the
            cycle its results are ready, memory space, stall segments before it).
        cta_spans: timing mode with ``Device(record_events=True)``: one tuple
            ``(linear CTA id, sm, warp slots, start cycle, end cycle)`` per CTA, in
            retirement order.
        occupancy: timing mode: the launch's theoretical occupancy
            (:class:`gpusim.occupancy.OccupancyResult`).
        costs: where instruction costs and ``smsp__inst_executed.sum`` come from: ``"ptxas"``
            (the kernel's SASS, :mod:`gpusim.sass`), ``"table"`` (the shipped per-opcode
            expansion table, where no ptxas was found) or ``"ptx"`` (one per PTX instruction,
            ``Device(sass=False)``).
        sampling: timing mode: what the cycles were computed from
            (:class:`gpusim.timing.sampling.SamplingInfo`: detailed, or a slice of SMs and
            waves, the fraction of CTAs simulated and the estimate's spread).
        parallel: how the functional run of the CTAs ran (:func:`gpusim.functional.parallel.plan`):
            ``"serial"`` (``Device(jobs=1)``), ``"serial (REASON)"`` (the kernel's CTAs may
            communicate, e.g. ``"serial (atom on global memory at line 42)"``, or the launch is too
            small for workers) or ``"N workers (C chunks)"`` (a sampled timing launch: of all its
            functional runs, :func:`gpusim.functional.parallel.combine`); ``"serial (detailed
            timing)"`` when the timing engine ran every CTA itself. Outputs, counters and cycles do not depend on it.
    """

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    metrics: dict[str, float] = field(default_factory=dict)
    inst_executed: np.ndarray | None = None
    thread_inst_executed: np.ndarray | None = None
    pc_metrics: dict[str, np.ndarray] = field(default_factory=dict)
    host_seconds: float = 0.0
    mode: str = "functional"
    cycles: int | None = None
    stalls: dict[str, np.ndarray] | None = None
    events: list | None = None
    cta_spans: list | None = None
    occupancy: object | None = None
    sampling: object | None = None
    costs: str = "ptx"
    parallel: str = "serial"

    def _repr_html_(self) -> str:
        """Jupyter display: an HTML table (:func:`gpusim.notebook.launch_html`)."""
        from gpusim.notebook import launch_html

        return launch_html(self)


def memory_counters() -> "collections.Counter[str]":
    """The address-pattern counters of loads and stores, all zero, by Nsight Compute name
    (the engines add ``(name, pc)`` keys for the per-line counts, see :func:`split_counters`)."""
    names = [f"smsp__inst_executed_op_{sp}_{op}.sum" for sp in ("global", "shared") for op in ("ld", "st")]
    names += [f"{unit}_op_{op}.sum" for unit in (
        "l1tex__t_requests_pipe_lsu_mem_global", "l1tex__t_sectors_pipe_lsu_mem_global",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared",
    ) for op in ("ld", "st")]
    return collections.Counter(dict.fromkeys(names, 0))


def split_counters(stats: "collections.Counter", n_instrs: int) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    """Split the engines' memory counters into the launch's totals ``{name: int}`` and per
    PTX instruction ``{name: int64 array of shape (n_instrs,)}`` (PC order)."""
    totals = {k: int(stats[k]) for k in sorted(k for k in stats if isinstance(k, str))}
    per_pc = {k: np.zeros(n_instrs, np.int64) for k in totals}
    for k, v in stats.items():
        if not isinstance(k, str):
            per_pc[k[0]][k[1]] += v
    return totals, per_pc


def chunk_blocks(kernel: Kernel, grid: Grid, dynamic_shared: int, chunk_threads: int = CHUNK_THREADS) -> int:
    """How many CTAs one chunk holds: at most ``chunk_threads`` threads and
    :data:`CHUNK_BYTES` of simulated state, and at least one CTA."""
    tpbp = grid.warps_per_block * 32
    reg_bytes = sum(max(1, int(t[1:]) // 8) if t != "pred" else 1 for t in kernel.regs.values())
    per_block = tpbp * (reg_bytes + kernel.local_bytes + 24) + kernel.static_shared_bytes + dynamic_shared + 64
    by_mem = CHUNK_BYTES // per_block
    by_threads = chunk_threads // tpbp
    return int(max(1, min(grid.n_blocks, by_mem, by_threads)))


def run_blocks(kernel: Kernel, grid: Grid, params: np.ndarray, memory: GlobalMemory, dynamic_shared: int,
               sm_count: int, max_warps: int, max_steps: int, first: int, end: int,
               counters: tuple[np.ndarray, np.ndarray], stats: "collections.Counter[str]",
               chunk_threads: int | None = None, executor: type = ChunkExecutor, after=None, jobs: int = 1,
               collect=None, gather=None) -> str:
    """Execute CTAs ``first .. end - 1`` in chunks, adding to ``counters`` (per-PC warp and thread
    instructions, int64 arrays of shape (instructions + 1,)) and ``stats`` (:func:`memory_counters`).
    ``executor``: the :class:`ChunkExecutor` (sub)class that runs a chunk; ``after(executor)``, if
    given, is called here once each chunk has run (which keeps every chunk in this process);
    ``collect(executor)``, if given, is called where the chunk ran (here or in a worker) and
    ``gather(value)`` here with its value, in chunk order, once all chunks have run.

    Unless ``after`` is given, a kernel whose CTAs cannot communicate
    (:func:`gpusim.functional.parallel.serial_reason`) is cut into the chunks of
    :func:`gpusim.functional.parallel.parallel_chunk`, whatever ``jobs`` is, and up to ``jobs``
    worker processes run them (:func:`gpusim.functional.parallel.plan`): outputs, counters and
    collected values are those of ``jobs=1``. Returns how the chunks ran (``LaunchResult.parallel``).

    Raises:
        gpusim.errors.KernelFault: the first fault in CTA order (memory written before it stays
            written; with workers, CTAs after its chunk may have run too).
    """
    per_chunk = chunk_blocks(kernel, grid, dynamic_shared, chunk_threads or CHUNK_THREADS)
    reason = "a per-chunk hook" if after is not None else parallel.serial_reason(kernel)
    if reason is None:
        per_chunk = parallel.parallel_chunk(grid, per_chunk, end - first)
    chunks = [(start, min(per_chunk, end - start)) for start in range(first, end, per_chunk)]
    workers, path = parallel.plan(jobs, len(chunks), reason, (end - first) * grid.warps_per_block * 32)
    if workers > 1:
        values = parallel.run_chunks(kernel, grid, params, memory, dynamic_shared, sm_count, max_warps, max_steps,
                                     chunks, workers, counters, stats, executor, collect)
        for v in values if gather is not None else ():
            gather(v)
        return path
    for start, count in chunks:
        ex = executor(kernel, grid, start, count, params, memory, dynamic_shared, counters,
                      stats, sm_count, max_warps, max_steps)
        ex.run()
        if after is not None:
            after(ex)
        if collect is not None:
            v = collect(ex)
            if gather is not None:
                gather(v)
    return path


def run_functional(kernel: Kernel, grid: Grid, params: np.ndarray, memory: GlobalMemory, dynamic_shared: int,
                   sm_count: int, max_warps: int, max_steps: int, chunk_threads: int | None = None,
                   jobs: int = 1) -> LaunchResult:
    """Execute every CTA of ``grid`` (in up to ``jobs`` worker processes, :func:`run_blocks`); raise
    :class:`gpusim.errors.KernelFault` on the first fault (memory written before it stays written)."""
    t0 = time.perf_counter()
    n = len(kernel.instrs) + 1
    warp_counts = np.zeros(n, np.int64)
    thread_counts = np.zeros(n, np.int64)
    stats = memory_counters()
    path = run_blocks(kernel, grid, params, memory, dynamic_shared, sm_count, max_warps, max_steps, 0, grid.n_blocks,
                      (warp_counts, thread_counts), stats, chunk_threads, jobs=jobs)
    # The last slot counts implicit returns at the end of the kernel.
    res = LaunchResult(kernel.name, grid.grid, grid.block, dynamic_shared, parallel=path)
    res.inst_executed, res.thread_inst_executed = warp_counts[:-1], thread_counts[:-1]
    totals, res.pc_metrics = split_counters(stats, len(kernel.instrs))
    res.metrics = {
        "smsp__inst_executed.sum": int(warp_counts.sum()),
        "smsp__thread_inst_executed.sum": int(thread_counts.sum()),
        **totals,
    }
    res.host_seconds = time.perf_counter() - t0
    return res
