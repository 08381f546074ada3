"""Static checks of the kernel suite (gpusim/suite): no simulator, no GPU.

* every PTX file assembles with ``ptxas -arch=sm_90`` (marker ``ptxas``; skipped
  when no ptxas is found) and the nvcc-generated ones are what the recorded nvcc
  command emits from the committed ``.cu`` (when that nvcc release is present);
* every case names an existing PTX file and ``.entry``; names are unique; every
  entry of the suite's PTX is launched by some case;
* every case's launches match its PTX ``.param`` lists (DryRun), at test_n and
  default_n, and test_n stays small;
* oracles and inputs are deterministic for a fixed seed;
* the suite module imports only numpy and the standard library;
* the outputs recorded on an H100 (validation/reports/h100/suite_*) still match
  the oracles, from inputs that still regenerate bit for bit.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig

import numpy as np
import pytest

from gpusim import suite
from gpusim.suite import CASES, CUDA_DIR, PTX_DIR, DryRun, check, entry_params, ptx_path, run_case
from gpusim.suite.seeds import SEED_CASES

#: the suite's cases and the seeds' A100 kernels (gpusim.suite.seeds, kept out of CASES)
ALL_CASES = {**CASES, **SEED_CASES}

PTX_FILES = sorted(PTX_DIR.glob("*.ptx"))
CU_FILES = sorted(CUDA_DIR.glob("*.cu"))
HAND_WRITTEN = {"micro_shared.ptx", "micro_global.ptx"}


def _find_tool(name: str) -> str | None:
    """``name`` on PATH, else inside the nvidia-cuda-nvcc wheel (``nvidia/**/bin``)."""
    found = shutil.which(name)
    if found:
        return found
    roots = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *sys.path}
    for root in sorted(r for r in roots if r and os.path.isdir(r)):
        for pattern in ("nvidia/*/bin/" + name, "nvidia/*/*/bin/" + name):
            hits = sorted(glob.glob(os.path.join(root, pattern)))
            if hits:
                return hits[0]
    return None


# --------------------------------------------------------------------------- files


def test_suite_has_files():
    assert {p.name for p in PTX_FILES} >= HAND_WRITTEN
    assert {p.stem for p in CU_FILES} == {p.stem for p in PTX_FILES if p.name not in HAND_WRITTEN}


def _nvcc_arch(cu):
    """The -arch of the nvcc command a .cu file records: sm_90 (the H100) for the suite,
    sm_80 for reduce_int (the A100 of the course notes' table)."""
    return re.search(r"nvcc -ptx -arch=(sm_\d+)", cu.read_text()).group(1)


@pytest.mark.parametrize("path", PTX_FILES, ids=lambda p: p.name)
def test_ptx_header(path):
    text = path.read_text()
    cu = CUDA_DIR / f"{path.stem}.cu"
    arch = _nvcc_arch(cu) if cu.exists() else "sm_90"
    assert re.search(r"^\.version 9\.0$", text, re.M), "PTX ISA 9.0 expected"
    assert re.search(rf"^\.target {arch}$", text, re.M)
    assert re.search(r"^\.address_size 64$", text, re.M)


@pytest.mark.parametrize("path", CU_FILES, ids=lambda p: p.name)
def test_cu_file_records_nvcc_command(path):
    head = "".join(path.read_text().splitlines(keepends=True)[:5])
    cmd = re.compile(rf"nvcc -ptx -arch=sm_(80|86|90) -lineinfo -o \.\./ptx/{path.stem}\.ptx {path.name}")
    assert head.startswith("//") and cmd.search(head), f"{path.name} must start with a comment holding: {cmd.pattern}"


@pytest.mark.ptxas
@pytest.mark.parametrize("path", PTX_FILES, ids=lambda p: p.name)
def test_ptx_assembles_with_ptxas(path, tmp_path):
    ptxas = _find_tool("ptxas")
    if ptxas is None:
        pytest.skip("no ptxas on PATH (install the dev extra: nvidia-cuda-nvcc)")
    proc = subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / "out.cubin")],
                          capture_output=True, text=True)
    if proc.returncode and "Unsupported .version" in proc.stderr:
        pytest.skip(f"{ptxas} is too old for PTX ISA 9.0: {proc.stderr.strip()}")
    assert proc.returncode == 0, f"ptxas rejected {path.name}:\n{proc.stderr}"


def _normalise(ptx: str) -> str:
    """nvcc's output minus what depends on the directory it ran in: the ``.file``
    lines (absolute path) and the ``.debug_str`` section, whose mangled names of
    internal-linkage functions (``_ZN39_INTERNAL_<hash>_...``) hash that path."""
    ptx = re.sub(r"\.section\s+\.debug_str\s*\{.*?\n\s*\}", ".section .debug_str { }", ptx, flags=re.S)
    return "\n".join(line for line in ptx.splitlines() if not line.lstrip().startswith(".file"))


@pytest.mark.ptxas
@pytest.mark.parametrize("path", CU_FILES, ids=lambda p: p.name)
def test_committed_ptx_is_unmodified_nvcc_output(path, tmp_path):
    nvcc = _find_tool("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc on PATH")
    committed = (PTX_DIR / f"{path.stem}.ptx").read_text()
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    release = re.search(r"release [\d.]+, V[\d.]+", version)
    if not release or release.group(0) not in committed:
        pytest.skip("a different nvcc release than the one that generated the committed PTX")
    out = tmp_path / f"{path.stem}.ptx"
    proc = subprocess.run([nvcc, "-ptx", f"-arch={_nvcc_arch(path)}", "-lineinfo", "-o", str(out), path.name],
                          cwd=CUDA_DIR, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert _normalise(out.read_text()) == _normalise(committed), f"{path.stem}.ptx differs from nvcc's output"


# --------------------------------------------------------------------------- registry


def test_case_names_unique_and_keys_match():
    names = [c.name for c in suite._CASE_LIST]
    assert len(names) == len(set(names))
    assert list(CASES) == names
    assert all(name == case.name for name, case in CASES.items())


@pytest.mark.parametrize("name", list(ALL_CASES))
def test_case_ptx_and_entry_exist(name):
    case = ALL_CASES[name]
    path = ptx_path(case)
    assert path.is_file(), path
    assert f".entry {case.kernel}(" in path.read_text()
    assert case.doc and "\n" not in case.doc
    assert 0 < case.test_n <= case.default_n


def test_every_entry_is_launched_by_some_case():
    launched = set()
    for case in ALL_CASES.values():
        dry = DryRun()
        run_case(case, dry, case.test_n)
        launched |= {(case.ptx, log[0]) for log in dry.log}
    entries = {(p.name, e) for p in PTX_FILES for e in entry_params(p.read_text())}
    assert entries - launched == set(), "entries no case runs"


@pytest.mark.parametrize("name", list(ALL_CASES))
def test_dry_run_matches_ptx_params(name):
    case = ALL_CASES[name]
    for n in (case.test_n, case.default_n):
        dry = DryRun()
        run = run_case(case, dry, n)
        assert len(run.launches) == len(dry.log) >= 1
        assert run.kernel == dry.log[0][0] == case.kernel
        assert (run.grid, run.block, run.shared_mem) == dry.log[0][1:]
        assert set(run.outputs) == set(run.expected) and run.expected
        for key, exp in run.expected.items():
            got = run.outputs[key]
            assert isinstance(exp, np.ndarray) and isinstance(got, np.ndarray), key
            assert got.shape == exp.shape and got.dtype == exp.dtype, key
        assert run.exact or run.rtol > 0 and run.tolerance_note
        if n == case.test_n:
            for _, grid, block, _ in dry.log:
                threads = int(np.prod(grid)) * int(np.prod(block))
                assert threads <= 4096, f"test_n launch of {threads} threads"


@pytest.mark.parametrize("name", list(ALL_CASES))
def test_oracle_deterministic(name):
    case = ALL_CASES[name]
    a = run_case(case, DryRun(), case.test_n, seed=0)
    b = run_case(case, DryRun(), case.test_n, seed=0)
    c = run_case(case, DryRun(), case.test_n, seed=1)
    assert a.inputs and set(a.inputs) == set(b.inputs)
    for key in a.inputs:
        assert np.array_equal(a.inputs[key], b.inputs[key])
    for key in a.expected:
        assert a.expected[key].tobytes() == b.expected[key].tobytes(), key
    assert any(not np.array_equal(a.inputs[k], c.inputs[k]) for k in a.inputs), "seed ignored"


def test_check_reports_bit_mismatch():
    case = CASES["reduce_v2"]
    run = run_case(case, DryRun(), case.test_n)
    run.outputs = {k: v.copy() for k, v in run.expected.items()}
    assert check(run) == (True, "bit-exact (1 output)")
    flipped = run.outputs["partials"].view(np.uint32)
    flipped[3] ^= 1                                       # one ulp
    ok, message = check(run)
    assert not ok and "flat index 3" in message and "1 of" in message


def test_check_tolerance_case():
    case = CASES["reduce_atomic_f32"]
    run = run_case(case, DryRun(), case.test_n)
    assert not run.exact and run.rtol > 0
    run.outputs = {"sum": run.expected["sum"] * np.float32(1 + run.rtol / 2)}
    assert check(run)[0]
    run.outputs = {"sum": run.expected["sum"] * np.float32(1 + 4 * run.rtol)}
    assert not check(run)[0]


def test_dry_run_rejects_wrong_arguments():
    dry = DryRun()
    kern = dry.RawModule(path=str(PTX_DIR / "reduce.ptx")).get_function("reduce_v2")
    a, b = dry.zeros(256, np.float32), dry.zeros(1, np.float32)
    kern((1,), (256,), (a, b, np.uint32(256)))
    with pytest.raises(ValueError, match="2 arguments for 3"):
        kern((1,), (256,), (a, b))
    with pytest.raises(ValueError, match="float32 but .param is .u32"):
        kern((1,), (256,), (a, b, np.float32(1)))
    with pytest.raises(ValueError, match="1025 threads"):
        kern((1,), (1025,), (a, b, np.uint32(1)))
    micro = dry.RawModule(path=str(PTX_DIR / "micro_shared.ptx")).get_function("smem_stride_u32")
    with pytest.raises(ValueError, match="reqntid"):
        micro((1,), (64,), (a, b, np.uint32(1)))


def test_suite_module_imports_only_numpy_and_stdlib():
    code = (
        "import importlib.util, sys\n"
        "before = set(sys.modules)\n"
        f"spec = importlib.util.spec_from_file_location('s', {str(suite.__file__)!r})\n"
        "m = importlib.util.module_from_spec(spec); sys.modules['s'] = m; spec.loader.exec_module(m)\n"
        "print('\\n'.join(sorted({k.split('.')[0] for k in set(sys.modules) - before})))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    top = set(proc.stdout.split())
    allowed = set(sys.stdlib_module_names) | {"numpy", "s", "__main__"}
    assert top - allowed == set(), f"non-stdlib imports: {sorted(top - allowed)}"


# --------------------------------------------------------------------------- recorded GPU results

_H100 = PTX_DIR.parents[2] / "validation" / "reports" / "h100"


@pytest.mark.parametrize("name", list(CASES))
def test_recorded_h100_outputs_match_oracle(name):
    """validation/probes/suite_on_gpu.py ran every case on an H100 at test_n, seed 0; the
    outputs it saved must still satisfy today's oracle, from inputs regenerated bit for bit."""
    import hashlib
    import json

    npz, summary = _H100 / "suite_outputs_h100.npz", _H100 / "suite_h100.json"
    if not npz.is_file() or not summary.is_file():
        pytest.skip("no recorded H100 results")
    record = {e["case"]: e for e in json.loads(summary.read_text())["cases"]}.get(name)
    if record is None:
        pytest.skip(f"{name} was not in the recorded H100 run")
    case = CASES[name]
    run = run_case(case, DryRun(), record["test"]["n"], seed=0)
    for key, arr in run.inputs.items():
        digest = hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()
        assert digest == record["test"]["input_sha256"][key], f"input {key} no longer regenerates"
    with np.load(npz) as saved:
        run.outputs = {key: saved[f"{name}/{key}"] for key in run.expected}
    ok, message = check(run)
    assert ok, message


def test_gpusim_run_refuses_a_size_a_case_cannot_run_in_one_line(capsys):
    from gpusim.cli import main

    assert main(["run", "--case", "warp_scan", "-n", "3000"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "gpusim run: error: -n 3000: warp_scan: n=3000 must be a multiple of 32 (whole warps)"
