"""The simulator side: the same suite runs in gpusim's timing mode, in parallel processes.

Owns: :func:`simulate_run` (one (case, n) on a configuration with overrides -> per-launch
cycles, Nsight-named metrics, occupancy, and the outputs) and :func:`simulate_many`
(progress lines over :func:`gpusim.sweep.runner.backend`, the parallel back end that
``gpusim sweep`` uses too: local processes or a Dask cluster). Outputs come from the same timing-mode run (the
timing engine executes the functional engine's semantics, so they are the functional
outputs too).

Imports gpusim (its engines, simpy through timing mode); must not import cupy.
"""

from __future__ import annotations

import time
import traceback
from typing import Callable, Iterable

import numpy as np

__all__ = ["simulate_run", "simulate_many"]


def simulate_run(case: str, n: int, config: str = "h100", overrides: dict | None = None,
                 sampled: bool = False) -> dict:
    """Run suite ``case`` at size ``n`` in timing mode; return a picklable dict. ``sampled``:
    time large launches with the sampled engine (the scale tier); otherwise in detail.

    Keys: case, n, host_seconds, error (None or "Type: message"), outputs ({name: numpy
    array}), launches: [{cycles, metrics: {Nsight name: number}, regs_per_thread,
    blocks_per_sm (the model's occupancy answer for the launch)}] in launch order.
    """
    import gpusim
    from gpusim.suite import CASES, run_case

    t0 = time.perf_counter()
    rec: dict = {"case": case, "n": int(n), "error": None, "outputs": {}, "launches": []}
    try:
        # The small tier is timed in detail: its sizes are affordable, and sampling would add its own error.
        with gpusim.Device(config, mode="timing", overrides=overrides or {}, sampling=bool(sampled)):
            run = run_case(CASES[case], gpusim, n, seed=0)
    except Exception as exc:  # one failing run must not stop the report; it is listed there
        rec["error"] = f"{type(exc).__name__}: {exc}"
        rec["traceback"] = traceback.format_exc(limit=-4)
        rec["host_seconds"] = round(time.perf_counter() - t0, 2)
        return rec
    for launch in run.launches:
        occ = getattr(launch, "occupancy", None)
        rec["launches"].append({
            "cycles": int(launch.cycles) if launch.cycles is not None else None,
            "metrics": {k: (float(v) if isinstance(v, (float, np.floating)) else int(v))
                        for k, v in launch.metrics.items() if isinstance(v, (int, float, np.integer, np.floating))},
            "regs_per_thread": getattr(occ, "regs_per_thread", None),
            "timed": launch.sampling.method if getattr(launch, "sampling", None) is not None else None,
            "blocks_per_sm": getattr(occ, "blocks_per_sm", None)})
    rec["outputs"] = {k: np.asarray(v) for k, v in run.outputs.items()}
    rec["host_seconds"] = round(time.perf_counter() - t0, 2)
    return rec


def _one(case: str, n: int, config: str, overrides: dict | None, experiments: dict | None,
         sampled: bool = False) -> dict:
    if experiments and case in experiments:
        from validation.experiment import simulate

        return simulate(case, experiments[case], config, overrides)
    return simulate_run(case, n, config, overrides, sampled)


def simulate_many(runs: Iterable[tuple[str, int]], config: str = "h100", overrides: dict | None = None,
                  jobs: int = 1, progress: Callable[[str], None] = print,
                  experiments: dict | None = None, sampled: set | None = None,
                  scheduler: str | None = None) -> dict[tuple[str, int], dict]:
    """:func:`simulate_run` for every (case, n), ``jobs`` processes at a time (or on the Dask
    cluster whose scheduler is at ``scheduler``), in the given order (put the slowest first);
    prints one progress line per finished run with a count and the elapsed time. A case named in
    ``experiments`` (a hardware bundle's ``experiments``: a user's PTX + experiment TOML) runs
    through :func:`validation.experiment.simulate`. Runs in ``sampled`` (a set of (case, n)) use
    the sampled engine. Returns {(case, n): result}."""
    from gpusim.sweep.runner import backend

    sampled = sampled or set()
    runs = list(runs)
    out: dict[tuple[str, int], dict] = {}
    t0 = time.perf_counter()

    def note(res: dict) -> None:
        out[(res["case"], res["n"])] = res
        status = res["error"] or f"{len(res['launches'])} launch(es)"
        progress(f"[{len(out)}/{len(runs)}] simulated {res['case']} n={res['n']}: {status} "
                 f"({res['host_seconds']:.1f} s; {time.perf_counter() - t0:.0f} s elapsed)")

    calls = [(case, n, config, overrides, experiments, (case, n) in sampled) for case, n in runs]
    with backend(None if scheduler else max(1, jobs), scheduler=scheduler) as be:
        for _, res in be.imap_unordered(_one, calls):
            note(res)
    return out
