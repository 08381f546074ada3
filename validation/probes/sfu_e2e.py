"""Hardware probe: fast-math kernels (option pricing, transcendentals, div.approx) on a GPU.

``sfu_e2e/sfu_e2e.cu`` compiled by ``nvcc -ptx -arch=sm_90 -use_fast_math`` (``sfu_e2e_ftz.ptx``: every
special function ``.approx.ftz``) and with ``-ftz=false`` as well (``sfu_e2e.ptx``), both
committed; this script loads those PTX files unchanged (``cupy.RawModule(path=...)``), runs
``black_scholes`` on 65536 options, ``transcend`` and ``div_approx`` on 65536 inputs each
(seeded: wide ranges, tiny and huge magnitudes, zeros, infinities, NaN), and saves inputs
and outputs to ``sfu_e2e.h100.npz``.  The committed ``validation/probes/sfu_e2e/sfu_e2e.h100.npz``
(NVIDIA H100 80GB HBM3, driver 580.159.04, CUDA 13.0) keeps the first 8192 options and, of
the other inputs, the first 8176 and the 16 special ones (the last), with their outputs;
``tests/functional/test_sfu_e2e.py`` runs the same PTX in gpusim on those inputs.

Usage (CuPy and a GPU; imports only numpy and cupy)::

    python3 validation/probes/sfu_e2e.py OUT_DIR
"""

from __future__ import annotations

import os
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent / "sfu_e2e"
N = 65536
R, V = np.float32(0.02), np.float32(0.30)


def inputs():
    """The seeded inputs: {name: float32 array}."""
    rng = np.random.default_rng(20261125)
    S = rng.uniform(5.0, 30.0, N).astype(np.float32)
    X = rng.uniform(1.0, 100.0, N).astype(np.float32)
    T = rng.uniform(0.25, 10.0, N).astype(np.float32)
    wide = np.concatenate([
        rng.uniform(-10, 10, N // 2),
        np.sign(rng.uniform(-1, 1, N // 4)) * 2.0 ** rng.uniform(-140, 128, N // 4),
        rng.uniform(-1000, 1000, N // 4 - 16)]).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3e38, -3e38,
                        1.0, -1.0, 2.0, 0.5, np.pi, -np.pi], dtype=np.float32)
    x = np.concatenate([wide, special])
    b = np.concatenate([np.sign(rng.uniform(-1, 1, N - 16)) * 2.0 ** rng.uniform(-149, 128, N - 16),
                        special]).astype(np.float32)
    a = (rng.uniform(-4, 4, N) * 2.0 ** rng.uniform(-30, 30, N)).astype(np.float32)
    return dict(S=S, X=X, T=T, x=x, a=a, b=b)


def main(out_dir):
    import cupy as cp

    out = {k: v for k, v in inputs().items()}
    for tag, ptx in (("ftz", "sfu_e2e_ftz.ptx"), ("noftz", "sfu_e2e.ptx")):
        mod = cp.RawModule(path=str(HERE / ptx))
        S, X, T = (cp.asarray(out[k]) for k in ("S", "X", "T"))
        call, put = cp.zeros(N, cp.float32), cp.zeros(N, cp.float32)
        mod.get_function("black_scholes")((N // 256,), (256,),
                                          (call, put, S, X, T, R, V, np.int32(N)))
        tr = cp.zeros(8 * N, cp.float32)
        mod.get_function("transcend")((N // 256,), (256,), (tr, cp.asarray(out["x"]), np.int32(N)))
        dv = cp.zeros(2 * N, cp.float32)
        mod.get_function("div_approx")((N // 256,), (256,),
                                       (dv, cp.asarray(out["a"]), cp.asarray(out["b"]), np.int32(N)))
        out[f"{tag}/call"], out[f"{tag}/put"] = call.get(), put.get()
        out[f"{tag}/transcend"], out[f"{tag}/div"] = tr.get(), dv.get()
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    out["device"] = np.array(dev)
    np.savez_compressed(pathlib.Path(out_dir) / "sfu_e2e.h100.npz", **out)
    print(dev, {k: v.shape for k, v in out.items()})


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "."))
