"""The suite's core types: a case, what running it produced, and the oracle comparison.

Owns :class:`Case`, :class:`CaseRun`, :class:`SizeError`, the suite's folders
(``SUITE_DIR``, ``PTX_DIR``, ``CUDA_DIR``), :func:`ptx_path`, :func:`cuda_path`,
:func:`run_case`, :func:`compare` and :func:`check`.  Knows no kernel family.

Imports numpy and the standard library only (the suite must load on a machine with
CuPy and none of gpusim's other dependencies); never gpusim's engines, never cupy.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CUDA_DIR", "PTX_DIR", "SUITE_DIR", "Case", "CaseRun", "SizeError", "check", "compare", "cuda_path",
           "ptx_path", "run_case"]

SUITE_DIR = pathlib.Path(__file__).resolve().parent
PTX_DIR = SUITE_DIR / "ptx"
CUDA_DIR = SUITE_DIR / "cuda"


class SizeError(ValueError):
    """A suite case cannot run at the problem size ``n`` it was given (the message says why)."""


# --------------------------------------------------------------------------- API


@dataclass(frozen=True)
class Case:
    """One kernel of the suite with its default launch and oracle."""

    name: str        #: unique case name, e.g. "reduce_v0", "matmul_tiled"
    group: str       #: topic: reduce, matmul, conv, memory, ilp, divergence, warp, shared, micro
    ptx: str         #: file name under ``ptx/``
    kernel: str      #: PTX ``.entry`` name launched (first launch if several)
    default_n: int   #: problem size for ``gpusim run`` and the full GPU check
    test_n: int      #: small size for fast tests (a few thousand threads at most)
    run: Callable[[Any, int, np.random.Generator], CaseRun]  #: ``run(xp, n, rng)``
    doc: str         #: one line: the seed concept it teaches
    n_means: str = "elements"  #: what ``n`` counts for this case

    @property
    def source(self) -> pathlib.Path | None:
        """The CUDA C file this case's PTX was compiled from (None: hand-written PTX)."""
        return cuda_path(self)


@dataclass
class CaseRun:
    """What one ``Case.run`` produced.

    ``outputs`` and ``expected`` map the same names to host numpy arrays of
    the same shape and dtype.  ``exact``: outputs must equal expected bit for
    bit; otherwise ``|out - exp| <= rtol * |exp|`` elementwise, for the reason
    given in ``tolerance_note``.  ``launches`` holds what every kernel call
    returned, in order (gpusim: a launch result with ``metrics``; CuPy: None).
    ``grid``, ``block``, ``shared_mem`` and ``kernel`` describe the main
    (first) launch, for display.
    """

    outputs: dict[str, np.ndarray]
    expected: dict[str, np.ndarray]
    launches: list
    grid: tuple
    block: tuple
    shared_mem: int
    kernel: str
    exact: bool = True
    rtol: float = 0.0
    tolerance_note: str = ""
    inputs: dict[str, np.ndarray] = field(default_factory=dict)  #: host copies of uploaded inputs


def ptx_path(case: Case) -> pathlib.Path:
    """Absolute path of the case's PTX file."""
    return PTX_DIR / case.ptx


def cuda_path(case: Case) -> pathlib.Path | None:
    """The ``cuda/*.cu`` file the case's PTX was generated from, or None if hand-written."""
    p = CUDA_DIR / (pathlib.Path(case.ptx).stem + ".cu")
    return p if p.exists() else None


def run_case(case: Case, xp: Any, n: int | None = None, seed: int = 0) -> CaseRun:
    """Run ``case`` with ``xp`` at size ``n`` (default: ``case.default_n``), inputs from ``seed``."""
    return case.run(xp, case.default_n if n is None else int(n), np.random.default_rng(seed))


def compare(run: CaseRun) -> list[dict]:
    """Per-output comparison rows: name, shape, dtype, exact_equal, max_abs_err, max_rel_err, ok."""
    rows = []
    for key, exp in run.expected.items():
        out = run.outputs.get(key)
        row: dict[str, Any] = {"output": key, "shape": list(np.shape(exp)), "dtype": str(np.asarray(exp).dtype)}
        if out is None or np.shape(out) != np.shape(exp) or np.asarray(out).dtype != np.asarray(exp).dtype:
            got = None if out is None else f"{np.asarray(out).dtype}{list(np.shape(out))}"
            row.update(exact_equal=False, max_abs_err=float("inf"), max_rel_err=float("inf"), ok=False,
                       problem=f"output {key!r}: expected {row['dtype']}{row['shape']}, got {got}")
            rows.append(row)
            continue
        out = np.ascontiguousarray(out)
        exp = np.ascontiguousarray(exp)
        exact_equal = bool(np.array_equal(out.view(np.uint8), exp.view(np.uint8)))
        o64 = out.astype(np.float64)
        e64 = exp.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            abs_err = np.abs(o64 - e64)
            rel_err = np.where(e64 != 0, abs_err / np.abs(e64), np.where(abs_err == 0, 0.0, np.inf))
        max_abs = float(np.nanmax(abs_err)) if abs_err.size else 0.0
        max_rel = float(np.nanmax(rel_err)) if rel_err.size else 0.0
        if run.exact:
            ok = exact_equal
        else:
            ok = bool(np.all(abs_err <= run.rtol * np.abs(e64)))
        row.update(exact_equal=exact_equal, max_abs_err=max_abs, max_rel_err=max_rel, ok=ok)
        if not ok:
            if run.exact:
                flat_out = out.view(np.uint8).reshape(out.size, -1)
                bad_mask = (flat_out != exp.view(np.uint8).reshape(exp.size, -1)).any(axis=1)
            else:
                bad_mask = ~(abs_err <= run.rtol * np.abs(e64)).reshape(-1)
            bad = np.flatnonzero(bad_mask)
            if bad.size:
                i = int(bad[0])
                row["problem"] = (f"output {key!r}: {bad.size} of {out.size} elements differ; first at flat "
                                  f"index {i}: got {out.reshape(-1)[i]}, expected {exp.reshape(-1)[i]}")
        rows.append(row)
    for key in run.outputs:
        if key not in run.expected:
            rows.append({"output": key, "ok": False, "exact_equal": False, "max_abs_err": float("inf"),
                         "max_rel_err": float("inf"), "problem": f"output {key!r} has no oracle"})
    return rows


def check(run: CaseRun) -> tuple[bool, str]:
    """(ok, one-line message) for a :class:`CaseRun` against its oracle."""
    rows = compare(run)
    ok = all(r["ok"] for r in rows)
    max_abs = max((r["max_abs_err"] for r in rows), default=0.0)
    max_rel = max((r["max_rel_err"] for r in rows), default=0.0)
    if ok:
        if run.exact:
            return True, f"bit-exact ({len(rows)} output{'s' if len(rows) != 1 else ''})"
        return True, f"within rtol {run.rtol:g} (max rel err {max_rel:.3g})"
    problems = "; ".join(r.get("problem", r["output"]) for r in rows if not r["ok"])
    mode = "bit-exact" if run.exact else f"rtol {run.rtol:g}"
    return False, f"MISMATCH ({mode}; max abs err {max_abs:.3g}, max rel err {max_rel:.3g}): {problems}"

