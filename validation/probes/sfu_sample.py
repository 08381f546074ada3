"""Write the committed test sample of H100 special-function results (``tests/isa/sfu_h100.npz``).

From the measurements of ``validation/probes/sfu_measure.py`` (``sfu_part*.npz``), for every
instruction variant it probed: every edge input whose result is not an ordinary in-range
number of the binades measured exhaustively (zeros, subnormals, infinities, NaNs, range
limits, the wrapper thresholds) -- up to 1500 --, 1500 seeded-random inputs of the
variant's data sets (exhaustive binades and the whole-range grid), and the inputs where
``isa.fp`` differs most from the H100 (up to 300).  Keys ``OP.x`` and ``OP.y``: uint32 input
and output bit patterns (16-bit instructions: the low half), OP the kernel name of
``sfu_measure.OPS`` (``rcp``, ``rcpf`` = ``.ftz``, ...).  Also writes
``validation/probes/sfu_h100_summary.json``: per variant, over every measured input, the
fraction of results ``isa.fp`` reproduces exactly, the largest difference in ulps and (f32)
the largest absolute difference.

Usage::

    python3 validation/probes/sfu_sample.py DATA_DIR [OP ...]  # writes tests/isa/sfu_h100.npz

(with OPs, only those variants are redone and the others kept).
"""

from __future__ import annotations

import glob
import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "validation" / "probes"))
import sfu_measure  # noqa: E402

N_EDGE, N_RAND, N_WORST = 1500, 1500, 300


def _inputs(data, name):
    meta, out = data[name]
    if meta.get("edges"):
        return data["edge_inputs"][1], out
    i = np.arange(meta["n"], dtype=np.uint64)
    return ((meta["start"] + i * meta["stride"]) & 0xFFFFFFFF).astype(np.uint32), out


def model(op, x):
    """isa.fp's result bits for kernel ``op`` of sfu_measure.OPS on input bits ``x``."""
    from isa import fp

    name = op.rstrip("f") if op not in ("ex2f", "lg2f", "rcpf", "rsqf", "sqrtf", "sinf", "cosf") \
        else op[:-1]
    ftz = op.endswith("f") and op not in ("ex2bf", "tanhbf")
    if op in ("ex2h", "tanhh"):
        a = x.astype(np.uint16).view(np.float16)
        r = fp.ex2(a) if op == "ex2h" else fp.tanh(a)
        return r.view(np.uint16).astype(np.uint32)
    if op in ("ex2bf", "tanhbf"):
        a = x.astype(np.uint16)
        r = fp.ex2(a, ftz=True, ty="bf16") if op == "ex2bf" else fp.tanh(a, ty="bf16")
        return r.astype(np.uint32)
    if op == "ex2h2":
        lo = fp.ex2((x & 0xFFFF).astype(np.uint16).view(np.float16)).view(np.uint16)
        hi = fp.ex2((x >> 16).astype(np.uint16).view(np.float16)).view(np.uint16)
        return lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)
    a = x.view(np.float32)
    fn = {"rcp": lambda v: fp.rcp(v, "approx", ftz), "rsq": lambda v: fp.rsqrt(v, ftz),
          "sqrt": lambda v: fp.sqrt(v, "approx", ftz), "ex2": lambda v: fp.ex2(v, ftz),
          "lg2": lambda v: fp.lg2(v, ftz), "sin": lambda v: fp.sin(v, ftz),
          "cos": lambda v: fp.cos(v, ftz), "tanh": fp.tanh}[name]
    return np.asarray(fn(a)).view(np.uint32)


def ulp_distance(a, b, width=32):
    """|a - b| in units in the last place of two float bit patterns (sign-magnitude order);
    NaN vs NaN is 0."""
    sign = np.int64(1) << (width - 1)
    a, b = a.astype(np.int64), b.astype(np.int64)
    oa = np.where(a & sign, -(a & (sign - 1)), a)
    ob = np.where(b & sign, -(b & (sign - 1)), b)
    inf = (sign - 1) ^ ((1 << (23 if width == 32 else 10)) - 1)
    nan_a = (a & (sign - 1)) > inf
    nan_b = (b & (sign - 1)) > inf
    d = np.abs(oa - ob)
    return np.where(nan_a & nan_b, 0, np.where(nan_a ^ nan_b, 1 << 40, d))


def main(data_dir, only=()):
    data = sfu_measure.load(sorted(glob.glob(str(pathlib.Path(data_dir) / "sfu_part*.npz"))))
    out, summary = {}, {}
    npz = ROOT / "tests" / "isa" / "sfu_h100.npz"
    js = ROOT / "validation" / "probes" / "sfu_h100_summary.json"
    if only and npz.exists():                  # update the named variants only
        out = dict(np.load(npz))
        summary = json.loads(js.read_text())
    for op, _, kind in sfu_measure.OPS:
        if only and op not in only:
            continue
        rng = np.random.default_rng(sum(map(ord, op)))
        ex, ey = _inputs(data, "edge_" + op)
        grid = np.arange(len(ex)) >= len(ex) - len(np.arange(0, 1 << 32, sfu_measure.EDGE_STRIDE))
        ax = np.abs(ex.view(np.float32).astype(np.float64)) if kind == "f32" else None
        if kind == "f32":
            special = ~grid & ((ax < 2.0 ** -120) | (ax > 2.0 ** 120) | ~np.isfinite(ax)
                               | (np.abs(ax - 126) < 2) | (ax < 2.0 ** -20))
        else:
            special = ~grid
        idx = np.flatnonzero(special)
        idx = idx[rng.permutation(len(idx))[:N_EDGE]] if len(idx) > N_EDGE else idx
        xs, ys = [ex[idx]], [ey[idx]]
        pools = [(ex, ey)] + [_inputs(data, n) for n, (o, *_) in sfu_measure.DATASETS
                              if o == op and n in data]
        px = np.concatenate([p[0] for p in pools])
        py = np.concatenate([p[1] for p in pools])
        pick = rng.choice(len(px), N_RAND, replace=False)
        xs.append(px[pick])
        ys.append(py[pick])
        w = 16 if kind == "h16" else 32
        d = np.zeros(len(px), dtype=np.int64)
        absd = 0.0
        for s in range(0, len(px), 1 << 22):
            got, want = model(op, px[s:s + (1 << 22)]), py[s:s + (1 << 22)]
            if kind == "f32":
                with np.errstate(all="ignore"):
                    ad = np.abs(got.view(np.float32).astype(np.float64)
                                - want.view(np.float32).astype(np.float64))
                absd = max(absd, float(np.max(ad[np.isfinite(ad)], initial=0.0)))
            if kind == "h32":
                d[s:s + (1 << 22)] = np.maximum(ulp_distance(got & 0xFFFF, want & 0xFFFF, 16),
                                                ulp_distance(got >> 16, want >> 16, 16))
            else:
                d[s:s + (1 << 22)] = ulp_distance(got, want, w)
        worst = np.argsort(-d, kind="stable")[:N_WORST]
        worst = worst[d[worst] > 0]
        xs.append(px[worst])
        ys.append(py[worst])
        x = np.concatenate(xs)
        x, first = np.unique(x, return_index=True)
        out[op + ".x"] = x
        out[op + ".y"] = np.concatenate(ys)[first]
        summary[op] = dict(measured=int(len(px)), exact=float((d == 0).mean()),
                           max_ulp=int(d.max()), sample=int(len(x)))
        if kind == "f32":
            summary[op]["max_abs"] = absd
        print(op, summary[op], flush=True)
    np.savez_compressed(npz, **out)
    js.write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
