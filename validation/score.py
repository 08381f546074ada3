"""Agreement scores between simulator and hardware, the way Accel-Sim's correlator reports them.

Owns the formulas (all pure numpy, no I/O):

* :func:`pearson`, :func:`spearman` -- correlation of simulated against hardware values;
* :func:`error_stats` -- MAE in percent (mean of ``|sim - hw| / hw``), NRMSE
  (``sqrt(mean((sim - hw)^2)) / mean(hw)``, Accel-Sim's normalisation by the hardware
  mean), the shares within 1 % and 10 %, and the counts under / over (Accel-Sim's
  ``plot-correlation.py`` titles: ``[Correl=... MAE=...%]``, "< 1% Err", "< 10% Err",
  "under", "over");
* :func:`tier_stats` -- :func:`error_stats` of one tier of launches beside what the best
  constant predictor would score on the same launches (one cycle count for all of them,
  chosen after the fact to minimise MAE), and the error on the cycles beyond the launch
  overhead (``|sim - hw| / (hw - overhead)`` over launches longer than the overhead), so
  that launches dominated by launch overhead cannot flatter the model;
* :func:`ordering` -- whether a sweep's points are ordered the same way on both sides:
  every pair whose hardware values differ by more than ``tie`` (relative) must differ in
  the same direction in the simulator; pairs closer than that on the hardware are
  within its run-to-run noise and count as ties.

Must not import: cupy, simpy, gpusim.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["pearson", "spearman", "error_stats", "best_constant", "tier_stats", "ordering", "TIE"]

#: Relative difference below which two hardware points count as a tie in :func:`ordering`:
#: re-measuring the same 178 launches moved sm__cycles_elapsed.avg by a median 0.3 % and at
#: most 13 % (validation/reports/h100/timing_probe_log_h100.txt, metrics_rerun); 5 % keeps
#: most of the noise out without hiding the lessons' effects (>= 10 %).
TIE = 0.05


def pearson(sim, hw) -> float:
    """Pearson r of two equal-length sequences (nan for fewer than 2 points or no variance)."""
    x, y = np.asarray(sim, float), np.asarray(hw, float)
    if len(x) < 2 or np.std(x) == 0 or np.std(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def _rank(v) -> np.ndarray:
    """Average ranks (ties share the mean rank), as scipy.stats.rankdata(method='average')."""
    v = np.asarray(v, float)
    order = np.argsort(v, kind="stable")
    ranks = np.empty(len(v), float)
    ranks[order] = np.arange(len(v), dtype=float)
    for val in np.unique(v):
        idx = np.flatnonzero(v == val)
        if len(idx) > 1:
            ranks[idx] = ranks[idx].mean()
    return ranks


def spearman(sim, hw) -> float:
    """Spearman rank correlation (Pearson r of the average ranks)."""
    return pearson(_rank(sim), _rank(hw))


def error_stats(sim, hw) -> dict:
    """Error summary of ``sim`` against ``hw`` (equal lengths; points with hw == 0 are left
    out of the relative errors but kept in NRMSE). Keys: n, pearson_r, spearman_rho,
    mae_pct, nrmse, within_1pct, within_10pct (shares 0..1), under, over (counts),
    max_abs_err_pct."""
    s, h = np.asarray(sim, float), np.asarray(hw, float)
    out = {"n": int(len(s)), "pearson_r": pearson(s, h), "spearman_rho": spearman(s, h)}
    nz = h != 0
    rel = np.abs(s[nz] - h[nz]) / np.abs(h[nz]) if nz.any() else np.zeros(0)
    out["mae_pct"] = float(100 * rel.mean()) if rel.size else (0.0 if np.array_equal(s, h) else math.nan)
    mean_h = float(np.mean(np.abs(h))) if len(h) else 0.0
    rmse = float(np.sqrt(np.mean((s - h) ** 2))) if len(h) else 0.0
    out["nrmse"] = rmse / mean_h if mean_h else (0.0 if rmse == 0 else math.inf)
    out["within_1pct"] = float((rel <= 0.01).mean()) if rel.size else 1.0
    out["within_10pct"] = float((rel <= 0.10).mean()) if rel.size else 1.0
    out["under"] = int((s < h).sum())
    out["over"] = int((s > h).sum())
    out["max_abs_err_pct"] = float(100 * rel.max()) if rel.size else 0.0
    out["exact"] = int((s == h).sum())
    return out


def best_constant(hw) -> tuple[float, float]:
    """``(c, MAE in percent)`` of the best constant predictor of ``hw``: the c minimising
    mean ``|c - h| / h``. That sum is piecewise linear in c, so its minimum is at one of the
    hardware values (the median weighted by 1/h); ``(nan, nan)`` for no positive value."""
    h = np.asarray([v for v in hw if v and v > 0], float)
    if not h.size:
        return math.nan, math.nan
    errs = [float(100 * np.mean(np.abs(c - h) / h)) for c in h]
    i = int(np.argmin(errs))
    return float(h[i]), errs[i]


def tier_stats(sim, hw, overhead: float) -> dict:
    """:func:`error_stats` of ``sim`` against ``hw`` plus ``best_constant`` (its cycles),
    ``best_constant_mae_pct``, ``mae_ratio_to_best_constant`` (the model's MAE / the best
    constant's; below 1 beats it), and ``beyond_overhead_mae_pct`` with
    ``beyond_overhead_n``: the mean of ``|sim - hw| / (hw - overhead)`` over the launches
    whose hardware cycles exceed ``overhead`` (cycles, the configuration's launch overhead)."""
    out = error_stats(sim, hw)
    c, c_mae = best_constant(hw)
    out["best_constant"], out["best_constant_mae_pct"] = c, c_mae
    out["mae_ratio_to_best_constant"] = out["mae_pct"] / c_mae if c_mae else math.nan
    s, h = np.asarray(sim, float), np.asarray(hw, float)
    keep = h > overhead
    out["beyond_overhead_n"] = int(keep.sum())
    out["beyond_overhead_mae_pct"] = (float(100 * np.mean(np.abs(s[keep] - h[keep]) / (h[keep] - overhead)))
                                      if keep.any() else math.nan)
    out["overhead_cycles"] = float(overhead)
    return out


def ordering(sim, hw, tie: float = TIE) -> dict:
    """Pairwise ordering agreement of a sweep.

    Returns pairs (compared, i.e. not hardware ties), agree, disagreements (list of index
    pairs (i, j) with hw[i] < hw[j] by more than ``tie`` but sim[i] >= sim[j]), same (all
    compared pairs agree) and spearman_rho.
    """
    s, h = np.asarray(sim, float), np.asarray(hw, float)
    pairs, agree, bad = 0, 0, []
    for i in range(len(h)):
        for j in range(len(h)):
            if h[i] < h[j] and (h[j] - h[i]) > tie * max(abs(h[i]), abs(h[j])):
                pairs += 1
                if s[i] < s[j]:
                    agree += 1
                else:
                    bad.append((i, j))
    return {"pairs": pairs, "agree": agree, "disagreements": bad, "same": agree == pairs,
            "spearman_rho": spearman(s, h)}
