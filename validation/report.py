"""The validation report: both sides joined by Nsight metric name, scored, written as JSON + HTML.

Owns: :func:`build` (hardware data + simulated runs -> one result dict: joined launches,
cycle and counter scores, outputs, occupancy, sweeps, provenance), :func:`write` (the raw
``validation_<gpu>.json`` and the self-contained ``report.html``: jinja2 template
``validation/templates/report.html.j2``, matplotlib PNGs embedded as base64),
:func:`render_html` and :func:`headline`.

Conventions (shared/reference/design-anchors.md B.5): simulated cycles are compared with
``sm__cycles_elapsed.avg``; correlation charts plot hardware (x) against the simulator (y)
on log axes titled ``[Correl=... MAE=...%]``; per-launch values are reported, never only
aggregates. Counters are joined by their Nsight names verbatim.

Imports gpusim (through :mod:`validation.simulate`), jinja2, matplotlib (Agg); must not
import cupy.
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import pathlib
import platform
import time
from typing import Callable

import numpy as np

from gpusim.errors import GpusimError
from validation import score
from validation import sweeps as sweeps_mod

__all__ = ["build", "write", "render_html", "headline", "CYCLES", "COUNTERS", "EXACT_COUNTERS"]

CYCLES = "sm__cycles_elapsed.avg"
#: counters scored with NRMSE (every name is reported by both ncu and the timing engine)
COUNTERS = (
    "smsp__inst_executed.sum", "smsp__thread_inst_executed.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
    "smsp__inst_executed_op_global_ld.sum", "smsp__inst_executed_op_global_st.sum",
    "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum", "lts__t_requests_srcunit_tex_op_read.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum", "l1tex__t_sector_hit_rate.pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "smsp__sass_average_branch_targets_threads_uniform.pct",
)
#: address-pattern counters that must equal ncu's exactly on the micro-kernels (issue #5)
EXACT_COUNTERS = (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
)
#: the micro-kernel cases (gpusim/suite group "micro") plus the stride/offset copies
MICRO_GROUPS = ("micro",)
REPORT_FILE = "report.html"


def _threads(rec: dict) -> int:
    return math.prod(rec["grid"]) * math.prod(rec["block"])


#: The validation's tiers: ``small`` (the timing sizes, timed in detail) and ``scale``
#: (GPU-filling sizes, ``gpusim.suite.SCALE_SIZES``, and any larger launch; timed with the
#: sampled engine), scored apart (issue #11: small launches are mostly launch overhead).
TIERS = ("small", "scale")


def tier_of(case: str, n: int, launches: list[dict], max_threads: int = 1 << 17) -> str:
    """``"scale"`` for a case's scale size (``gpusim.suite.SCALE_SIZES``) or a run with a launch
    of more than ``max_threads`` threads; else ``"small"``."""
    from gpusim.suite import SCALE_SIZES

    if SCALE_SIZES.get(case) == n or any(_threads(r) > max_threads for r in launches):
        return "scale"
    return "small"


def hardware_runs(hw: dict, cases=None, max_threads: int = 1 << 17,
                  tiers=TIERS) -> dict[tuple[str, int], list[dict]]:
    """(case, n) -> hardware launch records in launch order: runs that are not GPU-only extras,
    of the selected ``cases`` (None: all) and ``tiers`` (:func:`tier_of`)."""
    runs: dict[tuple[str, int], list[dict]] = {}
    for r in hw["launches"]:
        if r.get("extra") or (cases and r["case"] not in cases):
            continue
        runs.setdefault((r["case"], r["n"]), []).append(r)
    return {k: sorted(v, key=lambda r: r["launch"]) for k, v in runs.items()
            if tier_of(k[0], k[1], v, max_threads) in tiers}


def _cost(launches: list[dict]) -> float:
    return sum(float((r.get("metrics") or {}).get("smsp__inst_executed.sum") or _threads(r)) for r in launches)


def _num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> int:
    """Largest distance in units in the last place between two float arrays (0 when equal)."""
    if a.dtype.kind != "f":
        return 0 if np.array_equal(a.view(np.uint8), b.view(np.uint8)) else -1
    it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia, ib = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    top = np.int64(1) << (8 * a.dtype.itemsize - 1)
    ia = np.where(ia < 0, -(ia + top), ia)     # sign-magnitude -> a monotone integer line
    ib = np.where(ib < 0, -(ib + top), ib)
    return int(np.abs(ia - ib).max()) if a.size else 0


#: ``.approx``/``div.full`` instructions whose PTX ISA 9.0 error bound is a number of ulp (table in
#: isa/fp.py; sqrt/rsqrt's relative 2**-23 / 2**-22.9 rounded up to 1 / 2 ulp). The simulator computes
#: them correctly rounded, so its bits may differ from the GPU's by up to the bound.
APPROX_ULP = {"div.approx.f32": 2, "div.approx.ftz.f32": 2, "div.full.f32": 2, "div.full.ftz.f32": 2,
              "rcp.approx.f32": 1, "rcp.approx.ftz.f32": 1, "sqrt.approx.f32": 1, "sqrt.approx.ftz.f32": 1,
              "rsqrt.approx.f32": 2, "rsqrt.approx.ftz.f32": 2, "ex2.approx.f32": 2, "ex2.approx.ftz.f32": 2}


def approx_rule(ptx_text: str) -> tuple[str, int | None]:
    """How outputs of a kernel must compare: ("bit-exact", 0) without approximate instructions,
    ("<= N ulp (...)", N) when every one it uses has an ulp bound, ("...", None) when one has
    only an absolute/relative bound (sin, cos, lg2, tanh, f16/bf16 forms): reported, not scored.
    One instruction's bound; a chain of them can add up, which the rule does not model."""
    import re

    used = sorted(set(re.findall(r"\b((?:div|rcp|sqrt|rsqrt|ex2|lg2|sin|cos|tanh)\.(?:approx|full)[.\w]*)", ptx_text)))
    if not used:
        return "bit-exact", 0
    if all(u in APPROX_ULP for u in used):
        bound = max(APPROX_ULP[u] for u in used)
        return f"<= {bound} ulp ({', '.join(used)}; isa/fp.py)", bound
    return f"not scored: {', '.join(u for u in used if u not in APPROX_ULP)} have no ulp bound (isa/fp.py)", None


def _compare_outputs(sims: dict, hw_outputs: dict, ptx_of=None) -> list[dict]:
    from gpusim.suite import CASES

    rows = []
    for (case, n), res in sorted(sims.items()):
        if res["error"] or (case in CASES and n != CASES[case].test_n):
            continue
        for key, sim_arr in res["outputs"].items():
            hw_arr = hw_outputs.get(f"{case}/{key}")
            if hw_arr is None:
                continue
            same_shape = hw_arr.shape == sim_arr.shape and hw_arr.dtype == sim_arr.dtype
            equal = bool(same_shape and np.array_equal(np.ascontiguousarray(hw_arr).view(np.uint8),
                                                        np.ascontiguousarray(sim_arr).view(np.uint8)))
            ulp = _ulp_distance(np.ascontiguousarray(sim_arr), np.ascontiguousarray(hw_arr)) if same_shape else None
            # reduce_atomic_f32 adds block partials with atomicAdd in an unspecified order: its rtol
            # (the suite's) applies on both sides; no suite PTX uses an .approx instruction
            rule, bound = approx_rule(ptx_of(case)) if ptx_of else ("bit-exact", 0)
            ok = equal or bool(same_shape and bound and ulp is not None and 0 <= ulp <= bound)
            if case == "reduce_atomic_f32":
                rule = "atomic order unspecified: rtol 1e-5 (gpusim/suite)"
                ok = equal or bool(same_shape and np.allclose(sim_arr, hw_arr, rtol=1e-5, atol=0))
            elif bound is None:
                ok = equal or None
            rows.append({"case": case, "output": key, "n": n, "elements": int(hw_arr.size), "dtype": str(hw_arr.dtype),
                         "equal": equal, "max_ulp": ulp, "rule": rule, "ok": ok})
    return rows


def _ptx_of(hw: dict, case: str) -> str:
    from gpusim.suite import CASES

    if case in CASES:
        return CASES[case].ptx
    return (hw.get("experiments") or {}).get(case, {}).get("ptx_name", case)


def _occupancy_rows(hw: dict, sims: dict, gpu_cfg) -> list[dict]:
    from gpusim.occupancy import max_active_blocks

    model: dict[tuple, tuple] = {}
    for (case, n), res in sims.items():
        hw_l = [r for r in hw["launches"] if r["case"] == case and r["n"] == n and not r.get("extra")]
        for h, s in zip(sorted(hw_l, key=lambda r: r["launch"]), res["launches"]):
            key = (_ptx_of(hw, case), h["kernel"], math.prod(h["block"]), int(h["shared_mem"]))
            model.setdefault(key, (s["blocks_per_sm"], s["regs_per_thread"]))
    rows = []
    for o in hw.get("occupancy", []):
        if o.get("driver_blocks_per_sm") is None:  # a Numba/Triton experiment: no driver query (validation/experiment.py)
            continue
        calc = max_active_blocks(gpu_cfg, o["block_threads"], o["num_regs"], static_smem=o["shared_size_bytes"],
                                 dynamic_smem=o["dynamic_smem"],
                                 max_dynamic_smem=o.get("max_dynamic_shared_size_bytes")).blocks_per_sm
        m_blocks, m_regs = model.get((o["ptx"], o["kernel"], o["block_threads"], o["dynamic_smem"]), (None, None))
        rows.append(dict(o, calculator_blocks_per_sm=calc, calculator_equal=calc == o["driver_blocks_per_sm"],
                         model_blocks_per_sm=m_blocks, model_regs_per_thread=m_regs,
                         model_equal=None if m_blocks is None else m_blocks == o["driver_blocks_per_sm"]))
    return rows


def _sweep_results(selected: list[str], rows_by_key: dict) -> list[dict]:
    out = []
    for name in selected:
        sw = sweeps_mod.SWEEPS[name]
        points = []
        for p in sw.points:
            launches = [r for (c, n, i), r in rows_by_key.items() if c == p.case and n == p.n
                        and (p.launch is None or i == p.launch)]
            hw_c = [r["hw_cycles"] for r in launches]
            sim_c = [r["sim_cycles"] for r in launches]
            ok = launches and all(v is not None for v in hw_c + sim_c)
            pt = {"label": p.label, "series": p.series, "case": p.case, "n": p.n, "launch": p.launch,
                  "hw_cycles": sum(hw_c) if ok else None, "sim_cycles": sum(sim_c) if ok else None,
                  "counters": {}}
            for c in sw.counters:
                hv = [(r["metrics"].get(c) or [None, None])[0] for r in launches]
                sv = [(r["metrics"].get(c) or [None, None])[1] for r in launches]
                if launches and all(v is not None for v in hv + sv):
                    pt["counters"][c] = [sum(hv), sum(sv)]
            points.append(pt)
        have = [p for p in points if p["hw_cycles"] is not None]
        metric = sw.score_metric
        if metric == CYCLES:
            def val(p, side):
                return p["hw_cycles"] if side == 0 else p["sim_cycles"]
        else:
            have = [p for p in have if metric in p["counters"]]
            def val(p, side, m=metric):
                return p["counters"][m][side]
        res = {"name": sw.name, "tier": sw.tier, "title": sw.title, "xlabel": sw.xlabel, "lesson": sw.lesson,
               "counters": list(sw.counters), "points": points, "missing": len(points) - len(have),
               "score_metric": metric}
        if len(have) >= 2:
            order = score.ordering([val(p, 1) for p in have], [val(p, 0) for p in have])
            order["disagreements"] = [[have[i]["series"] + " " + have[i]["label"], have[j]["series"] + " " +
                                       have[j]["label"]] for i, j in order["disagreements"]]
            res["ordering"] = order
            res["cycles"] = score.error_stats([p["sim_cycles"] for p in have], [p["hw_cycles"] for p in have])
        out.append(res)
    return out


def _sweep_summary(sweep_res: list[dict]) -> dict:
    """Sweep counts of the small tier (``sweeps_*``) and of the scale tier (``sweeps_scale_*``):
    scored (some pair of points differs by more than the tie band on the hardware), ordered
    like the hardware, and the flat ones (no such pair: nothing to order)."""
    out = {}
    for tier, prefix in (("small", "sweeps_"), ("scale", "sweeps_scale_")):
        res = [sw for sw in sweep_res if sw.get("tier", "small") == tier]
        scored = [sw for sw in res if sw.get("ordering", {}).get("pairs")]
        out.update({prefix + "total": len(scored), prefix + "same_order": sum(sw["ordering"]["same"] for sw in scored),
                    prefix + "flat": [sw["name"] for sw in res if "ordering" in sw and not sw["ordering"]["pairs"]]})
    return out


def build(hw: dict, cases=None, sweep_names=None, config: str = "h100", overrides: dict | None = None,
          max_threads: int = 1 << 17, jobs: int = 1, progress: Callable[[str], None] = print,
          sims: dict | None = None, tiers=TIERS, scheduler: str | None = None) -> dict:
    """Simulate the hardware runs and score them; return the report's data (JSON-ready, no PNGs).

    ``hw``: :func:`validation.hardware.load`'s result. ``cases``: restrict to these suite
    cases (None: all that the hardware data holds, plus every sweep's). ``sweep_names``: sweeps
    to draw (None: all). ``max_threads``: runs with a larger launch belong to the scale tier.
    ``tiers``: the tiers (:data:`TIERS`) to simulate and score; scale-tier runs are timed with
    the sampled engine. ``scheduler``: simulate on the Dask cluster at this address instead of
    ``jobs`` local processes. ``sims``: precomputed :func:`validation.simulate.simulate_many`
    results (tests). Raises GpusimError when nothing is left to simulate.
    """
    from gpusim import config as gpu_config
    from validation import gpu as gpu_mod
    from validation.simulate import simulate_many

    overrides = dict(overrides or {})
    cfg = gpu_config.load(config).with_overrides(overrides)
    runs = hardware_runs(hw, cases, max_threads, tiers)
    tier = {k: tier_of(k[0], k[1], v, max_threads) for k, v in runs.items()}
    measured = {(c, n) for c, n in runs}
    sweep_names = [n for n in sweeps_mod.select(sweep_names)       # only sweeps the data can draw
                   if any((p.case, p.n) in measured for p in sweeps_mod.SWEEPS[n].points)]
    if not runs:
        raise GpusimError(f"nothing to simulate: the hardware data ({getattr(hw, 'path', '?')}) holds no run of the "
                          f"selected cases in the tier(s) {', '.join(tiers)}")
    t0 = time.perf_counter()
    if sims is None:
        order = sorted(runs, key=lambda k: -_cost(runs[k]))
        progress(f"simulating {len(order)} runs ({sum(len(v) for v in runs.values())} launches) on '{config}'"
                 f"{' with overrides ' + json.dumps(overrides) if overrides else ''}, {jobs} process(es) ...")
        sims = simulate_many(order, config, overrides, jobs, progress, experiments=hw.get("experiments"),
                             sampled={k for k in runs if tier[k] == "scale"}, scheduler=scheduler)
    sim_seconds = time.perf_counter() - t0
    rows, rows_by_key, failed = [], {}, []
    for (case, n), hw_l in sorted(runs.items()):
        res = sims.get((case, n))
        if res is None:
            continue
        if res["error"] or len(res["launches"]) != len(hw_l):
            failed.append({"case": case, "n": n, "error": res["error"] or
                           f"{len(res['launches'])} simulated launches vs {len(hw_l)} on the GPU"})
            continue
        for h, s in zip(hw_l, res["launches"]):
            hm = h.get("metrics") or {}
            names = sorted(set(hm) & set(s["metrics"]))
            hw_cycles = _num(hm.get(CYCLES))
            blocks = math.prod(h["grid"])
            waves = (blocks / (cfg.sm_count * s["blocks_per_sm"])) if s["blocks_per_sm"] else None
            row = {"case": case, "n": n, "tier": tier[(case, n)], "timed": s.get("timed"),
                   "launch": h["launch"], "kernel": h["kernel"], "grid": h["grid"],
                   "block": h["block"], "shared_mem": h["shared_mem"], "hw_cycles": hw_cycles,
                   "sim_cycles": s["cycles"], "err_pct": (100 * (s["cycles"] - hw_cycles) / hw_cycles
                                                          if hw_cycles and s["cycles"] is not None else None),
                   "event_ms": h.get("event_ms"), "hw_time_ns": _num(hm.get("gpu__time_duration.sum")),
                   "sim_time_ns": _num(s["metrics"].get("gpu__time_duration.sum")),
                   "waves": round(waves, 3) if waves is not None else None,
                   "metrics": {k: [_num(hm[k]), _num(s["metrics"][k])] for k in names
                               if _num(hm[k]) is not None and _num(s["metrics"][k]) is not None}}
            rows.append(row)
            rows_by_key[(case, n, h["launch"])] = row
    timed = [r for r in rows if r["hw_cycles"] is not None and r["sim_cycles"] is not None]
    cycles = score.error_stats([r["sim_cycles"] for r in timed], [r["hw_cycles"] for r in timed])
    by_tier = {}
    for t in TIERS:
        rs = [r for r in timed if r["tier"] == t]
        if rs:
            by_tier[t] = score.tier_stats([r["sim_cycles"] for r in rs], [r["hw_cycles"] for r in rs],
                                          cfg.launch_overhead_cycles)
    counters = {}
    for name in COUNTERS:
        pairs = [r["metrics"][name] for r in rows if name in r["metrics"]]
        if pairs:
            counters[name] = score.error_stats([p[1] for p in pairs], [p[0] for p in pairs])
    from gpusim.suite import CASES

    micro = []
    for r in rows:
        if r["case"] in CASES and CASES[r["case"]].group in MICRO_GROUPS:
            for name in EXACT_COUNTERS:
                if name in r["metrics"]:
                    hv, sv = r["metrics"][name]
                    micro.append({"case": r["case"], "n": r["n"], "launch": r["launch"], "metric": name,
                                  "hw": hv, "sim": sv, "equal": hv == sv})
    def ptx_text(case: str) -> str:
        from gpusim.suite import CASES, ptx_path

        if case in CASES:
            return ptx_path(CASES[case]).read_text()
        return (hw.get("experiments") or {}).get(case, {}).get("ptx", "")

    outputs = _compare_outputs(sims, getattr(hw, "outputs", {}) or {}, ptx_text)
    occupancy = _occupancy_rows(hw, {k: v for k, v in sims.items() if not v["error"]}, cfg)
    sweep_res = _sweep_results(sweep_names, rows_by_key)
    misses = sorted(timed, key=lambda r: -abs(r["err_pct"]))[:12]
    summary = {
        "gpu": hw["provenance"].get("gpu_name"), "slug": hw["provenance"].get("slug") or "gpu",
        "launches": len(rows), "launches_timed": len(timed), "runs_failed": len(failed),
        "cycles": cycles, "tiers": by_tier,
        "outputs_total": len(outputs), "outputs_equal": sum(o["equal"] for o in outputs),
        "outputs_ok": sum(bool(o["ok"]) for o in outputs),
        "outputs_not_scored": sum(o["ok"] is None for o in outputs),
        "occupancy_total": len(occupancy), "occupancy_calculator_equal": sum(o["calculator_equal"] for o in occupancy),
        "occupancy_model_checked": sum(o["model_equal"] is not None for o in occupancy),
        "occupancy_model_equal": sum(bool(o["model_equal"]) for o in occupancy),
        "micro_counters_total": len(micro), "micro_counters_equal": sum(m["equal"] for m in micro),
        **_sweep_summary(sweep_res),
        "multi_wave_launches": sum(1 for r in rows if r["waves"] and r["waves"] > 1),
        "targets": {"outputs_equal_pct": 100, "occupancy_equal": "all", "cycles_pearson_r_min": 0.9,
                    "cycles_mae_pct_max": 30, "sweep_order": "all"},
    }
    return {
        "format": "gpusim-validation-report/1",
        "summary": summary,
        "provenance": {"hardware": dict(hw["provenance"]), "hardware_file": str(getattr(hw, "path", "")),
                       "hardware_collection": {k: v for k, v in (hw.get("collection") or {}).items() if k != "units"},
                       "simulator": {"gpusim_version": __import__("gpusim").__version__,
                                     "gpusim_commit": gpu_mod.git_commit(), "config": config, "overrides": overrides,
                                     "python": platform.python_version(), "time_utc":
                                         time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                     "max_threads": max_threads, "jobs": jobs,
                                     "simulation_seconds": round(sim_seconds, 1),
                                     "host_seconds_sum": round(sum(v["host_seconds"] for v in sims.values()), 1)}},
        "rows": rows, "failed": failed, "counters": counters, "micro_counters": micro, "outputs": outputs,
        "occupancy": occupancy, "sweeps": sweep_res, "misses": [
            {k: r[k] for k in ("case", "n", "launch", "grid", "block", "hw_cycles", "sim_cycles", "err_pct")}
            for r in misses],
        "units": {CYCLES: "cycles (SM clock)", "gpu__time_duration.sum": "ns", "event_ms": "ms"},
    }


def rescore(result: dict, sweep_names=None) -> dict:
    """Recompute the sweeps (and their summary counts) of a built or loaded report from its rows,
    without simulating again: for a report JSON written before a sweep definition changed."""
    rows_by_key = {(r["case"], r["n"], r["launch"]): r for r in result["rows"]}
    result["sweeps"] = _sweep_results(sweeps_mod.select(sweep_names), rows_by_key)
    result["summary"].update(_sweep_summary(result["sweeps"]))
    return result


def load_result(path: str | os.PathLike) -> dict:
    """A ``validation_<gpu>.json`` written by :func:`write` (GpusimError if it is not one)."""
    p = pathlib.Path(path)
    try:
        data = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise GpusimError(f"--from {p}: cannot read a report JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != "gpusim-validation-report/1":
        raise GpusimError(f"--from {p}: not a gpusim-validation-report/1 file")
    return _unclean(data)


def _unclean(o):
    """Inverse of :func:`_clean`: "nan"/"inf"/"-inf" strings back to floats."""
    if isinstance(o, str) and o in ("nan", "inf", "-inf"):
        return float(o)
    if isinstance(o, dict):
        return {k: _unclean(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_unclean(v) for v in o]
    return o


# --------------------------------------------------------------------------- output


def headline(s: dict) -> str:
    """One paragraph of the headline numbers of a report summary."""
    c = s["cycles"]
    return (f"{s['gpu']}: outputs {s['outputs_equal']}/{s['outputs_total']} bit-equal "
            f"({s['outputs_ok']} within their rule); occupancy {s['occupancy_calculator_equal']}/"
            f"{s['occupancy_total']} equal to the driver (calculator), {s['occupancy_model_equal']}/"
            f"{s['occupancy_model_checked']} (model launches); micro-kernel counters {s['micro_counters_equal']}/"
            f"{s['micro_counters_total']} exact; cycles over {c['n']} launches: Pearson r {c['pearson_r']:.3f}, "
            f"Spearman {c['spearman_rho']:.3f}, MAE {c['mae_pct']:.1f} %, within 10 % {100 * c['within_10pct']:.0f} %; "
            f"sweeps ordered as on the GPU: {s['sweeps_same_order']}/{s['sweeps_total']}"
            + (f" (flat on the GPU, not scored: {', '.join(s['sweeps_flat'])})" if s.get("sweeps_flat") else "")
            + (f", at the scale tier's sizes {s['sweeps_scale_same_order']}/{s['sweeps_scale_total']}"
               if s.get("sweeps_scale_total") else "")
            + "".join(f"; {name} tier: {t['n']} launches, MAE {t['mae_pct']:.1f} % (best constant "
                      f"{t['best_constant_mae_pct']:.1f} %), r {t['pearson_r']:.3f}, beyond launch overhead "
                      f"{t['beyond_overhead_mae_pct']:.1f} %" for name, t in (s.get("tiers") or {}).items()))


def _png(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _plots(result: dict) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots = {}
    timed = [r for r in result["rows"] if r["hw_cycles"] and r["sim_cycles"]]
    if timed:
        c = result["summary"]["cycles"]
        fig, ax = plt.subplots(figsize=(5.5, 5))
        h = np.array([r["hw_cycles"] for r in timed])
        s = np.array([r["sim_cycles"] for r in timed])
        ax.scatter(h, s, s=12, alpha=0.7)
        lo, hi = min(h.min(), s.min()) * 0.8, max(h.max(), s.max()) * 1.25
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
        ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi), xlabel=f"hardware {CYCLES}",
               ylabel="gpusim cycles",
               title=f"[Correl={c['pearson_r']:.3f} MAE={c['mae_pct']:.1f}%] {c['n']} launches")
        plots["cycles_scatter"] = _png(fig)
    for sw in result["sweeps"]:
        pts = [p for p in sw["points"] if p["hw_cycles"] is not None]
        if not pts:
            continue
        ncol = 1 + bool(sw["counters"])
        fig, axes = plt.subplots(1, ncol, figsize=(5.2 * ncol, 3.6), squeeze=False)
        ax = axes[0][0]
        series = list(dict.fromkeys(p["series"] for p in pts))
        labels = list(dict.fromkeys(p["label"] for p in sw["points"]))   # one shared category axis
        if all(lab.isdigit() for lab in labels):
            labels.sort(key=int)
        pos = {lab: i for i, lab in enumerate(labels)}
        ax.set_xticks(range(len(labels)), labels)
        for k, ser in enumerate(series):
            sp = [p for p in pts if p["series"] == ser]
            x = [pos[p["label"]] for p in sp]
            col = f"C{k}"
            ax.plot(x, [p["hw_cycles"] for p in sp], "o-", color=col, label=f"H/W {ser}".strip())
            ax.plot(x, [p["sim_cycles"] for p in sp], "s--", color=col, label=f"gpusim {ser}".strip())
        ax.set(xlabel=sw["xlabel"], ylabel="cycles", title=sw["title"])
        if len(series) > 1:
            ax.set_yscale("log")
        ax.legend(fontsize=7)
        if ncol > 1:
            ax2 = axes[0][1]
            for k, name in enumerate(sw["counters"]):
                cp = [p for p in pts if name in p["counters"]]
                if not cp or len(series) > 1:
                    cp = [p for p in cp if p["series"] == series[0]]
                x = [pos[p["label"]] for p in cp]
                ax2.plot(x, [p["counters"][name][0] for p in cp], "o-", color=f"C{k}", label=f"H/W {name}")
                ax2.plot(x, [p["counters"][name][1] for p in cp], "s--", color=f"C{k}", label=f"gpusim {name}")
            ax2.set_xticks(range(len(labels)), labels)
            ax2.set(xlabel=sw["xlabel"], title="counters (Nsight names)" + (f", {series[0]}" if len(series) > 1 else ""))
            ax2.legend(fontsize=6)
        plots[f"sweep_{sw['name']}"] = _png(fig)
    return plots


def render_html(result: dict) -> str:
    """The self-contained HTML report (PNG plots inline as base64 data URIs)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(pathlib.Path(__file__).parent / "templates")),
                             autoescape=True, undefined=jinja2.StrictUndefined)

    def fmt(v, digits=3):
        if v is None:
            return "–"
        if isinstance(v, str):          # "nan"/"inf" as written to JSON, or a label
            return v
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) >= 1000):
            return f"{int(v):,}"
        return f"{v:.{digits}g}"

    env.filters["fmt"] = fmt
    env.filters["pct"] = lambda v: "–" if not isinstance(v, (int, float)) else f"{100 * v:.0f} %"
    return env.get_template("report.html.j2").render(r=result, s=result["summary"], plots=_plots(result),
                                                     headline=headline(result["summary"]))


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, tuple):
        return list(o)
    raise TypeError(type(o).__name__)


def _clean(o):
    """JSON has no NaN/inf: write them as strings."""
    if isinstance(o, float) and not math.isfinite(o):
        return str(o)
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o


def check_out(out_dir: str | os.PathLike, force: bool = False) -> None:
    """Raise :class:`GpusimError` if ``out_dir`` already holds a report (``report.html`` or a
    ``validation_*.json``) and not ``force``: called before the simulation, so that an hour of it
    is not lost to a refusal at the end."""
    out = pathlib.Path(out_dir)
    clash = sorted(str(p) for p in [out / REPORT_FILE, *out.glob("validation_*.json")] if p.exists())
    if clash and not force:
        raise GpusimError(f"--out {out}: {', '.join(clash)} exist(s); pass --force to replace, or another --out")


def write(result: dict, out_dir: str | os.PathLike, force: bool = False) -> dict:
    """Write ``report.html`` and ``validation_<gpu>.json`` into ``out_dir``; return their paths.

    Existing files of those names are not replaced unless ``force`` (GpusimError names them).
    """
    out = pathlib.Path(out_dir)
    slug = result["summary"]["slug"]
    paths = {"html": out / REPORT_FILE, "json": out / f"validation_{slug}.json"}
    clash = [str(p) for p in paths.values() if p.exists()]
    if clash and not force:
        raise GpusimError(f"--out {out}: {', '.join(clash)} exist(s); pass --force to replace, or another --out")
    out.mkdir(parents=True, exist_ok=True)
    paths["json"].write_text(json.dumps(_clean(result), indent=1, default=_json_default) + "\n")
    paths["html"].write_text(render_html(result))
    return paths
