"""The hardware side: run suite launches on a real GPU and keep everything in one raw JSON bundle.

Owns: :func:`collect` (on a machine with CuPy, a GPU and optionally ``ncu``), the bundle
format ``gpusim-validation-hardware/1`` and :func:`load` (a bundle, a folder holding one,
or the older ``timing_h100.json`` of ``validation/probes/timing_on_gpu.py`` with its
sibling files), which needs no GPU.

What :func:`collect` measures, per launch of every selected suite (case, n):

* Nsight Compute counters (``validation/probes/timing_on_gpu.py --profile``, reused as
  is: ``ncu --clock-control none --cache-control all --replay-mode kernel``; the GPU's
  clocks and settings are never changed), joined with the launch manifest by order;
* CUDA-event times (3 warm-up launches, median of 20 timed ones; the same probe's
  ``--events``) and the ``test_n`` outputs of every case (bit-exact comparison);
* occupancy: the loaded function's real ``num_regs`` and ``shared_size_bytes`` and
  ``cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor`` for the launch's block
  size and dynamic shared memory.

Bundle (``hardware_<slug>.json``)::

    {"format": "gpusim-validation-hardware/1", "provenance": {...}, "collection": {...},
     "runs": [...], "launches": [{"case", "n", "extra", "run", "launch", "kernel", "grid",
     "block", "shared_mem", "ok", "metrics": {ncu name: value} | null, "event_ms", ...}],
     "occupancy": [{"ptx", "kernel", "block_threads", "dynamic_smem", "num_regs",
     "shared_size_bytes", "driver_blocks_per_sm"}], "outputs_npz": "outputs_<slug>.npz"}

Imports cupy only inside :func:`collect` (through :func:`validation.gpu.require_cupy`);
must not import gpusim's engines (gpusim.functional, gpusim.timing) or simpy.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import time
from typing import Callable, Iterable

from gpusim.errors import GpusimError
from validation import gpu as gpu_mod
from validation import probekit

__all__ = ["FORMAT", "SUPPLEMENTARY_METRICS", "ncu_metrics", "collect", "load", "load_many", "HardwareData"]

FORMAT = "gpusim-validation-hardware/1"
PROBE = gpu_mod.ROOT / "validation" / "probes" / "timing_on_gpu.py"

#: ncu metrics of a collection: the probe's list plus the L2-by-source and instruction-class
#: counters its supplementary run added (validation/reports/h100/timing_probe_log_h100.txt)
SUPPLEMENTARY_METRICS = (
    "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
    "lts__t_requests_srcunit_tex_op_read.sum", "l1tex__m_xbar2l1tex_read_sectors_mem_lg_op_ld.sum",
    "smsp__inst_executed_op_global_ld.sum", "smsp__inst_executed_op_global_st.sum",
)


def _probe_module():
    """``validation/probes/timing_on_gpu.py`` as a module (its METRICS, join, dump_json...)."""
    return probekit.load_probe("timing_on_gpu")


def ncu_metrics() -> list[str]:
    """The metric names a collection asks ncu for (probe list + :data:`SUPPLEMENTARY_METRICS`)."""
    base = list(_probe_module().METRICS)
    return base + [m for m in SUPPLEMENTARY_METRICS if m not in base]


class HardwareData(dict):
    """A loaded bundle (a dict with the keys above) plus ``path`` (the file it came from) and
    ``outputs`` (``{"case/output": numpy array}`` of the test_n runs, empty when not recorded)."""

    path: pathlib.Path
    outputs: dict


# --------------------------------------------------------------------------- collecting


def _stream(cmd: list[str], progress: Callable[[str], None], timeout: float) -> int:
    """Run ``cmd`` with its output passed line by line to ``progress``; kill it after ``timeout`` s."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=gpu_mod.ROOT,
                            start_new_session=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        progress("  " + line.rstrip())
        if time.monotonic() - t0 > timeout:
            os.killpg(proc.pid, 9)
            progress(f"  [killed after {timeout:.0f} s]")
            break
    return proc.wait()


def _occupancy(cupy, launches: list[dict], progress) -> list[dict]:
    """Driver occupancy of every distinct (kernel, block, dynamic smem) of ``launches``."""
    from gpusim.suite import CASES, PTX_DIR

    seen: dict[tuple, dict] = {}
    modules: dict[str, object] = {}
    for rec in launches:
        ptx = CASES[rec["case"]].ptx
        threads = math.prod(rec["block"])
        key = (ptx, rec["kernel"], threads, int(rec["shared_mem"]))
        if key in seen:
            continue
        if ptx not in modules:
            modules[ptx] = cupy.RawModule(path=str(PTX_DIR / ptx))
        fn = modules[ptx].get_function(rec["kernel"])
        static = int(fn.shared_size_bytes)
        dyn = int(rec["shared_mem"])
        if dyn > fn.max_dynamic_shared_size_bytes:
            fn.max_dynamic_shared_size_bytes = dyn
        ptr = fn.kernel.ptr if hasattr(fn, "kernel") else fn.ptr   # cupy.RawKernel -> its driver Function
        blocks = int(cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(ptr, threads, dyn))
        seen[key] = {"ptx": ptx, "kernel": rec["kernel"], "block_threads": threads, "dynamic_smem": dyn,
                     "num_regs": int(fn.num_regs), "shared_size_bytes": static,
                     "max_dynamic_shared_size_bytes": int(fn.max_dynamic_shared_size_bytes),
                     "driver_blocks_per_sm": blocks}
    progress(f"occupancy: {len(seen)} distinct (kernel, block, dynamic smem) asked of the driver")
    return list(seen.values())


def collect(out_dir: str | os.PathLike, cases: Iterable[str] | None = None, *, test_only: bool = False,
            extra: Iterable[str] = (), use_ncu: bool = True, progress: Callable[[str], None] = print,
            ncu_timeout: float = 420.0, events_timeout: float = 240.0, tier: str = "small") -> pathlib.Path:
    """Measure the selected suite cases on this machine's GPU; return the bundle's path.

    ``cases``: suite case names (None: all); each runs at its ``TIMING_SIZES`` (``test_only``:
    test_n only) when ``tier`` is "small", at the scale tier's sizes (``gpusim.suite.SCALE_SIZES``)
    when "scale", at both when "all"; plus ``extra`` sizes ``"case:n"`` (GPU only). ``use_ncu``
    False, or no ncu
    found: events, outputs and occupancy only (``metrics`` null). Writes under ``out_dir``:
    ``hardware_<slug>.json``, ``outputs_<slug>.npz`` and ``raw_<slug>.tar.gz`` (the probe's
    manifest, ncu CSV and log). Raises :class:`validation.gpu.GpuUnavailable` without
    CuPy/GPU and :class:`GpusimError` when the probe writes nothing usable.
    """
    cupy = gpu_mod.require_cupy()
    from gpusim.suite import CASES

    cases = list(cases) if cases else list(CASES)
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        raise GpusimError(f"--cases: unknown suite case(s) {', '.join(unknown)} (see 'gpusim run --list')")
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ncu = gpu_mod.find_ncu() if use_ncu else None
    prov = gpu_mod.provenance(cupy, ncu)
    slug = prov["slug"]
    raw = out / f"raw_{slug}"
    raw.mkdir(exist_ok=True)
    progress(f"GPU: {prov['gpu_name']} ({prov['sm_count']} SMs), driver {prov['driver_version']}, CUDA runtime "
             f"{prov['cuda_runtime_version']}, CuPy {prov['cupy_version']}, ncu {prov.get('ncu_version', 'not found')}")
    sel = ["--cases", *cases, "--tier", tier] + (["--test-only"] if test_only else []) \
        + (["--extra", *extra] if extra else ["--extra"])
    py = sys.executable
    t0 = time.monotonic()
    if ncu:
        progress(f"Nsight Compute run of {len(cases)} case(s) (clocks untouched: --clock-control none), then "
                 "CUDA-event times in a fresh process ...")
        rc = _stream([py, str(PROBE), "--profile", "--events", "--out", str(raw), "--metrics", ",".join(ncu_metrics()),
                      "--ncu-timeout", str(ncu_timeout), "--events-timeout", str(events_timeout), *sel],
                     progress, ncu_timeout + events_timeout + 120)
    else:
        progress("no ncu: CUDA-event times and outputs only ...")
        rc = _stream([py, str(PROBE), "--events", "--out", str(raw), *sel], progress, events_timeout + 60)
    progress(f"probe finished with status {rc} after {time.monotonic() - t0:.0f} s")
    probe = _probe_module()
    events_path = raw / "timing_events_h100.json"
    ncu_path = raw / "timing_h100.json"
    if not events_path.is_file():
        raise GpusimError(f"the hardware probe wrote no {events_path.name} (status {rc}); see the output above")
    events = json.loads(events_path.read_text())
    launches = events["launches"]
    if ncu_path.is_file():
        joined = json.loads(ncu_path.read_text())
        by_key = {(r["case"], r["n"], r["launch"]): r for r in joined["launches"]}
        for rec in launches:
            hw = by_key.get((rec["case"], rec["n"], rec["launch"]))
            rec["metrics"] = hw.get("metrics") if hw else None
            rec["launch_info"] = hw.get("launch_info") if hw else None
        ncu_meta = {k: joined["meta"].get(k) for k in ("ncu_command", "ncu_rc", "metrics_dropped", "units",
                                                       "sm_clock_hz_median", "sm_clock_hz_range",
                                                       "dram_clock_hz_median", "join_problems", "nvidia_smi_before",
                                                       "nvidia_smi_after", "ncu_defaults_kept")}
    else:
        for rec in launches:
            rec["metrics"] = None
        ncu_meta = {"ncu_command": None, "note": "no ncu run: counters not collected"}
    occupancy = _occupancy(cupy, launches, progress)
    outputs_src = raw / "timing_outputs_h100.npz"
    outputs_name = f"outputs_{slug}.npz"
    if outputs_src.is_file():
        shutil.copyfile(outputs_src, out / outputs_name)
    bundle = {"format": FORMAT, "provenance": prov,
              "collection": {"cases": cases, "test_only": test_only, "tier": tier, "extra": list(extra),
                             "probe_status": rc,
                             "events_method": events["meta"].get("method"), **ncu_meta,
                             "seconds": round(time.monotonic() - t0, 1)},
              "runs": events["runs"], "launches": launches, "occupancy": occupancy,
              "outputs_npz": outputs_name if outputs_src.is_file() else None}
    path = out / f"hardware_{slug}.json"
    path.write_text(probe.dump_json(bundle))
    with tarfile.open(out / f"raw_{slug}.tar.gz", "w:gz") as tar:
        tar.add(raw, arcname=f"raw_{slug}")
    shutil.rmtree(raw)
    progress(f"{sum(r['ok'] for r in events['runs'])}/{len(events['runs'])} runs ok, {len(launches)} launches -> {path}")
    return path


# --------------------------------------------------------------------------- loading


def _read_json(path: pathlib.Path, what: str) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise GpusimError(f"--from {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GpusimError(f"--from {path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise GpusimError(f"--from {path}: not valid JSON ({exc}); expected {what}") from None


def _load_npz(path: pathlib.Path) -> dict:
    import numpy as np

    if not path.is_file():
        return {}
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def _from_probe(path: pathlib.Path, data: dict) -> dict:
    """Adapt the probe's timing_h100.json (+ sibling events/outputs files) to the bundle format."""
    meta = data.get("meta", {})
    events_path = path.with_name(path.name.replace("timing_", "timing_events_", 1))
    events = _read_json(events_path, "events JSON")["launches"] if events_path.is_file() else []
    ev = {(r["case"], r["n"], r["launch"]): r for r in events}
    launches = []
    for rec in data["launches"]:
        rec = dict(rec)
        e = ev.get((rec["case"], rec["n"], rec["launch"]), {})
        for k in ("event_ms", "event_ms_min", "event_ms_max", "event_samples"):
            rec[k] = e.get(k)
        launches.append(rec)
    prov = {"time_utc": meta.get("time_utc"), "gpu_name": meta.get("device"),
            "slug": gpu_mod.device_slug(meta.get("device") or "gpu"), "compute_capability": meta.get("compute_capability"),
            "sm_count": meta.get("multiprocessors"), "sm_clock_khz": meta.get("clock_rate_khz"),
            "memory_clock_khz": meta.get("memory_clock_rate_khz"), "l2_bytes": meta.get("l2_cache_bytes"),
            "driver_version": meta.get("driver_version"), "cuda_runtime_version": meta.get("runtime_version"),
            "cupy_version": meta.get("cupy"), "ncu_version": meta.get("ncu_version"),
            "nvidia_smi": meta.get("nvidia_smi_before"), "gpusim_version": None, "gpusim_commit": None,
            "note": f"adapted from {path.name} (validation/probes/timing_on_gpu.py); no driver occupancy queries"}
    outputs = path.with_name(path.name.replace("timing_", "timing_outputs_", 1).replace(".json", ".npz"))
    return {"format": FORMAT, "provenance": prov,
            "collection": {k: meta.get(k) for k in ("ncu_command", "sm_clock_hz_median", "sm_clock_hz_range",
                                                    "dram_clock_hz_median", "units")},
            "runs": data.get("runs", []), "launches": launches, "occupancy": [],
            "outputs_npz": outputs.name if outputs.is_file() else None}


def load(path: str | os.PathLike) -> HardwareData:
    """Read hardware data for a report: a bundle JSON, a folder with one ``hardware_*.json``, or
    the probe's ``timing_<gpu>.json``. Raises :class:`GpusimError` naming the file and what is
    wrong (missing, not JSON, not hardware data, several bundles in the folder)."""
    p = pathlib.Path(path)
    if p.is_dir():
        found = sorted(p.glob("hardware_*.json"))
        if len(found) != 1:
            raise GpusimError(f"--from {p}: expected one hardware_<gpu>.json in this folder, found "
                              f"{len(found)}{': ' + ', '.join(f.name for f in found) if found else ''}")
        p = found[0]
    data = _read_json(p, f"a {FORMAT} bundle or a timing_<gpu>.json")
    if not isinstance(data, dict):
        raise GpusimError(f"--from {p}: expected a JSON object with 'launches', got {type(data).__name__}")
    if data.get("format") != FORMAT:
        if isinstance(data.get("launches"), list) and "meta" in data:
            data = _from_probe(p, data)
        else:
            raise GpusimError(f"--from {p}: not hardware data (no \"format\": \"{FORMAT}\" and no probe "
                              "'meta'/'launches'); give a hardware_<gpu>.json written by 'gpusim validate'")
    for i, rec in enumerate(data.get("launches", [])):
        missing = [k for k in ("case", "n", "launch", "kernel", "grid", "block") if k not in rec]
        if missing:
            raise GpusimError(f"--from {p}: launch {i} lacks {', '.join(missing)}")
    hw = HardwareData(data)
    hw.path = p
    hw.outputs = _load_npz(p.with_name(data["outputs_npz"])) if data.get("outputs_npz") else {}
    return hw


def load_many(paths) -> HardwareData:
    """:func:`load` every path and merge them into one: launches, runs and occupancy queries
    of all (a (case, n) measured in several bundles keeps the last bundle's), outputs of all;
    the first bundle's provenance, with the files merged under ``merged_from``. Raises
    :class:`GpusimError` when the bundles come from GPUs of different names."""
    bundles = [load(p) for p in paths]
    if len(bundles) == 1:
        return bundles[0]
    names = {b["provenance"].get("gpu_name") for b in bundles}
    if len(names) > 1:
        raise GpusimError(f"--from: the hardware data comes from different GPUs ({', '.join(map(str, names))}); "
                          "merge only one GPU's bundles")
    first = bundles[0]

    def merged(field: str, *key: str) -> list[dict]:  # later bundles replace records of the same key
        return list({tuple(r.get(k) for k in key): r for b in bundles for r in b.get(field, [])}.values())

    data = dict(first)
    data["launches"] = merged("launches", "case", "n", "launch")
    data["runs"] = merged("runs", "case", "n")
    data["occupancy"] = merged("occupancy", "ptx", "kernel", "block_threads", "dynamic_smem")
    data["provenance"] = {**first["provenance"], "merged_from": [str(b.path) for b in bundles]}
    hw = HardwareData(data)
    hw.path = first.path
    hw.outputs = {k: v for b in bundles for k, v in b.outputs.items()}
    return hw
