"""gpusim against the GPU on the CUDA C front-end's kernels: ``cuda_on_gpu.py``'s outputs, bit for bit.

Runs every launch of :mod:`validation.frontends.cuda_kernels` on gpusim (functional mode, h100) on the
inputs the GPU run had (same seeds), compares each output's bytes with the GPU's (their sha256; the
distance in ulps where the GPU's array itself was saved, at scale 1), and writes ``OUT/cuda_compare.json``
with one row per launch. Prints a table and the count of bit-exact launches. Needs ``gpusim[cuda]``; no GPU.

Usage: ``python3 validation/frontends/cuda_compare.py GPU_DIR [OUT]`` (GPU_DIR holds ``cuda_gpu.json`` and ``.npz``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import gpusim  # noqa: E402
from validation.frontends.cuda_kernels import NAME_EXPRESSIONS, SOURCE, cases, generated_cases  # noqa: E402


def _ulps(a: np.ndarray, b: np.ndarray) -> int:
    """Largest distance in units in the last place between two float arrays of one dtype (0 for integers)."""
    if a.dtype.kind != "f":
        return 0
    ia, ib = a.view(f"i{a.itemsize}").astype(np.int64), b.view(f"i{b.itemsize}").astype(np.int64)
    return int(np.abs(ia - ib).max()) if a.size else 0


def main(gpu_dir: Path, out: Path) -> int:
    saved = np.load(gpu_dir / "cuda_gpu.npz")
    meta = json.loads((gpu_dir / "cuda_gpu.json").read_text())
    rows = []
    with gpusim.Device("h100"):
        mod = gpusim.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=NAME_EXPRESSIONS)
        for scale in meta["scales"]:
            for case in cases(scale):
                host = case.make_args(np.random.default_rng(scale))
                dev = tuple(gpusim.asarray(a) if isinstance(a, np.ndarray) else a for a in host)
                mod.get_function(case.kernel)(case.grid, case.block, dev)
                got = [dev[i].get() for i in case.outputs]
                keys = [f"{scale}/{case.kernel}/{k}" for k in range(len(got))]
                rows.append(_row(scale, case.kernel, "RawModule", got, keys, saved, meta))
            for gc in generated_cases(scale):
                cls = gpusim.ElementwiseKernel if gc.kind == "elementwise" else gpusim.ReductionKernel
                host = gc.make_args(np.random.default_rng(scale))
                res = cls(*gc.ctor)(*(gpusim.asarray(a) if isinstance(a, np.ndarray) else a for a in host), **gc.call)
                rows.append(_row(scale, gc.ctor[-1], gc.kind, [res.get()], [f"{scale}/{gc.ctor[-1]}/0"], saved, meta))
    out.mkdir(parents=True, exist_ok=True)
    (out / "cuda_compare.json").write_text(json.dumps({"gpu": meta["gpu"], "rows": rows}, indent=1))
    print(f"{'scale':>5}  {'kernel':20s} {'via':12s} {'bit-exact':9s} max ulps")
    for r in rows:
        ulps = "-" if r["max_ulps"] is None else r["max_ulps"]
        print(f"{r['scale']:>5}  {r['kernel']:20s} {r['via']:12s} {str(r['bit_exact']):9s} {ulps}")
    exact = sum(r["bit_exact"] for r in rows)
    print(f"{exact} of {len(rows)} launches bit-exact against the {meta['gpu']}")
    return 0


def _row(scale, kernel, via, got, keys, saved, meta) -> dict:
    same = all(list(g.shape) == meta["shapes"][k][0] and
               hashlib.sha256(np.ascontiguousarray(g).tobytes()).hexdigest() == meta["sha256"][k]
               for g, k in zip(got, keys))
    pairs = [(g, saved[k]) for g, k in zip(got, keys) if k in saved and saved[k].shape == g.shape]
    ulps = max((_ulps(g, w) for g, w in pairs), default=None) if not same else 0
    return {"scale": scale, "kernel": kernel, "via": via, "bit_exact": same, "max_ulps": ulps}


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2] if len(sys.argv) > 2 else sys.argv[1])))
