"""Derive the interpolation tables of ``isa/sfu.py`` from the H100 measurements.

Input: the ``sfu_part*.npz`` files ``validation/probes/sfu_measure.py`` writes (every float32
of whole binades, run through one MUFU instruction each).  Output: ``isa/sfu_tables.py``
(float64 coefficient tables, base64, with this provenance) and a JSON summary of the fit.

Model (Oberman & Siu, "A high-performance area-efficient multifunction interpolator",
ARITH 2005): the unit reduces its operand to a fixed-point argument in [0, 1), indexes a
table with its top ``K`` bits (segment ``s``) and evaluates a quadratic in the remaining bits
``u`` (scaled to [0, 1)): ``q = c0[s] + c1[s]*u + c2[s]*u*u``, in units of the result's last
place (or of a fixed-point grid, lg2); the result is ``floor(q + 1/2)``.  Each segment's
``c0 c1 c2`` are the minimax-margin solution of the linear program "every measured output
is ``floor(q + 1/2)``" (HiGHS via scipy).  The H100's truncations inside the unit are not
modelled (no quadratic with real coefficients reproduces every output of a segment; the
best margin is about -0.1 ulp), so a small fraction of outputs differ by one unit; the
summary counts them per function.

Usage::

    python3 validation/probes/sfu_fit.py DATA_DIR [FUNC ...]   # writes isa/sfu_tables.py

Needs numpy and scipy (not a gpusim dependency: only this derivation uses scipy).
"""

from __future__ import annotations

import base64
import glob
import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "validation" / "probes"))
import sfu_measure  # noqa: E402

#: Per function: (segment index bits K, squarer truncation THR).  The in-segment argument
#: ``xl`` is the 23 - K bits below the index (rsq and sqrt: 64 segments each for [1, 2) and
#: [2, 4), the exponent's parity is the top index bit).
CONF = {"rcp": (7, 16), "rsq": (6, 18), "sqrt": (6, 18), "ex2": (6, 18), "lg2": (6, 18),
        "sin": (6, 18)}
NSEG = {"rcp": 128, "rsq": 128, "sqrt": 128, "ex2": 64, "lg2": 64, "sin": 64}


def trunc_sq(xl, thr, nb=16):
    """The H100's truncated square of the ``nb``-bit in-segment argument ``xl`` (int64): the
    sum of the partial products ``x_a x_b 2**(a+b)`` with ``a + b >= thr`` only."""
    s = np.zeros_like(xl)
    for a in range(nb):
        k = max(thr - a, 0)
        s += ((xl >> a) & 1) * (((xl >> k) << k) << a)
    return s


def features(xl, thr):
    """Columns ``1, u, j``: ``u = xl * 2**-17``, ``j = trunc_sq(xl, thr) >> (thr + 1)`` scaled
    by 2**(thr - 33)."""
    u = xl.astype(np.float64) * 2.0 ** -17
    j = (trunc_sq(xl, thr, 17) >> (thr + 1)).astype(np.float64) * 2.0 ** (thr - 33)
    return np.stack([np.ones_like(u), u, j], 1)


def fit_table(seg, F, lo, hi, nseg):
    """Per-segment minimax-margin coefficients ``c`` with ``lo <= F @ c <= hi``: (coefficients
    (nseg, 3), margins).  A least-squares fit is subtracted first so that the LP works on
    small numbers."""
    from scipy.optimize import linprog

    C = np.zeros((nseg, F.shape[1]))
    M = np.full(nseg, np.nan)
    order = np.argsort(seg, kind="stable")
    seg, F, lo, hi = seg[order], F[order], lo[order], hi[order]
    bounds = np.searchsorted(seg, np.arange(nseg + 1))
    for s in range(nseg):
        a, b = bounds[s], bounds[s + 1]
        if b <= a:
            continue
        V = F[a:b]
        c0 = np.linalg.lstsq(V, (lo[a:b] + hi[a:b]) / 2, rcond=None)[0]
        base = V @ c0
        n, d = V.shape
        A = np.vstack([np.hstack([-V, np.ones((n, 1))]), np.hstack([V, np.ones((n, 1))])])
        rhs = np.concatenate([-(lo[a:b] - base), hi[a:b] - base])
        cost = np.zeros(d + 1)
        cost[-1] = -1
        r = linprog(cost, A_ub=A, b_ub=rhs, bounds=[(None, None)] * (d + 1), method="highs")
        if r.x is None:
            raise RuntimeError(r.message)
        C[s], M[s] = c0 + r.x[:-1], r.x[-1]
    return C, M


def _f32(b):
    return b.view(np.float32).astype(np.float64)


def _parts(bits):
    e = ((bits >> 23) & 0xFF).astype(np.int64) - 127
    m = (bits & 0x7FFFFF).astype(np.int64)
    return e, m


def _seg_xl(m, f):
    k = CONF[f][0]
    return m >> (23 - k), m & ((1 << (23 - k)) - 1)


def points(func, data):
    """(seg, xl, lo, hi): band constraints ``lo <= q <= hi`` on ``q = c . features(xl)`` of
    segment ``seg`` for ``func`` from the measured data sets; the model's result is
    ``floor(q + 1/2)``."""
    if func == "rcp":
        x, y = _inputs(data, "rcpf_1_2")
        _, m = _parts(x)
        Y = _f32(y) * 2.0 ** 24                      # (0.5, 1): units of 2**-24
        k = m > 0
        s, xl = _seg_xl(m[k], func)
        return s, xl, Y[k] - 0.5, Y[k] + 0.5
    if func in ("rsq", "sqrt"):
        x, y = _inputs(data, func + "f_1_4")
        e, m = _parts(x)
        Y = _f32(y) * 2.0 ** (24 if func == "rsq" else 23)   # rsq (0.5, 1], sqrt [1, 2)
        k = (m > 0) | (e == 1)
        e, m, Y = e[k], m[k], Y[k]
        s = (e << 6) + (m >> 17)
        xl = m & 0x1FFFF
        return s, xl, Y - 0.5, Y + 0.5
    if func == "ex2":
        x, y = _inputs(data, "ex2f_05_2")
        xf = _f32(x)
        k = xf >= 1.0                                # x = 1 + f: 2**x = 2 * T(f)
        _, m = _parts(x[k])
        Y = _f32(y[k]) * 2.0 ** 22                   # T in [1, 2): units of 2**-23
        kk = m > 0
        s, xl = _seg_xl(m[kk], func)
        return s, xl, Y[kk] - 0.5, Y[kk] + 0.5
    if func == "lg2":
        # out = RZ_f32(e + P * 2**-LG2_FRAC), P = floor(q + 1/2): x in [0.5, 4) (e = -1, 0, 1)
        x, y = _inputs(data, "lg2f_05_4")
        e, m = _parts(x)
        o = _f32(y)
        ulp = np.ldexp(1.0, np.frexp(np.abs(o))[1] - 24)
        g = 2.0 ** LG2_FRAC
        lo = np.where(o > 0, (o - e) * g - 0.5, (o - ulp - e) * g + 0.5)
        hi = np.where(o > 0, (o - e + ulp) * g - 0.5, (o - e) * g + 0.5)
        k = m > 0
        s, xl = _seg_xl(m[k], func)
        return s, xl, lo[k], hi[k]
    if func == "sin":
        # MUFU.SIN/COS of t = FMUL.RZ(x, 1/(2 pi)): k = floor(|t| * 2**25) mod 2**25, quadrant
        # q = k >> 23 (cos: k + 2**23), r = k mod 2**23; the result is +-S(r) (q even) or
        # +-S(2**23 - 1 - r) (q odd: the one's complement), minus for q >= 2, rounded to
        # nearest from units of 2**-SIN_FRAC.  One table S, fitted from the sin and cos data.
        k, o = _sin_points(data)
        r = k & ((1 << 23) - 1)
        r = np.where((k >> 23) & 1, (1 << 23) - 1 - r, r)
        ulp = np.ldexp(1.0, np.frexp(o)[1] - 24)
        g = 2.0 ** SIN_FRAC
        lo = np.minimum((o - ulp / 2) * g, o * g) - 0.5
        hi = np.maximum((o + ulp / 2) * g, o * g) + 0.5
        s, xl = _seg_xl(r, func)
        # S(0) = 0: the sine of |t| < 2**-25 is 0 on the H100
        return (np.append(s, 0), np.append(xl, 0), np.append(lo, -0.5),
                np.append(hi, 0.5))
    raise ValueError(func)


SIN_FRAC = 37
SIN_SCALE = 0x3E22F983          # the FMUL.RZ constant ptxas puts before MUFU.SIN/COS (1/(2 pi))


def turns_fixed(xbits):
    """k = floor(|t| * 2**25) of t = FMUL.RZ(x, 1/(2 pi)) (float32 bits in; int64 out)."""
    x = xbits.view(np.float32).astype(np.float64)
    p = x * np.float64(np.uint32(SIN_SCALE).view(np.float32))     # exact (24 x 24 bits)
    t = p.astype(np.float32).astype(np.float64)
    t = np.where(np.abs(t) > np.abs(p), np.nextafter(t.astype(np.float32), np.float32(0))
                 .astype(np.float64), t)
    return np.floor(np.abs(t) * 2.0 ** 25).astype(np.int64)


def _sin_points(data):
    ks, os_ = [], []
    for name, shift in [("sinf_m4_3", 0), ("cosf_m4_3", 1 << 23), ("sinf_m12_m4_s3", 0),
                        ("cosf_m12_m4_s3", 1 << 23), ("sinf_m26_m12_s97", 0),
                        ("cosf_m26_m12_s97", 1 << 23)]:
        x, y = _inputs(data, name)
        ks.append((turns_fixed(x) + shift) & ((1 << 25) - 1))
        os_.append(np.abs(_f32(y)))
    k, i = np.unique(np.concatenate(ks), return_index=True)
    return k, np.concatenate(os_)[i]


LG2_FRAC = 36

def _inputs(data, name):
    meta, out = data[name]
    i = np.arange(meta["n"], dtype=np.uint64)
    return ((meta["start"] + i * meta["stride"]) & 0xFFFFFFFF).astype(np.uint32), out




def main(data_dir, funcs):
    data = sfu_measure.load(sorted(glob.glob(str(pathlib.Path(data_dir) / "sfu_part*.npz"))))
    out = ROOT / "isa" / "sfu_tables.py"
    tables = {}
    if out.exists():
        ns = {}
        exec(out.read_text(), ns)
        tables = {k: v for k, v in ns["_B64"].items() if k in NSEG}
    summary = {}
    for f in funcs:
        seg, xl, lo, hi = points(f, data)
        F = features(xl, CONF[f][1])
        C, M = fit_table(seg, F, lo, hi, NSEG[f])
        q = np.einsum("ij,ij->i", C[seg], F)
        ok = (q >= lo) & (q < hi)
        summary[f] = dict(points=int(len(xl)), inside=float(ok.mean()),
                          worst_margin=float(np.nanmin(M)), conf=CONF[f])
        print(f, summary[f], flush=True)
        tables[f] = base64.b64encode(C.astype("<f8").tobytes()).decode()
    if out.exists():                           # merge with tables written meanwhile
        ns = {}
        exec(out.read_text(), ns)
        tables = {**{k: v for k, v in ns["_B64"].items() if k in NSEG and k not in funcs},
                  **{k: v for k, v in tables.items() if k in funcs}}
    lines = ['"""Coefficient tables of ``isa/sfu.py`` (generated: do not edit).',
             "",
             "Derived by ``validation/probes/sfu_fit.py`` from the H100 measurements of",
             "``validation/probes/sfu_measure.py`` (NVIDIA H100 80GB HBM3, driver 580.159.04,",
             "CUDA 13.0): for each function a little-endian float64 array of shape (segments, 3)",
             'holding c0 c1 c2 per segment, base64-encoded; _THR: the squarer truncation of each."""',
             "", "_B64 = {"]
    for k in sorted(tables):
        s = tables[k]
        lines.append(f'    "{k}": (')
        for i in range(0, len(s), 100):
            lines.append(f'        "{s[i:i + 100]}"')
        lines.append("    ),")
    lines.append("}")
    lines.append("")
    lines.append("_THR = " + json.dumps({k: CONF[k][1] for k in sorted(tables)}))
    out.write_text("\n".join(lines) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or list(NSEG))
