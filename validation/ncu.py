"""Nsight Compute (``ncu``) as the probes and the validation layer use it: finding it, its options,
reading its ``--csv --page raw`` output.

Owns :data:`BASE_OPTIONS` (the options every suite profile runs with: clocks untouched, caches
flushed before each replay pass, kernel replay, raw CSV in base units), :func:`find_ncu`,
:func:`version`, :func:`parse_value`, :func:`read_ncu_csv` and :func:`metric_by_launch` (one
metric of every profiled launch, in launch order: what the small probes' committed CSVs are read
with).

Imports the standard library only -- no gpusim, no numpy, no cupy -- so that the probe scripts
(``validation/probes/*.py``, which run on a GPU machine with only numpy and cupy) can import it.
"""

from __future__ import annotations

import csv
import io
import pathlib
import re
import shutil
import subprocess

__all__ = ["BASE_OPTIONS", "find_ncu", "metric_by_launch", "parse_value", "read_ncu_csv", "version"]

#: ncu's options for every suite profile: clocks never changed, L1/L2 flushed before every replay
#: pass, kernel replay (ncu's defaults, named explicitly), the raw page as CSV in base units
BASE_OPTIONS: tuple[str, ...] = ("--clock-control", "none", "--cache-control", "all", "--replay-mode", "kernel",
                                 "--csv", "--page", "raw", "--print-units", "base")


def find_ncu() -> str | None:
    """Path of Nsight Compute's ``ncu`` (PATH, then the usual CUDA install folders), or None."""
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in ("usr/local/cuda/bin/ncu", "opt/nvidia/nsight-compute/*/ncu", "usr/local/cuda*/bin/ncu"):
        hits = sorted(pathlib.Path("/").glob(pattern))
        if hits:
            return str(hits[-1])
    return None


def version(ncu: str, timeout: float = 30.0) -> str | None:
    """``ncu --version``'s version number ("2025.3.1.0"), its last line when no number is found, or None."""
    try:
        text = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=timeout,
                              check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        text = ""
    m = re.search(r"Version\s+(\S+)", text)
    return m.group(1) if m else (text.splitlines()[-1] if text else None)


_NUMBER = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?([eE][+-]?\d+)?$")


def parse_value(text: str):
    """An ncu cell as int / float / None ("n/a", empty) / the text itself."""
    t = text.strip()
    if t in ("", "n/a", "N/A"):
        return None
    if _NUMBER.match(t):
        t = t.replace(",", "")
        if re.match(r"^[+-]?\d+$", t):
            return int(t)
        return float(t)
    try:
        return float(t)
    except ValueError:
        return text


def read_ncu_csv(text: str) -> tuple[list[dict], dict]:
    """ncu ``--csv --page raw`` output (a --log-file or an --import dump): rows and units.

    Lines of ncu's own messages (``==PROF==``, ``==WARNING==``...) and of the application
    are skipped; a header row starts with "ID"; a row right after a header whose ID is
    empty holds the units.  Returns (rows as {column: text}, {column: unit}).
    """
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    header: list[str] | None = None
    units: dict[str, str] = {}
    rows: list[dict] = []
    expect_units = False
    for cells in csv.reader(io.StringIO("\n".join(lines))):
        if not cells:
            continue
        if cells[0] == "ID":
            header, expect_units = cells, True
            continue
        if header is None or len(cells) != len(header):
            continue
        if expect_units and cells[0] == "":
            units.update({h: u for h, u in zip(header, cells) if u})
            expect_units = False
            continue
        expect_units = False
        rows.append(dict(zip(header, cells)))
    seen, unique = set(), []
    for row in rows:                      # a re-printed row (same ID) counts once
        if row["ID"] not in seen:
            seen.add(row["ID"])
            unique.append(row)
    unique.sort(key=lambda r: int(r["ID"]))
    return unique, units


def metric_by_launch(text: str, metric: str, kernel_prefix: str | tuple[str, ...] = "") -> list[float]:
    """``metric`` of every profiled launch of ncu's CSV ``text``, in launch order, as floats; only
    the kernels whose name starts with ``kernel_prefix`` (a string or a tuple of them) when given."""
    rows, _ = read_ncu_csv(text)
    return [float(parse_value(r[metric])) for r in rows if r["Kernel Name"].startswith(kernel_prefix)]
