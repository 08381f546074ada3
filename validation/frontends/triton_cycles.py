"""Cycles of Triton's tutorial kernels at GPU-filling sizes: gpusim's timing mode against ncu on a GPU.

Reads ncu's CSV (``triton_on_gpu.py ncu`` under ``ncu --csv --page raw --metrics
sm__cycles_elapsed.avg,gpu__time_duration.sum``; its rows of Triton kernels, in launch order, are the
cases of :data:`validation.frontends.triton_kernels.LARGE`), runs each case on gpusim in timing mode
(the default sampled engine; ``--no-sampling`` for every CTA) on the same inputs, and checks the outputs
against the GPU's digests (``--gpu-npz``, the npz of ``triton_on_gpu.py gpu``). Writes ``OUT`` (JSON: per case the GPU's and
gpusim's ``sm__cycles_elapsed.avg``, the error, how the launch was timed, the host seconds) and prints a
table. Needs ``gpusim[triton]``; no GPU.

Usage: ``python3 validation/frontends/triton_cycles.py NCU_CSV OUT.json [--cases add_2p24 ...] [--gpu h100]
[--config-overrides FILE.toml] [--jobs N]``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.frontends import triton_kernels as tk  # noqa: E402


def gpu_cycles(csv_path: Path) -> dict[str, dict]:
    """case -> {"cycles", "ns"} of the Triton kernels' rows of an ncu CSV (other kernels, such as torch's
    fills, are skipped), matched to :data:`tk.LARGE` in launch order."""
    text = csv_path.read_text()
    rows = [r for r in csv.DictReader(io.StringIO(text[text.index('"ID"'):]))
            if r["ID"] and not r["Kernel Name"].startswith("void ")]
    if len(rows) != len(tk.LARGE):
        raise SystemExit(f"{csv_path}: {len(rows)} Triton kernel rows, expected {len(tk.LARGE)} ({tk.LARGE})")
    num = lambda s: float(s.replace(",", ""))  # noqa: E731
    return {case: {"kernel": r["Kernel Name"], "cycles": num(r["sm__cycles_elapsed.avg"]),
                   "ns": num(r["gpu__time_duration.sum"])} for case, r in zip(tk.LARGE, rows)}


def simulate(case: str, gpu: str, overrides: str | None, sampling: bool) -> dict:
    """One case on gpusim in timing mode: cycles, how it was timed, host seconds."""
    import gpusim
    from gpusim.frontends.triton import jit
    from validation.calibrate import read_overrides

    t0 = time.perf_counter()
    kernels = {f: jit(fn) for f, fn in tk.KERNELS.items()}
    base, over = read_overrides(overrides) if overrides else (gpu, {})
    with gpusim.Device(base, mode="timing", sampling=sampling, overrides=over):
        ins = {k: gpusim.asarray(v) for k, v in tk.inputs(case).items()}
        outs = tk.empty_outputs(case, gpusim)
        res = tk.run_case(kernels, case, ins, outs)
    res = res[-1] if isinstance(res, (list, tuple)) else res
    digests = {k: hashlib.sha256(np.ascontiguousarray(v.get()).tobytes()).hexdigest() for k, v in outs.items()}
    return {"cycles": float(res.metrics["sm__cycles_elapsed.avg"]), "timed": str(res.sampling or "detailed"),
            "host_seconds": round(time.perf_counter() - t0, 1), "sha256": digests}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ncu_csv", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--cases", nargs="+", default=tk.LARGE, choices=tk.LARGE)
    p.add_argument("--gpu", default="h100")
    p.add_argument("--config-overrides", default=None)
    p.add_argument("--no-sampling", action="store_true")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--gpu-npz", type=Path, default=None, help="triton_on_gpu.py's npz: check the outputs' digests")
    a = p.parse_args(argv)
    truth = gpu_cycles(a.ncu_csv)
    ref = np.load(a.gpu_npz) if a.gpu_npz else None
    rows = []
    with ProcessPoolExecutor(a.jobs) as pool:
        futures = {pool.submit(simulate, c, a.gpu, a.config_overrides, not a.no_sampling): c for c in a.cases}
        for f in as_completed(futures):  # each row printed and written as soon as it is done
            c, sim = futures[f], f.result()
            err = sim["cycles"] / truth[c]["cycles"] - 1
            exact = None if ref is None else all(
                bytes(ref[f"{c}/{k}.sha256"]).hex() == d for k, d in sim["sha256"].items())
            rows.append({"case": c, "gpu_cycles": truth[c]["cycles"], "gpusim_cycles": sim["cycles"],
                         "error_pct": round(100 * err, 1), "timed": sim["timed"], "host_seconds": sim["host_seconds"],
                         "outputs_bit_exact": exact})
            print(f"{c:18s} GPU {truth[c]['cycles']:>11,.0f}  gpusim {sim['cycles']:>11,.0f}  {100 * err:+6.1f} %  "
                  f"outputs {'bit-exact' if exact else 'DIFFER' if exact is False else 'unchecked'} "
                  f"({sim['host_seconds']} s; {sim['timed']})", flush=True)
            a.out.write_text(json.dumps({"gpu_config": a.gpu, "overrides": a.config_overrides, "rows": rows},
                                        indent=1))
    mae = sum(abs(r["error_pct"]) for r in rows) / len(rows)
    print(f"MAE {mae:.1f} % over {len(rows)} launches; within 15 %: {sum(abs(r['error_pct']) <= 15 for r in rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
