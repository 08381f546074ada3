"""A user's kernel on both sides: a PTX/CUDA C file, or a Numba or Triton kernel in a Python file,
with an experiment TOML (``gpusim run`` format, :mod:`gpusim.experiment`).

Owns: :func:`collect` (GPU: the launch with the same inputs as the simulator, its outputs,
CUDA-event times, driver occupancy and, where ``ncu`` exists, its counters; returns the
same hardware bundle format as :mod:`validation.hardware`, with the experiment's TOML and
kernel file's text inside so the report can be rebuilt anywhere), :func:`simulate` (the simulator
side of such a bundle entry) and the ``python3 -m validation.experiment --once FILE`` entry
point that ncu profiles.

Inputs are built by :func:`gpusim.experiment.build_args` with the experiment's seed in the
functional simulator, and their host copies are uploaded to the GPU, so both sides see the
same bytes. Every array argument is an output (compared bit for bit after the launch).

On the GPU a Numba kernel is launched by its own dispatcher with the CuPy arrays (numba-cuda takes
``__cuda_array_interface__``), a Triton kernel by its own ``JITFunction`` with the CuPy arrays wrapped
in :class:`_TritonArray` (Triton 3.6's binder and launcher ask a tensor argument only for
``data_ptr()`` and a ``dtype``; ``triton/runtime/jit.py``, ``triton/backends/nvidia/driver.py``).
Their occupancy row records null for what only a CuPy RawKernel tells (registers, static shared
memory, the driver's blocks per SM); the report leaves such rows out. The PTX the front-end compiled on
the GPU is kept as the entry's ``ptx`` (the report's rule for approximate instructions reads it); the
simulator recompiles the Python file itself.

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


class _TritonArray:
    """A CuPy array as Triton 3.6 takes a tensor argument: ``data_ptr()`` (its launcher) and a numpy
    ``dtype`` (its binder's specialization: pointer type and 16-byte divisibility)."""

    def __init__(self, arr):
        self.base, self.dtype = arr, np.dtype(arr.dtype)

    def data_ptr(self) -> int:
        return int(self.base.data.ptr)


def _launch_on_gpu(exp, cupy):
    """Upload the inputs, launch once, synchronise; return (launch, RawKernel or None, device args, host
    inputs, dynamic shared bytes, the PTX a front-end compiled or None): ``launch()`` launches once more
    with the same arguments."""
    args, host = _inputs(exp)
    dev_args = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    fn, smem, ptx = None, exp.shared_mem, None
    if exp.frontend == "numba":
        from numba import cuda

        from gpusim.frontends.numba import numpy_compat

        numpy_compat()
        nb_args = [cuda.as_cuda_array(a) if i in host else a for i, a in enumerate(dev_args)]
        launch = lambda: exp.function[exp.grid, exp.block, 0, exp.shared_mem](*nb_args)  # noqa: E731
        launch()
        ptx = "\n".join(exp.function.inspect_asm().values())  # numba-cuda: {signature: PTX}
    elif exp.frontend == "triton":
        tr_args = [_TritonArray(a) if i in host else a.item() for i, a in enumerate(dev_args)]
        launch = lambda: exp.function[exp.grid](*tr_args, **exp.meta)  # noqa: E731
        compiled = launch()
        smem = int(getattr(getattr(compiled, "metadata", None), "shared", 0))
        ptx = getattr(compiled, "asm", {}).get("ptx")
    else:
        from gpusim.experiment import kernel_of

        fn = kernel_of(cupy, exp.ptx, exp.kernel)
        if exp.shared_mem > fn.max_dynamic_shared_size_bytes:
            fn.max_dynamic_shared_size_bytes = exp.shared_mem
        launch = lambda: fn(exp.grid, exp.block, tuple(dev_args), shared_mem=exp.shared_mem)  # noqa: E731
        launch()
    cupy.cuda.Device().synchronize()
    return launch, fn, dev_args, host, smem, ptx


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
    launch_once, fn, dev_args, host, smem, frontend_ptx = _launch_on_gpu(exp, cupy)
    outputs = {f"{name}/arg{i}": dev_args[i].get() for i in host}
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for _ in range(warmup):
        launch_once()
    samples = []
    for _ in range(repeat):
        start.record()
        launch_once()
        end.record()
        end.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, end))
    threads = math.prod(exp.block)
    occ = {"ptx": exp.source.name, "kernel": exp.kernel, "block_threads": threads, "dynamic_smem": smem,
           "frontend": exp.frontend, "num_regs": None, "shared_size_bytes": None,
           "max_dynamic_shared_size_bytes": None, "driver_blocks_per_sm": None}
    if fn is not None:  # a CuPy RawKernel: the loaded function's attributes and the driver's occupancy
        ptr = fn.kernel.ptr if hasattr(fn, "kernel") else fn.ptr
        occ.update(num_regs=int(fn.num_regs), shared_size_bytes=int(fn.shared_size_bytes),
                   max_dynamic_shared_size_bytes=int(fn.max_dynamic_shared_size_bytes),
                   driver_blocks_per_sm=int(cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                       ptr, threads, exp.shared_mem)))
    metrics, ncu_cmd = _ncu_metrics(pathlib.Path(path), ncu, progress) if ncu else (None, None)
    dims = lambda v: list(v) + [1] * (3 - len(v))  # noqa: E731
    launch = {"case": name, "n": 0, "extra": False, "run": 0, "launch": 0, "kernel": exp.kernel,
              "grid": dims(exp.grid), "block": dims(exp.block), "shared_mem": smem, "ok": True,
              "event_ms": float(np.median(samples)), "event_ms_min": min(samples), "event_ms_max": max(samples),
              "event_samples": len(samples), "metrics": metrics}
    slug = prov["slug"]
    np.savez_compressed(out / f"outputs_{slug}.npz", **outputs)
    bundle = {"format": FORMAT, "provenance": prov,
              "collection": {"experiment": str(path), "ncu_command": ncu_cmd, "events_method":
                             f"{warmup} warm-up launches, median of {repeat} CUDA-event-timed launches"},
              "runs": [{"case": name, "n": 0, "ok": True, "launches": 1}], "launches": [launch],
              "occupancy": [occ], "outputs_npz": f"outputs_{slug}.npz",
              "experiments": {name: {"toml": pathlib.Path(path).read_text(),
                                     ("ptx_name" if exp.ptx else "python_name"): exp.source.name,
                                     ("ptx" if exp.ptx else "python"): exp.source.read_text(),
                                     **({"ptx": frontend_ptx} if frontend_ptx else {}),
                                     "input_sha256": {f"arg{i}": hashlib.sha256(a.tobytes()).hexdigest()
                                                      for i, a in host.items()}}}}
    bundle_path = out / f"hardware_{slug}.json"
    bundle_path.write_text(_probe_module().dump_json(bundle))
    blocks = "no driver occupancy (not a RawKernel)" if fn is None else f"occupancy {occ['driver_blocks_per_sm']} blocks/SM"
    progress(f"{name}: {launch['event_ms']:.4f} ms (CUDA events), {blocks}, "
             f"{'counters from ncu' if metrics else 'no ncu counters'} -> {bundle_path}")
    return bundle_path


def _materialise(entry: dict, tmp: pathlib.Path):
    """Load an experiment from its recorded TOML text, with its recorded kernel file (PTX, CUDA C or
    Python, under its own name) written into ``tmp``; a Python file is imported from there."""
    from gpusim.experiment import load_experiment

    key = "python" if "python" in entry else "ptx"
    toml = tmp / "experiment.toml"
    toml.write_text(entry["toml"])
    source = tmp / entry[f"{key}_name"]
    source.write_text(entry[key])
    return load_experiment(toml, kernel_file=source)


def simulate(name: str, entry: dict, config: str = "h100", overrides: dict | None = None) -> dict:
    """The simulator side of bundle experiment ``entry`` (timing mode); same dict as
    :func:`validation.simulate.simulate_run`. The experiment's own ``[set]`` overrides apply
    first, then ``overrides``."""
    import gpusim
    from gpusim.experiment import build_args, launcher_of

    t0 = time.perf_counter()
    rec: dict = {"case": name, "n": 0, "error": None, "outputs": {}, "launches": []}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            exp = _materialise(entry, pathlib.Path(tmp))
            with gpusim.Device(config, mode="timing", overrides={**exp.overrides, **(overrides or {})},
                               sampling=False):
                args, arrays = build_args(exp.args, np.random.default_rng(exp.seed))
                res = launcher_of(exp)(exp.grid, exp.block, args, exp.shared_mem)
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
