"""Functional-engine speed: thread-instructions per second on one core (issue #30, item 2).

Runs, in functional mode with ``jobs=1`` (one process, one core), the compute-heavy kernels and,
for comparison, the reductions:

- ``matmul_tiled``: the suite's shared-memory tiled SGEMM (16 x 16 tiles, ``fma.rn.f32`` and
  ``ld.shared`` in the inner loop);
- ``matmul_regtile``: the suite's register-tiled SGEMM (``ld.global`` + ``fma.rn.f32``);
- ``hgemm_mma``: the suite's ``mma.sync.m16n8k16`` f16 GEMM (the tensor-core dot product);
- ``reduce_v0``, ``reduce_v6``: the suite's first and sixth reductions at 2^22 elements;
- ``triton_matmul``: the Triton tutorial fp16 matmul (``validation/frontends/triton_kernels.py``,
  ``wgmma.mma_async`` under ``sm_90a``) at 512^3, only where ``triton`` is importable.

For each: wall and CPU seconds of the whole run (inputs, upload, launch, download, the suite's
numpy oracle; after an untimed warm-up at a small size: parsing, ptxas, Triton's compiler), the
launch's own seconds (``LaunchResult.host_seconds``: the functional engine), the launch's
``smsp__thread_inst_executed.sum``, thread-instructions per second of the launch (the engine's
speed: the number compared), per wall and per CPU second of the whole run (CPU seconds are less
sensitive to other processes on the machine), and a SHA-256 digest of the outputs, metrics and
per-PC counters: two runs of different engine versions must give the same digest (outputs
bit-exact, counters identical).

Usage::

    python benchmarks/functional_speed.py --label after            # writes results/functional_speed/after.json
    PYTHONPATH=/tmp/gpusim_before python /tmp/gpusim_before/benchmarks/functional_speed.py --label before \\
        --json-dir benchmarks/results/functional_speed              # an unchanged copy of the tree
    python benchmarks/functional_speed.py --compare before after   # the table of both, digests checked
    python benchmarks/functional_speed.py --cases matmul_tiled --size matmul_tiled=1024

Exit status 1 if ``--compare`` finds a digest that differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import platform
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: case -> (default size, warm-up size). Sizes: n of the suite case; the Triton matmul's M = N = K.
CASES = {
    "matmul_tiled": (512, 32),
    "matmul_regtile": (512, 32),
    "hgemm_mma": (512, 64),
    "reduce_v0": (1 << 22, 1 << 12),
    "reduce_v6": (1 << 22, 1 << 12),
    "triton_matmul": (512, 128),
}
OUT_DIR = ROOT / "benchmarks" / "results" / "functional_speed"


def _cpu() -> float:
    return time.process_time()


def _run(case: str, size: int):
    """(outputs, launch results) of one run of ``case`` at ``size`` on the current device."""
    import gpusim

    if case == "triton_matmul":
        from gpusim.frontends.triton import jit
        from validation.frontends import triton_kernels as tk

        rng = np.random.default_rng(0)
        a = gpusim.asarray(rng.standard_normal((size, size)).astype(np.float16))
        b = gpusim.asarray(rng.standard_normal((size, size)).astype(np.float16))
        c = gpusim.zeros((size, size), np.float16)
        res = tk.launch_matmul(jit(tk.matmul_kernel), a, b, c)
        return {"c": c.get()}, [res]
    from gpusim.suite import CASES as SUITE
    from gpusim.suite import run_case

    run = run_case(SUITE[case], gpusim, size, 0)
    return dict(run.outputs), list(run.launches)


def digest(outputs: dict, launches: list) -> str:
    """SHA-256 of the outputs' bytes, every launch's metrics and per-PC counters."""
    h = hashlib.sha256()
    for key in sorted(outputs):
        h.update(key.encode())
        h.update(np.ascontiguousarray(outputs[key]).view(np.uint8).tobytes())
    for r in launches:
        h.update(json.dumps(sorted((k, repr(v)) for k, v in r.metrics.items())).encode())
        for arr in (r.inst_executed, r.thread_inst_executed):
            h.update(np.ascontiguousarray(arr).tobytes())
        for name in sorted(r.pc_metrics):
            h.update(name.encode())
            h.update(np.ascontiguousarray(r.pc_metrics[name]).tobytes())
    return h.hexdigest()


def measure(case: str, size: int, warm: int) -> dict | None:
    """One timed run of ``case`` (after a warm-up run at ``warm``); ``None`` if it cannot run here."""
    import gpusim

    if case == "triton_matmul":
        try:
            import triton  # noqa: F401
        except ImportError:
            print(f"{case}: skipped (triton is not importable)", file=sys.stderr)
            return None
    with gpusim.Device("h100", "functional", jobs=1):
        _run(case, warm)
        t0, c0 = time.perf_counter(), _cpu()
        outputs, launches = _run(case, size)
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
    ti = sum(int(r.metrics["smsp__thread_inst_executed.sum"]) for r in launches)
    launch = sum(r.host_seconds for r in launches)
    wi = sum(int(r.metrics["smsp__inst_executed.sum"]) for r in launches)
    return {"case": case, "size": size, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            "launch_s": round(launch, 3), "thread_inst": ti, "warp_inst": wi,
            "thread_inst_per_launch_s": round(ti / launch), "thread_inst_per_s": round(ti / wall),
            "thread_inst_per_cpu_s": round(ti / cpu),
            "digest": digest(outputs, launches)}


def _table(rows: list[dict]) -> str:
    lines = [f"{'case':16s} {'size':>9s} {'wall s':>8s} {'CPU s':>8s} {'launch s':>9s} {'thread-inst':>14s} "
             f"{'M/s launch':>10s} {'M/s wall':>9s} {'M/s CPU':>8s}  digest"]
    for r in rows:
        lines.append(f"{r['case']:16s} {r['size']!s:>9s} {r['wall_s']:8.2f} {r['cpu_s']:8.2f} {r['launch_s']:9.2f} "
                     f"{r['thread_inst']:14,d} {r['thread_inst_per_launch_s'] / 1e6:10.1f} "
                     f"{r['thread_inst_per_s'] / 1e6:9.1f} {r['thread_inst_per_cpu_s'] / 1e6:8.1f}  {r['digest'][:12]}")
    return "\n".join(lines)


def compare(before: dict, after: dict) -> int:
    """Print the two runs side by side; 1 if a digest differs (or a case is missing from ``after``)."""
    ok = True
    print(f"{'case':16s} {'size':>9s} {'before M/s':>11s} {'after M/s':>10s} {'speed-up':>9s}  "
          f"{'run before s':>12s} {'run after s':>11s}  identical   (M/s: thread-instructions per launch second)")
    by = {(r["case"], r["size"]): r for r in after["runs"]}
    for b in before["runs"]:
        a = by.get((b["case"], b["size"]))
        if a is None:
            print(f"{b['case']:16s} {b['size']!s:>9s}  (not in the second run)")
            ok = False
            continue
        same = a["digest"] == b["digest"]
        ok &= same
        print(f"{b['case']:16s} {b['size']!s:>9s} {b['thread_inst_per_launch_s'] / 1e6:11.1f} "
              f"{a['thread_inst_per_launch_s'] / 1e6:10.1f} {b['launch_s'] / a['launch_s']:8.2f}x  "
              f"{b['wall_s']:12.2f} {a['wall_s']:11.2f}  {'yes' if same else 'NO: DIGESTS DIFFER'}")
    return 0 if ok else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    ap.add_argument("--size", action="append", default=[], metavar="CASE=N", help="another size for a case")
    ap.add_argument("--label", default="run", help="the JSON file's name under --json-dir")
    ap.add_argument("--json-dir", default=str(OUT_DIR))
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                    help="print two earlier runs (labels under --json-dir) side by side and check their digests")
    a = ap.parse_args(argv)
    out_dir = pathlib.Path(a.json_dir)
    if a.compare:
        runs = [json.loads((out_dir / f"{lab}.json").read_text()) for lab in a.compare]
        return compare(*runs)
    sizes = {k: v[0] for k, v in CASES.items()}
    for s in a.size:
        k, _, v = s.partition("=")
        sizes[k] = int(v)

    import gpusim

    load0 = os.getloadavg()
    rows = []
    for case in a.cases:
        r = measure(case, sizes[case], CASES[case][1])
        if r is not None:
            rows.append(r)
            print(_table([r]).splitlines()[-1], flush=True)
    print("\n" + _table(rows))
    out = {"benchmark": "benchmarks/functional_speed.py", "label": a.label,
           "machine": {"cores": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                       "numpy": np.__version__, "load_average_at_start": [round(x, 2) for x in load0]},
           "gpusim_version": gpusim.__version__, "gpusim_path": str(pathlib.Path(gpusim.__file__).parent), "runs": rows}
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{a.label}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
