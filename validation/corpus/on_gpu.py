"""The H100's side of the corpus: every case at its ``gpu`` size through CuPy, meant to run under ncu.

Each case is launched twice with fresh inputs (same seed as ``simulate.py``): a warm-up (prints
``warmup NAME``; it compiles the module and warms the instruction cache) and the measured launch
(prints ``launch NAME``), whose outputs are digested (sha256 of each canonical output,
:func:`validation.corpus.cases.digests`). Inputs are uploaded with ``cupy.asarray`` and constants
with ``.set`` (copies, no kernels), so ncu's rows are exactly the corpus kernels, two per case, in
the order of ``order`` in the JSON; :func:`gpu_rows` maps the second row of each pair to its case.

Run on the GPU machine, from the repository root, clocks untouched::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,gpu__time_duration.sum,\\
        lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,\\
        lts__t_sectors_op_red.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum \\
        --csv --page raw --print-units base --log-file $OUT/corpus.csv \\
        python3 validation/corpus/on_gpu.py $OUT/corpus_digests.json | tee $OUT/corpus_log.txt

(``--cases NAME|FAMILY ...`` runs a subset, ``--seed S`` other inputs.) Without ncu the same command
checks the outputs: ``--check`` also compares each output with the numpy oracle (exact for integer
outputs and the exact float cases, within the case's tolerance otherwise) and prints the result.

Imports cupy inside :func:`main` only (the project's rule: only validation/ imports cupy).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.corpus import cases as C  # noqa: E402

__all__ = ["main", "gpu_rows", "ncu_metrics"]


def main(argv: list[str] | None = None) -> None:
    import cupy
    import numpy as np

    from validation.corpus.runner import Modules, launch
    from validation.corpus.simulate import select

    p = argparse.ArgumentParser(prog="validation/corpus/on_gpu.py")
    p.add_argument("out", type=Path)
    p.add_argument("--cases", nargs="+", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--size", choices=("gpu", "small"), default="gpu")
    p.add_argument("--check", action="store_true", help="compare outputs with the numpy oracles too")
    a = p.parse_args(argv)
    names = select(a.cases)
    mods = Modules(cupy)
    sync = cupy.cuda.runtime.deviceSynchronize
    props = cupy.cuda.runtime.getDeviceProperties(0)
    gpu = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    doc = {"gpu": gpu, "sm_count": cupy.cuda.Device().attributes["MultiProcessorCount"], "cupy": cupy.__version__,
           "nvrtc": list(cupy.cuda.nvrtc.getVersion()), "driver": cupy.cuda.runtime.driverGetVersion(),
           "seed": a.seed, "size": a.size, "order": names, "cases": {}}
    for name in names:
        case = C.BY_NAME[name]
        n = case.sizes[a.size]
        for label in ("warmup", "launch"):
            args = C.inputs(case, n, a.seed)
            _, outs = launch(cupy, mods, case, n, args, sync=sync)
            print(f"{label} {name}", flush=True)
        rec = {"family": case.family, "kernel": case.kernel, "n": n, "digests": C.digests(case, outs)}
        if a.check:
            got, exp = C.canonical(case, outs), C.reference(case, args, n)
            if case.tol is None:
                ok = all(g.dtype == e.dtype and np.array_equal(g, e) for g, e in zip(got, exp))
            else:
                ok = all(np.allclose(g, e, rtol=case.tol[0], atol=case.tol[1]) for g, e in zip(got, exp))
            rec["matches_oracle"] = bool(ok)
            print(f"check {name}: {'matches' if ok else 'DIFFERS from'} the numpy oracle", flush=True)
        doc["cases"][name] = rec
        a.out.write_text(json.dumps(doc, indent=1))
    print(f"{len(names)} cases -> {a.out}")


def ncu_metrics(csv_path: str | Path) -> list[dict]:
    """ncu's ``--csv --page raw`` rows (after any log lines before the header), as dicts."""
    text = Path(csv_path).read_text()
    start = text.index('"ID"')
    return [r for r in csv.DictReader(io.StringIO(text[start:])) if r.get("ID")]


def gpu_rows(csv_path: str | Path, order: list[str]) -> dict[str, dict]:
    """case name -> the measured launch's metrics (floats) from ncu's CSV; ``order`` is the JSON's
    ``order`` (each case: a warm-up row, then the measured row, in that order). Rows of kernels
    that are not the corpus's are skipped. Raises ValueError when the rows do not pair up."""
    kernels = {C.BY_NAME[x].kernel for x in order}
    rows = [r for r in ncu_metrics(csv_path) if r["Kernel Name"].split("(")[0].strip() in kernels]
    if len(rows) != 2 * len(order):
        raise ValueError(f"{csv_path}: {len(rows)} corpus kernel rows for {len(order)} cases (expected two per case)")
    out = {}
    for i, name in enumerate(order):
        r = rows[2 * i + 1]
        kname = r["Kernel Name"].split("(")[0].strip()
        if kname != C.BY_NAME[name].kernel:
            raise ValueError(f"{csv_path}: row {2 * i + 1} is {kname}, expected {C.BY_NAME[name].kernel} for {name}")
        vals = {}
        for k, v in r.items():
            if "__" in (k or ""):
                try:
                    vals[k] = float(str(v).replace(",", ""))
                except ValueError:
                    pass
        out[name] = vals
    return out


if __name__ == "__main__":
    main()
