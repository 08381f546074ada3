"""``gpusim sweep``: run a what-if sweep, then chart or pivot its results.

Owns: the arguments of ``gpusim sweep run`` (``gpusim sweep EXPERIMENT.toml`` is its
shorthand: :func:`shorthand` inserts ``run`` when the word after ``sweep`` is not a
sub-command), ``gpusim sweep plot`` and ``gpusim sweep table``, and the exit status (0: every
point ran, 1: some failed, 2: a user error). The work is in :mod:`gpusim.sweep`.

Examples::

    gpusim sweep examples/scheduler_policy.toml --out policy/          # one local process per core
    gpusim sweep examples/scheduler_policy.toml --out policy/ --resume # finish an interrupted sweep
    gpusim sweep examples/gpus.toml --workers 2                        # a Dask LocalCluster
    gpusim sweep examples/gpus.toml --scheduler tcp://10.0.0.5:8786    # an existing Dask cluster
    gpusim sweep plot policy/ --x block --y sm__cycles_elapsed.avg --hue set.sm.scheduler.policy -o p.png
    gpusim sweep table policy/ --rows block --cols set.sm.scheduler.policy --value sm__cycles_elapsed.avg
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpusim.cli._types import positive_int
from gpusim.errors import GpusimError

__all__ = ["register", "shorthand", "SUBCOMMANDS"]

#: The words after ``gpusim sweep`` that name a sub-command (anything else is an experiment file).
SUBCOMMANDS = ("run", "plot", "table", "points")


def shorthand(argv: list[str]) -> list[str]:
    """``sweep FILE ...`` -> ``sweep run FILE ...`` (and ``sweep --opt ... FILE``); other argv unchanged."""
    if len(argv) >= 2 and argv[0] == "sweep" and argv[1] not in SUBCOMMANDS + ("-h", "--help"):
        return ["sweep", "run"] + argv[1:]
    return argv


def register(sub) -> None:
    """Add the ``sweep`` parser and its sub-commands to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser("sweep", help="what-if sweeps: many simulated variants of kernels, one table and chart",
                       description="Run a sweep experiment (TOML) over kernels and parameters, in parallel; chart "
                                   "or pivot the results. 'gpusim sweep EXPERIMENT.toml' is short for "
                                   "'gpusim sweep run EXPERIMENT.toml'.")
    ss = p.add_subparsers(dest="sweep_command", metavar="{run,plot,table,points}")
    r = ss.add_parser("run", help="run every point of an experiment (default sub-command)",
                      description="Run every point of a sweep experiment; rows are saved as points finish.")
    r.add_argument("experiment", help="the sweep experiment TOML file")
    r.add_argument("--out", help="results folder (default: <experiment stem>-results here)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--jobs", type=positive_int, help="local processes (default: one per core; 1: in this process)")
    g.add_argument("--workers", type=positive_int, help="start a Dask LocalCluster of N worker processes (needs the dist "
                                               "extra)")
    g.add_argument("--scheduler", metavar="ADDRESS", help="run on the Dask cluster whose scheduler is at "
                                                          "tcp://HOST:PORT (needs the dist extra)")
    r.add_argument("--resume", action="store_true", help="keep the points --out holds; run only the missing ones")
    r.add_argument("--retry-failed", action="store_true", help="with --resume: run failed points again too")
    r.add_argument("--force", action="store_true", help="replace the sweep results --out holds")
    r.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    r.set_defaults(func=_run)
    pts = ss.add_parser("points", help="list an experiment's points without running them")
    pts.add_argument("experiment")
    pts.set_defaults(func=_points)
    pl = ss.add_parser("plot", help="draw results as a PNG (matplotlib)",
                       description="One panel per --y metric (rows) and per --col value (columns), one line per "
                                   "--hue value; a categorical --x gives grouped bars. Failed points are left out.")
    pl.add_argument("results", help="a results folder, or its results.parquet / results.csv")
    pl.add_argument("--x", required=True, help="column on the x axis (e.g. block)")
    pl.add_argument("--y", action="append", required=True, help="metric column(s) (repeatable)")
    pl.add_argument("--hue", help="one line (or bar) per value of this column")
    pl.add_argument("--col", help="one panel per value of this column")
    pl.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE", help="keep matching rows only")
    pl.add_argument("--title")
    pl.add_argument("-o", "--output", default="sweep.png", help="PNG file (default sweep.png)")
    pl.add_argument("--force", action="store_true", help="overwrite an existing output file")
    pl.set_defaults(func=_plot)
    t = ss.add_parser("table", help="print the results, or one metric pivoted (--rows/--cols/--value)")
    t.add_argument("results", help="a results folder, or its results.parquet / results.csv")
    t.add_argument("--rows", help="pivot: one table row per value of this column")
    t.add_argument("--cols", help="pivot: one table column per value of this column")
    t.add_argument("--value", help="pivot: the metric in the cells")
    t.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE", help="keep matching rows only")
    t.add_argument("--columns", nargs="+", help="without --rows: the columns to print (default: the parameters "
                                                "that vary, the first metrics and error)")
    t.set_defaults(func=_table)
    p.set_defaults(func=lambda a: (p.print_help(), 0)[1])


def _run(a: argparse.Namespace) -> int:
    import gpusim.sweep as sweep

    if a.retry_failed and not a.resume:
        raise GpusimError("--retry-failed goes with --resume")
    try:
        res = sweep.run(a.experiment, a.out, jobs=a.jobs, scheduler=a.scheduler, workers=a.workers,
                        resume=a.resume, force=a.force, retry_failed=a.retry_failed, progress=a.progress, echo=print)
    except KeyboardInterrupt:
        out = a.out or sweep.default_out(a.experiment)
        print(f"\ninterrupted: the points that finished are in {out}; finish with: gpusim sweep {a.experiment} "
              f"--out {out} --resume", file=sys.stderr)
        return 130
    return 1 if res.failures() else 0


def _points(a: argparse.Namespace) -> int:
    from gpusim.sweep import expand, load_spec
    from gpusim.table import format_table

    pts = expand(load_spec(a.experiment))
    cols = [pt.columns() for pt in pts]
    keys = _varying(cols) or ["kernel"]
    print(format_table(["point", "point_id"] + keys, [[pt.index, pt.point_id] + [c.get(k) for k in keys]
                                                      for pt, c in zip(pts, cols)]))
    print(f"\n{len(pts)} point(s)")
    return 0


def _varying(rows: list[dict]) -> list[str]:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    return [k for k in keys if len({str(r.get(k)) for r in rows}) > 1]


def _plot(a: argparse.Namespace) -> int:
    from gpusim.sweep import charts, load

    out = Path(a.output)
    if out.suffix.lower() != ".png":
        raise GpusimError(f"-o {out}: the chart is a PNG; name a .png file")
    if out.exists() and not a.force:
        raise GpusimError(f"-o {out}: the file exists; pass --force to overwrite it")
    fig = charts.plot(load(a.results), a.x, a.y, a.hue, a.col, a.where, a.title)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


def _table(a: argparse.Namespace) -> int:
    from gpusim.sweep import charts, load
    from gpusim.table import format_table

    res = load(a.results)
    if a.rows or a.cols or a.value:
        if not (a.rows and a.value):
            raise GpusimError("a pivot needs --rows and --value (and optionally --cols)")
        headers, rows = charts.pivot(res, a.rows, a.cols, a.value, a.where)
        print(format_table(headers, [[_fmt(v) for v in r] for r in rows]))
        return 0
    rows = charts.select(res, a.where) if a.where else res.rows
    if a.columns:
        cols = [charts._col(res, c, "--columns") for c in a.columns]
    else:
        from gpusim.sweep.store import HEAD, TAIL

        params = [c for c in _varying(res.rows) if c in HEAD[2:] or c.startswith("set.")]
        metrics = [c for c in res.columns if c not in HEAD and c not in TAIL and not c.startswith("set.")][:4]
        cols = ["point"] + (params or ["kernel"]) + metrics + ["error"]
    print(format_table(cols, [[_fmt(r[c]) for c in cols] for r in rows]))
    fails = res.failures()
    print(f"\n{len(res)} point(s), {len(fails)} failed; {res.path}")
    return 0


def _fmt(v):
    """Floats: 4 significant digits, thousands separated from 100 up to 1e9."""
    if isinstance(v, float):
        return f"{v:,.0f}" if 100 <= abs(v) < 1e9 else f"{v:.4g}"
    return "" if v is None else v
