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

:func:`collect` runs that ncu command for ``gpusim validate --corpus`` (without ``--from``).

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

__all__ = ["main", "collect", "ncu_command", "gpu_rows", "ncu_metrics", "CSV_NAME", "DIGESTS_NAME", "LOG_NAME"]


def main(argv: list[str] | None = None) -> None:
    import cupy
    import numpy as np

    from gpusim.errors import GpusimError
    from validation.corpus.runner import Modules, launch
    from validation.corpus.simulate import select

    p = argparse.ArgumentParser(prog="validation/corpus/on_gpu.py")
    p.add_argument("out", type=Path)
    p.add_argument("--cases", nargs="+", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--size", choices=("gpu", "small"), default="gpu")
    p.add_argument("--check", action="store_true", help="compare outputs with the numpy oracles too")
    a = p.parse_args(argv)
    try:
        names = select(a.cases)
    except GpusimError as exc:
        raise SystemExit(f"on_gpu.py: {exc}") from None
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


#: the files a GPU run writes into its folder (what ``gpusim validate --corpus --from FOLDER`` reads)
CSV_NAME, DIGESTS_NAME, LOG_NAME = "corpus.csv", "corpus_digests.json", "corpus_log.txt"


def ncu_command(ncu: str, out: str | Path, names: list[str]) -> list[str]:
    """The documented ncu command line (module docstring) for ``names``, writing ``out/corpus.csv``
    and ``out/corpus_digests.json``."""
    from validation.corpus.simulate import METRICS

    out = Path(out)
    return [ncu, "--clock-control", "none", "--metrics", ",".join(METRICS), "--csv", "--page", "raw",
            "--print-units", "base", "--log-file", str(out / CSV_NAME), sys.executable, str(Path(__file__).resolve()),
            str(out / DIGESTS_NAME), "--cases", *names]


def collect(out: str | Path, names: list[str], progress=print, timeout: float = 6 * 3600.0) -> Path:
    """Run ``names`` on this machine's GPU under Nsight Compute (:func:`ncu_command`, i.e. :func:`main`
    under ncu); return ``out``, which then holds ``corpus.csv``, ``corpus_digests.json`` and
    ``corpus_log.txt`` (the run's output, as the docs' ``| tee`` writes it).

    Raises :class:`validation.gpu.GpuUnavailable` without CuPy or a device, and
    :class:`gpusim.GpusimError` when ncu is not found or the run writes no CSV or digests.
    """
    from gpusim.errors import GpusimError
    from validation.gpu import find_ncu, require_cupy
    from validation.hardware import _stream

    hint = ("run it on a machine with an NVIDIA GPU, CuPy and Nsight Compute, or score data collected earlier: "
            "gpusim validate --corpus --from validation/reports/h100/corpus")
    require_cupy(hint)
    ncu = find_ncu()
    if not ncu:
        raise GpusimError(f"--corpus: Nsight Compute (ncu) not found on PATH or in the usual CUDA folders; the "
                          f"corpus's cycles are ncu's sm__cycles_elapsed.avg; {hint}")
    progress(f"corpus: {len(names)} case(s) on this GPU under {ncu} ...")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name in (CSV_NAME, DIGESTS_NAME):  # no stale file may pass for this run's
        (out / name).unlink(missing_ok=True)
    with open(out / LOG_NAME, "w") as log:
        def tee(line: str) -> None:
            progress(line)
            log.write(line.strip() + "\n")
            log.flush()

        rc = _stream(ncu_command(ncu, out, names), tee, timeout)
    for name in (CSV_NAME, DIGESTS_NAME):
        if not (out / name).is_file():
            raise GpusimError(f"the corpus's GPU run wrote no {out / name} (status {rc}); see {out / LOG_NAME}")
    return out


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
