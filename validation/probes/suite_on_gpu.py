"""Hardware probe: run every gpusim kernel-suite case on a real GPU with CuPy.

The suite (``gpusim/suite``) describes each kernel by a ``run(xp, n, rng)``
function written against the CuPy-compatible API subset, so this script runs
the very same case code with ``xp = cupy`` and the PTX files committed in
``gpusim/suite/ptx`` (loaded by ``cupy.RawModule(path=...)``).  Every case is
run twice with ``np.random.default_rng(0)`` inputs: at its ``test_n`` (small;
its outputs are saved so the simulator can be compared with the GPU bit for
bit without a GPU) and at its ``default_n``.  Each run is checked against the
case's numpy oracle.

Outputs (in ``$OUT``, or ``--out DIR``):

* ``suite_h100.json`` -- meta (device, driver, CuPy/NumPy versions) and one
  record per case: ok, exact (what the case demands), exact_equal (whether the
  outputs equal the oracle bit for bit), max abs/rel error, launch shape, the
  sha256 of every input array (to confirm that a later run regenerates the
  same inputs from the seed), for both sizes;
* ``suite_outputs_h100.npz`` -- the ``test_n`` outputs of every case, keys
  ``<case>/<output>``;
* ``suite_failures_h100.npz`` -- only if some run failed: its outputs and
  oracle (keys ``<case>/<size>/<output>/got|expected``), for diagnosis.

This script imports only numpy, cupy, the standard library and
``validation.probekit`` (standard library only); it loads ``gpusim/suite/__init__.py``
by file path (``probekit.load_suite``), so gpusim's other dependencies need not be
installed.  Usage (repository root, machine with a CUDA GPU)::

    python3 validation/probes/suite_on_gpu.py            # all cases, both sizes
    python3 validation/probes/suite_on_gpu.py --dry      # no GPU: DryRun launches only
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import pathlib
import platform
import sys
import time
import traceback

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:          # run as a script: make the validation package importable
    sys.path.insert(0, str(ROOT))

from validation import probekit

SEED = 0
#: the device fields of suite_h100.json's meta: key -> probekit.device_info key
DEVICE_FIELDS = {"device": "name", "compute_capability": "compute_capability", "multiprocessors": "sm_count",
                 "driver_version": "driver_version", "runtime_version": "cuda_runtime_version",
                 "cupy": "cupy_version"}
FAILURE_NPZ_LIMIT = 12 * 2**20  # bytes of failing arrays kept for diagnosis


def load_suite():
    """Import gpusim/suite/__init__.py by path (no gpusim package import)."""
    return probekit.load_suite()


def _finite(x: float):
    """JSON has no inf/nan: write them as strings."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def _meta(xp, dry: bool) -> dict:
    meta = {
        "script": "validation/probes/suite_on_gpu.py",
        "seed": SEED,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if dry:
        meta["device"] = "DryRun (no kernel executed)"
        return meta
    import cupy

    dev = probekit.device_info(cupy)
    meta.update({key: dev[field] for key, field in DEVICE_FIELDS.items()})
    return meta


def run_one(suite, case, xp, n: int, sync) -> tuple[dict, object]:
    """Run case at size n; return (record, CaseRun or None)."""
    rec: dict = {"n": int(n)}
    t0 = time.perf_counter()
    try:
        run = suite.run_case(case, xp, n, seed=SEED)
        sync()
    except Exception as exc:  # a failing case must not stop the others
        rec.update(ok=False, error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=6))
        return rec, None
    rec["seconds"] = round(time.perf_counter() - t0, 4)
    rows = suite.compare(run)
    ok, message = suite.check(run)
    rec.update(
        ok=bool(ok),
        message=message,
        exact_equal=bool(all(r["exact_equal"] for r in rows)),
        max_abs_err=_finite(max((r["max_abs_err"] for r in rows), default=0.0)),
        max_rel_err=_finite(max((r["max_rel_err"] for r in rows), default=0.0)),
        outputs=[{k: _finite(v) for k, v in r.items()} for r in rows],
        kernel=run.kernel,
        grid=list(run.grid),
        block=list(run.block),
        shared_mem=run.shared_mem,
        launches=len(run.launches),
        input_sha256={k: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()
                      for k, v in run.inputs.items()},
    )
    return rec, run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."), help="output folder (default $OUT or .)")
    ap.add_argument("--dry", action="store_true", help="use the suite's DryRun xp instead of CuPy")
    ap.add_argument("--cases", nargs="*", help="only these case names")
    ap.add_argument("--test-only", action="store_true", help="skip the default_n runs")
    args = ap.parse_args(argv)

    suite = load_suite()
    if args.dry:
        xp = suite.DryRun()
        sync = lambda: None  # noqa: E731
    else:
        import cupy as xp

        sync = xp.cuda.Device().synchronize
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    names = args.cases or list(suite.CASES)
    summary = {"meta": _meta(xp, args.dry), "cases": []}
    saved: dict[str, np.ndarray] = {}
    failures: dict[str, np.ndarray] = {}
    failure_bytes = 0
    for name in names:
        case = suite.CASES[name]
        entry = {"case": name, "group": case.group, "ptx": case.ptx, "kernel": case.kernel,
                 "doc": case.doc, "n_means": case.n_means}
        sizes = [("test", case.test_n)] + ([] if args.test_only else [("default", case.default_n)])
        for label, n in sizes:
            rec, run = run_one(suite, case, xp, n, sync)
            entry[label] = rec
            if run is not None:
                entry.setdefault("exact", run.exact)
                entry.setdefault("rtol", run.rtol)
                if run.tolerance_note:
                    entry.setdefault("tolerance_note", run.tolerance_note)
                if label == "test":
                    for key, arr in run.outputs.items():
                        saved[f"{name}/{key}"] = np.asarray(arr)
                if not rec["ok"]:
                    for key, exp in run.expected.items():
                        got = np.asarray(run.outputs.get(key, np.zeros(0)))
                        if failure_bytes + got.nbytes + np.asarray(exp).nbytes <= FAILURE_NPZ_LIMIT:
                            failures[f"{name}/{label}/{key}/got"] = got
                            failures[f"{name}/{label}/{key}/expected"] = np.asarray(exp)
                            failure_bytes += got.nbytes + np.asarray(exp).nbytes
        entry["ok"] = all(entry[label].get("ok", False) for label, _ in sizes)
        entry["exact_equal"] = all(entry[label].get("exact_equal", False) for label, _ in sizes)
        summary["cases"].append(entry)
        status = "ok  " if entry["ok"] else "FAIL"
        detail = "; ".join(f"{label} n={entry[label]['n']}: {entry[label].get('message') or entry[label].get('error')}"
                           for label, _ in sizes)
        print(f"{status} {name:24s} {detail}", flush=True)

    n_ok = sum(e["ok"] for e in summary["cases"])
    summary["meta"].update(cases=len(summary["cases"]), cases_ok=n_ok)
    (out_dir / "suite_h100.json").write_text(json.dumps(summary, indent=1) + "\n")
    np.savez_compressed(out_dir / "suite_outputs_h100.npz", **saved)
    if failures:
        np.savez_compressed(out_dir / "suite_failures_h100.npz", **failures)
    print(f"{n_ok}/{len(summary['cases'])} cases ok on {summary['meta']['device']}")
    return 0 if n_ok == len(summary["cases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
