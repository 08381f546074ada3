"""On a GPU: the CUDA C front-end's kernels through CuPy, outputs saved for ``cuda_compare.py``.

Runs :data:`validation.frontends.cuda_kernels.SOURCE` through ``cupy.RawModule(code=...)`` (NVRTC, CuPy's
options) and through ``nvcc -ptx -arch=sm_90 -ftz=true`` loaded with ``cupy.RawModule(path=...)``, and the
``ElementwiseKernel``/``ReductionKernel`` cases through CuPy's own classes, at scales 1 and 16, on seeded
inputs. Writes ``OUT_DIR/cuda_gpu.json`` (the GPU, versions, whether NVRTC and nvcc agree, and the sha256 of
every output's bytes, keyed ``scale/kernel/k``), ``OUT_DIR/cuda_gpu.npz`` (the scale-1 outputs themselves;
the larger ones are kept as digests only, to keep the repository small) and prints one line per launch.

Usage (GPU machine, repository root): ``python3 validation/frontends/cuda_on_gpu.py OUT_DIR``.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from validation.frontends.cuda_kernels import LOWERED, NAME_EXPRESSIONS, SOURCE, cases, generated_cases  # noqa: E402

SCALES = (1, 16)


def main(out: Path) -> None:
    import cupy

    out.mkdir(parents=True, exist_ok=True)
    mod = cupy.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=NAME_EXPRESSIONS)
    tmp = Path(tempfile.mkdtemp())
    (tmp / "k.cu").write_text(SOURCE + "\ntemplate __global__ void scale_add<float>(const float*, float*, float, int);\n"
                              "template __global__ void scale_add<int>(const int*, int*, int, int);\n")
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-ftz=true", str(tmp / "k.cu"), "-o", str(tmp / "k.ptx")], check=True)
    ref = cupy.RawModule(path=str(tmp / "k.ptx"))
    saved, agree = {}, {}
    for scale in SCALES:
        for case in cases(scale):
            outs = []
            lowered = LOWERED.get(case.kernel, case.kernel)
            for m, name in ((mod, case.kernel), (ref, lowered)):
                host = case.make_args(np.random.default_rng(scale))
                dev = tuple(cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in host)
                m.get_function(name)(case.grid, case.block, dev)
                outs.append([cupy.asnumpy(dev[i]) for i in case.outputs])
            same = all(a.tobytes() == b.tobytes() for a, b in zip(*outs))
            agree[f"{scale}/{case.kernel}"] = same
            for k, a in enumerate(outs[0]):
                saved[f"{scale}/{case.kernel}/{k}"] = a
            print(f"scale {scale:2d} {case.kernel:18s} NVRTC == nvcc on the GPU: {same}")
        for gc in generated_cases(scale):
            cls = cupy.ElementwiseKernel if gc.kind == "elementwise" else cupy.ReductionKernel
            k = cls(*gc.ctor)
            host = gc.make_args(np.random.default_rng(scale))
            res = k(*(cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in host), **gc.call)
            saved[f"{scale}/{gc.ctor[-1]}/0"] = cupy.asnumpy(res)
            print(f"scale {scale:2d} {gc.ctor[-1]:18s} {gc.kind}: shape {res.shape} {res.dtype}")
    np.savez_compressed(out / "cuda_gpu.npz", **{k: v for k, v in saved.items() if k.startswith("1/")})
    props = cupy.cuda.runtime.getDeviceProperties(0)
    meta = {"gpu": props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
            "cupy": cupy.__version__, "nvrtc": list(cupy.cuda.nvrtc.getVersion()),
            "driver": cupy.cuda.runtime.driverGetVersion(), "scales": SCALES, "nvrtc_equals_nvcc": agree,
            "sha256": {k: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest() for k, v in saved.items()},
            "shapes": {k: [list(v.shape), str(v.dtype)] for k, v in saved.items()}}
    (out / "cuda_gpu.json").write_text(json.dumps(meta, indent=1))
    print(f"NVRTC == nvcc on {sum(agree.values())} of {len(agree)} launches")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
