"""gpusim sweep: the experiment file, its points, the back ends, the results folder and the CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpusim.cli import main
from gpusim.errors import GpusimError
from gpusim.sweep import expand, load, load_spec, run
from gpusim.sweep.spec import SpecError

ROOT = Path(__file__).resolve().parents[2]
MEMORY = ROOT / "gpusim" / "suite" / "ptx" / "memory.ptx"

# A copy of {n} floats in blocks of 'block' threads: 4 points, about 0.3 s each in timing mode.
SMALL = f"""
name = "small"
metrics = ["sm__cycles_elapsed.avg", "smsp__inst_executed.sum", "launch__block_size", "top_stalls"]
[[kernels]]
name = "copy"
ptx = "{MEMORY}"
kernel = "copy_vec4"
threads = 1024
args = ["f32[{{n}}]:random", "f32[{{n}}]", "u32={{threads}}"]
n = 4096
[sweep]
block = [128, 256]
"set.sm.scheduler.policy" = ["gto", "lrr"]
"""
# The same and one explicit point on another GPU (whose warnings must not name a worker's temporary file).
SMALL5 = SMALL + '[[points]]\nblock = 64\ngpu = "a100"\n'


def _write(tmp_path: Path, text: str, name: str = "exp.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# --------------------------------------------------------------------------- the file


@pytest.mark.parametrize("body, message", [
    ('[[kernels]]\ncase = "reduce_v1"\n[sweep]\nblok = [1]',
     "exp.toml: sweep.blok: unknown field (parameters: block, grid, threads, shared_mem, n, seed, gpu, mode, "
     "sampling, regs_per_thread, set.<dotted config path>)"),
    ('[[kernels]]\ncase = "reduce_v1"\n[sweep]\nblock = [64, 0]',
     "exp.toml: sweep.block[1]: must be a positive integer or a list of 1 to 3 positive integers (got 0)"),
    ('[[kernels]]\ncase = "reduce_v1"\n[fixed]\nblock = [16, 16, 1, 1]',
     "exp.toml: fixed.block: must be a positive integer or a list of 1 to 3 positive integers (got [16, 16, 1, 1])"),
    ('[[kernels]]\ncase = "reduce_v1"\n[fixed]\nsampling = "yes"',
     "exp.toml: fixed.sampling: Input should be a valid boolean (got 'yes')"),
    ('[[kernels]]\ncase = "reduce_v1"\n[sweep]\nn = [1024, "2048"]',
     "exp.toml: sweep.n[1]: Input should be a valid integer (got '2048')"),
    ('[[kernels]]\ncase = "reduce_v1"\n[fixed]\nmode = "fast"',
     "exp.toml: fixed.mode: Input should be 'functional' or 'timing' (got 'fast')"),
    ('[[kernels]]\ncase = "reduce_v1"\n[[zip]]\ngpu = ["h100", "a100"]\nn = [1024]',
     "exp.toml: zip[0]: the lists must have one length, got n: 1, gpu: 2"),
    ('[[kernels]]\ncase = "reduce_v9"',
     "exp.toml: kernels[0].case: no suite case 'reduce_v9'; did you mean 'reduce_v7'? ('gpusim run --list')"),
    ('[[kernels]]\ncase = "reduce_v1"\nblock = 64',
     "exp.toml: kernels[0].block: a suite case has its own launches and inputs; only n, seed and set apply "
     "(use 'ptx' to sweep a launch shape)"),
    ('[[kernels]]\ncase = "reduce_v1"\n[sweep]\nn = [1024]\n[[zip]]\nn = [2048]',
     "exp.toml: zip[0].n: already swept in sweep; a parameter may vary on one axis only (put parameters that "
     "move together in one [[zip]])"),
    ('[[kernels]]\ncase = "reduce_v1"\n[[points]]\nkernel = "nope"',
     "exp.toml: points[0].kernel: no kernel is labelled 'nope' (labels: reduce_v1)"),
    ('metrics = ["cycles"]\n[[kernels]]\ncase = "reduce_v1"',
     "exp.toml: metrics: [0] 'cycles' is not an Nsight Compute metric name"),
    ('[[kernels]]\ncase = "reduce_v1"\n[sweep]\n"set.sm.max_warp" = [32]',
     "exp.toml: point 0 (kernel 'reduce_v1', gpu 'h100'): override 'sm.max_warp': unknown field 'sm.max_warp'; "
     "did you mean 'sm.max_warps'?"),
    ('[[kernels]]\ncase = "reduce_v1"\n[fixed]\nblock = 64',
     "exp.toml: point 0 (block=64): kernel 'reduce_v1' is the suite case 'reduce_v1', whose launches are "
     "fixed; 'block' applies to PTX kernels only"),
    ('kernels = []', "exp.toml: kernels: List should have at least 1 item after validation, not 0"),
    ('[[kernels]]\ncase = "reduce_v1"\n[sweep\n', "exp.toml: invalid TOML: "),
])
def test_bad_files_name_the_field(tmp_path, body, message):
    path = _write(tmp_path, body)
    with pytest.raises(SpecError) as err:
        expand(load_spec(path))
    assert str(err.value).startswith(str(tmp_path / message.split(": ", 1)[0]) + ": " + message.split(": ", 1)[1])


def test_ptx_kernel_errors(tmp_path):
    base = f'[[kernels]]\nptx = "{MEMORY}"\nkernel = "copy_vec4"\nargs = ["f32[{{n}}]"]\nblock = 256\n'
    with pytest.raises(SpecError, match=r"kernels\[0\].kernel: memory.ptx has no .entry 'copy_vec5'"):
        load_spec(_write(tmp_path, base.replace("copy_vec4", "copy_vec5")))
    with pytest.raises(SpecError, match=r"uses \{n\}, which this point does not set"):
        expand(load_spec(_write(tmp_path, base + "grid = 4\n")))
    with pytest.raises(SpecError, match="has no grid; set 'grid' or 'threads'"):
        expand(load_spec(_write(tmp_path, base + "n = 64\n")))


def test_points_order_zip_and_explicit_points(tmp_path):
    exp = load_spec(_write(tmp_path, """
[[kernels]]
case = "reduce_v1"
[[kernels]]
case = "reduce_v3"
[sweep]
n = [1024, 2048]
[[zip]]
gpu = ["h100", "a100"]
set.l2.size_bytes = [25165824, 20971520]
[[points]]
kernel = "reduce_v3"
n = 4096
mode = "functional"
[[points]]
n = 1024
"""))
    pts = expand(exp)
    got = [(p.index, p.kernel.name, p.params["n"], p.params["gpu"], p.params["set"].get("l2.size_bytes"),
            p.params["mode"]) for p in pts]
    assert got == [
        (0, "reduce_v1", 1024, "h100", 25165824, "timing"), (1, "reduce_v1", 1024, "a100", 20971520, "timing"),
        (2, "reduce_v1", 2048, "h100", 25165824, "timing"), (3, "reduce_v1", 2048, "a100", 20971520, "timing"),
        (4, "reduce_v3", 1024, "h100", 25165824, "timing"), (5, "reduce_v3", 1024, "a100", 20971520, "timing"),
        (6, "reduce_v3", 2048, "h100", 25165824, "timing"), (7, "reduce_v3", 2048, "a100", 20971520, "timing"),
        (8, "reduce_v3", 4096, "h100", None, "functional"),
        (9, "reduce_v1", 1024, "h100", None, "timing"), (10, "reduce_v3", 1024, "h100", None, "timing")]
    assert len({p.point_id for p in pts}) == len(pts)
    assert [p.point_id for p in expand(exp)] == [p.point_id for p in pts]  # ids are stable


def test_ptx_launch_shape_and_arg_substitution(tmp_path):
    pts = expand(load_spec(_write(tmp_path, SMALL)))
    assert [(p.params["block"], p.params["grid"], p.params["set"]["sm.scheduler.policy"]) for p in pts] == [
        ((128,), (8,), "gto"), ((128,), (8,), "lrr"), ((256,), (4,), "gto"), ((256,), (4,), "lrr")]
    assert pts[0].params["args"] == ["f32[4096]:random", "f32[4096]", "u32=1024"]


# --------------------------------------------------------------------------- running


def test_local_processes_and_dask_equal_serial(tmp_path):
    distributed = pytest.importorskip("distributed")
    exp = _write(tmp_path, SMALL5)
    serial = run(exp, tmp_path / "serial", jobs=1, progress=False, echo=lambda m: None)
    procs = run(exp, tmp_path / "procs", jobs=2, progress=False, echo=lambda m: None)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        dask = run(exp, tmp_path / "dask", client=client, progress=False, echo=lambda m: None)
        assert len(client.scheduler_info()["workers"]) == 2
        import operator

        from gpusim.sweep.runner import backend

        with backend(client=client) as be, pytest.raises(GpusimError, match=r"a Dask task failed \(ZeroDivisionError"):
            list(be.imap_unordered(operator.truediv, [(1, 0)]))
    assert len(serial) == 5 and not serial.failures()
    assert serial.stable_rows() == procs.stable_rows() == dask.stable_rows()
    assert len({r["worker"] for r in dask.rows}) >= 1 and all(r["worker"] != serial.rows[0]["worker"]
                                                              for r in dask.rows)
    cycles = serial.column("sm__cycles_elapsed.avg")
    assert all(isinstance(c, int) and c > 4400 for c in cycles)
    assert serial.column("launch__block_size") == [128, 128, 256, 256, 64]
    assert serial.column("gpu") == ["h100"] * 4 + ["a100"]
    assert serial.columns[:3] == ["point", "point_id", "kernel"]
    # the table on disk is the same table
    assert load(serial.path).stable_rows() == serial.stable_rows()
    assert serial.path.name == "results.parquet"


def test_failing_point_is_recorded_and_the_sweep_goes_on(tmp_path, capsys):
    exp = _write(tmp_path, SMALL.replace("block = [128, 256]", "block = [128, 2048]"))
    rc = main(["sweep", str(exp), "--out", str(tmp_path / "out"), "--jobs", "1", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 1
    res = load(tmp_path / "out")
    assert [r["error"] is None for r in res.rows] == [True, True, False, False]
    assert res.rows[2]["error"].startswith("LaunchError: ")
    assert "2 failed:" in out and "point 2 (kernel copy): LaunchError" in out
    before = load(tmp_path / "out").column("run_id")
    assert main(["sweep", str(exp), "--out", str(tmp_path / "out"), "--resume", "--retry-failed", "--jobs", "1",
                 "--no-progress"]) == 1
    after = load(tmp_path / "out").column("run_id")
    assert after[:2] == before[:2] and after[2] != before[2] and after[3] != before[3]


def test_existing_results_are_never_overwritten(tmp_path, capsys):
    exp = _write(tmp_path, SMALL.replace("block = [128, 256]", "block = [128]"))
    out = tmp_path / "out"
    assert main(["sweep", str(exp), "--out", str(out), "--jobs", "1", "--no-progress"]) == 0
    first = {r["point_id"]: r["run_id"] for r in load(out).rows}
    assert main(["sweep", str(exp), "--out", str(out), "--jobs", "1"]) == 2
    assert "holds a sweep's results already (2 point(s)); pass --resume" in capsys.readouterr().err
    assert {r["point_id"]: r["run_id"] for r in load(out).rows} == first
    assert main(["sweep", str(exp), "--out", str(out), "--jobs", "1", "--resume", "--no-progress"]) == 0
    assert {r["point_id"]: r["run_id"] for r in load(out).rows} == first  # nothing recomputed
    assert main(["sweep", str(exp), "--out", str(out), "--jobs", "1", "--force", "--no-progress"]) == 0
    assert set({r["point_id"]: r["run_id"] for r in load(out).rows}.values()).isdisjoint(first.values())
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    assert main(["sweep", str(exp), "--out", str(mine), "--force"]) == 2
    assert "holds files that are not a gpusim sweep's (notes.txt)" in capsys.readouterr().err
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


def _processes_mentioning(text: str) -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and text in (d / "cmdline").read_bytes().decode(errors="replace"):
                pids.append(int(d.name))
        except OSError:
            continue
    return pids


def test_sigkill_then_resume_recomputes_nothing(tmp_path):
    # 6 points of ~0.5 s each on 2 local processes; the sweep is killed once 2 rows are on disk.
    body = SMALL.replace("block = [128, 256]", "block = [64, 128, 256]").replace("n = 4096", "n = 16384") \
        .replace("threads = 1024", "threads = 4096")
    exp = _write(tmp_path, body)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "gpusim", "sweep", str(exp), "--out", str(out), "--jobs", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and len(list((out / "points").glob("*.json"))) < 2:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 10  # its worker processes die with it
    while _processes_mentioning(str(out)) and time.time() < deadline:
        time.sleep(0.1)
    assert _processes_mentioning(str(out)) == []
    before = {r["point_id"]: r["run_id"] for r in load(out).rows}
    assert 2 <= len(before) < 6, "the sweep finished before it could be killed"
    assert not (out / "results.parquet").exists()
    done = subprocess.run(cmd + ["--resume"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"6 point(s), {len(before)} already in" in done.stdout
    after = load(out / "results.parquet")
    assert len(after) == 6 and not after.failures()
    assert {pid: after.rows[i]["run_id"] for i, pid in enumerate(r["point_id"] for r in after.rows)
            if pid in before} == before
    assert len({r["run_id"] for r in after.rows}) == 6


def test_dask_missing_says_how_to_install(monkeypatch):
    from gpusim.sweep.runner import backend

    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(GpusimError, match=r"not installed: pip install 'gpusim\[dist\]'"):
        backend(workers=2)
    with pytest.raises(GpusimError, match="give one way to run: scheduler, workers"):
        backend(scheduler="tcp://x:1", workers=2)


# --------------------------------------------------------------------------- plot and table


def _fake_results(tmp_path: Path) -> Path:
    """A results folder written through the store, without simulating."""
    from gpusim.sweep.store import Store

    rows = []
    for i, (block, pol, cyc) in enumerate([(128, "gto", 9000), (128, "lrr", 9100), (256, "gto", 8000),
                                           (256, "lrr", 8300)]):
        rows.append({"point": i, "point_id": f"p{i}", "kernel": "copy", "block": block,
                     "set.sm.scheduler.policy": pol, "sm__cycles_elapsed.avg": cyc, "error": None})
    st = Store(tmp_path / "res", [r["point_id"] for r in rows])
    for r in rows:
        st.add(r)
    st.finish()
    return tmp_path / "res"


def test_table_pivot_and_plot(tmp_path, capsys):
    res = _fake_results(tmp_path)
    assert main(["sweep", "table", str(res), "--rows", "block_size", "--cols", "set.sm.scheduler.policy",
                 "--value", "cycles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split() for ln in lines] == [
        ["block", "set.sm.scheduler.policy=gto", "set.sm.scheduler.policy=lrr"], ["-----", "-" * 27, "-" * 27],
        ["128", "9,000", "9,100"], ["256", "8,000", "8,300"]]
    png = tmp_path / "c.png"
    assert main(["sweep", "plot", str(res), "--x", "block", "--y", "cycles", "--hue", "set.sm.scheduler.policy",
                 "-o", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert main(["sweep", "plot", str(res), "--x", "block", "--y", "cycles", "-o", str(png)]) == 2
    assert "the file exists; pass --force" in capsys.readouterr().err
    assert main(["sweep", "plot", str(res), "--x", "blok", "--y", "cycles", "-o", str(tmp_path / "d.png")]) == 2
    assert "--x 'blok': no such column; did you mean 'block'?" in capsys.readouterr().err
    assert main(["sweep", "table", str(res), "--rows", "kernel", "--value", "cycles"]) == 2
    assert "points 0 and 1 both have kernel=copy; they differ in set.sm.scheduler.policy" in \
        capsys.readouterr().err


def test_subcommand_words_are_not_files(tmp_path, capsys):
    from gpusim.cli.sweep import shorthand

    assert shorthand(["sweep", "exp.toml", "--jobs", "2"]) == ["sweep", "run", "exp.toml", "--jobs", "2"]
    assert shorthand(["sweep", "--jobs", "2", "exp.toml"]) == ["sweep", "run", "--jobs", "2", "exp.toml"]
    assert shorthand(["sweep", "plot", "r", "--x", "b"]) == ["sweep", "plot", "r", "--x", "b"]
    assert main(["sweep", str(tmp_path / "missing.toml")]) == 2
    assert f"{tmp_path / 'missing.toml'}: no such experiment file" in capsys.readouterr().err


def test_validate_simulate_many_uses_the_same_runner():
    import re

    from validation.simulate import simulate_many

    runs = [("reduce_v1", 2048), ("reduce_v3", 2048)]
    lines1, lines2 = [], []
    one = simulate_many(runs, jobs=1, progress=lines1.append)
    two = simulate_many(runs, jobs=2, progress=lines2.append)
    assert list(one) == runs and sorted(two) == runs
    for k in runs:
        assert one[k]["error"] is None and two[k]["error"] is None
        assert [x["cycles"] for x in one[k]["launches"]] == [x["cycles"] for x in two[k]["launches"]]
        assert one[k]["outputs"].keys() == two[k]["outputs"].keys()
    pat = r"\[\d/2\] simulated reduce_v[13] n=2048: 1 launch\(es\) \(\d+\.\d s; \d+ s elapsed\)"
    assert all(re.fullmatch(pat, ln) for ln in lines1 + lines2), lines1 + lines2


def test_csv_without_pyarrow(tmp_path, monkeypatch):
    import gpusim.sweep.store as store

    monkeypatch.setattr(store, "have_pyarrow", lambda: False)
    res = _fake_results(tmp_path)
    assert sorted(p.name for p in res.iterdir()) == ["points", "results.csv", "sweep.json"]
    from_csv, from_folder = load(res / "results.csv"), load(res)
    assert from_csv.rows == from_folder.rows
    assert from_csv.column("sm__cycles_elapsed.avg") == [9000, 9100, 8000, 8300]


def test_cli_workers_starts_a_local_cluster(tmp_path, capsys):
    pytest.importorskip("distributed")
    exp = _write(tmp_path, '[[kernels]]\ncase = "reduce_v1"\n[sweep]\nn = [1024, 2048]\n[fixed]\nmode = "functional"\n')
    assert main(["sweep", str(exp), "--out", str(tmp_path / "d"), "--workers", "2", "--no-progress"]) == 0
    assert "to run on the Dask cluster at tcp://127.0.0.1:" in capsys.readouterr().out
    assert main(["sweep", str(exp), "--out", str(tmp_path / "s"), "--jobs", "1", "--no-progress"]) == 0
    dask, serial = load(tmp_path / "d"), load(tmp_path / "s")
    assert dask.stable_rows() == serial.stable_rows()
    assert dask.column("smsp__inst_executed.sum") == [4380, 8760] and dask.column("outputs_ok") == [True, True]


def test_gpusim_run_experiment_file_as_a_kernel(tmp_path):
    exp = ROOT / "validation" / "experiments" / "copy_offset.toml"
    pts = expand(load_spec(_write(tmp_path, f'[[kernels]]\nexperiment = "{exp}"\n[[points]]\n[[points]]\n'
                                            'block = 128\nthreads = 16384\n')))
    assert [(p.kernel.name, p.params["grid"], p.params["block"]) for p in pts] == [
        ("copy_offset", (64,), (256,)), ("copy_offset", (128,), (128,))]
    assert pts[0].params["args"] == ["f32[16384]:random", "f32[16384]", "u32=16384", "u32=1"]


def test_import_boundaries():
    code = ("import sys, gpusim.sweep, gpusim.sweep.charts, gpusim.cli.sweep; print(sorted(m for m in "
            "('simpy', 'cupy', 'dask', 'distributed', 'pyarrow', 'matplotlib', 'gpusim.timing') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    import re

    banned = re.compile(r"^\s*(from|import)\s+(cupy|simpy|gpusim\.timing|gpusim\.functional)\b", re.M)
    for path in (ROOT / "gpusim" / "sweep").glob("*.py"):
        assert not banned.search(path.read_text()), f"{path.name}: {banned.search(path.read_text())[0]}"


def test_validate_simulate_many_on_a_dask_scheduler():
    distributed = pytest.importorskip("distributed")
    from validation.simulate import simulate_many

    runs = [("reduce_v1", 2048), ("reduce_v3", 2048)]
    serial = simulate_many(runs, jobs=1, progress=lambda m: None)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl:
        dask = simulate_many(runs, progress=lambda m: None, scheduler=cl.scheduler_address)
    assert sorted(dask) == runs
    for k in runs:
        assert [x["cycles"] for x in dask[k]["launches"]] == [x["cycles"] for x in serial[k]["launches"]]
        assert [x["metrics"] for x in dask[k]["launches"]] == [x["metrics"] for x in serial[k]["launches"]]
