"""A user's kernel on both sides: a PTX file with an experiment TOML (``gpusim run`` format).

Owns: :func:`collect` (GPU: the launch with the same inputs as the simulator, its outputs,
CUDA-event times, driver occupancy and, where ``ncu`` exists, its counters; returns the
same hardware bundle format as :mod:`validation.hardware`, with the experiment's TOML and
PTX text inside so the report can be rebuilt anywhere), :func:`simulate` (the simulator
side of such a bundle entry) and the ``python3 -m validation.experiment --once FILE`` entry
point that ncu profiles.

Inputs are built by :func:`gpusim.experiment.build_args` with the experiment's seed in the
functional simulator, and their host copies are uploaded to the GPU, so both sides see the
same bytes. Every array argument is an output (compared bit for bit after the launch).

Imports cupy only inside :func:`collect` and :func:`_launch_on_gpu`; must not import simpy
at module level (timing mode imports it in :func:`simulate`).
"""

from __future__ import annotations

import hashlib
import math
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile
import time
from typing import Callable

import numpy as np

from validation import gpu as gpu_mod

__all__ = ["collect", "simulate", "case_name"]


def case_name(path: pathlib.Path) -> str:
    """The pseudo-case name of an experiment in bundles and reports: ``exp:<file stem>``."""
    return f"exp:{pathlib.Path(path).stem}"


def _inputs(exp) -> tuple[list, dict[int, np.ndarray]]:
    """(arguments with host numpy arrays in place of device arrays, {position: host array})."""
    import gpusim
    from gpusim.experiment import build_args

    with gpusim.Device("h100"):
        args, arrays = build_args(exp.args, np.random.default_rng(exp.seed))
        host = {i: np.ascontiguousarray(a.get()) for i, a in arrays.items()}
    return [host.get(i, a) for i, a in enumerate(args)], host


def _launch_on_gpu(exp, cupy):
    """Upload the inputs, launch once, synchronise; return (kernel, device args, host inputs)."""
    args, host = _inputs(exp)
    dev_args = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    from gpusim.experiment import kernel_of

    fn = kernel_of(cupy, exp.ptx, exp.kernel)
    if exp.shared_mem > fn.max_dynamic_shared_size_bytes:
        fn.max_dynamic_shared_size_bytes = exp.shared_mem
    fn(exp.grid, exp.block, tuple(dev_args), shared_mem=exp.shared_mem)
    cupy.cuda.Device().synchronize()
    return fn, dev_args, host


def _ncu_metrics(path: pathlib.Path, ncu: str, progress) -> tuple[dict | None, str]:
    from validation import ncu as ncu_mod
    from validation.hardware import ncu_metrics

    with tempfile.TemporaryDirectory() as tmp:
        log = pathlib.Path(tmp) / "ncu.csv"
        cmd = [ncu, *ncu_mod.BASE_OPTIONS, "--metrics", ",".join(ncu_metrics()), "--log-file", str(log),
               sys.executable, "-m", "validation.experiment", "--once", str(path)]
        progress("ncu: " + shlex.join(cmd[:6]) + " ...")
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=gpu_mod.ROOT)
        except subprocess.TimeoutExpired:
            return None, shlex.join(cmd)
        text = log.read_text(errors="replace") if log.is_file() else out.stdout
        rows, _ = ncu_mod.read_ncu_csv(text)
    if len(rows) != 1:
        progress(f"ncu gave {len(rows)} rows (status {out.returncode}); counters left out")
        return None, shlex.join(cmd)
    requested = set(ncu_metrics())
    return {k: ncu_mod.parse_value(v) for k, v in rows[0].items() if k in requested}, shlex.join(cmd)


def collect(path: str | os.PathLike, out_dir: str | os.PathLike, *, use_ncu: bool = True, warmup: int = 3,
            repeat: int = 20, progress: Callable[[str], None] = print) -> pathlib.Path:
    """Run the experiment ``path`` on this machine's GPU; write ``hardware_<slug>.json`` and
    ``outputs_<slug>.npz`` into ``out_dir``; return the bundle's path.

    Raises :class:`validation.gpu.GpuUnavailable` without CuPy/GPU and GpusimError for a bad
    experiment file (named, with the key at fault).
    """
    from gpusim.experiment import load_experiment
    from validation.hardware import FORMAT, _probe_module

    exp = load_experiment(path)
    cupy = gpu_mod.require_cupy()
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ncu = gpu_mod.find_ncu() if use_ncu else None
    prov = gpu_mod.provenance(cupy, ncu)
    name = case_name(path)
    progress(f"{name}: {exp.kernel} grid {exp.grid} block {exp.block} on {prov['gpu_name']}")
    fn, dev_args, host = _launch_on_gpu(exp, cupy)
    outputs = {f"{name}/arg{i}": dev_args[i].get() for i in host}
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for _ in range(warmup):
        fn(exp.grid, exp.block, tuple(dev_args), shared_mem=exp.shared_mem)
    samples = []
    for _ in range(repeat):
        start.record()
        fn(exp.grid, exp.block, tuple(dev_args), shared_mem=exp.shared_mem)
        end.record()
        end.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, end))
    threads = math.prod(exp.block)
    ptr = fn.kernel.ptr if hasattr(fn, "kernel") else fn.ptr
    occ = {"ptx": exp.ptx.name, "kernel": exp.kernel, "block_threads": threads, "dynamic_smem": exp.shared_mem,
           "num_regs": int(fn.num_regs), "shared_size_bytes": int(fn.shared_size_bytes),
           "max_dynamic_shared_size_bytes": int(fn.max_dynamic_shared_size_bytes),
           "driver_blocks_per_sm": int(cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
               ptr, threads, exp.shared_mem))}
    metrics, ncu_cmd = _ncu_metrics(pathlib.Path(path), ncu, progress) if ncu else (None, None)
    dims = lambda v: list(v) + [1] * (3 - len(v))  # noqa: E731
    launch = {"case": name, "n": 0, "extra": False, "run": 0, "launch": 0, "kernel": exp.kernel,
              "grid": dims(exp.grid), "block": dims(exp.block), "shared_mem": exp.shared_mem, "ok": True,
              "event_ms": float(np.median(samples)), "event_ms_min": min(samples), "event_ms_max": max(samples),
              "event_samples": len(samples), "metrics": metrics}
    slug = prov["slug"]
    np.savez_compressed(out / f"outputs_{slug}.npz", **outputs)
    bundle = {"format": FORMAT, "provenance": prov,
              "collection": {"experiment": str(path), "ncu_command": ncu_cmd, "events_method":
                             f"{warmup} warm-up launches, median of {repeat} CUDA-event-timed launches"},
              "runs": [{"case": name, "n": 0, "ok": True, "launches": 1}], "launches": [launch],
              "occupancy": [occ], "outputs_npz": f"outputs_{slug}.npz",
              "experiments": {name: {"toml": pathlib.Path(path).read_text(), "ptx_name": exp.ptx.name,
                                     "ptx": exp.ptx.read_text(),
                                     "input_sha256": {f"arg{i}": hashlib.sha256(a.tobytes()).hexdigest()
                                                      for i, a in host.items()}}}}
    bundle_path = out / f"hardware_{slug}.json"
    bundle_path.write_text(_probe_module().dump_json(bundle))
    progress(f"{name}: {launch['event_ms']:.4f} ms (CUDA events), occupancy {occ['driver_blocks_per_sm']} blocks/SM, "
             f"{'counters from ncu' if metrics else 'no ncu counters'} -> {bundle_path}")
    return bundle_path


def _materialise(entry: dict, tmp: pathlib.Path):
    """Load an experiment from its recorded TOML text, with its recorded PTX written into ``tmp``."""
    from gpusim.experiment import load_experiment

    toml = tmp / "experiment.toml"
    toml.write_text(entry["toml"])
    exp = load_experiment(toml)
    exp.ptx = tmp / entry["ptx_name"]
    exp.ptx.write_text(entry["ptx"])
    return exp


def simulate(name: str, entry: dict, config: str = "h100", overrides: dict | None = None) -> dict:
    """The simulator side of bundle experiment ``entry`` (timing mode); same dict as
    :func:`validation.simulate.simulate_run`. The experiment's own ``[set]`` overrides apply
    first, then ``overrides``."""
    import gpusim
    from gpusim.experiment import build_args, kernel_of

    t0 = time.perf_counter()
    rec: dict = {"case": name, "n": 0, "error": None, "outputs": {}, "launches": []}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            exp = _materialise(entry, pathlib.Path(tmp))
            with gpusim.Device(config, mode="timing", overrides={**exp.overrides, **(overrides or {})},
                               sampling=False):
                args, arrays = build_args(exp.args, np.random.default_rng(exp.seed))
                fn = kernel_of(gpusim, exp.ptx, exp.kernel)
                res = fn(exp.grid, exp.block, args, shared_mem=exp.shared_mem)
                rec["outputs"] = {f"arg{i}": np.asarray(a.get()) for i, a in arrays.items()}
        except Exception as exc:  # reported in the report, not raised
            rec["error"] = f"{type(exc).__name__}: {exc}"
            rec["host_seconds"] = round(time.perf_counter() - t0, 2)
            return rec
    occ = getattr(res, "occupancy", None)
    rec["launches"].append({"cycles": int(res.cycles), "metrics": {k: v for k, v in res.metrics.items()
                                                                    if isinstance(v, (int, float))},
                            "regs_per_thread": getattr(occ, "regs_per_thread", None),
                            "blocks_per_sm": getattr(occ, "blocks_per_sm", None)})
    rec["host_seconds"] = round(time.perf_counter() - t0, 2)
    return rec


def _main(argv=None) -> int:
    import argparse

    from gpusim.experiment import load_experiment

    ap = argparse.ArgumentParser(description="launch an experiment once on the GPU (what ncu profiles)")
    ap.add_argument("--once", required=True, metavar="TOML")
    a = ap.parse_args(argv)
    _launch_on_gpu(load_experiment(a.once), gpu_mod.require_cupy())
    return 0


if __name__ == "__main__":
    sys.exit(_main())
