"""GPU probe: do shared-memory loads and L1-hitting global loads share the L1's data stage?

The H100's L1 and shared memory are one SRAM array; ncu counts both kinds of access as
``l1tex__data_pipe_lsu_wavefronts``. If they share one data stage (one wavefront a cycle), a loop
that mixes shared loads with many-wavefront global loads takes the *sum* of their wavefronts; if
not, the *larger*. The corpus's ``fft1024_shared`` (fit half) stalls on ``mio_throttle`` on the H100
(22.9 warps per issue) where gpusim, which books the two on separate stages, stalls on
``lg_throttle`` instead (``validation/probes/corpus_stalls.py``).

``data_stage.ptx`` (source ``data_stage.cu``): kernels of ``SH`` conflict-free shared loads and
``GL`` global loads an iteration, lanes ``GS`` floats apart (1: one line, one wavefront; 32: 32
lines in one bank, 32 wavefronts; 33: 32 lines in 32 banks). 1,056 CTAs of 256 threads (8 a
SM), ``iters`` 64 and 256: the slope per iteration and SM is the cycles an iteration costs.

On the GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,l1tex__data_pipe_lsu_wavefronts.sum,\\
l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum,\\
smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,\\
smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio \\
        --csv --page raw --print-units base --log-file $OUT/data_stage.csv python3 validation/probes/data_stage.py

gpusim's side: ``python3 validation/probes/data_stage.py --sim OUT.json [--jobs N]``; the table:
``python3 validation/probes/data_stage.py --table data_stage.csv OUT.json``.

Needs CuPy (GPU side) or gpusim (``--sim``).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

PTX = pathlib.Path(__file__).with_name("data_stage.ptx")
#: kernel -> (shared loads, global loads an iteration, lane stride of the global load in floats)
KERNELS = {"sh4": (4, 0, 1), "sh16": (16, 0, 1), "gl_s1": (0, 1, 1), "gl_s32": (0, 1, 32), "gl_s33": (0, 1, 33),
           "sh4_gl_s1": (4, 1, 1), "sh4_gl_s32": (4, 1, 32), "sh4_gl_s33": (4, 1, 33),
           "sh16_gl_s32": (16, 1, 32), "sh16_gl_s33": (16, 1, 33),
           # session 39's second run: the cost of a coalesced or few-line global load
           "gl_s2": (0, 1, 2), "gl_s4": (0, 1, 4), "gl_s8": (0, 1, 8), "gl2_s1": (0, 2, 1), "gl4_s1": (0, 4, 1),
           "sh4_gl4_s1": (4, 4, 1)}
ITERS = (64, 256)
CTAS, THREADS = 1056, 256


def launches():
    """``(label, kernel, iters)`` in launch order."""
    return [(f"{k} i{i}", k, i) for k in KERNELS for i in ITERS]


def _run(xp, label: str, kernel: str, iters: int):
    """One launch on ``xp`` (cupy or gpusim); returns gpusim's result (None on the GPU)."""
    import numpy as np

    f = xp.RawModule(path=str(PTX)).get_function(kernel)
    g = xp.asarray(np.ones(8 * (32 * 33 + 64), np.float32))
    out = xp.asarray(np.zeros(CTAS * THREADS, np.float32))
    return f((CTAS,), (THREADS,), (g, out, np.int32(iters)))


def _sim_one(item) -> dict:
    import gpusim

    label, kernel, iters = item
    with gpusim.Device("h100", mode="timing"):
        r = _run(gpusim, label, kernel, iters)
    m = r.metrics
    issued = m["smsp__inst_executed.sum"]
    return {"label": label, "sampling": str(r.sampling), "cycles": float(m["sm__cycles_elapsed.avg"]),
            "mio": float(m.get("smsp__pcsamp_warps_issue_stalled_mio_throttle", 0)) / issued,
            "lg": float(m.get("smsp__pcsamp_warps_issue_stalled_lg_throttle", 0)) / issued}


def _ncu(path: pathlib.Path) -> dict[str, dict[str, float]]:
    from validation.corpus.on_gpu import ncu_metrics

    def num(r: dict, m: str) -> float:
        return float(r[m].replace(",", "")) if r.get(m) not in (None, "", "n/a") else float("nan")

    out = {}
    for (label, _, _), r in zip(launches(), ncu_metrics(path)):
        out[label] = {"cycles": num(r, "sm__cycles_elapsed.avg"), "wf": num(r, "l1tex__data_pipe_lsu_wavefronts.sum"),
                      "mio": num(r, "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio"),
                      "lg": num(r, "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio")}
    return out


def table(ncu_csv: pathlib.Path, sim_json: pathlib.Path) -> str:
    """Cycles an iteration per SM (slope over ``ITERS``, 8 CTAs a SM) on the H100 and in gpusim."""
    hw, sim = _ncu(ncu_csv), json.loads(sim_json.read_text())
    d = ITERS[1] - ITERS[0]
    rows = ["| kernel | SH, GL, GS | H100 cycles / iteration | data wavefronts / iteration (H100) | "
            "mio / lg stall (H100, last) | gpusim cycles / iteration | mio / lg stall (gpusim, last) |",
            "|---|---|---:|---:|---|---:|---|"]
    for k, spec in KERNELS.items():
        lo, hi = f"{k} i{ITERS[0]}", f"{k} i{ITERS[1]}"
        if hi not in hw or hi not in sim:  # a kernel added after that run
            continue
        h = (hw[hi]["cycles"] - hw[lo]["cycles"]) / d
        wf = (hw[hi]["wf"] - hw[lo]["wf"]) / d / 132
        s = (sim[hi]["cycles"] - sim[lo]["cycles"]) / d
        rows.append(f"| {k} | {spec} | {h:.1f} | {wf:.1f} | {hw[hi]['mio']:.2f} / {hw[hi]['lg']:.2f} | {s:.1f} | "
                    f"{sim[hi]['mio']:.2f} / {sim[hi]['lg']:.2f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="validation/probes/data_stage.py")
    p.add_argument("--sim", type=pathlib.Path, help="run the launches on gpusim; write cycles to this JSON")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--table", nargs=2, type=pathlib.Path, metavar=("NCU_CSV", "SIM_JSON"))
    a = p.parse_args(argv)
    if a.table:
        print(table(*a.table))
    elif a.sim:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max(1, a.jobs), max_tasks_per_child=1) as pool:
            recs = list(pool.map(_sim_one, launches()))
        a.sim.write_text(json.dumps({r["label"]: r for r in recs}, indent=1))
    else:
        import cupy

        for label, kernel, iters in launches():
            _run(cupy, label, kernel, iters)
            cupy.cuda.runtime.deviceSynchronize()
            print(f"launch {label}", flush=True)


if __name__ == "__main__":
    main()
