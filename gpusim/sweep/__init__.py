"""What-if sweeps: one experiment file, many simulated variants, one table.

Owns the public entry points :func:`run` and :func:`load`; the work is in one module per
concept: :mod:`~gpusim.sweep.spec` (the experiment file), :mod:`~gpusim.sweep.points` (its
points), :mod:`~gpusim.sweep.runner` (the parallel back ends and one point's run),
:mod:`~gpusim.sweep.store` (the results folder and table) and :mod:`~gpusim.sweep.charts`
(plot and pivot). ``gpusim sweep`` (gpusim/cli/sweep.py) is the command line.

Must not import: cupy, gpusim.timing, gpusim.functional (workers run points through the
public API); dask and pyarrow only when asked for (optional extra ``dist``).

Example::

    import gpusim.sweep
    res = gpusim.sweep.run("examples/scheduler_policy.toml", out="policy-results", jobs=2)
    res.column("sm__cycles_elapsed.avg")
    # on a Dask cluster: gpusim.sweep.run(..., client=dask.distributed.Client("tcp://host:8786"))
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable

from gpusim.sweep.points import Point, expand
from gpusim.sweep.runner import backend, run_point
from gpusim.sweep.spec import DEFAULT_METRICS, Experiment, SpecError, load_spec
from gpusim.sweep.store import Results, Store, load

__all__ = ["run", "load", "load_spec", "expand", "Results", "Point", "Experiment", "SpecError", "DEFAULT_METRICS",
           "default_out"]


def default_out(experiment: str | Path) -> Path:
    """The results folder used when none is given: ``<experiment stem>-results`` in the current folder."""
    return Path(f"{Path(experiment).stem}-results")


def run(experiment: str | Path | Experiment, out: str | Path | None = None, *, jobs: int | None = None,
        client: Any = None, scheduler: str | None = None, workers: int | None = None, resume: bool = False,
        force: bool = False, retry_failed: bool = False, progress: bool = True,
        echo: Callable[[str], None] | None = None) -> Results:
    """Run every point of a sweep experiment and return its table.

    Args:
        experiment: a sweep TOML file (:mod:`gpusim.sweep.spec`) or a loaded :class:`Experiment`.
        out: the results folder (default :func:`default_out`). Each finished point is saved there
            at once; the merged table (``results.parquet``, or ``.csv`` without pyarrow) at the end.
        jobs: local processes (default: one per core; 1 runs in this process).
        client: a ``dask.distributed.Client``: run the points on its cluster.
        scheduler: a Dask scheduler address (``tcp://HOST:PORT``) to connect to.
        workers: start a ``dask.distributed.LocalCluster`` of this many worker processes.
        resume: keep the points ``out`` already holds (matched by point id) and run the rest.
        force: replace the sweep results ``out`` holds.
        retry_failed: with ``resume``, also re-run points whose row holds an error.
        progress: show a progress bar with the time left (tqdm) on stderr.
        echo: where to print the start and summary lines (default: stderr).

    Returns: :class:`Results` (one row per point, sorted by point; failed points have ``error``).

    Raises:
        SpecError: the experiment file is invalid (names the file and the field path).
        GpusimError: ``out`` exists without resume/force or is not a sweep folder; more than one
            back end named; Dask asked for but not installed; a worker process died.
    """
    say = echo or (lambda msg: print(msg, file=sys.stderr, flush=True))
    exp = experiment if isinstance(experiment, Experiment) else load_spec(experiment)
    if out is None:
        out = default_out(exp.where if not isinstance(experiment, (str, Path)) else experiment)
    points = expand(exp)
    store = Store(out, [p.point_id for p in points], exp.text, exp.spec.name, resume=resume, force=force)
    done = store.done() if resume else {}
    todo = [p for p in points if p.point_id not in done or (retry_failed and done[p.point_id].get("error"))]
    t0 = time.perf_counter()
    with backend(jobs, client=client, scheduler=scheduler, workers=workers) as be:
        say(f"sweep {exp.spec.name or exp.where}: {len(points)} point(s), {len(points) - len(todo)} already in "
            f"{store.out}, {len(todo)} to run {be.describe()}")
        bar = _bar(len(todo), progress)
        try:
            calls = [(p.payload(), exp.metrics) for p in todo]
            for i, row in be.imap_unordered(run_point, calls):
                store.add({**todo[i].columns(), **row})
                bar.update(1, row)
        finally:
            bar.close()
    res = store.finish()
    seconds = time.perf_counter() - t0
    fails = res.failures()
    say(f"{len(res)} of {len(points)} point(s) in {res.path} ({len(todo)} run in {seconds:.1f} s); "
        f"{len(fails)} failed" + (":" if fails else ""))
    for r in fails:
        say(f"  point {r['point']} (kernel {r['kernel']}): {r['error']}")
    return res


class _bar:
    """tqdm's bar (points, time left) where tqdm is installed; otherwise one line per point."""

    def __init__(self, total: int, on: bool):
        self.total, self.n, self.on, self.t0 = total, 0, on, time.perf_counter()
        self._tqdm = None
        if on and total:
            try:
                from tqdm import tqdm

                self._tqdm = tqdm(total=total, unit="point", desc="sweep", file=sys.stderr, dynamic_ncols=True)
            except ImportError:
                pass

    def update(self, k: int, row: dict) -> None:
        self.n += k
        if self._tqdm is not None:
            if row.get("error"):
                self._tqdm.write(f"point {row['point']} failed: {row['error']}", file=sys.stderr)
            self._tqdm.update(k)
        elif self.on:
            el = time.perf_counter() - self.t0
            left = el / self.n * (self.total - self.n)
            print(f"[{self.n}/{self.total}] point {row['point']}: {row.get('error') or 'ok'} "
                  f"({el:.0f} s elapsed, ~{left:.0f} s left)", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()
