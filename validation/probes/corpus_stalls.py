"""Where the fit half's worst launches stall, on the H100 and in gpusim, side by side.

Issue #28's fit half is off most on kernels whose limiter the corpus's five counters do not show
(``fft1024_shared`` -27.5 %, ``bgemm16`` -23.8 %, the stencils -13..-28 %, ``scan_lookback``
-59.8 %). This probe collects, for chosen corpus cases (fit half only: the test half is never
looked at to choose a model rule), Nsight Compute's warp-state breakdown
(``smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio``), shared-memory wavefronts
and bank conflicts, occupancy and registers, and gpusim's values of the same metrics.

On the GPU machine (repository root; clocks untouched)::

    ncu --clock-control none --metrics $(python3 validation/probes/corpus_stalls.py --metrics) \\
        --csv --page raw --print-units base --log-file $OUT/corpus_stalls.csv \\
        python3 validation/corpus/on_gpu.py $OUT/digests.json --cases CASE ...

gpusim's side (any machine; one process per case)::

    python3 validation/probes/corpus_stalls.py --sim OUT.json --cases CASE ... [--jobs N]

and the table (ncu's second row of each case, as ``score.py`` takes it)::

    python3 validation/probes/corpus_stalls.py --table corpus_stalls.csv digests.json OUT.json

Imports gpusim for ``--sim`` only; never cupy.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

#: Nsight Compute's warp states (NCU #warp-stall-reasons) reported per issue-active cycle.
STATES = ("barrier", "branch_resolving", "dispatch_stall", "drain", "lg_throttle", "long_scoreboard",
          "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction", "not_selected", "selected",
          "short_scoreboard", "sleeping", "tex_throttle", "wait")
STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
OTHER = ("sm__cycles_elapsed.avg", "smsp__inst_executed.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
         "smsp__issue_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread",
         "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
         "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
         "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
         "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
         "dram__bytes_read.sum", "dram__bytes_write.sum")
METRICS = OTHER + tuple(STALL.format(s) for s in STATES)


def _sim_one(name: str) -> dict:
    import gpusim
    from validation.corpus import cases as C
    from validation.corpus.runner import Modules, launch

    case = C.BY_NAME[name]
    n = case.sizes["gpu"]
    with gpusim.Device("h100", mode="timing"):
        res, _ = launch(gpusim, Modules(gpusim), case, n, C.inputs(case, n, 0))
    m = {k: float(res.metrics[k]) for k in METRICS if k in res.metrics}
    issued = m["smsp__inst_executed.sum"]  # one issue-active cycle per SASS instruction issued
    for s in STATES:  # gpusim samples every cycle: a state's warp-cycles per issue-active cycle
        m[STALL.format(s)] = float(res.metrics.get(f"smsp__pcsamp_warps_issue_stalled_{s}", 0)) / issued
    return {"case": name, "sampling": str(res.sampling), "metrics": m}


def table(ncu_csv: Path, digests_json: Path, sim_json: Path) -> str:
    """A Markdown table per case: each metric on the H100 and in gpusim (states under 0.05 on both
    left out). ``digests_json``: ``on_gpu.py``'s JSON of the ncu run (its launch order)."""
    from validation.corpus.on_gpu import gpu_rows

    hw = gpu_rows(ncu_csv, json.loads(digests_json.read_text())["order"])
    sim = json.loads(sim_json.read_text())
    out = []
    for name, rec in sim.items():
        h = hw.get(name, {})
        s = rec["metrics"]
        out += [f"### {name} ({rec['sampling']})", "", "| metric | H100 | gpusim |", "|---|---:|---:|"]
        for m in METRICS:
            a, b = h.get(m), s.get(m)
            if m.startswith("smsp__average") and max(a or 0, b or 0) < 0.05:
                continue
            label = m.replace("smsp__average_warps_issue_stalled_", "stall ").replace("_per_issue_active.ratio", "")
            out.append(f"| {label} | {'' if a is None else f'{a:,.2f}'} | {'' if b is None else f'{b:,.2f}'} |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="validation/probes/corpus_stalls.py")
    p.add_argument("--metrics", action="store_true", help="print the ncu metric list (comma-separated)")
    p.add_argument("--sim", type=Path, help="simulate --cases; write their metrics to this JSON")
    p.add_argument("--cases", nargs="+", default=[])
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--table", nargs=3, type=Path, metavar=("NCU_CSV", "DIGESTS_JSON", "SIM_JSON"))
    a = p.parse_args(argv)
    if a.metrics:
        print(",".join(METRICS))
    elif a.sim:
        with ProcessPoolExecutor(max(1, a.jobs), max_tasks_per_child=1) as pool:
            recs = list(pool.map(_sim_one, a.cases))
        a.sim.write_text(json.dumps({r["case"]: r for r in recs}, indent=1))
    elif a.table:
        print(table(*a.table))
    else:
        p.error("give --metrics, --sim or --table")


if __name__ == "__main__":
    main()
