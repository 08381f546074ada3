"""gpusim's side of the corpus: every case at its ``gpu`` size in timing mode, in parallel processes.

Each case runs in a fresh worker process (one case per process, so memory is returned) on
``gpusim.Device(GPU, mode="timing", jobs=CTA_JOBS)``, with the inputs of the same seed as
``on_gpu.py``. Per case it records ``sm__cycles_elapsed.avg`` and the counters of :data:`METRICS`
(the ones ``on_gpu.py``'s ncu command collects), ``result.sampling`` and ``result.parallel``, the
host seconds and the sha256 of every canonical output (:func:`validation.corpus.cases.digests`).
The JSON is rewritten as each case finishes, so a run cut short keeps what finished, and
``--resume`` skips the cases already in it.

Usage (repository root)::

    python3 validation/corpus/simulate.py OUT.json [--cases NAME|FAMILY ...] [--jobs 16] [--cta-jobs 1]
        [--size gpu|small] [--seed 0] [--gpu h100] [--set FIELD=VALUE ...] [--resume]

Imports gpusim (its timing mode loads SimPy); never cupy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.corpus import cases as C  # noqa: E402

__all__ = ["METRICS", "simulate_case", "select", "main"]

#: Nsight Compute metrics compared with the H100's (``on_gpu.py``'s ncu command collects them).
METRICS = ("sm__cycles_elapsed.avg", "gpu__time_duration.sum", "lts__t_sectors_op_read.sum",
           "lts__t_sectors_op_write.sum", "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum",
           "dram__bytes_read.sum", "dram__bytes_write.sum", "smsp__inst_executed.sum")


def simulate_case(name: str, size: str = "gpu", seed: int = 0, gpu: str = "h100", cta_jobs: int = 1,
                  overrides: dict | None = None) -> dict:
    """Run case ``name`` at its ``size`` on gpusim in timing mode; return a JSON-ready record
    (keys: case, family, n, metrics, sampling, parallel, host_seconds, digests, error)."""
    import gpusim
    from validation.corpus.runner import Modules, launch

    case = C.BY_NAME[name]
    n = case.sizes[size]
    rec: dict = {"case": name, "family": case.family, "n": n, "error": None}
    t0 = time.perf_counter()
    try:
        args = C.inputs(case, n, seed)
        with gpusim.Device(gpu, mode="timing", jobs=cta_jobs, overrides=overrides or {}):
            res, outs = launch(gpusim, Modules(gpusim), case, n, args)
        rec["metrics"] = {m: float(res.metrics[m]) for m in METRICS if m in res.metrics}
        rec["sampling"] = str(res.sampling)
        rec["parallel"] = str(getattr(res, "parallel", ""))
        rec["digests"] = C.digests(case, outs)
    except Exception as exc:  # recorded per case: one failing kernel must not stop the others
        rec["error"] = f"{type(exc).__name__}: {exc}"
        rec["traceback"] = traceback.format_exc(limit=4)
    rec["host_seconds"] = round(time.perf_counter() - t0, 1)
    return rec


def select(names: list[str] | None) -> list[str]:
    """Case names from names and family names (all cases when none are given)."""
    if not names:
        return [c.name for c in C.CASES]
    out = []
    for x in names:
        found = [c.name for c in C.CASES if x in (c.name, c.family)]
        if not found:
            raise SystemExit(f"simulate.py: no case or family named {x!r}")
        out += [f for f in found if f not in out]
    return out


def _write(path: Path, doc: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> None:
    import tomllib

    p = argparse.ArgumentParser(prog="validation/corpus/simulate.py", description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--cases", nargs="+", default=None, help="case or family names (default: all)")
    p.add_argument("--jobs", type=int, default=1, help="cases run at once (one process each)")
    p.add_argument("--cta-jobs", type=int, default=1, help="gpusim.Device(jobs=...) of each case")
    p.add_argument("--size", choices=("gpu", "small"), default="gpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gpu", default="h100")
    p.add_argument("--set", nargs="+", default=[], metavar="FIELD=VALUE", help="config overrides (TOML values)")
    p.add_argument("--resume", action="store_true", help="keep the cases already in OUT and run the rest")
    a = p.parse_args(argv)
    over = {k: tomllib.loads(f"v = {v}")["v"] for k, v in (kv.split("=", 1) for kv in a.set)}
    names = select(a.cases)
    doc = {"gpu_config": a.gpu, "overrides": over, "size": a.size, "seed": a.seed, "cases": {}}
    if a.resume and a.out.exists():
        doc["cases"] = {k: v for k, v in json.loads(a.out.read_text())["cases"].items() if not v.get("error")}
        names = [x for x in names if x not in doc["cases"]]
    os.environ["GPUSIM_JOBS"] = str(a.cta_jobs)
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max(1, a.jobs), max_tasks_per_child=1) as pool:
        futs = {pool.submit(simulate_case, x, a.size, a.seed, a.gpu, a.cta_jobs, over): x for x in names}
        for f in as_completed(futs):
            r = f.result()
            doc["cases"][r["case"]] = r
            _write(a.out, doc)
            cyc = r.get("metrics", {}).get("sm__cycles_elapsed.avg")
            what = r["error"] if r["error"] else f"{cyc:>12,.0f} cycles  {r['sampling']}"
            print(f"{r['case']:24s} {r['host_seconds']:7.1f} s  {what}", flush=True)
    print(f"{len(names)} cases in {time.perf_counter() - t0:.0f} s -> {a.out}")


if __name__ == "__main__":
    main()
