"""Every core on one launch: the CTAs of a launch in worker processes over the device memory.

Owns: the number of worker processes a launch may use (:func:`parse_jobs`, :func:`default_jobs`,
``GPUSIM_JOBS``), the static test of whether a kernel's CTAs may communicate through global
memory (:func:`serial_reason`), the chunking of a launch that may run in parallel
(:func:`parallel_chunk`), the choice of a path (:func:`plan`) and :func:`run_chunks`, which runs
a list of chunks of consecutive CTAs in forked workers. Used by
:func:`gpusim.functional.launch.run_blocks`. Imports numpy, isa and the functional engine;
never simpy or cupy, and never :mod:`gpusim.functional.launch` (which imports this module).

How it works. Between grid-wide synchronisation points the CTAs of a grid are independent:
a CTA's results depend only on the memory as it was at the launch and on what the CTA itself
writes. On Linux the device memory lives in shared anonymous mappings
(:data:`gpusim.functional.memory.SHARED_ALLOCATIONS`), so processes forked at the launch (the
kernel, its parameters and the address map come with the fork, nothing is pickled) read and
write the device memory itself: there is nothing to copy in or back. The workers take chunks
in increasing order from a shared counter, run each with :class:`ChunkExecutor` exactly as the
serial loop would, and send back their per-PC counters and memory statistics (plus any warning
raised), which the parent adds up; integer sums do not depend on the order. The chunks are the
same whatever the number of workers (1 included), so outputs, counters and cycles are bit for
bit those of the serial run.

Faults. The serial run raises the first fault in chunk order, after the chunks before it ran
completely. Here a worker whose chunk faults stops every worker from taking a later chunk; the
chunks before it were all taken (chunks are taken in order) and run to their end. The parent
raises the fault of the lowest faulting chunk: the same :class:`~gpusim.errors.KernelFault` (same
CTA, thread and message: a chunk runs identically in any process), with the memory written by
the chunks before it, and by the faulting chunk up to the fault, written as in the serial run.
Unlike the serial run, CTAs of chunks after the faulting one may also have run and written
memory (on a GPU too, later CTAs run alongside a faulting one; CUDA leaves the context unusable).

What stays serial (:func:`serial_reason`): kernels whose CTAs may communicate while they run:
``atom``/``red`` on global or generic addresses, ``ld``/``st`` ``.volatile`` or with a memory
order (``.relaxed``/``.acquire``/``.release``/...) at a scope wider than the CTA on memory that is
not ``.shared``, ``membar.gl``/``.sys`` and ``fence`` wider than the CTA, reads of ``%clock``,
``%clock64`` or ``%globaltimer``, and any instruction kind not known to be CTA-local (a new kind
is serial until listed in :data:`CTA_LOCAL_KINDS`). Cooperative grid synchronisation is made of
global atomics and fences, so it is caught by those rules. Plain (weak) ``ld``/``st`` racing
between CTAs (one CTA reads what another writes in the same launch, without atomics or fences)
is undefined on a GPU; here a CTA may then see the other CTA's value or the old one, depending
on which worker got there first, so such a kernel's results may vary with the number of workers
(the serial run always sees the CTAs in order). With ``jobs=1`` the same chunks run in this process.
"""

from __future__ import annotations

import collections
import multiprocessing
import multiprocessing.connection
import os
import pickle
import traceback
import warnings

import numpy as np

from gpusim.errors import GpusimError
from gpusim.functional.engine import ChunkExecutor, Grid
from gpusim.functional.memory import SHARED_ALLOCATIONS, GlobalMemory
from gpusim.functional.watchdog import EPOCH, TIME_SPECIALS
from gpusim.procs import die_with_parent
from isa.ir import Addr, Kernel, Special
from isa.opcodes import Kind

__all__ = ["JOBS_ENV", "MIN_CHUNK_THREADS", "TARGET_CHUNKS", "MIN_PARALLEL_THREADS", "CTA_LOCAL_KINDS",
           "NOTHING", "parse_jobs", "default_jobs", "available", "serial_reason", "communicates", "parallel_chunk",
           "plan", "combine", "run_chunks"]

#: The environment variable that sets the default number of workers of a launch (``Device(jobs=None)``).
JOBS_ENV = "GPUSIM_JOBS"
#: Threads a chunk of a launch that may run in parallel holds at least (unless the grid is smaller).
#: Measured in one process (CPU seconds, best of 2): at 2^14 threads per chunk the suite's
#: ``matmul_tiled`` (256) and a row softmax (2,048 x 512) run 10-45 % faster than at the serial
#: chunk's 2^17 (a chunk's registers stay in the caches), ``reduce_v3`` and ``copy_offset`` (2^22)
#: as fast; at 2^13 numpy's per-call overhead starts to show (``copy_offset`` +45 %).
MIN_CHUNK_THREADS = 1 << 14
#: Chunks a launch that may run in parallel is cut into at most, down to :data:`MIN_CHUNK_THREADS`
#: threads each, so that 16 workers get several chunks each (the workers take them in order, so
#: more chunks balance CTAs that differ in their work). The cut does not depend on the number of
#: workers: ``jobs=1`` runs the same chunks, which keeps faults and counters identical.
TARGET_CHUNKS = 64
#: Launches of fewer threads run in this process whatever ``jobs`` is: starting and collecting a
#: worker costs milliseconds (``benchmarks/parallel_launch.py`` measures it), as much as running
#: a few thousand threads of a short kernel. With the chunk floor above, such a launch has fewer
#: than 4 chunks anyway.
MIN_PARALLEL_THREADS = 1 << 16
#: Instruction kinds whose effects stay inside the CTA, or are plain global loads and stores (weak
#: ``ld``/``st``, ``cp.async`` global -> shared); ``ATOM``, ``LD``/``ST`` with a memory order and
#: ``FENCE`` are checked instruction by instruction. Any other kind makes a launch serial.
CTA_LOCAL_KINDS = frozenset({Kind.ALU, Kind.MOV, Kind.CVTA, Kind.BRA, Kind.EXIT, Kind.BAR, Kind.SHFL, Kind.VOTE,
                             Kind.ACTIVEMASK, Kind.MMA, Kind.CPASYNC, Kind.WGMMA, Kind.LD, Kind.ST, Kind.ATOM,
                             Kind.FENCE})

_CTA_SPACES = frozenset({"shared", "shared::cta"})
#: ld/st modifiers that order a memory access against other threads (PTX ISA 9.0 memory consistency model)
ORDERED = frozenset({"volatile", "relaxed", "acquire", "release", "acq_rel", "sc", "mmio"})
_BARRIERS = frozenset({"bar", "barrier", "bar.red", "barrier.red"})


def parse_jobs(value, where: str) -> int:
    """``value`` (an int, Python or numpy) as a number of workers.

    Raises:
        gpusim.errors.GpusimError: not an integer >= 1 (the message names ``where``, e.g.
            ``Device(jobs=...)``).
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise GpusimError(f"{where}: expected a number of worker processes (an integer >= 1), got {value!r}")
    return int(value)


def default_jobs() -> int:
    """Workers of a launch when ``Device(jobs=None)``: ``GPUSIM_JOBS`` if set, else 1.

    1 by default because a launch's workers are whole processes: a script, a notebook or a sweep
    running several things at once would multiply them unasked, and the workers' speed-up only
    pays on launches of seconds. Set ``GPUSIM_JOBS`` (or ``Device(jobs=N)``, ``gpusim run --jobs N``)
    to the cores to use. Raises GpusimError: ``GPUSIM_JOBS`` is not an integer >= 1."""
    env = os.environ.get(JOBS_ENV, "").strip()
    if not env:
        return 1
    where = f"environment variable {JOBS_ENV}"
    try:
        value = int(env, 0)
    except ValueError:
        raise GpusimError(f"{where}: expected a number of worker processes (an integer >= 1), got {env!r}") from None
    return parse_jobs(value, where)


def available() -> bool:
    """Whether this platform can run a launch's chunks in forked workers over shared memory (Linux)."""
    return SHARED_ALLOCATIONS and "fork" in multiprocessing.get_all_start_methods()


def serial_reason(kernel: Kernel) -> str | None:
    """Why ``kernel``'s CTAs may communicate through memory while they run (a few words naming the
    first such instruction and its PTX line), or ``None`` if its CTAs are independent and its
    chunks may run in parallel (module docstring)."""
    for ins in kernel.instrs:
        why = communicates(ins)
        if why is not None:
            return f"{why} at line {ins.loc.line}"
    return None


def communicates(ins) -> str | None:
    """What makes the instruction ``ins`` one through which threads of different CTAs may
    communicate while they run (a few words, e.g. ``"ld.volatile"``), or ``None`` if it is not one
    (the module docstring's list). The timing engine's functional stepper runs such an instruction
    when its warp issues it, never ahead (:mod:`gpusim.functional.warpstep`)."""
    def timed(op) -> bool:
        if isinstance(op, Special):
            return op.name in TIME_SPECIALS
        return isinstance(op, Addr) and timed(op.base)

    kind, mods = ins.spec.kind, set(ins.mods)
    if kind not in CTA_LOCAL_KINDS or (kind is Kind.BAR and ins.op not in _BARRIERS):
        return ins.op
    cta_space = bool(mods & _CTA_SPACES)
    if kind is Kind.ATOM and not cta_space:
        return f"{ins.op} on {'global' if 'global' in mods else 'generic'} memory"
    if kind in (Kind.LD, Kind.ST) and mods & ORDERED and not cta_space and "cta" not in mods:
        return f"{ins.op}.{sorted(mods & ORDERED)[0]}"
    if kind is Kind.FENCE and ins.op in ("membar", "fence") and "cta" not in mods:
        return ins.mnemonic
    if any(timed(op) for op in ins.operands):
        return "%clock/%globaltimer read"
    return None


def parallel_chunk(grid: Grid, per_chunk: int, n_blocks: int) -> int:
    """CTAs per chunk for ``n_blocks`` CTAs of a kernel whose chunks may run in parallel: the serial
    chunk (``per_chunk``, :func:`gpusim.functional.launch.chunk_blocks`) cut to give up to
    :data:`TARGET_CHUNKS` chunks of at least :data:`MIN_CHUNK_THREADS` threads. Independent of the
    number of workers."""
    tpbp = grid.warps_per_block * 32
    floor = -(-MIN_CHUNK_THREADS // tpbp)
    return int(max(1, min(per_chunk, max(floor, -(-n_blocks // TARGET_CHUNKS)))))


def plan(jobs: int, n_chunks: int, reason: str | None, threads: int | None = None) -> tuple[int, str]:
    """How a launch of ``n_chunks`` chunks and ``threads`` threads (``None``: enough) runs with
    ``jobs`` workers allowed, ``reason`` being :func:`serial_reason`'s answer: ``(workers,
    description)``, 1 worker meaning this process; at most one worker per chunk, none below
    :data:`MIN_PARALLEL_THREADS` threads. The description is ``LaunchResult.parallel``:
    ``"serial"``, ``"serial (REASON)"`` or ``"N workers (C chunks)"``."""
    if n_chunks == 0:
        return 1, NOTHING
    if jobs <= 1:
        return 1, "serial"
    if reason is not None:
        return 1, f"serial ({reason})"
    if not available():
        return 1, "serial (no fork on this platform)"
    if multiprocessing.current_process().daemon:
        return 1, "serial (in a daemonic worker process, which may not start processes)"
    if threads is not None and threads < MIN_PARALLEL_THREADS:
        return 1, f"serial ({threads:,} threads: too few for workers)"
    workers = min(jobs, n_chunks)
    if workers < 2:
        return 1, "serial (1 chunk: too few for workers)"
    return workers, f"{workers} workers ({n_chunks} chunks)"


#: :func:`plan`'s description of an empty range of CTAs (left out by :func:`combine`).
NOTHING = "serial (no CTAs)"


def combine(paths: list[str]) -> str:
    """One description for a launch whose CTAs ran in several calls (a sampled timing launch's
    recorded CTAs and the rest): ``"N workers (C chunks)"`` with the most workers and all chunks
    that ran in workers if any did, else the first serial description (empty ranges left out)."""
    paths = [p for p in paths if p != NOTHING] or [NOTHING]
    par = [p for p in paths if not p.startswith("serial")]
    if not par:
        return paths[0]
    workers = max(int(p.split()[0]) for p in par)
    chunks = sum(int(p.split("(")[1].split()[0]) for p in par)
    return f"{workers} workers ({chunks} chunks)"


def _keep_freed_memory() -> None:
    """In a worker: ask glibc's malloc to keep freed memory and serve numpy's temporaries from its
    heap (no trimming, ``mmap`` only above 32 MiB). A forked worker starts with the parent's heap
    shared copy-on-write; with the default settings every step's temporaries are mapped and unmapped
    again or copied on first write, and the workers spent 3-4x the serial run's system time in page
    faults (matmul_tiled at 256: 1.3 M minor faults against 0.34 M)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD (its maximum on 64-bit glibc)
    except (OSError, AttributeError):
        return


def _worker(conn, parent: int, state, chunks: list[tuple[int, int]], args: tuple, n_counters: int,
            executor: type, collect) -> None:
    """A worker: take chunks in order from ``state`` (``[next chunk, first faulting chunk]``) and run
    them; send ``("chunk", i, collect(executor))`` after chunk ``i`` if ``collect`` is given, then
    ``("ok", warp counts, thread counts, stats, warnings)``, or on an exception in chunk ``i``
    ``("fault", i, pickled exception or None, its text and traceback, warnings)``."""
    die_with_parent(parent)
    _keep_freed_memory()
    kernel, grid, params, memory, dynamic_shared, sm_count, max_warps, max_steps = args
    counters = (np.zeros(n_counters, np.int64), np.zeros(n_counters, np.int64))
    stats: collections.Counter = collections.Counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        i = -1
        try:
            while True:
                with state.get_lock():
                    i = state[0]
                    if i >= state[1]:
                        break
                    state[0] = i + 1
                start, count = chunks[i]
                ex = executor(kernel, grid, start, count, params, memory, dynamic_shared, counters, stats,
                              sm_count, max_warps, max_steps)
                ex.run()
                if collect is not None:
                    conn.send(("chunk", i, collect(ex)))
                del ex
        except BaseException as exc:  # noqa: B036 -- sent to the parent, which raises it
            with state.get_lock():
                state[1] = min(state[1], i)
            try:
                blob = pickle.dumps(exc)
            except Exception:
                blob = None
            conn.send(("fault", i, blob, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}", _warned(caught)))
            return
    conn.send(("ok", counters[0], counters[1], dict(stats), _warned(caught)))


def _warned(caught: list) -> list[tuple]:
    out = []
    for w in caught:
        try:
            pickle.dumps(w.category)
            out.append((str(w.message), w.category, w.filename, w.lineno))
        except Exception:
            out.append((str(w.message), UserWarning, w.filename, w.lineno))
    return out


def run_chunks(kernel: Kernel, grid: Grid, params: np.ndarray, memory: GlobalMemory, dynamic_shared: int,
               sm_count: int, max_warps: int, max_steps: int, chunks: list[tuple[int, int]], workers: int,
               counters: tuple[np.ndarray, np.ndarray], stats: "collections.Counter",
               executor: type = ChunkExecutor, collect=None) -> list:
    """Run ``chunks`` (``(first CTA, CTAs)`` each, in CTA order) with ``executor`` (a
    :class:`ChunkExecutor` class) in ``workers`` forked processes over ``memory`` (which must be in
    shared mappings: :func:`available`), adding their counts to ``counters`` and ``stats`` as the
    serial loop would. ``collect(executor)``, if given, runs in the worker after each chunk; its
    (picklable) values are returned in chunk order (else ``[]``). Warnings raised in a worker are
    raised again here (once per text and place, under this process's filters).

    Raises:
        gpusim.errors.KernelFault: the fault of the lowest faulting chunk (module docstring); any other
            exception a worker raised is raised likewise, as the serial run would raise it.
        gpusim.errors.GpusimError: a worker died (killed, out of memory) without an answer.
    """
    ctx = multiprocessing.get_context("fork")
    state = ctx.Array("q", [0, len(chunks)])  # next chunk to take, first chunk not to take
    args = (kernel, grid, params, memory, dynamic_shared, sm_count, max_warps, max_steps)
    procs, conns = [], []
    replies, values = [], {}
    try:
        with warnings.catch_warnings():
            # Python 3.12 warns that forking a process with threads may deadlock; the workers only
            # run numpy and the engine, and leave through os._exit.
            warnings.simplefilter("ignore", DeprecationWarning)
            for _ in range(workers):
                recv, send = ctx.Pipe(duplex=False)
                p = ctx.Process(target=_worker, args=(send, os.getpid(), state, chunks, args, len(counters[0]),
                                                      executor, collect), daemon=True)
                p.start()
                send.close()
                procs.append(p)
                conns.append(recv)
        pending = list(conns)
        while pending:
            for c in multiprocessing.connection.wait(pending):
                try:
                    msg = c.recv()
                except EOFError:
                    msg = ("died",)
                if msg[0] == "chunk":
                    values[msg[1]] = msg[2]
                    continue
                replies.append(msg)
                pending.remove(c)
        for p in procs:
            p.join()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join()
        for c in conns:
            c.close()
    EPOCH.n += 1  # the workers wrote memory: a state seen before this launch is not comparable
    seen = set()
    for reply in replies:
        for w in reply[-1] if reply[0] != "died" else ():
            if w not in seen:
                seen.add(w)
                warnings.warn_explicit(*w)
    if any(r[0] == "died" for r in replies):  # its chunk may have faulted before any other: no fault to name
        raise GpusimError(f"kernel {kernel.name}: a worker process of the parallel launch died (killed, or out of "
                          f"memory); device memory may be partly written. Run it with Device(jobs=1) to use "
                          f"one process")
    faults = sorted((r for r in replies if r[0] == "fault"), key=lambda r: r[1])
    if faults:
        _, _, blob, text, _ = faults[0]
        try:
            exc = pickle.loads(blob) if blob is not None else None
        except Exception:
            exc = None
        if exc is None:
            raise GpusimError(f"kernel {kernel.name}: a worker of the parallel launch failed: {text}")
        raise exc from None
    for _, warps, threads, st, _ in replies:
        np.add(counters[0], warps, out=counters[0])
        np.add(counters[1], threads, out=counters[1])
        stats.update(st)
    return [values[i] for i in range(len(chunks))] if collect is not None else []
