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

:func:`run_cases` is the process pool (also ``gpusim validate --corpus``'s), :func:`select` the choice of
cases by name, family and half.

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

__all__ = ["METRICS", "simulate_case", "select", "run_cases", "main"]

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


def select(names: list[str] | None = None, half: str | None = None, split_path: str | Path | None = None,
           among: list[str] | None = None) -> list[str]:
    """Case names, in corpus order, from ``names`` (case and family names; all cases when none),
    restricted to ``half`` (``"fit"``, ``"test"``, ``"all"`` or None: ``split.toml``'s halves) and, when
    ``among`` is given and ``names`` is not, to the cases of ``among`` (e.g. those a GPU run measured).

    Raises :class:`gpusim.GpusimError` naming ``--cases`` or ``--half`` when a name is neither a
    case nor a family, when the half is not fit, test or all, or when nothing is left.
    """
    from gpusim.errors import GpusimError

    if half not in (None, "all", "fit", "test"):
        raise GpusimError(f"--half {half!r}: must be fit, test or all (the halves of validation/corpus/split.toml)")
    if names:
        picked = set()
        for x in names:
            found = [c.name for c in C.CASES if x in (c.name, c.family)]
            if not found:
                raise GpusimError(f"--cases {x!r}: no corpus case or family of that name (families: "
                                  f"{', '.join(C.FAMILIES)}; cases: validation/corpus/cases.py)")
            picked.update(found)
    else:
        picked = {c.name for c in C.CASES} if among is None else set(among)
    out = [c.name for c in C.CASES if c.name in picked]
    if half in ("fit", "test"):
        halves = C.split(split_path)
        out = [x for x in out if halves.get(C.BY_NAME[x].family) == half]
        if not out:
            raise GpusimError(f"--half {half}: none of the selected cases is in the {half} half "
                              f"(validation/corpus/split.toml)")
    return out


def run_cases(names: list[str], out: Path | None = None, *, jobs: int = 1, size: str = "gpu", seed: int = 0,
              gpu: str = "h100", cta_jobs: int = 1, overrides: dict | None = None, doc: dict | None = None,
              progress=print) -> dict:
    """Simulate ``names`` with :func:`simulate_case`, ``jobs`` at once (one fresh process per case);
    return the JSON document (keys gpu_config, overrides, size, seed, cases: {name: record}).

    ``doc``: a document to add to (``--resume``); ``out``: rewritten after every case, so a run cut
    short keeps what finished; ``progress``: called with one line per finished case."""
    doc = doc if doc is not None else {"gpu_config": gpu, "overrides": overrides or {}, "size": size, "seed": seed,
                                       "cases": {}}
    with ProcessPoolExecutor(max(1, jobs), max_tasks_per_child=1) as pool:
        futs = {pool.submit(simulate_case, x, size, seed, gpu, cta_jobs, overrides or {}): x for x in names}
        for f in as_completed(futs):
            r = f.result()
            doc["cases"][r["case"]] = r
            if out is not None:
                _write(out, doc)
            cyc = r.get("metrics", {}).get("sm__cycles_elapsed.avg")
            what = r["error"] if r["error"] else f"{cyc:>12,.0f} cycles  {r['sampling']}"
            progress(f"{r['case']:24s} {r['host_seconds']:7.1f} s  {what}")
    return doc


def _write(path: Path, doc: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> None:
    import tomllib

    from gpusim.errors import GpusimError

    p = argparse.ArgumentParser(prog="validation/corpus/simulate.py", description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--cases", nargs="+", default=None, help="case or family names (default: all)")
    p.add_argument("--jobs", type=int, default=1, help="cases run at once (one process each)")
    p.add_argument("--cta-jobs", type=int, default=1, help="gpusim.Device(jobs=...) of each case")
    p.add_argument("--size", choices=("gpu", "small"), default="gpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gpu", default="h100")
    p.add_argument("--set", action="extend", nargs="+", default=[], metavar="FIELD=VALUE",
                   help="config overrides (TOML values; repeatable)")
    p.add_argument("--resume", action="store_true", help="keep the cases already in OUT and run the rest")
    a = p.parse_args(argv)
    over = {k: tomllib.loads(f"v = {v}")["v"] for k, v in (kv.split("=", 1) for kv in a.set)}
    try:
        names = select(a.cases)
    except GpusimError as exc:
        raise SystemExit(f"simulate.py: {exc}") from None
    doc = {"gpu_config": a.gpu, "overrides": over, "size": a.size, "seed": a.seed, "cases": {}}
    if a.resume and a.out.exists():
        doc["cases"] = {k: v for k, v in json.loads(a.out.read_text())["cases"].items() if not v.get("error")}
        names = [x for x in names if x not in doc["cases"]]
    os.environ["GPUSIM_JOBS"] = str(a.cta_jobs)
    t0 = time.perf_counter()
    run_cases(names, a.out, jobs=a.jobs, size=a.size, seed=a.seed, gpu=a.gpu, cta_jobs=a.cta_jobs, overrides=over,
              doc=doc, progress=lambda line: print(line, flush=True))
    print(f"{len(names)} cases in {time.perf_counter() - t0:.0f} s -> {a.out}")


if __name__ == "__main__":
    main()
