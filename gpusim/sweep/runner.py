"""Running calls in parallel, and running one sweep point.

Owns: the one parallel back end of gpusim (:func:`backend`: in-process, a pool of local
processes, or a Dask cluster; ``gpusim sweep`` and ``gpusim validate --jobs/--scheduler`` both
use it), and :func:`run_point`, which a worker executes for one point: the device, the launch
(or the suite case), and the row of parameters, kept metrics, sampling information and
provenance it returns. A failing point returns its error in the row; it never raises.

Must not import at module level: simpy, cupy, dask, pyarrow, gpusim.timing,
gpusim.functional (the public API is imported inside :func:`run_point`, on the worker; Dask
only when a Dask back end is asked for). It does not touch the engines' internals: a point is
run through ``gpusim.Device``, ``RawModule`` and :mod:`gpusim.suite` like a user's script.
"""

from __future__ import annotations

import concurrent.futures as cf
import fnmatch
import hashlib
import multiprocessing
import os
import socket
import time
import traceback
import uuid
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from gpusim.errors import GpusimError
from gpusim.procs import die_with_parent

__all__ = ["Backend", "backend", "run_point", "DASK_HINT", "default_jobs"]

#: What to install for the Dask back ends.
DASK_HINT = "pip install 'gpusim[dist]' (or: pip install 'dask[distributed]')"


def default_jobs() -> int:
    """One local process per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class Backend:
    """Runs ``fn(*call)`` for every call and yields ``(position, result)`` as each finishes.

    ``kind``: ``"serial"`` (in this process, in order), ``"processes"`` (a local process pool)
    or ``"dask"``; ``workers``: how many run at once (Dask: the cluster's worker threads when
    the back end started). Use as a context manager, or call :meth:`close`."""

    kind = "serial"

    def __init__(self) -> None:
        self.workers = 1

    def imap_unordered(self, fn: Callable, calls: Iterable[tuple]) -> Iterator[tuple[int, Any]]:
        """Yield ``(i, fn(*calls[i]))`` for every call, in finishing order. An exception raised by
        ``fn`` propagates (the Dask back end raises it as GpusimError; ``run_point`` never raises:
        its errors are in its rows)."""
        for i, call in enumerate(calls):
            yield i, fn(*call)

    def describe(self) -> str:
        """A few words for progress messages."""
        return "in this process"

    def close(self) -> None:
        """Release workers the back end started (not a cluster the caller passed in)."""

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ProcessBackend(Backend):
    """A pool of ``jobs`` local processes (forked where the platform can, as
    ``gpusim validate --jobs`` always did)."""

    kind = "processes"

    def __init__(self, jobs: int):
        super().__init__()
        self.workers = jobs
        ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
        self._pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_pool_worker,
                                            initargs=(os.getpid(),))

    def imap_unordered(self, fn, calls):
        futures = {self._pool.submit(fn, *call): i for i, call in enumerate(calls)}
        try:
            for fut in cf.as_completed(futures):
                try:
                    yield futures[fut], fut.result()
                except cf.process.BrokenProcessPool:
                    raise GpusimError("a worker process died (killed, or out of memory); the points finished so far "
                                      "are kept") from None
        finally:
            for fut in futures:
                fut.cancel()

    def describe(self) -> str:
        return f"in {self.workers} local process(es)"

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _pool_worker(parent: int) -> None:
    """Pool-worker initializer: die with the parent (:func:`gpusim.procs.die_with_parent`),
    and run each launch's CTAs in this worker alone (``GPUSIM_JOBS=1``, :mod:`gpusim.functional.parallel`):
    the pool already has a process per core, and workers of workers would multiply them."""
    os.environ["GPUSIM_JOBS"] = "1"
    die_with_parent(parent)


class DaskBackend(Backend):
    """Tasks on a Dask cluster: a ``dask.distributed.Client`` given by the caller, a scheduler
    address, or a ``LocalCluster`` of ``workers`` single-threaded worker processes started here."""

    kind = "dask"

    def __init__(self, client: Any = None, scheduler: str | None = None, workers: int | None = None):
        super().__init__()
        try:
            import distributed
        except ImportError:
            raise GpusimError(f"the Dask back end needs dask.distributed, which is not installed: {DASK_HINT}; "
                              "without it, local processes work (--jobs N)") from None
        self._distributed = distributed
        self._own: list = []
        if client is None:
            if scheduler:
                try:
                    client = distributed.Client(scheduler, timeout="20s")
                except (OSError, TimeoutError) as exc:
                    raise GpusimError(f"--scheduler {scheduler}: cannot reach a Dask scheduler there: {exc}") from None
                self._own.append(client)
            else:
                import logging

                cluster = distributed.LocalCluster(n_workers=int(workers or default_jobs()), threads_per_worker=1,
                                                   processes=True, dashboard_address=None,
                                                   silence_logs=logging.ERROR)
                client = distributed.Client(cluster)
                self._own += [client, cluster]
        self.client = client
        info = client.scheduler_info()
        self.workers = sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()) or 1
        self._address = getattr(client.scheduler, "address", "?") if client.scheduler is not None else "?"

    def imap_unordered(self, fn, calls):
        futures = [self.client.submit(fn, *call, pure=False) for call in calls]
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut in self._distributed.as_completed(futures):
                try:
                    result = fut.result()
                except Exception as exc:  # KilledWorker, a lost connection: the cluster's trouble, not a point's
                    raise GpusimError(f"a Dask task failed ({type(exc).__name__}: {exc}); the points finished so far "
                                      "are kept") from None
                yield index[fut.key], result
        finally:
            self.client.cancel([f for f in futures if not f.done()])

    def describe(self) -> str:
        return f"on the Dask cluster at {self._address} ({self.workers} worker thread(s))"

    def close(self) -> None:
        for obj in self._own:
            obj.close()
        self._own = []


def backend(jobs: int | None = None, *, client: Any = None, scheduler: str | None = None,
            workers: int | None = None) -> Backend:
    """Choose the back end: ``client`` (a ``dask.distributed.Client``), else ``scheduler``
    (``tcp://HOST:PORT``), else ``workers`` (a ``LocalCluster`` of that many processes), else
    ``jobs`` local processes (``None``: one per core; 1: in this process).

    Raises GpusimError: more than one of them given, a count below 1, Dask asked for but not
    installed (the message says how to install it), or an unreachable scheduler."""
    given = [n for n, v in (("client", client), ("scheduler", scheduler), ("workers", workers)) if v is not None]
    if len(given) > 1 or (given and jobs is not None):
        raise GpusimError(f"give one way to run: {', '.join(given + (['jobs'] if jobs is not None else []))} "
                          "were all given")
    for name, v in (("jobs", jobs), ("workers", workers)):
        if v is not None and int(v) < 1:
            raise GpusimError(f"--{name} {v}: must be at least 1")
    if given:
        return DaskBackend(client, scheduler, workers)
    jobs = default_jobs() if jobs is None else int(jobs)
    return Backend() if jobs == 1 else ProcessBackend(jobs)


# --------------------------------------------------------------------------- one point

_ADDITIVE = ("sm__cycles_elapsed.avg", "sm__cycles_active.avg", "gpu__time_duration.sum")
_STALL = "smsp__pcsamp_warps_issue_stalled_"


def _number(v: Any) -> Any:
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int) or (hasattr(v, "dtype") and v.dtype.kind in "iu"):
        return int(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _metric(launches: list, name: str) -> Any:
    """One metric over a point's launches: counts, cycles and time summed; rates from the first launch."""
    vals = [x.metrics.get(name) for x in launches]
    if any(v is None for v in vals):
        return None
    if name.endswith(".sum") or name in _ADDITIVE:
        return _number(sum(vals))
    return _number(vals[0])


def _derived(launches: list, name: str) -> dict[str, Any]:
    first = launches[0]
    occ = getattr(first, "occupancy", None)
    if name in ("dram__bytes.sum", "dram__bytes.sum.per_second"):
        r, w = _metric(launches, "dram__bytes_read.sum"), _metric(launches, "dram__bytes_write.sum")
        total = None if r is None or w is None else r + w
        if name == "dram__bytes.sum":
            return {name: total}
        ns = _metric(launches, "gpu__time_duration.sum")
        return {name: None if total is None or not ns else total / (ns * 1e-9)}
    if name == "launch__block_size":
        return {name: int(first.block[0] * first.block[1] * first.block[2])}
    if name == "launch__grid_size":
        return {name: int(first.grid[0] * first.grid[1] * first.grid[2])}
    if name == "launch__shared_mem_per_block_dynamic":
        return {name: int(first.shared_mem)}
    if name == "launch__registers_per_thread":
        return {name: getattr(occ, "regs_per_thread", None)}
    if name.startswith("launch__occupancy_limit_"):
        return {name: getattr(occ, "limit_" + name.rsplit("_limit_", 1)[1], None)}
    if name == "top_stalls":
        totals: dict[str, float] = {}
        for x in launches:
            for k, v in x.metrics.items():
                if k.startswith(_STALL):
                    totals[k[len(_STALL):]] = totals.get(k[len(_STALL):], 0) + float(v)
        everything = sum(totals.values())
        ranked = sorted(((v, k) for k, v in totals.items() if k != "selected" and v > 0), key=lambda t: (-t[0], t[1]))
        out: dict[str, Any] = {}
        for i in range(3):
            v, k = ranked[i] if i < len(ranked) else (None, None)
            out[f"stall_{i + 1}"] = k
            out[f"stall_{i + 1}_pct"] = None if v is None else round(100.0 * v / everything, 3)
        return out
    raise KeyError(name)


def collect_metrics(launches: list, wanted: list[str]) -> dict[str, Any]:
    """The kept metrics of a point's launches (see :data:`gpusim.sweep.spec.DEFAULT_METRICS`);
    a pattern with ``*`` keeps every matching metric of the first launch, a metric the launch
    does not have (cycles in functional mode) is ``None``."""
    from gpusim.sweep.spec import DERIVED_METRICS

    out: dict[str, Any] = {}
    for name in wanted:
        if name in DERIVED_METRICS:
            out.update(_derived(launches, name))
        elif any(c in name for c in "*?["):
            for m in sorted(fnmatch.filter(launches[0].metrics, name)):
                out[m] = _metric(launches, m)
        else:
            out[name] = _metric(launches, name)
    return out


def config_hash(cfg: Any) -> str:
    """16 hex digits of sha256 over the configuration's canonical JSON (after overrides)."""
    return hashlib.sha256(cfg.model_dump_json().encode()).hexdigest()[:16]


def _materialise(kernel: dict) -> tuple[Path, Path]:
    """The kernel's PTX text as a file on this worker, at a path fixed by its content
    (``<tmp>/gpusim-sweep-<sha256[:16]>/<name>.ptx``), written once, atomically."""
    import tempfile

    digest = hashlib.sha256(kernel["ptx_text"].encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"gpusim-sweep-{digest}"
    path = folder / (kernel["ptx_name"] or "kernel.ptx")
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{path.name}.{os.getpid()}.tmp"
        tmp.write_text(kernel["ptx_text"])
        os.replace(tmp, path)
    return folder, path


def run_point(payload: dict, metrics: list[str]) -> dict[str, Any]:
    """Run one point (:meth:`gpusim.sweep.points.Point.payload`) and return its result row.

    The row holds: ``point``, ``point_id``, the kept ``metrics`` (names as given; derived ones
    per :data:`~gpusim.sweep.spec.DERIVED_METRICS`), ``timed_from`` (``functional``,
    ``detailed``, ``sm_slice`` or ``sm_slice+waves``, of the first launch), ``ctas_simulated_pct``,
    ``sampling_spread_pct``, ``launches``, ``outputs_ok`` (suite cases: outputs equal the numpy
    oracle), ``warnings`` (what gpusim warned about, e.g. no ptxas register count), ``error``
    (``None`` or ``"Type: message"``), ``gpusim_version``, ``config_hash``,
    ``run_id`` (new for every execution), ``worker`` (host:pid) and ``host_seconds``. It never
    raises: any failure is reported in ``error``."""
    t0 = time.perf_counter()
    p, k = payload["params"], payload["kernel"]
    row: dict[str, Any] = {"point": payload["index"], "point_id": payload["point_id"]}
    extra: dict[str, Any] = {"timed_from": None, "ctas_simulated_pct": None, "sampling_spread_pct": None,
                             "launches": None, "outputs_ok": None, "warnings": None, "error": None}
    prov: dict[str, Any] = {"gpusim_version": None, "config_hash": None, "run_id": uuid.uuid4().hex,
                            "worker": f"{socket.gethostname()}:{os.getpid()}"}
    caught: list = []
    try:
        import numpy as np

        import gpusim

        prov["gpusim_version"] = gpusim.__version__
        cfg = payload["config"]
        prov["config_hash"] = config_hash(cfg)
        with warnings.catch_warnings(record=True) as caught, \
                gpusim.Device(cfg, p["mode"], sampling=bool(p["sampling"]), regs_per_thread=p["regs_per_thread"]):
            warnings.simplefilter("always")
            if k["case"] is not None:
                from gpusim.suite import CASES, check, run_case

                run = run_case(CASES[k["case"]], gpusim, p["n"], p["seed"])
                launches = run.launches
                extra["outputs_ok"] = bool(check(run)[0])
            else:
                from gpusim.experiment import build_args, kernel_of, parse_arg

                ptx_path = _materialise(k)[1]
                fn = kernel_of(gpusim, ptx_path, k["kernel"])
                if p["shared_mem"] > 48 * 1024:  # what a CUDA program opts in to with cudaFuncSetAttribute
                    fn.max_dynamic_shared_size_bytes = p["shared_mem"]
                specs = [parse_arg(a, f"args[{i}]") for i, a in enumerate(p["args"])]
                args, _ = build_args(specs, np.random.default_rng(p["seed"]))
                launches = [fn(tuple(p["grid"]), tuple(p["block"]), tuple(args), shared_mem=p["shared_mem"])]
        row.update(collect_metrics(launches, metrics))
        s = getattr(launches[0], "sampling", None)
        extra["timed_from"] = "functional" if p["mode"] == "functional" else (s.method if s is not None else "detailed")
        if s is not None:
            extra["ctas_simulated_pct"] = round(100.0 * s.fraction, 3)
            extra["sampling_spread_pct"] = round(float(s.spread_pct), 3)
        extra["launches"] = len(launches)
    except Exception as exc:  # one failing point must not stop the sweep: its row says why
        extra["error"] = f"{type(exc).__name__}: {exc}".strip()
        extra["traceback"] = traceback.format_exc(limit=-3)
    if caught:
        text = (str(w.message).split("\n")[0] for w in caught)
        if k["ptx_text"] is not None:  # the worker's copy of the PTX file -> the file's own name
            text = (t.replace(str(_materialise(k)[1]), k["ptx_name"]) for t in text)
        extra["warnings"] = "; ".join(dict.fromkeys(text))
    row.update(extra)
    row.update(prov)
    row["host_seconds"] = round(time.perf_counter() - t0, 3)
    return row
