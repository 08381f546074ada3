"""What the GPU probe scripts share: loading a file as a module, the suite without gpusim, and
one read of the device's properties.

Owns :func:`load_by_path` (a Python file imported by path, once), :func:`load_suite` (the
kernel suite ``gpusim/suite`` loaded by file path, so a GPU machine needs only numpy and
cupy), :func:`load_probe` (a sibling probe script as a module) and :func:`device_info` (the
GPU's name, compute capability, SM count, clocks, cache and shared-memory sizes, driver, CUDA
runtime and CuPy versions, from one ``getDeviceProperties``: every probe's and
:func:`validation.gpu.provenance`'s device fields come from it), :func:`sim_against_gpu` (a
probe's ``sim`` subcommand: its launches on gpusim beside the GPU's ncu rows) and
:func:`second_launches` (the measured rows of a probe that launches each kernel twice under ncu),
:func:`counter_values` and :func:`counter_rows` (a probe's counters, each a sum of metrics, from a
gpusim result or from those ncu rows), and :data:`MIX_CU`, the CUDA integer hash the random-access probes place their accesses with;
for the probes that take a corpus kernel apart (``*_parts.py``): :func:`parts_parser` (their
command line) and :func:`stall_ratios` (gpusim's stall samples under ncu's per-issue names).

Imports the standard library only -- no gpusim, no numpy; cupy is passed in by the caller -- so
the probe scripts (``validation/probes/*.py``) can import it on a GPU machine without gpusim's
dependencies.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from types import ModuleType

__all__ = ["MIX_CU", "PROBES", "ROOT", "SUITE_INIT", "counter_rows", "counter_values", "device_info", "load_by_path",
           "load_probe", "load_suite", "parts_parser", "probe_main", "second_launches", "sim_against_gpu", "simulate_launch",
           "stall_ratios"]

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROBES = ROOT / "validation" / "probes"
SUITE_INIT = ROOT / "gpusim" / "suite" / "__init__.py"

#: ``mix(x)``: a 32-bit integer hash (CUDA C, a device function) that the random-access probes
#: (``random_access.py``, ``store_cleaning.py``, ``l2_reuse.py``, ``dirty_capacity.py``) place their
#: accesses with; gpusim runs the same source, so both sides touch the same words.
MIX_CU = r"""
__device__ __forceinline__ unsigned mix(unsigned x)
{
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    return x;
}
"""


def load_by_path(name: str, path: str | pathlib.Path) -> ModuleType:
    """The Python file ``path`` imported as module ``name`` (registered in ``sys.modules`` before it
    runs: dataclasses look their module up while a class is built).  A module already loaded
    under ``name`` from the same file is returned as it is."""
    path = pathlib.Path(path).resolve()
    mod = sys.modules.get(name)
    if mod is not None and getattr(mod, "__file__", None) and pathlib.Path(mod.__file__).resolve() == path:
        return mod
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_suite(name: str = "gpusim_suite_standalone") -> ModuleType:
    """The kernel suite (``gpusim/suite/__init__.py`` and its family modules) by file path: no
    ``gpusim`` package import, so none of gpusim's other dependencies."""
    return load_by_path(name, SUITE_INIT)


def load_probe(stem: str) -> ModuleType:
    """The probe script ``validation/probes/<stem>.py`` as the module ``gpusim_<stem>_probe``."""
    return load_by_path(f"gpusim_{stem}_probe", PROBES / f"{stem}.py")


def second_launches(path: str | pathlib.Path, kernels, labels: list[str], metrics) -> dict[str, dict[str, float]]:
    """label -> {metric: value} from ncu's raw CSV (``--csv --page raw --print-units base``) of a
    probe that launches each of ``labels`` twice in order (warm-up, then the measured one), whose
    kernels are named in ``kernels``: the second row of each pair. Values are floats (ncu's
    thousands separators dropped); a metric the row lacks or leaves empty is 0.0.

    Raises:
        OSError: ``path`` cannot be read.
        IndexError: the CSV has fewer than two rows of ``kernels`` per label.
    """
    import csv

    kernels = set(kernels)
    with open(path) as f:
        rows = [r for r in csv.DictReader(line for line in f if line.startswith('"')) if r["Kernel Name"] in kernels]

    def num(v: str) -> float:
        return float(v.replace(",", "")) if v else 0.0
    return {lab: {m: num(rows[2 * i + 1].get(m, "")) for m in metrics} for i, lab in enumerate(labels)}


def counter_values(metrics: dict, counters: dict[str, tuple[str, ...]]) -> dict[str, float]:
    """``{key: the sum of its metrics}`` for each ``key: (metric names)`` of ``counters``, from one
    launch's ``metrics`` (an ncu row or a gpusim result's; a metric it lacks counts 0)."""
    return {key: float(sum(metrics.get(m, 0.0) for m in names)) for key, names in counters.items()}


def simulate_launch(launch, counters: dict[str, str], gpu: str = "h100", overrides: dict | None = None,
                    jobs: int = 1) -> dict:
    """A probe's one launch on gpusim in timing mode: ``launch(gpusim)`` makes its buffers and returns
    the launch's result; returns ``{key: metric}`` for each ``key: metric name`` of ``counters`` (0 where
    gpusim lacks it), ``timed`` (how the cycles were timed) and ``host_seconds``."""
    import time

    import gpusim

    t0 = time.perf_counter()
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs):
        res = launch(gpusim)
    m = res.metrics
    return {k: float(m.get(v, 0.0)) for k, v in counters.items()} | {
        "timed": str(res.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}


def counter_rows(path: str | pathlib.Path, kernels, labels: list[str],
                 counters: dict[str, tuple[str, ...]]) -> dict[str, dict[str, float]]:
    """label -> :func:`counter_values` of its measured row in ncu's CSV (:func:`second_launches`)."""
    metrics = sorted({m for names in counters.values() for m in names})
    return {lab: counter_values(r, counters) for lab, r in second_launches(path, kernels, labels, metrics).items()}


def device_info(cupy, device: int = 0) -> dict:
    """Device ``device``'s identity and sizes as CuPy's runtime reports them (nothing is set).

    Keys: name, compute_capability ("9.0"), sm_count, sm_clock_khz (cudaDevAttrClockRate: the
    maximum boost clock), memory_clock_khz, memory_bus_width, l2_bytes, shared_per_sm_bytes,
    shared_per_block_optin_bytes, reserved_shared_per_block_bytes, driver_version and
    cuda_runtime_version (CUDA's encoding, 13000 = 13.0), cupy_version.
    """
    props = cupy.cuda.runtime.getDeviceProperties(device)
    name = props["name"]
    return {
        "name": name.decode() if isinstance(name, bytes) else str(name),
        "compute_capability": f"{props['major']}.{props['minor']}",
        "sm_count": int(props["multiProcessorCount"]),
        "sm_clock_khz": int(props.get("clockRate", 0)),
        "memory_clock_khz": int(props.get("memoryClockRate", 0)),
        "memory_bus_width": int(props.get("memoryBusWidth", 0)),
        "l2_bytes": int(props.get("l2CacheSize", 0)),
        "shared_per_sm_bytes": int(props.get("sharedMemPerMultiprocessor", 0)),
        "shared_per_block_optin_bytes": int(props.get("sharedMemPerBlockOptin", 0)),
        "reserved_shared_per_block_bytes": int(props.get("reservedSharedMemPerBlock", 0)),
        "driver_version": int(cupy.cuda.runtime.driverGetVersion()),
        "cuda_runtime_version": int(cupy.cuda.runtime.runtimeGetVersion()),
        "cupy_version": cupy.__version__,
    }


def sim_against_gpu(prog: str, argv: list[str], gpu_rows, simulate, counter: tuple[str, str]) -> None:
    """A probe's ``sim`` subcommand: ``CSV OUT.json [--labels L ...] [--jobs N] [--launch-jobs N]
    [--gpu G] [--set FIELD=VALUE ...]``. Simulates each launch (``simulate(label, gpu, overrides,
    launch_jobs)`` -> a dict with ``cycles``, ``host_seconds`` and the ``counter[0]`` key, run in
    ``--jobs`` processes) beside ``gpu_rows(CSV)[label]`` (the GPU's ncu row, same keys), prints a
    line per launch as it finishes and rewrites OUT.json (``gpu_config``, ``overrides``, ``rows``
    in the labels' order) after each. ``counter``: (key, name printed). ``--set`` values are TOML.

    Raises SystemExit on bad arguments (argparse)."""
    import argparse
    import json
    import tomllib
    from concurrent.futures import ProcessPoolExecutor, as_completed

    p = argparse.ArgumentParser(prog=f"{prog} sim")
    p.add_argument("csv")
    p.add_argument("out")
    p.add_argument("--labels", nargs="+", default=None)
    p.add_argument("--jobs", type=int, default=1, help="launches simulated at once")
    p.add_argument("--launch-jobs", type=int, default=1, help="worker processes of each launch's functional run")
    p.add_argument("--gpu", default="h100")
    p.add_argument("--set", nargs="+", default=[], metavar="FIELD=VALUE", help="config overrides (TOML values)")
    a = p.parse_args(argv)
    over = {k: tomllib.loads(f"v = {v}")["v"] for k, v in (kv.split("=", 1) for kv in a.set)}
    truth = gpu_rows(a.csv)
    labels = a.labels or list(truth)
    key, name = counter
    rows = []
    with ProcessPoolExecutor(a.jobs) as pool:
        futures = {pool.submit(simulate, lab, a.gpu, over, a.launch_jobs): lab for lab in labels}
        for f in as_completed(futures):
            lab, g, s = futures[f], truth[futures[f]], f.result()
            err = 100 * (s["cycles"] / g["cycles"] - 1)
            rows.append({"launch": lab, "gpu": g, "gpusim": s, "error_pct": round(err, 1)})
            print(f"{lab:28s} GPU {g['cycles']:>11,.0f}  gpusim {s['cycles']:>11,.0f}  {err:+6.1f} %   {name} "
                  f"GPU {g[key]:>11,.0f}  gpusim {s[key]:>11,.0f}  ({s['host_seconds']} s)", flush=True)
            rows.sort(key=lambda r: labels.index(r["launch"]))
            pathlib.Path(a.out).write_text(json.dumps({"gpu_config": a.gpu, "overrides": over, "rows": rows},
                                                      indent=1))


def probe_main(prog: str, argv: list[str], main, gpu_rows, simulate, counter: tuple[str, str], table=None) -> None:
    """The command line of a probe with a GPU side and a gpusim side: ``sim CSV OUT.json ...``
    (:func:`sim_against_gpu` with ``gpu_rows``, ``simulate`` and ``counter``), ``--table CSV
    [SIM_JSON]`` (prints ``table(CSV[, SIM_JSON])``, where the probe has one), else ``main()`` (the
    launches on the GPU). ``argv``: the arguments after the script's name."""
    if argv[:1] == ["sim"]:
        sim_against_gpu(prog, argv[1:], gpu_rows, simulate, counter)
    elif table is not None and argv[:1] == ["--table"]:
        print(table(*argv[1:3]))
    else:
        main()


def stall_ratios(metrics: dict, issued: float, stalls) -> dict[str, float]:
    """gpusim's stall samples of each reason in ``stalls`` per instruction issued, under ncu's name
    ``smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`` (``metrics``: a launch
    result's metrics; ``issued``: its ``smsp__inst_executed.sum``; reasons gpusim does not report,
    or no instruction issued, are left out)."""
    out = {}
    for s in stalls:
        v = metrics.get(f"smsp__pcsamp_warps_issue_stalled_{s}")
        if v is not None and issued:
            out[f"smsp__average_warps_issue_stalled_{s}_per_issue_active.ratio"] = float(v) / issued
    return out


def parts_parser(prog: str, labels=None):
    """The command line of the probes that take a corpus kernel apart (``*_parts.py``): one of
    ``--gpu`` (every kernel twice on the GPU, under ncu), ``--sim OUT.json`` (on gpusim),
    ``--table NCU_CSV SIM_JSON`` or ``--metrics`` (ncu's ``--metrics`` argument); ``--jobs N``,
    ``--set FIELD=VALUE ...`` (gpusim's config overrides) and ``--labels L ...`` (the launches,
    ``labels`` their choices; default all). Returns (the parser, its exclusive group), for a probe
    to add its own modes to."""
    import argparse
    import pathlib

    p = argparse.ArgumentParser(prog=prog)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--gpu", action="store_true", help="launch every kernel twice on the GPU, under ncu")
    g.add_argument("--sim", type=pathlib.Path, help="run the kernels on gpusim; write the metrics (JSON)")
    g.add_argument("--table", nargs=2, type=pathlib.Path, metavar=("NCU_CSV", "SIM_JSON"))
    g.add_argument("--metrics", action="store_true", help="print ncu's --metrics argument")
    p.add_argument("--jobs", type=int, default=1, help="launches simulated at once (--sim)")
    p.add_argument("--set", nargs="+", default=[], metavar="FIELD=VALUE", help="gpusim config overrides (--sim)")
    p.add_argument("--labels", nargs="+", default=None, choices=labels, help="the launches to run (default: all)")
    return p, g
