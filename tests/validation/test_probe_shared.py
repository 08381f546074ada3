"""The GPU probes' shared code path (issue #15), exercised on committed raw data: no GPU.

The probes (``validation/probes/*.py``) read ncu's CSV through :mod:`validation.ncu`, load the
suite and each other through :mod:`validation.probekit`, and take every device field from
:func:`validation.probekit.device_info`; here the committed raw outputs go through that same
code and must give what was committed from them.
"""

from __future__ import annotations

import gzip
import json
import pathlib
import subprocess
import sys
import types

import pytest

from validation import ncu, probekit

ROOT = pathlib.Path(__file__).resolve().parents[2]
H100 = ROOT / "validation" / "reports" / "h100"


def _launch_labels(stem: str) -> list[str]:
    probe = probekit.load_probe(stem)
    return [row[0] for row in probe.launches()]


@pytest.mark.parametrize("csv_path,labels", [
    ("pipe_latency/pipe_latency.csv", lambda: _launch_labels("pipe_latency")),
    ("l1_stride/l1_stride.csv", lambda: _launch_labels("l1_stride")),
    ("icache/icache_all.csv", lambda: _launch_labels("icache")),
    ("icache/icache_none.csv", lambda: _launch_labels("icache")),
    ("first_load/first_load.csv", lambda: _launch_labels("first_load")),
    ("loaded_latency/loaded_latency.csv", lambda: _launch_labels("loaded_latency")),
    ("store_scatter/store_scatter.csv", lambda: _launch_labels("store_scatter")),
    ("launch_overhead/empty_ncu.csv", lambda: probekit.load_probe("launch_overhead").LAUNCHES),
    ("tensor_core/tensor_core_timing.csv", lambda: _launch_labels("tensor_core")),
])
def test_small_probe_csv_has_one_row_per_launch(csv_path, labels):
    """Each small probe's committed ncu CSV gives one positive cycle count per launch it lists (CuPy's
    own kernels, such as ``cupy.ones``'s fill, left out)."""
    cycles = ncu.metric_by_launch((H100 / csv_path).read_text(), "sm__cycles_elapsed.avg",
                                  ("copy_x",) if csv_path.startswith("loaded_latency") else "")
    assert len(cycles) == len(labels())
    assert all(c > 0 for c in cycles)


def test_cta_timeline_csv_matches_its_launch_log():
    cycles = ncu.metric_by_launch((H100 / "cta_timeline" / "ncu.csv").read_text(), "sm__cycles_elapsed.avg",
                                  ("copy", "load", "store"))
    launches = [x for x in (H100 / "cta_timeline" / "once_log.txt").read_text().splitlines()
                if x.startswith("launch")]
    assert len(cycles) == len(launches) > 0


def test_timing_probe_join_reproduces_the_committed_counters():
    """timing_on_gpu.py's join of the committed raw ncu CSV and launch manifest, through
    validation.ncu, gives every counter of the committed timing_h100.json."""
    probe = probekit.load_probe("timing_on_gpu")
    assert probe.read_ncu_csv is ncu.read_ncu_csv and tuple(probe.NCU_BASE_OPTIONS) == ncu.BASE_OPTIONS
    with gzip.open(H100 / "timing_ncu_raw_h100.csv.gz", "rt") as f:
        raw = f.read()
    manifest = json.loads((H100 / "timing_manifest_h100.json").read_text())
    joined, problems = probe.join(raw, manifest, {})
    committed = json.loads((H100 / "timing_h100.json").read_text())
    assert problems == []
    assert len(joined["launches"]) == len(committed["launches"])
    for got, want in zip(joined["launches"], committed["launches"]):
        assert (got["case"], got["n"], got["kernel"], got["ncu_id"]) == \
            (want["case"], want["n"], want["kernel"], want["ncu_id"])
        assert got["metrics"] == {k: want["metrics"][k] for k in got["metrics"]}


def test_parse_value():
    assert ncu.parse_value("1,234") == 1234 and ncu.parse_value("2.5e3") == 2500.0
    assert ncu.parse_value("n/a") is None and ncu.parse_value("") is None
    assert ncu.parse_value("sm_90") == "sm_90"


def _fake_cupy(name=b"NVIDIA H100 80GB HBM3"):
    props = {"name": name, "major": 9, "minor": 0, "multiProcessorCount": 132, "clockRate": 1980000,
             "memoryClockRate": 2619000, "memoryBusWidth": 5120, "l2CacheSize": 52428800,
             "sharedMemPerMultiprocessor": 233472, "sharedMemPerBlockOptin": 232448,
             "reservedSharedMemPerBlock": 1024}
    runtime = types.SimpleNamespace(getDeviceProperties=lambda dev: props, driverGetVersion=lambda: 13000,
                                    runtimeGetVersion=lambda: 13000)
    return types.SimpleNamespace(__version__="13.6.0", cuda=types.SimpleNamespace(runtime=runtime))


def test_probe_metadata_keeps_the_committed_keys(monkeypatch):
    """suite_on_gpu's and timing_on_gpu's metadata, now built from probekit.device_info, have the
    keys (in order) of what they wrote on the H100."""
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy())
    sog = probekit.load_probe("suite_on_gpu")
    meta = sog._meta(None, dry=False)
    committed = json.loads((H100 / "suite_h100.json").read_text())["meta"]
    assert list(meta) == [k for k in committed if k not in ("cases", "cases_ok")]
    assert meta["device"] == "NVIDIA H100 80GB HBM3" and meta["multiprocessors"] == 132
    timing = probekit.load_probe("timing_on_gpu")._gpu_meta(sog, None, dry=False)
    committed_t = list(json.loads((H100 / "timing_h100.json").read_text())["meta"])
    assert list(timing) == committed_t[:len(timing)]


def test_provenance_device_fields():
    from validation import gpu

    info = gpu.provenance(_fake_cupy(name="NVIDIA H100 80GB HBM3"))
    keys = ["gpu_name", "slug", "compute_capability", "sm_count", "sm_clock_khz", "memory_clock_khz", "l2_bytes",
            "driver_version", "cuda_runtime_version", "cupy_version"]
    assert [k for k in info if k in keys] == keys
    assert info["slug"] == "h100" and info["sm_clock_khz"] == 1980000 and info["cupy_version"] == "13.6.0"


def test_probe_modules_import_without_gpusim():
    """validation.ncu and validation.probekit are standard library only: the probe scripts load the
    suite and each other on a GPU machine that has numpy and cupy but not gpusim's dependencies."""
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from validation import ncu, probekit\n"
        "suite = probekit.load_suite()\n"
        "probekit.load_probe('timing_on_gpu'); probekit.load_probe('suite_on_gpu')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('gpusim', 'simpy', 'cupy'))\n"
        "print(len(suite.CASES), bad)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    n, bad = proc.stdout.split(" ", 1)
    assert int(n) > 0 and bad.strip() == "[]"


def test_the_parts_probes_share_a_command_line_and_the_stall_ratios():
    from validation import probekit

    p, _ = probekit.parts_parser("x.py", ("a", "b"))
    a = p.parse_args(["--sim", "out.json", "--jobs", "4", "--labels", "b", "--set", "l2.slices=8"])
    assert (str(a.sim), a.jobs, a.labels, a.set, a.gpu) == ("out.json", 4, ["b"], ["l2.slices=8"], False)
    with pytest.raises(SystemExit):
        p.parse_args(["--gpu", "--metrics"])       # one mode
    with pytest.raises(SystemExit):
        p.parse_args(["--gpu", "--labels", "c"])   # not a launch
    m = {"smsp__pcsamp_warps_issue_stalled_wait": 30.0, "smsp__pcsamp_warps_issue_stalled_barrier": 0.0}
    assert probekit.stall_ratios(m, 10.0, ("wait", "barrier", "drain")) == {
        "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio": 3.0,
        "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 0.0}
    assert probekit.stall_ratios(m, 0.0, ("wait",)) == {}
