"""GPU probe: tensor cores -- the numerics of ``mma.sync.m16n8k16``, the layouts of ``ldmatrix``,
and the latency and issue interval of ``mma.sync``.

Kernels: ``tensor_core.ptx`` (source ``tensor_core.cu``). Two modes:

``numerics OUT.npz``
    Runs ``mma_f32_f16``, ``mma_f32_bf16`` and ``mma_f16_f16`` (one m16n8k16 tile per warp,
    fragments loaded with the PTX ISA's layout) on adversarial inputs made by :func:`inputs`
    (normal values, wide exponent ranges, cancelling products, sparse rows, special values,
    subnormal accumulators) and ``ldmatrix_layout`` (every x1/x2/x4 {.trans} form on a known
    shared-memory matrix, row addresses from a permutation of the lanes). Saves inputs and
    outputs: ``{variant}/{set}/{A,Bt,C,D}`` and ``ldmatrix/{perm,out}``.
    ``isa/mma.py`` reproduces every output bit for bit (``tests/isa/test_mma.py``).

``timing OUT.json``
    Launches the chains of :func:`launches` (k = 0, 64, 256 steps; one CTA): a dependent chain
    of ``mma.sync`` through the accumulator (f16 and bf16 inputs, f32 and f16 accumulators),
    eight independent accumulators per warp with 1, 4 and 8 warps, and a dependent chain of
    ``ldmatrix.x4``. Writes the in-kernel ``clock64`` cycles of the k-step loop of each launch
    and prints ``launch LABEL`` per launch. Run it under Nsight Compute for the kernels' cycles::

        ncu --clock-control none --metrics sm__cycles_elapsed.avg,smsp__inst_executed.sum \\
            --csv --page raw --print-units base --log-file $OUT/tensor_core_timing.csv \\
            python3 validation/probes/tensor_core.py timing $OUT/tensor_core_clock.json

Committed output: ``validation/reports/h100/tensor_core/`` (recorded before the ``__meta__`` device
fields came from ``validation.probekit.device_info``). Needs numpy and CuPy only.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:          # run as a script: make the validation package importable
    sys.path.insert(0, str(ROOT))

from validation import probekit  # noqa: E402

PTX = pathlib.Path(__file__).with_name("tensor_core.ptx")
STEPS = (0, 64, 256)
TILES = 256          # tiles (warps) per input set

#: (label, kernel, threads per CTA) of the timing launches, each at every k of STEPS.
CHAINS = [
    ("mma_chain b32", "mma_chain", 32),
    ("mma_bf16_chain b32", "mma_bf16_chain", 32),
    ("mma_f16acc_chain b32", "mma_f16acc_chain", 32),
    ("mma_ilp8 b32", "mma_ilp8", 32),
    ("mma_ilp8 b128", "mma_ilp8", 128),
    ("mma_ilp8 b256", "mma_ilp8", 256),
    ("ldmatrix_chain b32", "ldmatrix_chain", 32),
]

SETS = ("normal", "wide", "cancel", "sparse", "special", "tiny_c")


def launches():
    """``(label, kernel, block, k)`` of the timing mode, in launch order."""
    return [(f"{lab} k{k}", kern, block, k) for lab, kern, block in CHAINS for k in STEPS]


def _half_bits(v: np.ndarray, kind: str) -> np.ndarray:
    """float64 values -> f16 or bf16 bits (bf16: round to nearest even from float32)."""
    if kind == "f16":
        with np.errstate(over="ignore"):
            return v.astype(np.float16).view(np.uint16)
    u = v.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def inputs(kind: str, acc: str, name: str, rng: np.random.Generator):
    """One input set: ``A`` (TILES, 16, 16) and ``Bt`` (TILES, 8, 16) half bits (``kind`` f16 or
    bf16), ``C`` (TILES, 16, 8) float32 (``acc="f32"``) or f16 bits (``acc="f16"``)."""
    T = TILES
    emax = 15 if kind == "f16" else 60
    shape_a, shape_b, shape_c = (T, 16, 16), (T, 8, 16), (T, 16, 8)

    def rand(shape, lo, hi):
        return rng.choice([-1.0, 1.0], shape) * (1 + rng.random(shape)) * np.exp2(rng.integers(lo, hi + 1, shape))

    if name == "normal":
        a, b, c = rng.standard_normal(shape_a), rng.standard_normal(shape_b), rng.standard_normal(shape_c)
    elif name == "wide":
        lo = -14 if kind == "f16" else -60
        a, b = rand(shape_a, lo, emax), rand(shape_b, lo, emax)
        c = rand(shape_c, 2 * lo, 2 * emax)
    elif name == "cancel":    # products k and k + 8 nearly cancel; c small
        a, b = rand(shape_a, -4, 4), rand(shape_b, -4, 4)
        a[:, :, 8:] = a[:, :, :8]
        b[:, :, 8:] = -b[:, :, :8] * (1 + rng.integers(-3, 4, (T, 8, 8)) * 2.0 ** -10)
        c = rand(shape_c, -30, 0)
    elif name == "sparse":    # two or three nonzero products per output: pairwise alignment
        a, b = rand(shape_a, -10, 10), rand(shape_b, -10, 10)
        a *= rng.random(shape_a) < 0.15
        c = rand(shape_c, -30, 30) * (rng.random(shape_c) < 0.7)
    elif name == "special":
        a, b, c = rand(shape_a, -6, 6), rand(shape_b, -6, 6), rand(shape_c, -10, 10)
        sp = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 2.0 ** -24, -(2.0 ** -20), 65504.0 if kind == "f16" else 2.0 ** 100])
        for arr in (a, b):
            m = rng.random(arr.shape) < 0.01
            arr[m] = rng.choice(sp, m.sum())
        csp = np.array([np.inf, -np.inf, np.nan, -0.0, 3.0e38, -3.0e38, 1e-45, -1e-40])
        m = rng.random(shape_c) < 0.1
        c[m] = rng.choice(csp, m.sum())
    elif name == "tiny_c":    # subnormal accumulators and tiny products
        a, b = rand(shape_a, -14, -8) if kind == "f16" else rand(shape_a, -70, -60), None
        b = rand(shape_b, -14, -8) if kind == "f16" else rand(shape_b, -70, -60)
        c = rng.choice([-1.0, 1.0], shape_c) * rng.integers(1, 1 << 23, shape_c) * 2.0 ** -149
    else:
        raise ValueError(name)
    A, Bt = _half_bits(a, kind), _half_bits(b, kind)
    if acc == "f32":
        with np.errstate(over="ignore"):
            C = c.astype(np.float32)
    else:
        C = _half_bits(np.clip(c, -65504, 65504) if name not in ("special",) else c, "f16")
    return A, Bt, C


VARIANTS = (("mma_f32_f16", "f16", "f32"), ("mma_f32_bf16", "bf16", "f32"), ("mma_f16_f16", "f16", "f16"))


def run_numerics(out_path: str) -> None:
    import cupy

    mod = cupy.RawModule(path=str(PTX))
    rng = np.random.default_rng(2024)
    res: dict[str, np.ndarray] = {}
    for kern, kind, acc in VARIANTS:
        f = mod.get_function(kern)
        for name in SETS:
            A, Bt, C = inputs(kind, acc, name, rng)
            dA, dB, dC = cupy.asarray(A), cupy.asarray(Bt), cupy.asarray(C)
            dD = cupy.zeros(C.shape, C.dtype)
            f((TILES // 4,), (128,), (dA, dB, dC, dD))
            cupy.cuda.runtime.deviceSynchronize()
            for key, val in (("A", A), ("Bt", Bt), ("C", C), ("D", dD.get())):
                res[f"{kern}/{name}/{key}"] = val
    perm = rng.permutation(32).astype(np.int32)
    dout = cupy.zeros(6 * 32 * 4, cupy.uint32)
    mod.get_function("ldmatrix_layout")((1,), (32,), (cupy.asarray(perm), dout))
    res["ldmatrix/perm"] = perm
    res["ldmatrix/out"] = dout.get().reshape(6, 32, 4)
    dev = probekit.device_info(cupy)
    res["__meta__"] = np.array(json.dumps({"device": dev["name"], "cuda_runtime": dev["cuda_runtime_version"]}))
    np.savez_compressed(out_path, **res)
    print(f"numerics: {len(res)} arrays -> {out_path}")


def run_timing(out_path: str) -> None:
    import cupy

    mod = cupy.RawModule(path=str(PTX))
    out = cupy.zeros(1024, cupy.float32)
    cyc = cupy.zeros(1, cupy.int64)
    rows = []
    for label, kern, block, k in launches():
        mod.get_function(kern)((1,), (block,), (cupy.int32(k), out, cyc))
        cupy.cuda.runtime.deviceSynchronize()
        rows.append({"label": label, "kernel": kern, "block": block, "k": k, "clock64": int(cyc.get()[0])})
        print(f"launch {label}", flush=True)
    pathlib.Path(out_path).write_text(json.dumps(rows, indent=1) + "\n")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("numerics", "timing"):
        print(__doc__, file=sys.stderr)
        return 2
    (run_numerics if argv[0] == "numerics" else run_timing)(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
