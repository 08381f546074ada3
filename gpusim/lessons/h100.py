"""The H100 measurements the lessons show beside the simulator, shipped with the package.

Owns: :data:`DATA_FILE` (``gpusim/data/lessons_h100.json``), :func:`extract` (the lessons'
launches out of the committed hardware bundles of ``gpusim validate``:
``validation/reports/h100/scale_tier/hardware_h100.json``, the small tier's
``validation/reports/h100/hardware_h100.json`` and ``validation/reports/h100/matmul256/``, collected on an H100 80GB HBM3 with ncu
``--clock-control none``; docs/validation/h100.md), :func:`load` and
:func:`lookup`. ``python -m gpusim.lessons.h100`` rewrites the file from the bundles; a test
checks that the shipped file equals a fresh extraction, so the two cannot drift.

The file is a subset so that ``pip install gpusim`` (which does not ship ``validation/reports``)
can still run the lessons: per (case, n, launch), the Nsight Compute metrics the lesson tables
use and the CUDA-event median time.

Must not import: simpy, cupy, matplotlib, gpusim's engines. (The bundles are read as plain JSON.)
"""

from __future__ import annotations

import json
import pathlib
from functools import lru_cache

from gpusim.errors import GpusimError

__all__ = ["DATA_FILE", "BUNDLES", "extract", "load", "lookup", "KEEP"]

DATA_FILE = pathlib.Path(__file__).resolve().parent.parent / "data" / "lessons_h100.json"
_ROOT = pathlib.Path(__file__).resolve().parents[2]
#: the committed bundles, relative to the repository root (scale tier first)
BUNDLES = ("validation/reports/h100/scale_tier/hardware_h100.json", "validation/reports/h100/hardware_h100.json",
           "validation/reports/h100/matmul256/hardware_h100.json")
#: metric name prefixes kept from the bundles
KEEP = ("sm__cycles_elapsed.avg", "gpu__time_duration.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
        "smsp__inst_executed", "smsp__thread_inst_executed.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared",
        "l1tex__data_bank_conflicts", "l1tex__t_sectors_pipe_lsu_mem_global", "l1tex__t_requests_pipe_lsu_mem_global",
        "smsp__average_warps_issue_stalled_", "launch__occupancy_limit_", "dram__bytes_")


def _key(case: str, n: int, launch: int) -> str:
    return f"{case}/{int(n)}/{int(launch)}"


def extract(bundles=None, root: pathlib.Path | None = None) -> dict:
    """The lessons' launches from the hardware bundles (paths relative to ``root``, the repository).

    Returns ``{"source": {...}, "launches": {"case/n/launch": {"metrics": {...}, "event_ms": float}}}``
    for every (case, n) that a lesson uses at its full, quick or test size; a launch found in several
    bundles is taken from the first. Raises GpusimError when a bundle is missing.
    """
    from gpusim.lessons.specs import LESSONS
    from gpusim.suite import CASES

    root = root or _ROOT
    wanted = {(v.case, v.n) for les in LESSONS.values() for v in les.variants}
    wanted |= {(c, n) for les in LESSONS.values() for c, n in les.quick.items()}
    wanted |= {(c, CASES[c].test_n) for les in LESSONS.values() for c in les.cases}
    out: dict = {"source": {"bundles": list(bundles or BUNDLES)}, "launches": {}}
    for rel in bundles or BUNDLES:
        path = root / rel
        if not path.exists():
            raise GpusimError(f"hardware bundle {path} not found (run from a clone of the repository)")
        hw = json.loads(path.read_text())
        out["source"].setdefault("gpu", hw.get("provenance", {}).get("gpu_name"))
        for r in hw["launches"]:
            if (r["case"], r["n"]) not in wanted or not r.get("metrics"):   # GPU-only extra sizes included
                continue
            k = _key(r["case"], r["n"], r["launch"])
            if k in out["launches"]:
                continue
            m = {name: v for name, v in r["metrics"].items() if name.startswith(KEEP) and v is not None}
            out["launches"][k] = {"metrics": m, "event_ms": r.get("event_ms")}
    out["launches"] = dict(sorted(out["launches"].items()))
    return out


@lru_cache(maxsize=1)
def load() -> dict:
    """The shipped file's ``launches`` dict (see :func:`extract`)."""
    return json.loads(DATA_FILE.read_text())["launches"]


def lookup(case: str, n: int, launch: int | None) -> list[dict] | None:
    """The H100's metrics of ``case`` at ``n``: ``[metrics]`` of launch ``launch``, or of every
    launch (in order) when ``launch`` is None; None when the H100 was not measured there."""
    data = load()
    if launch is not None:
        rec = data.get(_key(case, n, launch))
        return None if rec is None else [rec["metrics"]]
    out, i = [], 0
    while _key(case, n, i) in data:
        out.append(data[_key(case, n, i)]["metrics"])
        i += 1
    return out or None


def main() -> None:
    """Rewrite :data:`DATA_FILE` from the committed bundles."""
    data = extract()
    DATA_FILE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{DATA_FILE}: {len(data['launches'])} launches")


if __name__ == "__main__":
    main()
