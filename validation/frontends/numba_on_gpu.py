"""GPU check of gpusim's Numba front-end: the kernels of ``validation/frontends/numba_kernels.py`` run with
real Numba on the GPU and with :mod:`gpusim.frontends.numba` on the same seeded inputs; their outputs must
be equal bit for bit (and equal the numpy oracle where the case has one).

Usage (repository root, a machine with a CUDA GPU, numba-cuda and gpusim's dependencies)::

    python3 validation/frontends/numba_on_gpu.py OUT_DIR [--seed 0] [--gpu h100]

``--gpu`` names gpusim's configuration to simulate (its ``arch`` is what numba-cuda compiles for on the
gpusim side; ``h100`` is sm_90, as the H100 and H200 are). Writes to ``OUT_DIR``:

* ``numba_on_gpu.json`` -- meta (GPU name, compute capability, driver, numba / numba-cuda / numpy
  versions, seed) and one record per kernel: launch shape, argument types, whether the GPU's and gpusim's
  outputs are equal bit for bit (``gpu_eq_gpusim``), whether the GPU equals the oracle (``gpu_eq_oracle``,
  null without one), the largest difference in float32/float64 ulps when they are not equal, whether
  numba's PTX on the GPU equals gpusim's once the mangled names are set aside (``ptx_same``), errors;
* ``numba_on_gpu.npz`` -- every output, keys ``<kernel>/<argument index>/{gpu,gpusim,oracle}``;
* ``ptx/<kernel>.{gpu,gpusim}.ptx`` -- both PTX texts;
* ``summary.txt`` -- one line per kernel (also printed), ending with ``N of M kernels bit-exact``.

Imports numpy, numba-cuda, gpusim and the kernels' module; validation may import them all.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import re
import sys
import traceback
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:          # run as a script: make gpusim and validation importable
    sys.path.insert(0, str(ROOT))


def _copy(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _ulps(a: np.ndarray, b: np.ndarray) -> int | None:
    """Largest distance in units of the last place between two float arrays (None for other dtypes)."""
    if a.dtype not in (np.float32, np.float64) or a.shape != b.shape:
        return None
    it = np.int32 if a.dtype == np.float32 else np.int64
    ia, ib = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    ia = np.where(ia < 0, np.iinfo(it).min - ia, ia)       # sign-magnitude -> ordered integers
    ib = np.where(ib < 0, np.iinfo(it).min - ib, ib)
    return int(np.max(np.abs(ia - ib))) if a.size else 0


def _same(a, b) -> bool:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _strip_names(ptx: str) -> str:
    """PTX without comments and with every mangled name replaced (numba numbers each compilation)."""
    ptx = re.sub(r"//[^\n]*", "", ptx)
    return re.sub(r"_ZN\w+", "_Z", ptx).strip()


def run_case(case, seed: int, gpu: str, outdir: pathlib.Path, arrays: dict) -> dict:
    from numba import cuda

    import gpusim
    from gpusim.frontends.numba import kernel

    rec: dict = {"kernel": case.name, "error": None}
    args = case.inputs(np.random.default_rng(seed))
    grid, block = case.launch(args)
    rec["grid"], rec["block"] = grid, block
    gpu_args, sim_args = _copy(args), _copy(args)
    try:
        case.kernel[grid, block](*gpu_args)
        cuda.synchronize()
    except Exception:
        rec["error"] = "gpu: " + traceback.format_exc(limit=3)
        return rec
    sim = kernel(case.kernel)
    try:
        with gpusim.Device(gpu):
            sim[grid, block](*sim_args)
            argtypes = sim.argument_types(args)
            sim_ptx = sim.inspect_ptx(argtypes)
    except Exception:
        rec["error"] = "gpusim: " + traceback.format_exc(limit=3)
        return rec
    rec["argtypes"] = [str(t) for t in argtypes]
    oracle = case.oracle(args) if case.oracle is not None else None
    rec["gpu_eq_gpusim"], rec["gpu_eq_oracle"], rec["ulps"] = True, None if oracle is None else True, {}
    for k, out in enumerate(case.outputs):
        g, s = gpu_args[out], sim_args[out]
        arrays[f"{case.name}/{out}/gpu"], arrays[f"{case.name}/{out}/gpusim"] = g, s
        if not _same(g, s):
            rec["gpu_eq_gpusim"] = False
            rec["ulps"][str(out)] = _ulps(g, s)
        if oracle is not None:
            arrays[f"{case.name}/{out}/oracle"] = np.asarray(oracle[k])
            rec["gpu_eq_oracle"] = rec["gpu_eq_oracle"] and _same(g, np.asarray(oracle[k]))
    (outdir / "ptx" / f"{case.name}.gpusim.ptx").write_text(sim_ptx)
    try:
        gpu_ptx = next(iter(case.kernel.inspect_asm().values()))
        (outdir / "ptx" / f"{case.name}.gpu.ptx").write_text(gpu_ptx)
        rec["ptx_same"] = _strip_names(gpu_ptx) == _strip_names(sim_ptx)
    except Exception as exc:
        rec["ptx_same"] = f"no GPU PTX ({type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''})"
    return rec


def _driver_version():
    """The CUDA driver's version as numba-cuda reports it, e.g. [13, 0] (None if it cannot say)."""
    try:
        from numba.cuda.cudadrv.driver import driver
        return list(driver.get_version())
    except Exception:
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=pathlib.Path, help="directory for the results")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gpu", default="h100", help="gpusim configuration to compare with (default h100)")
    opts = ap.parse_args(argv)
    warnings.simplefilter("ignore")          # Numba's low-occupancy and host-copy performance warnings

    import numba
    from numba import cuda

    from gpusim.frontends.numba import numpy_compat

    numpy_compat()

    from validation.frontends.numba_kernels import CASES

    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "ptx").mkdir(exist_ok=True)
    dev = cuda.get_current_device()
    try:
        from importlib.metadata import version
        numba_cuda = version("numba-cuda")
    except Exception:
        numba_cuda = None
    meta = {"gpu": dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name),
            "compute_capability": list(dev.compute_capability),
            "driver": _driver_version(),
            "numba": numba.__version__, "numba_cuda": numba_cuda, "numpy": np.__version__,
            "python": platform.python_version(), "seed": opts.seed, "gpusim_config": opts.gpu}
    arrays: dict = {}
    records = [run_case(c, opts.seed, opts.gpu, opts.out, arrays) for c in CASES]
    lines = []
    for r in records:
        if r["error"]:
            lines.append(f"{r['kernel']:<20} ERROR {r['error'].strip().splitlines()[-1]}")
            continue
        eq = "bit-exact" if r["gpu_eq_gpusim"] else f"DIFFERS (ulps {r['ulps']})"
        orc = {None: "no oracle", True: "oracle bit-exact", False: "oracle DIFFERS"}[r["gpu_eq_oracle"]]
        lines.append(f"{r['kernel']:<20} gpu vs gpusim: {eq:<12} gpu vs {orc:<17} ptx same: {r['ptx_same']}")
    n_ok = sum(1 for r in records if not r["error"] and r["gpu_eq_gpusim"])
    lines.append(f"{n_ok} of {len(records)} kernels bit-exact (GPU {meta['gpu']}, numba-cuda {numba_cuda})")
    (opts.out / "numba_on_gpu.json").write_text(json.dumps({"meta": meta, "kernels": records}, indent=1, default=str))
    np.savez_compressed(opts.out / "numba_on_gpu.npz", **arrays)
    (opts.out / "summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if n_ok == len(records) else 1


if __name__ == "__main__":
    sys.exit(main())
