"""Hardware probe: the outputs of every corpus kernel with a launch recipe, on a real GPU.

The corpus (``tests/corpus``: CUDA sources, the PTX ``nvcc -ptx -arch=sm_90`` of CUDA
13.0.88 made of them, and ``recipes.py`` with each kernel's launch) is what a new user
would try first: templates, ``__device__``/``__constant__`` variables, atomics, 64-bit
and fp64 arithmetic, bit manipulation, every ``cvt`` pair, every comparison, vector loads,
cooperative groups. This script loads the very same .ptx files with ``cupy.RawModule``,
runs every recipe (seed 0, as the tests do) and saves each output as ``NAME/OUTPUT`` in
one .npz; ``tests/test_corpus.py::test_corpus_matches_the_gpu_bit_for_bit`` compares
gpusim's outputs with it bit for bit once it is committed as
``validation/probes/corpus.h100.npz``.

Usage, from the repository root, on a machine with a CUDA GPU and CuPy::

    python3 validation/probes/corpus.py validation/probes/corpus.h100.npz

A recipe that fails on the GPU is reported on stderr and left out (exit status 1 if any
failed). Imports numpy, cupy, the recipes file (numpy only) and ``validation.probekit``
(standard library only); never gpusim.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:          # run as a script: make the validation package importable
    sys.path.insert(0, str(ROOT))

from validation import probekit


def _recipes():
    """tests/corpus/recipes.py, imported by path."""
    return probekit.load_by_path("corpus_recipes", ROOT / "tests" / "corpus" / "recipes.py")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("Usage")[1], file=sys.stderr)
        return 2
    import cupy as cp

    R = _recipes()
    out: dict[str, np.ndarray] = {}
    failed = []
    cache: dict = {}
    for rec in R.RECIPES:
        try:
            res = R.run(cp, rec, 0, cache)
            cp.cuda.Device().synchronize()
        except Exception as exc:  # report and go on: one bad recipe must not hide the others
            failed.append(rec.name)
            print(f"{rec.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        for key, val in res.items():
            out[f"{rec.name}/{key}"] = val
    dev = probekit.device_info(cp)
    meta = {"device": dev["name"], "cuda_runtime": dev["cuda_runtime_version"], "driver": dev["driver_version"],
            "cupy": dev["cupy_version"], "recipes": len(R.RECIPES), "failed": failed}
    np.savez_compressed(argv[0], __meta__=np.array(json.dumps(meta)), **out)
    print(f"{len(R.RECIPES) - len(failed)} of {len(R.RECIPES)} recipes -> {argv[0]} ({meta['device']})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
