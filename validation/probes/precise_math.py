"""Hardware probe: option pricing and the transcendentals without fast-math, end to end (issue #28, item 4).

``precise_math/precise_math.cu`` compiled by ``nvcc -ptx -arch=sm_90`` with nvcc's defaults (no
``-use_fast_math``: IEEE division and square root, denormals kept, mul+add contracted by ptxas) is committed as
``precise_math/precise_math.ptx`` and loaded unchanged (``RawModule(path=...)``) on a GPU through CuPy, or in
gpusim: ``black_scholes`` on 8,192 options and ``transcend`` (``sinf``/``cosf`` with their large-argument
reduction, ``powf``, ``1/sqrtf``, division, ``tanhf``, ``log2f``+``exp2f``, ``erfcf``+``logf``*``expf``) on
8,192 inputs: ``validation/probes/sfu_e2e.py``'s seeded inputs (wide ranges, tiny and huge magnitudes,
zeros, infinities, NaN), every 8th of its wide ones (8,176: all three of its ranges) and its 16 special ones.

Usage (repository root)::

    python3 validation/probes/precise_math.py gpu OUT.npz     # CuPy and a GPU
    python3 validation/probes/precise_math.py sim OUT.npz     # gpusim (functional)
    python3 validation/probes/precise_math.py compare A.npz B.npz

The committed GPU run is ``precise_math/precise_math.h200.npz`` (an H200: the H100's GH100 die);
``tests/functional/test_precise_math.py`` runs gpusim on its inputs.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np

if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from validation.probekit import load_probe  # noqa: E402

PTX = pathlib.Path(__file__).resolve().parent / "precise_math" / "precise_math.ptx"
N = 8192
R, V = np.float32(0.02), np.float32(0.30)
OUTPUTS = ("call", "put", "transcend")


def inputs() -> dict[str, np.ndarray]:
    """{S, X, T, x}: float32 arrays of N, from sfu_e2e's seeded inputs (x: every 8th wide value, 8,176, then the
    16 special ones)."""
    full = load_probe("sfu_e2e").inputs()
    return dict(S=full["S"][:N], X=full["X"][:N], T=full["T"][:N],
                x=np.concatenate([full["x"][:-16:8][:N - 16], full["x"][-16:]]))


def run(xp) -> dict[str, np.ndarray]:
    """Inputs and outputs (float32) of both kernels on ``xp`` (``cupy`` or ``gpusim``, under a Device)."""
    out = inputs()
    mod = xp.RawModule(path=str(PTX))
    S, X, T = (xp.asarray(out[k]) for k in ("S", "X", "T"))
    call, put = xp.zeros(N, np.float32), xp.zeros(N, np.float32)
    mod.get_function("black_scholes")((N // 256,), (256,), (call, put, S, X, T, R, V, np.int32(N)))
    tr = xp.zeros(8 * N, np.float32)
    mod.get_function("transcend")((N // 256,), (256,), (tr, xp.asarray(out["x"]), np.int32(N)))
    out.update(call=call.get(), put=put.get(), transcend=tr.get())
    return out


def differing(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Indices where two float32 arrays differ in their bits (NaN payloads aside: any NaN equals any NaN)."""
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    both_nan = np.isnan(a) & np.isnan(b)
    return np.flatnonzero((ua != ub) & ~both_nan)


def main(argv: list[str]) -> None:
    if argv[:1] == ["gpu"]:
        import cupy as cp
        out = run(cp)
        out["device"] = np.array(cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    elif argv[:1] == ["sim"]:
        import gpusim
        with gpusim.Device("h100"):
            out = run(gpusim)
    elif argv[:1] == ["compare"]:
        a, b = np.load(argv[1]), np.load(argv[2])
        for k in OUTPUTS:
            d = differing(a[k], b[k])
            print(f"{k}: {len(d)} of {a[k].size} differ" + (f" (first at {d[:8].tolist()})" if len(d) else ""))
        return
    else:
        raise SystemExit(__doc__)
    np.savez_compressed(argv[1], **out)
    print({k: v.shape for k, v in out.items()})


if __name__ == "__main__":
    main(sys.argv[1:])
