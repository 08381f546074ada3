"""Hardware probe: Nsight Compute counters and cycles of every kernel-suite launch, by launch.

The simulator's timing mode is compared with the H100 launch by launch: each
(case, n) of the suite's ``TIMING_SIZES`` is run once with CuPy under Nsight
Compute (``ncu``), and every kernel launch is recorded, in order, in a
manifest.  ncu profiles the same launches in the same order (its "ID"
column), so the join by order gives one record per launch with its counters.

Modes (repository root, machine with a CUDA GPU, CuPy and ncu; no gpusim
dependencies needed: the suite is loaded by file path)::

    # 1. the launches (run it under ncu; --dry: no GPU, the suite's DryRun xp)
    ncu --clock-control none --cache-control all --replay-mode kernel --csv --page raw \\
        --print-units base --metrics <list> --target-processes all --log-file ncu.csv \\
        python3 validation/probes/timing_on_gpu.py --manifest m.json
    # 2. join ncu's rows with the manifest by order -> DIR/timing_h100.json
    python3 validation/probes/timing_on_gpu.py --join ncu.csv m.json --out DIR
    # 3. CUDA-event times per launch (no ncu) -> DIR/timing_events_h100.json, and the
    #    test_n outputs of every case -> DIR/timing_outputs_h100.npz
    python3 validation/probes/timing_on_gpu.py --events --out DIR
    # all of it: check the metric names with one-launch trials (dropping, with a note in
    # meta, any name this ncu rejects), run 1 under ncu, join, then 3 in a fresh process;
    # writes DIR/timing_{h100.json,events_h100.json,manifest_h100.json,ncu_raw_h100.csv.gz,
    # outputs_h100.npz,probe_log_h100.txt}
    python3 validation/probes/timing_on_gpu.py --profile --events --out DIR
    # more metrics for the same launches later: a second --profile run with --metrics, merged
    python3 validation/probes/timing_on_gpu.py --profile --metrics m1,m2 --out DIR2
    python3 validation/probes/timing_on_gpu.py --merge DIR/timing_h100.json DIR2/timing_h100.json

``--cases`` restricts the cases, ``--test-only`` runs test_n only, ``--extra
CASE:N`` adds GPU-only sizes (marked ``"extra": true``; ``--profile`` adds
``DEFAULT_EXTRA`` unless ``--extra`` is given).  Medium sizes run first, then
the extras, then the test_n runs, so a run cut short keeps the sizes the timing
comparison needs most.  Clocks are never changed (``--clock-control none``);
otherwise ncu's defaults, named explicitly: kernel replay, caches flushed
before every replay pass (every launch starts with cold L1/L2).  No warm-up
launch: ncu replays each kernel anyway, and a warm-up would add ncu rows.

This script imports only numpy, cupy (not with ``--dry``/``--join``), the
standard library and the two standard-library-only modules of validation/ that every
probe shares: ``validation.ncu`` (ncu's options, finding it, reading its CSV) and
``validation.probekit`` (loading the suite and sibling probes by path, device properties).
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import json
import os
import pathlib
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:          # run as a script: make the validation package importable
    sys.path.insert(0, str(ROOT))

from validation import probekit
from validation.ncu import BASE_OPTIONS as NCU_BASE_OPTIONS
from validation.ncu import find_ncu, parse_value, read_ncu_csv

SEED = 0
SCRIPT = "validation/probes/timing_on_gpu.py"

#: the counters collected for every launch (hardware-facts section 7)
STALL_REASONS = ("barrier", "long_scoreboard", "short_scoreboard", "math_pipe_throttle", "mio_throttle",
                 "lg_throttle", "not_selected", "selected", "no_instruction", "wait", "branch_resolving",
                 "dispatch_stall", "drain", "membar", "misc", "sleeping", "tex_throttle")
METRICS: tuple[str, ...] = (
    "sm__cycles_elapsed.avg",
    "sm__cycles_elapsed.max",
    "sm__cycles_active.avg",
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",        # SM clock during the launch (ncu's "SM Frequency")
    "dram__cycles_elapsed.avg.per_second",      # DRAM clock ("DRAM Frequency")
    "smsp__inst_executed.sum",
    "smsp__thread_inst_executed.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct",
    "lts__t_sectors_op_read.sum",
    "lts__t_sectors_op_write.sum",
    "lts__t_sector_op_read_hit_rate.pct",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "smsp__sass_average_branch_targets_threads_uniform.pct",
    "smsp__issue_active.avg.per_cycle_active",
    "smsp__warps_eligible.avg.per_cycle_active",
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
    "launch__shared_mem_config_size",
    "launch__waves_per_multiprocessor",
) + tuple(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALL_REASONS)

#: the device fields timing_h100.json's meta adds to suite_on_gpu's: key -> probekit.device_info key
DEVICE_FIELDS = {"clock_rate_khz": "sm_clock_khz", "memory_clock_rate_khz": "memory_clock_khz",
                 "memory_bus_width": "memory_bus_width", "l2_cache_bytes": "l2_bytes",
                 "shared_per_sm_bytes": "shared_per_sm_bytes",
                 "shared_per_block_optin_bytes": "shared_per_block_optin_bytes",
                 "reserved_shared_per_block_bytes": "reserved_shared_per_block_bytes"}

#: extra GPU-only sizes of --profile: the occupancy lesson at steady state (64 MiB > the 50 MB L2)
DEFAULT_EXTRA = ("copy_occupancy:4194304", "copy_occupancy:16777216")

# --------------------------------------------------------------------------- JSON, loading


def dump_json(obj: dict) -> str:
    """JSON text with the lists "runs" and "launches" one element per line (readable diffs, small
    files), everything else indented."""
    parts = []
    for key, val in obj.items():
        if key in ("runs", "launches") and isinstance(val, list):
            inner = ",\n".join("  " + json.dumps(v, separators=(", ", ": ")) for v in val)
            parts.append(f" {json.dumps(key)}: [\n{inner}\n ]")
        else:
            text = json.dumps(val, indent=1).replace("\n", "\n ")
            parts.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def load_suite_on_gpu():
    """The sibling probe (for load_suite and _meta), imported by path."""
    return probekit.load_probe("suite_on_gpu")


# --------------------------------------------------------------------------- recording xp


class Recorder:
    """An ``xp`` wrapping cupy (or the suite's DryRun) that records every kernel launch.

    ``log`` gets one dict per launch (kernel, grid, block, shared_mem) in call order; with
    ``keep`` the callable and its arguments are kept too (``kept``), for re-timing.
    """

    def __init__(self, xp, keep: bool = False):
        self._xp = xp
        self.keep = keep
        self.log: list[dict] = []
        self.kept: list[tuple] = []

    def __getattr__(self, name):
        return getattr(self._xp, name)

    def RawModule(self, *, path):  # noqa: N802 - mirrors CuPy
        return _RecModule(self, self._xp.RawModule(path=path))

    def reset(self) -> None:
        self.log, self.kept = [], []


class _RecModule:
    def __init__(self, rec: Recorder, module):
        self._rec, self._module = rec, module

    def get_function(self, name: str):
        return _RecKernel(self._rec, self._module.get_function(name), name)


def _dim3(v) -> list[int]:
    v = [int(v)] if isinstance(v, (int, np.integer)) else [int(x) for x in v]
    return v + [1] * (3 - len(v))


class _RecKernel:
    def __init__(self, rec: Recorder, fn, name: str):
        self._rec, self._fn, self.name = rec, fn, name

    @property
    def shared_size_bytes(self) -> int:
        return int(getattr(self._fn, "shared_size_bytes", 0) or 0)

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        return self._fn.max_dynamic_shared_size_bytes

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value: int) -> None:
        self._fn.max_dynamic_shared_size_bytes = value

    def __call__(self, grid, block, args, shared_mem: int = 0, **kw):
        self._rec.log.append({"kernel": self.name, "grid": _dim3(grid), "block": _dim3(block),
                              "shared_mem": int(shared_mem)})
        if self._rec.keep:
            self._rec.kept.append((self._fn, grid, block, args, int(shared_mem)))
        return self._fn(grid, block, args, shared_mem=shared_mem, **kw)


# --------------------------------------------------------------------------- the runs


def known_cases(suite) -> dict:
    """What ``--cases`` and ``--extra`` may name: the suite's cases, then the seeds' int32
    reductions (``gpusim/suite/seeds.py``'s ``all_cases``; kept out of ``suite.CASES``)."""
    return importlib.import_module(suite.__name__ + ".seeds").all_cases()


def plan(suite, cases=None, test_only=False, extra=(), tier="small") -> list[dict]:
    """(case, n) runs in order: medium sizes, then extras, then test_n sizes (``tier`` "small");
    the scale-tier size of each case that has one (``suite.SCALE_SIZES``) and the extras
    ("scale"); or the scale sizes, then the small tier's runs ("all")."""
    known = known_cases(suite)
    names = list(cases) if cases else list(suite.TIMING_SIZES)
    for name in names:
        if name not in known:
            raise SystemExit(f"unknown case {name!r}")
    medium, tests = [], []
    for name in names:
        case = known[name]
        for n in suite.TIMING_SIZES.get(name, (case.test_n,)):
            (tests if n == case.test_n else medium).append({"case": name, "n": int(n), "extra": False})
    extras = []
    for spec in extra:
        name, _, n = spec.partition(":")
        if name not in known or not n.isdigit():
            raise SystemExit(f"--extra wants CASE:N, got {spec!r}")
        if not cases or name in cases:
            extras.append({"case": name, "n": int(n), "extra": True})
    scale = [{"case": name, "n": int(suite.SCALE_SIZES[name]), "extra": False}
             for name in names if name in suite.SCALE_SIZES and tier in ("scale", "all")]
    if tier == "scale":
        return scale + extras
    return scale + ([] if test_only else medium + extras) + tests


def run_all(suite, xp, runs: list[dict], sync, free, keep: bool = False, on_run=None):
    """Run every planned (case, n) with a Recorder around ``xp``.

    Returns (run records, launch records).  ``on_run(record, caserun, recorder)`` is called
    after each run (before its memory is freed) -- the event timing hooks in there.
    """
    rec = Recorder(xp, keep=keep)
    known = known_cases(suite)
    run_records, launches = [], []
    for run_index, r in enumerate(runs):
        case = known[r["case"]]
        rec.reset()
        record = dict(r, run=run_index)
        t0 = time.perf_counter()
        caserun = None
        try:
            caserun = suite.run_case(case, rec, r["n"], seed=SEED)
            sync()
            ok, message = suite.check(caserun)
        except Exception as exc:  # a failing case must not stop the others
            ok, message = False, f"{type(exc).__name__}: {exc}"
            record["traceback"] = traceback.format_exc(limit=6)
        record.update(ok=bool(ok), check=message, launches=len(rec.log),
                      seconds=round(time.perf_counter() - t0, 4))
        for i, launch in enumerate(rec.log):
            launches.append({"case": r["case"], "n": r["n"], "extra": r["extra"], "run": run_index,
                             "launch": i, **launch, "ok": bool(ok)})
        if on_run is not None:
            on_run(record, caserun, rec)
        run_records.append(record)
        short = message if len(message) <= 160 else message[:157] + "..."
        print(f"{'ok  ' if ok else 'FAIL'} {r['case']:24s} n={r['n']:<9d} launches={len(rec.log)} {short}",
              flush=True)
        rec.reset()
        caserun = None
        free()
    return run_records, launches


def _xp_for(dry: bool, suite):
    """(xp, sync, free) for cupy or the suite's DryRun."""
    if dry:
        return suite.DryRun(), (lambda: None), (lambda: None)
    import cupy

    def free():
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()

    return cupy, cupy.cuda.Device().synchronize, free


def _gpu_meta(sog, xp, dry: bool) -> dict:
    meta = sog._meta(xp, dry)
    meta["script"] = SCRIPT
    if not dry:
        import cupy

        dev = probekit.device_info(cupy)
        meta.update({key: dev[field] for key, field in DEVICE_FIELDS.items()})
    return meta


def _setup(args):
    """(suite_on_gpu module, suite module, xp, sync, free, planned runs) for a command."""
    sog = load_suite_on_gpu()
    suite = sog.load_suite()
    xp, sync, free = _xp_for(args.dry, suite)
    return sog, suite, xp, sync, free, plan(suite, args.cases, args.test_only, args.extra, args.tier)


def cmd_manifest(args) -> int:
    sog, suite, xp, sync, free, runs = _setup(args)
    path = pathlib.Path(args.manifest)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = _gpu_meta(sog, xp, args.dry)
    done_runs: list[dict] = []

    def write(run_records, launches, complete: bool):
        manifest = {"meta": dict(meta, runs=len(run_records), runs_ok=sum(r["ok"] for r in run_records),
                                 launches=len(launches), runs_planned=len(runs), complete=complete,
                                 argv=sys.argv[1:]),
                    "timing_sizes": {k: list(v) for k, v in suite.TIMING_SIZES.items()},
                    "copy_occupancy_smem": {str(k): v for k, v in suite.COPY_OCCUPANCY_SMEM.items()},
                    "runs": run_records, "launches": launches}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(dump_json(manifest))
        tmp.replace(path)
        return manifest

    launches_so_far: list[dict] = []

    def on_run(record, caserun, rec):
        # rewrite the manifest after every run, so a run cut short still joins what ncu profiled
        done_runs.append(record)
        launches_so_far.extend({"case": record["case"], "n": record["n"], "extra": record["extra"],
                                "run": record["run"], "launch": i, **launch, "ok": record["ok"]}
                               for i, launch in enumerate(rec.log))
        write(done_runs, launches_so_far, complete=False)

    run_records, launches = run_all(suite, xp, runs, sync, free, on_run=on_run)
    manifest = write(run_records, launches, complete=True)
    print(f"{manifest['meta']['runs_ok']}/{len(run_records)} runs ok, {len(launches)} launches -> {path}")
    return 0 if manifest["meta"]["runs_ok"] == len(run_records) else 1


# --------------------------------------------------------------------------- events


def cmd_events(args) -> int:
    sog, suite, xp, sync, free, runs = _setup(args)
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    times: list[dict] = []
    outputs: dict[str, np.ndarray] = {}
    known = known_cases(suite)

    def on_run(record, caserun, rec):
        case = known[record["case"]]
        if caserun is not None and record["n"] == case.test_n and not record["extra"]:
            for key, arr in caserun.outputs.items():
                outputs[f"{record['case']}/{key}"] = np.asarray(arr)
        for fn, grid, block, fargs, smem in rec.kept:
            times.append(_time_launch(fn, grid, block, fargs, smem, args.dry, args.warmup, args.repeat))

    run_records, launches = run_all(suite, xp, runs, sync, free, keep=True, on_run=on_run)
    assert len(times) == len(launches)
    for launch, t in zip(launches, times):
        launch.update(t)
    meta = _gpu_meta(sog, xp, args.dry)
    meta.update(method=f"CUDA events around each launch alone (no ncu): {args.warmup} warm-up launches, then "
                       f"{args.repeat} timed launches each synchronised; event_ms is their median. Launches "
                       f"run again after the case's outputs were read and checked, so in-place kernels keep "
                       f"updating their data (timing unaffected); caches are warm from the previous launches",
                runs=len(run_records), runs_ok=sum(r["ok"] for r in run_records), launches=len(launches),
                argv=sys.argv[1:])
    (out_dir / "timing_events_h100.json").write_text(
        dump_json({"meta": meta, "runs": run_records, "launches": launches}))
    np.savez_compressed(out_dir / "timing_outputs_h100.npz", **outputs)
    print(f"{meta['runs_ok']}/{len(run_records)} runs ok; {len(launches)} launches timed -> "
          f"{out_dir / 'timing_events_h100.json'}")
    return 0 if meta["runs_ok"] == len(run_records) else 1


def _time_launch(fn, grid, block, fargs, smem, dry, warmup, repeat) -> dict:
    if dry:
        return {"event_ms": None, "event_ms_min": None, "event_ms_max": None, "event_samples": 0}
    import cupy

    for _ in range(warmup):
        fn(grid, block, fargs, shared_mem=smem)
    cupy.cuda.Device().synchronize()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    samples = []
    for _ in range(repeat):
        start.record()
        fn(grid, block, fargs, shared_mem=smem)
        end.record()
        end.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, end))
    return {"event_ms": statistics.median(samples), "event_ms_min": min(samples),
            "event_ms_max": max(samples), "event_samples": len(samples)}


# --------------------------------------------------------------------------- ncu CSV


# parse_value and read_ncu_csv: validation/ncu.py (shared with validation.hardware/experiment and
# the benchmarks that read the small probes' committed CSVs)


def _parse_dim(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", text)]


INFO_COLUMNS = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
                "Block Size", "Grid Size", "Device", "CC", "Kernel Time", "Function Name", "Demangled Name",
                "Estimated Speedup", "Section Name"}
# ncu's raw page adds, besides the requested metrics: device__attribute_* (constant: kept once, in
# meta), launch__* (kept per launch as launch_info, but for those below), .min/.max/.avg/.sum
# breakdowns of the requested metrics, nvlink/numa/c2c facts (left in the raw CSV only)
_LAUNCH_INFO_SKIP = ("launch__kernel_name", "launch__cluster_", "launch__uses_", "launch__context_id",
                     "launch__device_id", "launch__stream_id", "launch__tpc_", "launch__func_cache_config",
                     "launch__function_pcs", "launch__occupancy_cluster_", "launch__occupancy_per_cluster_size")


def _column_kind(col: str, requested: set[str]) -> str:
    if col in requested:
        return "metric"
    if col.startswith("device__attribute_"):
        return "device"
    if col == "profiler__replayer_passes" or (col.startswith("launch__") and not col.startswith(_LAUNCH_INFO_SKIP)):
        return "launch"
    return "raw_only"


def join(ncu_text: str, manifest: dict, extra_meta: dict | None = None) -> tuple[dict, list[str]]:
    """timing_h100.json's content from ncu's CSV text and the manifest; and the problems found."""
    rows, units = read_ncu_csv(ncu_text)
    launches = manifest["launches"]
    problems: list[str] = []
    if len(rows) != len(launches):
        problems.append(f"{len(rows)} ncu rows for {len(launches)} manifest launches")
    requested = set((extra_meta or {}).get("metrics_requested") or METRICS)
    columns = [c for c in (rows[0].keys() if rows else []) if c not in INFO_COLUMNS]
    metric_cols = [c for c in columns if _column_kind(c, requested) == "metric"]
    launch_cols = [c for c in columns if _column_kind(c, requested) == "launch"]
    device_cols = [c for c in columns if _column_kind(c, requested) == "device"]
    records = []
    for i, launch in enumerate(launches):
        recd = {k: launch[k] for k in ("case", "n", "extra", "run", "launch", "kernel", "grid", "block",
                                       "shared_mem", "ok")}
        if i >= len(rows):
            recd.update(ncu_id=None, metrics=None, missing=True)
            records.append(recd)
            continue
        row = rows[i]
        name = row.get("Kernel Name", "")
        grid, block = _parse_dim(row.get("Grid Size", "")), _parse_dim(row.get("Block Size", ""))
        base = re.sub(r"\(.*$", "", name).strip()
        if base != launch["kernel"] or grid != launch["grid"] or block != launch["block"]:
            problems.append(f"launch {i} ({launch['case']} n={launch['n']} #{launch['launch']}): manifest "
                            f"{launch['kernel']} {launch['grid']} {launch['block']}, ncu ID {row['ID']} "
                            f"{name} {grid} {block}")
        recd["ncu_id"] = int(row["ID"])
        recd["metrics"] = {c: parse_value(row[c]) for c in metric_cols}
        recd["launch_info"] = {c: parse_value(row[c]) for c in launch_cols}
        records.append(recd)
    meta = dict(manifest.get("meta", {}))
    meta.update(extra_meta or {})
    meta["units"] = {c: units.get(c, "") for c in metric_cols}
    meta["launch_info_units"] = {c: units.get(c, "") for c in launch_cols}
    if rows:
        meta["device_attributes"] = {c: parse_value(rows[0][c]) for c in device_cols}
        meta["device_attributes_vary"] = sorted(c for c in device_cols if len({r[c] for r in rows}) > 1)
    meta["requested_metrics_missing"] = sorted(requested - set(metric_cols)) if rows else sorted(requested)
    meta["ncu_rows"] = len(rows)
    meta["notes"] = ("metrics: the requested ncu metrics (units in meta.units); launch_info: ncu's launch__* "
                     "facts of the launch; sm__cycles_elapsed.avg = SM clock cycles over the launch "
                     "(gpu__time_duration); dram__bytes_write counts only what left L2 during the launch. "
                     "ncu's other raw columns (min/max/avg breakdowns...) are in timing_ncu_raw_h100.csv.gz")
    meta["joined_by"] = "order: manifest launch i = ncu row with the i-th smallest ID; kernel name, grid and " \
                        "block checked"
    freq = [r["metrics"].get("sm__cycles_elapsed.avg.per_second") for r in records if r.get("metrics")]
    freq = [f for f in freq if isinstance(f, (int, float))]
    if freq:
        meta["sm_clock_hz_median"] = statistics.median(freq)
        meta["sm_clock_hz_range"] = [min(freq), max(freq)]
    dfreq = [r["metrics"].get("dram__cycles_elapsed.avg.per_second") for r in records if r.get("metrics")]
    dfreq = [f for f in dfreq if isinstance(f, (int, float))]
    if dfreq:
        meta["dram_clock_hz_median"] = statistics.median(dfreq)
    all_na = [c for c in metric_cols if all(r.get("metrics") is None or r["metrics"].get(c) is None
                                            for r in records)]
    if all_na:
        meta["metrics_all_na"] = all_na
    meta["join_problems"] = problems
    out = {"meta": meta, "timing_sizes": manifest.get("timing_sizes"),
           "copy_occupancy_smem": manifest.get("copy_occupancy_smem"),
           "runs": manifest.get("runs"), "launches": records}
    return out, problems


def cmd_join(args) -> int:
    ncu_path, manifest_path = args.join
    raw = pathlib.Path(ncu_path).read_bytes()
    if ncu_path.endswith(".gz"):
        raw = gzip.decompress(raw)
    manifest = json.loads(pathlib.Path(manifest_path).read_text())
    extra = json.loads(args.meta_json) if args.meta_json else {}
    out, problems = join(raw.decode(errors="replace"), manifest, extra)
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "timing_h100.json").write_text(dump_json(out))
    for p in problems:
        print("JOIN PROBLEM:", p)
    print(f"{len(out['launches'])} launches, {out['meta']['ncu_rows']} ncu rows, {len(problems)} problems -> "
          f"{out_dir / 'timing_h100.json'}")
    return 0 if not problems else 1


def merge(main: dict, supp: dict) -> tuple[dict, list[str]]:
    """Add a supplementary ncu run's metrics to ``main`` launch by launch.

    The runs must hold the same launches (case, n, launch, kernel, grid, block, shared_mem) in the
    same order.  A metric new to ``main`` goes into each launch's ``metrics`` (unit into
    meta.units); one ``main`` already has (re-measured, e.g. cycles) goes into ``metrics_rerun``,
    so the two runs' values can be compared.  meta.supplementary_runs records the second run.
    """
    key = ("case", "n", "launch", "kernel", "grid", "block", "shared_mem")
    problems = []
    if len(main["launches"]) != len(supp["launches"]):
        problems.append(f"{len(main['launches'])} launches vs {len(supp['launches'])} in the supplement")
    for i, (a, b) in enumerate(zip(main["launches"], supp["launches"])):
        if [a[k] for k in key] != [b[k] for k in key]:
            problems.append(f"launch {i}: {[a[k] for k in key]} != {[b[k] for k in key]}")
    if problems:
        return main, problems
    units = main["meta"].setdefault("units", {})
    for a, b in zip(main["launches"], supp["launches"]):
        for name, value in (b.get("metrics") or {}).items():
            if a.get("metrics") is not None and name not in a["metrics"]:
                a["metrics"][name] = value
            else:
                a.setdefault("metrics_rerun", {})[name] = value
    for name, unit in supp["meta"].get("units", {}).items():
        units.setdefault(name, unit)
    sm = supp["meta"]
    main["meta"].setdefault("supplementary_runs", []).append(
        {k: sm.get(k) for k in ("time_utc", "ncu_version", "ncu_command", "ncu_rc", "metrics_requested",
                                "metrics_dropped", "join_problems", "sm_clock_hz_median", "sm_clock_hz_range",
                                "dram_clock_hz_median", "nvidia_smi_before", "nvidia_smi_after")})
    return main, problems


def cmd_merge(args) -> int:
    main_path, supp_path = map(pathlib.Path, args.merge)
    merged, problems = merge(json.loads(main_path.read_text()), json.loads(supp_path.read_text()))
    for p in problems:
        print("MERGE PROBLEM:", p)
    if problems:
        return 1
    main_path.write_text(dump_json(merged))
    print(f"merged {len(merged['launches'])} launches of {supp_path} into {main_path}")
    return 0


# --------------------------------------------------------------------------- the whole pipeline


def _find_ncu() -> str:
    found = find_ncu()
    if found is None:
        raise SystemExit("ncu not found")
    return found


def _sh(cmd: list[str], timeout: float | None = None, log=None) -> tuple[int, str]:
    """Run cmd (stdout and stderr together); on timeout kill its whole process group (ncu's
    target included) and return what it printed, rc 124."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                                start_new_session=True)
    except OSError as exc:
        if log:
            log(f"$ {shlex.join(cmd)}  # could not start: {exc}")
        return 127, f"could not start {cmd[0]}: {exc}"
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, _ = proc.communicate()
        rc = 124
        out = (out or "") + f"\n[timed out after {timeout} s]"
    if log:
        log(f"$ {shlex.join(cmd)}  # rc={rc}, {time.perf_counter() - t0:.1f} s")
    return rc, out


def cmd_profile(args) -> int:
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    log_lines: list[str] = []

    def log(msg: str) -> None:
        print(msg, flush=True)
        log_lines.append(msg)

    def flush_log() -> None:
        (out_dir / "timing_probe_log_h100.txt").write_text("\n".join(log_lines) + "\n")

    t_start = time.perf_counter()
    ncu = _find_ncu()
    _, ncu_version = _sh([ncu, "--version"])
    log(f"ncu: {ncu}\n{ncu_version.strip()}")
    _, smi_full = _sh(["nvidia-smi"])
    log(smi_full.strip())
    _, smi = _sh(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,"
                  "clocks.max.mem,temperature.gpu,power.draw", "--format=csv"])
    log(f"nvidia-smi before: {smi.strip()}")
    _, vers = _sh([sys.executable, "-c", "import sys, numpy, cupy; print(sys.version); print('numpy', "
                   "numpy.__version__, 'cupy', cupy.__version__, 'CUDA runtime', "
                   "cupy.cuda.runtime.runtimeGetVersion(), 'driver', cupy.cuda.runtime.driverGetVersion())"])
    log(vers.strip())
    py = sys.executable
    me = str(pathlib.Path(__file__).resolve())
    base_opts = list(NCU_BASE_OPTIONS)

    # ---- 1. which metric names does this ncu accept? (one small launch per trial)
    trial_manifest = pathlib.Path(tempfile.mkdtemp()) / "trial.json"

    def trial(metrics: list[str]) -> tuple[bool, str]:
        cmd = [ncu, *base_opts, "--metrics", ",".join(metrics), "-k", "regex:^copy_vec4$", "-c", "1",
               py, me, "--manifest", str(trial_manifest), "--cases", "copy_vec4", "--test-only",
               *(["--dry"] if args.dry else [])]
        rc, out = _sh(cmd, timeout=180, log=log)
        rows, _ = read_ncu_csv(out)
        ok = rc == 0 and "==ERROR==" not in out and len(rows) == 1 and all(m in rows[0] for m in metrics)
        return ok, out

    ok, out = trial(["gpu__time_duration.sum"])
    if not ok and "--print-units" in out:
        log("ncu rejected --print-units base; using its default units")
        base_opts = [o for o in base_opts if o not in ("--print-units", "base")]
        ok, out = trial(["gpu__time_duration.sum"])
    if not ok:
        log("ncu cannot profile a one-metric trial launch; its output:\n" + out[-4000:])
        flush_log()
        return 2
    requested = list(args.metrics.split(",")) if args.metrics else list(METRICS)
    metrics = list(requested)
    dropped: dict[str, str] = {}
    ok, out = trial(metrics)
    if not ok:
        log("the full metric list failed a trial:\n" + "\n".join(ln for ln in out.splitlines()
                                                                if ln.startswith("==")))
        named = [m for m in metrics if m in out and any(m in ln for ln in out.splitlines() if "==ERROR==" in ln)]
        for m in named:
            dropped[m] = "named in ncu's error message"
        metrics = [m for m in metrics if m not in dropped]
        ok, out = trial(metrics) if named else (False, out)

        def bad_of(ms: list[str]) -> list[str]:
            if trial(ms)[0]:
                return []
            if len(ms) == 1:
                return ms
            half = len(ms) // 2
            return bad_of(ms[:half]) + bad_of(ms[half:])

        if not ok:
            for m in bad_of(metrics):
                dropped[m] = "failed a one-launch ncu trial (bisection)"
            metrics = [m for m in metrics if m not in dropped]
    log(f"metrics: {len(metrics)} kept, {len(dropped)} dropped: {dropped}")
    flush_log()

    # ---- 2. the launches under ncu
    manifest_path = out_dir / "timing_manifest_h100.json"
    csv_path = out_dir / "timing_ncu_raw_h100.csv"
    kernels = sorted({e for p in (ROOT / "gpusim" / "suite" / "ptx").glob("*.ptx")
                      for e in re.findall(r"\.entry\s+([A-Za-z_$][\w$]*)", p.read_text())})
    sel = []
    for flag, vals in (("--cases", args.cases), ("--extra", args.extra)):
        if vals:
            sel += [flag, *vals]
    if args.test_only:
        sel.append("--test-only")
    sel += ["--tier", args.tier]
    if args.dry:
        sel.append("--dry")       # plumbing test with a stand-in ncu
    ncu_cmd = [ncu, *base_opts, "--target-processes", "all", "--metrics", ",".join(metrics),
               "-k", "regex:^(" + "|".join(kernels) + ")$", "--log-file", str(csv_path),
               py, me, "--manifest", str(manifest_path), *sel]
    log("ncu command: " + shlex.join(ncu_cmd))
    rc, out = _sh(ncu_cmd, timeout=args.ncu_timeout, log=log)
    log(out)
    log(f"ncu run rc={rc}")
    logged = csv_path.read_text(errors="replace") if csv_path.is_file() else ""
    if not read_ncu_csv(logged)[0] and read_ncu_csv(out)[0]:
        log("ncu printed its CSV to stdout, not to --log-file: using stdout")
        csv_path.write_text(out)
    flush_log()
    if not manifest_path.is_file():
        log("no manifest written (the ncu run did not finish): nothing to join")
        flush_log()
        return 3

    # ---- 3. join
    manifest = json.loads(manifest_path.read_text())
    extra_meta = {"ncu": ncu, "ncu_version": ncu_version.strip(), "ncu_command": shlex.join(ncu_cmd),
                  "ncu_rc": rc, "metrics_requested": requested, "metrics_dropped": dropped,
                  "nvidia_smi_before": smi.strip(),
                  "ncu_defaults_kept": "kernel replay; --cache-control all (L1/L2 flushed before each pass)"}
    _, smi_after = _sh(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,temperature.gpu", "--format=csv"])
    extra_meta["nvidia_smi_after"] = smi_after.strip()
    text = csv_path.read_text(errors="replace") if csv_path.is_file() else ""
    joined, problems = join(text, manifest, extra_meta)
    (out_dir / "timing_h100.json").write_text(dump_json(joined))
    for p in problems:
        log("JOIN PROBLEM: " + p)
    log(f"joined {len(joined['launches'])} launches with {joined['meta']['ncu_rows']} ncu rows; "
        f"{len(problems)} problems; all-n/a metrics: {joined['meta'].get('metrics_all_na', [])}")
    if csv_path.is_file():
        with open(csv_path, "rb") as f, gzip.open(str(csv_path) + ".gz", "wb") as g:
            g.write(f.read())
        csv_path.unlink()
    flush_log()

    # ---- 4. CUDA events, without ncu, in a fresh process
    if args.events:
        cmd = [py, me, "--events", "--out", str(out_dir), *sel]
        rc_e, out_e = _sh(cmd, timeout=args.events_timeout, log=log)
        log(out_e[-6000:])
        log(f"events run rc={rc_e}")
    log(f"total {time.perf_counter() - t_start:.1f} s")
    flush_log()
    return 0 if rc == 0 and not problems else 1


# --------------------------------------------------------------------------- main


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--manifest", metavar="FILE", help="run the launches, write the manifest (JSON)")
    mode.add_argument("--join", nargs=2, metavar=("NCU_CSV", "MANIFEST"), help="join ncu rows with a manifest")
    mode.add_argument("--merge", nargs=2, metavar=("TIMING_JSON", "SUPPLEMENT_JSON"),
                      help="add a second --profile run's metrics (same launches) to TIMING_JSON")
    mode.add_argument("--profile", action="store_true", help="metric check, ncu run, join (+ --events)")
    ap.add_argument("--events", action="store_true",
                    help="time each launch with CUDA events (no ncu); with --profile: afterwards")
    ap.add_argument("--out", default=os.environ.get("OUT", "."), help="output folder (default $OUT or .)")
    ap.add_argument("--dry", action="store_true", help="the suite's DryRun xp instead of CuPy (no GPU)")
    ap.add_argument("--cases", nargs="*", help="only these cases")
    ap.add_argument("--test-only", action="store_true", help="only test_n sizes")
    ap.add_argument("--tier", choices=("small", "scale", "all"), default="small",
                    help="small: the timing sizes (default); scale: suite.SCALE_SIZES only; all: both")
    ap.add_argument("--extra", nargs="*", default=None, metavar="CASE:N", help="extra GPU-only sizes")
    ap.add_argument("--meta-json", help="--join: JSON object merged into meta (ncu version, command...)")
    ap.add_argument("--metrics", help="--profile: comma-separated ncu metrics instead of METRICS")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--ncu-timeout", type=float, default=380.0, help="--profile: seconds for the ncu run")
    ap.add_argument("--events-timeout", type=float, default=120.0)
    args = ap.parse_args(argv)
    if args.extra is None:
        args.extra = list(DEFAULT_EXTRA) if args.profile else []
    if args.manifest:
        return cmd_manifest(args)
    if args.join:
        return cmd_join(args)
    if args.merge:
        return cmd_merge(args)
    if args.profile:
        return cmd_profile(args)
    if args.events:
        return cmd_events(args)
    ap.error("one of --manifest, --join, --profile, --events is required")


if __name__ == "__main__":
    sys.exit(main())
