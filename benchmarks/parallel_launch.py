"""Speed-up of one GPU-filling launch on several worker processes (``Device(jobs=N)``).

Times each workload with jobs = 1, 2, 4, 8, 16 (those up to the cores this process may use) in
one process, one after the other, checks that outputs, counters (``metrics``, per-PC
``inst_executed``/``thread_inst_executed``/``pc_metrics``) and cycles are identical to jobs=1,
and writes ``benchmarks/results/parallel_launch.json`` (the machine, each run's wall seconds and
path, the speed-ups). Workloads (full size / ``--quick``):

- ``sgemm_functional``: the suite's tiled SGEMM (``matmul_tiled``) at 1,024 / 256, functional mode;
- ``softmax_functional``: a row softmax (one warp per row, ``validation/frontends/cuda_kernels.py``'s
  ``softmax_rows``, compiled by NVRTC; skipped without the ``cuda`` extra) over 8,192 x 2,048 /
  2,048 x 512 floats, functional mode;
- ``copy_functional``: ``copy_offset`` over 2^22 / 2^18 floats, functional mode (a short launch: the
  fixed cost of starting workers);
- ``sgemm_timing``, ``softmax_timing``: the same launches in the default timing mode (sampled;
  the workers run its functional part, the slice of SMs stays serial), with jobs 1 and the most
  (``--timing-jobs``): at full size each takes minutes per run.

Usage::

    python benchmarks/parallel_launch.py                       # full sizes (the 16-core GPU machine: ~1 h)
    python benchmarks/parallel_launch.py --quick --jobs 1,2    # small sizes, about 2 minutes on 2 cores
    python benchmarks/parallel_launch.py --cases sgemm_functional softmax_functional --json /tmp/p.json

Wall-clock seconds depend on what else the machine runs: the load average at the start is recorded,
and each run's CPU seconds (this process and its workers), which a busy machine inflates less.
Exit status 1 if any run differs from jobs=1.
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
sys.path.insert(0, str(ROOT))

from validation.frontends.cuda_kernels import SOURCE as SOFTMAX  # noqa: E402  (holds softmax_rows)

#: name -> (mode, kind, full size, quick size, warm-up size)
WORKLOADS = {
    "sgemm_functional": ("functional", "matmul_tiled", 1024, 256, 64),
    "softmax_functional": ("functional", "softmax", (8192, 2048), (2048, 512), (64, 64)),
    "copy_functional": ("functional", "copy_offset", 1 << 22, 1 << 18, 1 << 12),
    "sgemm_timing": ("timing", "matmul_tiled", 1024, 256, 64),
    "softmax_timing": ("timing", "softmax", (8192, 2048), (2048, 512), (64, 64)),
}


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _softmax(gpusim, size) -> tuple[dict, list]:
    rows, cols = size
    k = gpusim.RawModule(code=SOFTMAX).get_function("softmax_rows")
    x = gpusim.asarray(np.random.default_rng(0).random(rows * cols, dtype=np.float32))
    y = gpusim.zeros(rows * cols, np.float32)
    res = k((rows,), (32,), (x, y, np.int32(cols)))
    return {"y": y.get()}, [res]


def _cpu() -> float:
    """CPU seconds (user + system) of this process and of its finished children (the workers)."""
    import resource

    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                  resource.getrusage(resource.RUSAGE_CHILDREN)))


def run_once(kind: str, mode: str, size, jobs: int) -> tuple[dict, list, float, float]:
    """One workload at one jobs value: (outputs, launch results, wall seconds, CPU seconds of this
    process and its workers)."""
    import gpusim
    from gpusim.suite import CASES, run_case

    t0, c0 = time.perf_counter(), _cpu()
    with gpusim.Device("h100", mode, jobs=jobs):
        if kind == "softmax":
            outputs, launches = _softmax(gpusim, size)
        else:
            run = run_case(CASES[kind], gpusim, size, 0)
            outputs, launches = dict(run.outputs), list(run.launches)
    return outputs, launches, time.perf_counter() - t0, _cpu() - c0


def digest(outputs: dict, launches: list) -> str:
    """A hash of everything that must not depend on the workers: outputs' bytes, metrics, per-PC
    counters, stalls and cycles of every launch."""
    h = hashlib.sha256()
    for key in sorted(outputs):
        h.update(key.encode())
        h.update(np.ascontiguousarray(outputs[key]).view(np.uint8).tobytes())
    for r in launches:
        h.update(json.dumps(sorted((k, repr(v)) for k, v in r.metrics.items())).encode())
        h.update(repr(r.cycles).encode())
        for arr in (r.inst_executed, r.thread_inst_executed):
            h.update(np.ascontiguousarray(arr).tobytes())
        for name in sorted(r.pc_metrics):
            h.update(name.encode())
            h.update(np.ascontiguousarray(r.pc_metrics[name]).tobytes())
        for name in sorted(r.stalls or {}):
            h.update(name.encode())
            h.update(np.ascontiguousarray(r.stalls[name]).tobytes())
    return h.hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a check that it works; seconds per run)")
    ap.add_argument("--jobs", default="1,2,4,8,16",
                    help="worker counts of the functional workloads (those above the cores are left out)")
    ap.add_argument("--timing-jobs", default=None,
                    help="worker counts of the timing workloads (default: 1 and the largest of --jobs)")
    ap.add_argument("--cases", nargs="*", default=list(WORKLOADS), choices=list(WORKLOADS))
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "parallel_launch.json"))
    a = ap.parse_args(argv)

    import gpusim
    from gpusim.functional import parallel

    n_cores = cores()
    jobs = [j for j in (int(v) for v in a.jobs.split(",")) if j <= n_cores] or [1]
    if 1 not in jobs:
        jobs = [1] + jobs
    timing_jobs = [int(v) for v in a.timing_jobs.split(",")] if a.timing_jobs else sorted({1, max(jobs)})
    timing_jobs = [j for j in timing_jobs if j <= n_cores] or [1]
    if 1 not in timing_jobs:
        timing_jobs = [1] + timing_jobs
    load0 = os.getloadavg()
    runs, ok = [], True
    for name in a.cases:
        mode, kind, full, quick, warm = WORKLOADS[name]
        size = quick if a.quick else full
        try:  # warm up (parsing, NVRTC, ptxas) on a small size, untimed
            run_once(kind, mode, warm, 1)
        except gpusim.GpusimError as exc:
            print(f"{name}: skipped ({exc})", file=sys.stderr)
            continue
        ref = None
        for j in timing_jobs if mode == "timing" else jobs:
            outputs, launches, wall, cpu = run_once(kind, mode, size, j)
            d = digest(outputs, launches)
            ref = d if ref is None else ref
            same = d == ref
            ok &= same
            row = {"case": name, "mode": mode, "size": list(size) if isinstance(size, tuple) else size, "jobs": j,
                   "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "host_seconds": round(sum(r.host_seconds for r in launches), 3),
                   "parallel": [r.parallel for r in launches], "cycles": [r.cycles for r in launches],
                   "identical_to_jobs_1": same}
            runs.append(row)
            print(f"{name:20s} size {row['size']!s:12s} jobs {j:2d}: {wall:8.2f} s wall {cpu:8.2f} s CPU  "
                  f"{row['parallel'][0]}"
                  f"{'' if same else '  DIFFERS FROM jobs=1'}", flush=True)
    speedups: dict = {}
    for r in runs:
        base = next(x for x in runs if x["case"] == r["case"] and x["jobs"] == 1)
        speedups.setdefault(r["case"], {})[str(r["jobs"])] = round(base["wall_s"] / r["wall_s"], 2)
    out = {
        "benchmark": "benchmarks/parallel_launch.py" + (" --quick" if a.quick else ""),
        "machine": {"cores": n_cores, "platform": platform.platform(), "python": platform.python_version(),
                    "processor": platform.processor(), "load_average_at_start": [round(x, 2) for x in load0]},
        "gpusim_version": gpusim.__version__,
        "chunking": {"MIN_CHUNK_THREADS": parallel.MIN_CHUNK_THREADS, "TARGET_CHUNKS": parallel.TARGET_CHUNKS,
                     "MIN_PARALLEL_THREADS": parallel.MIN_PARALLEL_THREADS},
        "runs": runs,
        "speedup_vs_jobs_1": speedups,
        "all_identical": bool(ok),
    }
    path = pathlib.Path(a.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"\nspeed-ups (wall, vs jobs=1): {json.dumps(speedups)}\nall identical: {ok}\nwrote {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
