"""Charts and pivot tables of a sweep's results.

Owns: :func:`plot` (a matplotlib figure: one panel per ``y`` metric and per value of ``col``,
one line -- or, for a categorical ``x``, one group of bars -- per value of ``hue``),
:func:`pivot` (one metric as a ``rows`` x ``cols`` table), row filters (``where``) and the
column aliases users may type (``config`` for ``gpu``, ``block_size`` for ``block``).

Must not import: simpy, cupy, dask, gpusim.timing, gpusim.functional; matplotlib only inside
:func:`plot` (Agg backend).
"""

from __future__ import annotations

from typing import Any, Sequence

from gpusim.errors import GpusimError
from gpusim.sweep.store import Results

__all__ = ["plot", "pivot", "select", "ALIASES"]

#: Names accepted for a column besides its own.
ALIASES = {"config": "gpu", "block_size": "block", "dynamic_smem": "shared_mem", "regs": "regs_per_thread",
           "cycles": "sm__cycles_elapsed.avg"}


def _col(res: Results, name: str | None, what: str) -> str | None:
    if name is None:
        return None
    name = name if name in res.columns else ALIASES.get(name, name)
    if name not in res.columns:
        import difflib

        close = difflib.get_close_matches(name, res.columns, n=1)
        raise GpusimError(f"{what} {name!r}: no such column" + (f"; did you mean {close[0]!r}?" if close else "")
                          + f" (columns: {', '.join(res.columns)})")
    return name


def select(res: Results, where: Sequence[str] = ()) -> list[dict]:
    """The rows that finished without error and match every ``COLUMN=VALUE`` of ``where``
    (values compared as text). Raises GpusimError on a malformed filter or unknown column."""
    rows = [r for r in res.rows if not r.get("error")]
    for w in where:
        key, sep, val = w.partition("=")
        if not sep:
            raise GpusimError(f"--where {w!r}: expected COLUMN=VALUE, e.g. gpu=h100")
        key = _col(res, key.strip(), "--where")
        rows = [r for r in rows if str(r[key]) == val.strip()]
    return rows


def _sorted_values(values) -> list:
    """Distinct values: numbers sorted, anything else in the order of the points."""
    vals = list(dict.fromkeys(v for v in values))
    if _numeric(vals):
        return sorted(vals, key=lambda v: (v is None, v))
    return vals


def _short(v: int) -> str:
    """Tick label of a large power-of-two-ish size: 65536 -> 64K, 52428800 -> 50M (below 65536: as is)."""
    if v < 65536:
        return str(v)
    for div, unit in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if v >= div and v % (div // 1024 if div > 1024 else div) == 0:
            q = v / div
            return f"{q:g}{unit}"
    return str(v)


def _numeric(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values if v is not None)


def pivot(res: Results, rows: str, cols: str | None, value: str, where: Sequence[str] = ()) -> tuple[list, list]:
    """``value`` laid out with one row per value of ``rows`` and one column per value of ``cols``.

    Returns (headers, table rows). Raises GpusimError if two points fall in one cell (the
    message names the columns that tell them apart: add ``--where`` or another axis)."""
    r_, c_, v_ = _col(res, rows, "--rows"), _col(res, cols, "--cols"), _col(res, value, "--value")
    data = select(res, where)
    cells: dict[tuple, Any] = {}
    owner: dict[tuple, dict] = {}
    for r in data:
        key = (r[r_], r[c_] if c_ else None)
        if key in cells:
            differ = [c for c in res.columns if c not in ("point", "point_id", "run_id", "worker", "host_seconds",
                                                          "config_hash") and owner[key][c] != r[c]
                      and c in _param_like(res)]
            raise GpusimError(f"points {owner[key]['point']} and {r['point']} both have {r_}={key[0]}"
                              + (f", {c_}={key[1]}" if c_ else "") + f"; they differ in {', '.join(differ) or '?'}: "
                              "pick one with --where COLUMN=VALUE, or make it --rows/--cols")
        cells[key], owner[key] = r[v_], r
    row_vals = _sorted_values(k[0] for k in cells)
    col_vals = _sorted_values(k[1] for k in cells) if c_ else [None]
    headers = [r_] + ([f"{c_}={c}" for c in col_vals] if c_ else [v_])
    table = [[rv] + [cells.get((rv, cv)) for cv in col_vals] for rv in row_vals]
    return headers, table


def _param_like(res: Results) -> list[str]:
    from gpusim.sweep.store import HEAD

    return [c for c in res.columns if c in HEAD or c.startswith("set.")]


def plot(res: Results, x: str, y: Sequence[str], hue: str | None = None, col: str | None = None,
         where: Sequence[str] = (), title: str | None = None):
    """A matplotlib figure of the results (see the module docstring): panels ``len(y)`` rows x
    (values of ``col``) columns; failed points are left out. Raises GpusimError on unknown
    columns or when nothing is left to draw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = _col(res, x, "--x")
    ys = [_col(res, v, "--y") for v in y]
    hue, col = _col(res, hue, "--hue"), _col(res, col, "--col")
    data = select(res, where)
    if not data:
        raise GpusimError("nothing to draw: no point finished without error"
                          + (" and matched --where" if where else ""))
    col_vals = _sorted_values(r[col] for r in data) if col else [None]
    hue_vals = _sorted_values(r[hue] for r in data) if hue else [None]
    xs_all = _sorted_values(r[x] for r in data)
    numeric_x = _numeric(xs_all)
    fig, axes = plt.subplots(len(ys), len(col_vals), figsize=(4.2 * len(col_vals) + 1.2, 3.0 * len(ys) + 0.6),
                             squeeze=False, sharex=True)
    width = 0.8 / max(1, len(hue_vals))
    for i, yname in enumerate(ys):
        for j, cv in enumerate(col_vals):
            ax = axes[i][j]
            for h, hv in enumerate(hue_vals):
                pts = [r for r in data if (col is None or r[col] == cv) and (hue is None or r[hue] == hv)
                       and r[yname] is not None]
                label = f"{hue}={hv}" if hue else None
                if numeric_x:
                    pts.sort(key=lambda r: r[x])
                    ax.plot([r[x] for r in pts], [r[yname] for r in pts], marker="o", label=label)
                else:
                    pos = {v: k for k, v in enumerate(xs_all)}
                    ax.bar([pos[r[x]] + (h - (len(hue_vals) - 1) / 2) * width for r in pts],
                           [r[yname] for r in pts], width=width, label=label)
            if not numeric_x:
                ax.set_xticks(range(len(xs_all)), [str(v) for v in xs_all])
            elif all(isinstance(v, int) and v > 0 for v in xs_all) and max(xs_all) / min(xs_all) >= 16:
                ax.set_xscale("log", base=2)
                ax.set_xticks(xs_all, [_short(v) for v in xs_all])
                ax.minorticks_off()
            if i == 0 and col:
                ax.set_title(f"{col}={cv}", fontsize=9)
            if j == 0:
                ax.set_ylabel(yname, fontsize=8)
            if i == len(ys) - 1:
                ax.set_xlabel(x)
            ax.grid(alpha=0.3)
            if hue and i == 0 and j == len(col_vals) - 1:
                ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
