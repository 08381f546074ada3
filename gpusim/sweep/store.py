"""The results of a sweep: a folder written point by point, read back as one tidy table.

Owns: the results folder and its crash safety, the overwrite policy (an existing results
folder is never replaced without ``force``, nor added to without ``resume``; a folder that is
not a sweep's is never touched), merging rows into :class:`Results` sorted by point, the
column order, and writing/reading the table (Parquet through pyarrow, CSV without it).

Layout of a results folder::

    sweep.json          the experiment's name and TOML text, its point ids in order, gpusim's version
    points/<id>.json    one row per finished point, written to a temporary name and renamed
                        (a killed sweep leaves whole rows or none); --resume skips these ids
    results.parquet     the merged table, rewritten when a run ends (results.csv without pyarrow)

Must not import: simpy, cupy, dask, gpusim.timing, gpusim.functional; pyarrow only inside
functions (optional).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from gpusim.errors import GpusimError
from gpusim.sweep.spec import PARAMS

__all__ = ["Store", "Results", "load", "HEAD", "TAIL", "VOLATILE", "have_pyarrow"]

#: Leading columns of the table; then ``set.*`` (sorted), the metrics, then :data:`TAIL`.
HEAD = ("point", "point_id", "kernel") + PARAMS
#: Trailing columns: sampling information, errors and provenance.
TAIL = ("timed_from", "ctas_simulated_pct", "sampling_spread_pct", "launches", "outputs_ok", "warnings", "error",
        "gpusim_version", "config_hash", "run_id", "worker", "host_seconds")
#: Columns that differ between two executions of the same point (everything else must not).
VOLATILE = ("run_id", "worker", "host_seconds")
_NOT_IN_TABLE = ("traceback",)
_OURS = ("sweep.json", "points", "results.parquet", "results.csv")


def have_pyarrow() -> bool:
    """Whether pyarrow is importable (Parquet output); otherwise tables are CSV."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class Results:
    """A sweep's table: one row (dict) per point, sorted by ``point``.

    Attributes: rows (list of dicts, every row with every column, missing values ``None``),
    columns (list of str, the table's order), path (where it was read from or written to)."""

    def __init__(self, rows: list[dict], path: Path | None = None):
        self.rows = sorted(rows, key=lambda r: r["point"])
        self.columns = _columns(self.rows)
        self.rows = [{c: r.get(c) for c in self.columns} for r in self.rows]
        self.path = path

    def __len__(self) -> int:
        return len(self.rows)

    def failures(self) -> list[dict]:
        """The rows whose point failed (``error`` set)."""
        return [r for r in self.rows if r.get("error")]

    def column(self, name: str) -> list:
        """The values of one column, in point order. Raises GpusimError naming the known columns."""
        if name not in self.columns:
            raise GpusimError(f"no column {name!r} in the results (columns: {', '.join(self.columns)})")
        return [r[name] for r in self.rows]

    def stable_rows(self) -> list[dict]:
        """The rows without :data:`VOLATILE` columns: equal for equal experiments, whatever ran them."""
        return [{k: v for k, v in r.items() if k not in VOLATILE} for r in self.rows]

    def to_arrow(self):
        """A ``pyarrow.Table`` (needs pyarrow); a column of mixed kinds becomes strings."""
        import pyarrow as pa

        return pa.table({c: _arrow_array(pa, [r[c] for r in self.rows]) for c in self.columns})

    def to_pandas(self):
        """A ``pandas.DataFrame`` (needs pandas and pyarrow)."""
        return self.to_arrow().to_pandas()

    def write(self, path: Path) -> Path:
        """Write the table to ``path`` (``.parquet`` or ``.csv``), atomically; returns ``path``."""
        path = Path(path)
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            tmp = path.with_name(f".{path.name}.tmp")
            pq.write_table(self.to_arrow(), tmp)
            os.replace(tmp, path)
        else:
            import io

            buf = io.StringIO()
            w = csv.DictWriter(buf, self.columns, lineterminator="\n")
            w.writeheader()
            w.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in self.rows)
            _atomic_write(path, buf.getvalue())
        return path


def _columns(rows: list[dict]) -> list[str]:
    seen: dict[str, None] = {}
    for r in rows:
        for k in r:
            seen.setdefault(k, None)
    sets = sorted(k for k in seen if k.startswith("set."))
    head = [c for c in HEAD if c in seen]
    tail = [c for c in TAIL if c in seen]
    middle = [k for k in seen if k not in head and k not in tail and not k.startswith("set.")
              and k not in _NOT_IN_TABLE]
    return head + sets + middle + tail


def _arrow_array(pa, values: list):
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return pa.array(values, pa.null())
    if kinds == {bool}:
        return pa.array(values, pa.bool_())
    if kinds == {int}:
        return pa.array(values, pa.int64())
    if kinds <= {int, float}:
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    return pa.array([None if v is None else str(v) for v in values], pa.string())


class Store:
    """A results folder being written by a sweep (see the module docstring).

    ``Store(out, point_ids, experiment_text, name, resume=False, force=False)`` prepares the
    folder: a new or empty folder is created; an existing sweep folder needs ``resume`` (keep
    its finished points) or ``force`` (remove the sweep's own files, nothing else); anything
    else raises GpusimError and changes nothing."""

    def __init__(self, out: str | Path, point_ids: list[str], experiment_text: str = "", name: str = "",
                 resume: bool = False, force: bool = False):
        import gpusim

        self.out = Path(out)
        if resume and force:
            raise GpusimError("--resume keeps the finished points and --force deletes them: give one")
        if self.out.exists() and not self.out.is_dir():
            raise GpusimError(f"--out {self.out}: exists and is not a folder; choose another --out")
        ours = self.out.is_dir() and (self.out / "sweep.json").is_file()
        others = sorted(p.name for p in self.out.iterdir() if p.name not in _OURS) if self.out.is_dir() else []
        if self.out.is_dir() and any(self.out.iterdir()):
            if not ours:
                raise GpusimError(f"--out {self.out}: the folder holds files that are not a gpusim sweep's "
                                  f"({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}); choose another "
                                  "--out (nothing was changed)")
            if not (resume or force):
                n = len(list((self.out / "points").glob("*.json")))
                raise GpusimError(f"--out {self.out}: holds a sweep's results already ({n} point(s)); pass --resume "
                                  "to finish it, --force to replace it, or choose another --out")
            if force:
                for name_ in _OURS:
                    p = self.out / name_
                    if p.is_dir():
                        shutil.rmtree(p)
                    elif p.exists():
                        p.unlink()
        elif resume and not self.out.exists():
            raise GpusimError(f"--resume: {self.out} does not exist; there is nothing to resume (run without --resume)")
        (self.out / "points").mkdir(parents=True, exist_ok=True)
        self.point_ids = list(point_ids)
        _atomic_write(self.out / "sweep.json", json.dumps(
            {"format": 1, "name": name, "gpusim_version": gpusim.__version__, "point_ids": self.point_ids,
             "experiment": experiment_text}, indent=1) + "\n")

    def done(self) -> dict[str, dict]:
        """Rows already finished, by point id (every point file of the folder)."""
        return _read_points(self.out)

    def add(self, row: dict) -> None:
        """Save one finished point's row (atomic: a killed process leaves the whole row or none)."""
        _atomic_write(self.out / "points" / f"{row['point_id']}.json", json.dumps(row) + "\n")

    def table_path(self) -> Path:
        """``results.parquet``, or ``results.csv`` where pyarrow is missing."""
        return self.out / ("results.parquet" if have_pyarrow() else "results.csv")

    def finish(self) -> Results:
        """Merge the rows of this experiment's points into the table file; returns the table."""
        res = load(self.out)
        res.path = res.write(self.table_path())
        return res


def _read_points(out: Path) -> dict[str, dict]:
    rows = {}
    for p in sorted((out / "points").glob("*.json")):
        try:
            row = json.loads(p.read_text())
        except (OSError, ValueError):
            continue  # not one of ours (our writes are atomic)
        rows[row.get("point_id", p.stem)] = row
    return rows


def load(path: str | Path) -> Results:
    """Read a sweep's results: a results folder (its finished points, merged, sorted by point;
    complete or not), or a ``.parquet``/``.csv`` table. Raises GpusimError naming the path."""
    path = Path(path)
    if path.is_dir():
        meta = path / "sweep.json"
        if not meta.is_file():
            raise GpusimError(f"{path}: not a sweep results folder (no sweep.json)")
        try:
            ids = json.loads(meta.read_text())["point_ids"]
        except (OSError, ValueError, KeyError) as exc:
            raise GpusimError(f"{meta}: cannot read: {exc}") from None
        done = _read_points(path)
        rows = []
        for i, pid in enumerate(ids):
            if pid in done:
                rows.append({**done[pid], "point": i})
        return Results(rows, path)
    if not path.is_file():
        raise GpusimError(f"{path}: no such results folder or table")
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise GpusimError(f"{path}: reading Parquet needs pyarrow: pip install 'gpusim[dist]'") from None
        try:
            return _table(pq.read_table(path).to_pylist(), path)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise GpusimError(f"{path}: cannot read the Parquet table: {exc}") from None
    if path.suffix == ".csv":
        try:
            with open(path, newline="") as fh:
                return _table([{k: _from_csv(v) for k, v in r.items()} for r in csv.DictReader(fh)], path)
        except (UnicodeDecodeError, csv.Error) as exc:
            raise GpusimError(f"{path}: cannot read the CSV table: {exc}") from None
    raise GpusimError(f"{path}: expected a results folder, a .parquet or a .csv file")


def _table(rows: list[dict], path: Path) -> "Results":
    """The rows read from a results table, checked to be a sweep's: every row has an integer ``point``."""
    for i, r in enumerate(rows):
        if not isinstance(r.get("point"), int) or isinstance(r.get("point"), bool):
            raise GpusimError(f"{path}: row {i + 1} has no integer 'point' column: not a table 'gpusim sweep' wrote")
    return Results(rows, path)


def _from_csv(v: str) -> Any:
    if v == "":
        return None
    if v in ("True", "False"):
        return v == "True"
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v
