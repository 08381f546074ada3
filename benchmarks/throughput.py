"""Simulation throughput of either engine: instructions per host second, and peak memory.

Runs each selected suite case once in a fresh subprocess (so that its peak
resident memory is its own) and prints a Markdown table for the docs (docs/model/functional.md, docs/model/timing.md):
case, problem size, launches, warp and thread instructions, host seconds,
thread-instructions per second and peak RSS.

Usage::

    python benchmarks/throughput.py                  # functional: reductions at n = 2**22, matmuls at 512
    python benchmarks/throughput.py --mode timing    # timing: reductions at n = 2**20, matmuls at 256
    python benchmarks/throughput.py --cases reduce_v3 --n 1048576

The timing engine is measured detailed (``Device(sampling=False)``: every CTA on every SM;
``benchmarks/scale.py`` and ``benchmarks/sampling.py`` measure sampled timing), in
warp-instructions per second (the unit
GPGPU-Sim and Accel-Sim report), both per wall-clock second of the simulation
and per CPU second of the process (the latter does not depend on what else
the machine runs), the functional engine in thread-instructions per second.

Sizes: the reductions run at n = 2**22 floats as the issue asks. The matmul
cases run at 512 x 512 (2**18 outputs): at n = 2**22 outputs (2048 x 2048) the
naive kernel executes about 7e10 thread-instructions, over ten minutes on one
core, which is a soak test, not a benchmark; the rate is size-independent once
a launch fills a chunk (2**17 threads).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

DEFAULT = [("reduce_v0", 1 << 22), ("reduce_v1", 1 << 22), ("reduce_v2", 1 << 22), ("reduce_v3", 1 << 22),
           ("reduce_v4", 1 << 22), ("reduce_v5", 1 << 22), ("reduce_v6", 1 << 22), ("reduce_v7", 1 << 22),
           ("matmul_naive", 512), ("matmul_tiled", 512), ("matmul_regtile", 512)]
TIMING = [(c, 1 << 20) for c, _ in DEFAULT[:7]] + [("matmul_naive", 256), ("matmul_tiled", 256),
                                                   ("matmul_regtile", 256)]


def one(case: str, n: int, mode: str) -> dict:
    import resource

    import gpusim
    from gpusim.suite import CASES, check, run_case

    # The detailed engine: every CTA on every SM (sampling would time only a slice; benchmarks/scale.py).
    with gpusim.Device("h100", mode, sampling=False):
        cpu = time.process_time()
        r = run_case(CASES[case], gpusim, n, 0)
        cpu = time.process_time() - cpu
    ok, msg = check(r)
    sim = sum(x.host_seconds for x in r.launches)
    thread = sum(x.metrics["smsp__thread_inst_executed.sum"] for x in r.launches)
    warp = sum(x.metrics["smsp__inst_executed.sum"] for x in r.launches)
    return {"case": case, "n": n, "mode": mode, "launches": len(r.launches), "warp_inst": warp, "thread_inst": thread,
            "sim_seconds": sim, "cpu_seconds": cpu, "thread_inst_per_s": thread / sim, "warp_inst_per_s": warp / sim,
            "warp_inst_per_cpu_s": warp / cpu,
            "cycles": sum(x.cycles or 0 for x in r.launches), "peak_rss_mib": resource.getrusage(
                resource.RUSAGE_SELF).ru_maxrss / 1024, "ok": ok, "check": msg}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", help="case names (default: the reductions and matmuls)")
    ap.add_argument("--n", type=int, help="problem size for every case")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    ap.add_argument("--mode", choices=("functional", "timing"), default="functional", help="engine (default functional)")
    ap.add_argument("--_one", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._one:
        print(json.dumps(one(a._one[0], int(a._one[1]), a._one[2])))
        return 0
    default = TIMING if a.mode == "timing" else DEFAULT
    todo = [(c, a.n or dict(default).get(c, 1 << 20)) for c in a.cases] if a.cases else default
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    rows = []
    rate = "warp inst/s | warp inst/CPU s | cycles" if a.mode == "timing" else "thread inst/s"
    print(f"| case | n | launches | warp inst | thread inst | host s | {rate} | peak RSS MiB | check |")
    print("|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if a.mode == "timing" else "") + "---:|---|")
    for case, n in todo:
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, __file__, "--_one", case, str(n), a.mode], env=env, capture_output=True,
                             text=True, check=False)
        if out.returncode != 0:
            print(f"| {case} | {n} | failed: {out.stderr.strip().splitlines()[-1] if out.stderr else '?'} |")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        r["wall_seconds"] = time.perf_counter() - t0
        rows.append(r)
        print(f"| {case} | {n:,} | {r['launches']} | {r['warp_inst']:,} | {r['thread_inst']:,} | "
              f"{r['sim_seconds']:.2f} | " + (f"{r['warp_inst_per_s']:,.0f} | {r['warp_inst_per_cpu_s']:,.0f} | {r['cycles']:,}"
                                               if a.mode == "timing"
                                               else f"{r['thread_inst_per_s'] / 1e6:.0f} M") +
              f" | {r['peak_rss_mib']:.0f} | "
              f"{'ok' if r['ok'] else 'MISMATCH'} |", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
