"""Numba and Triton kernels in experiment TOML files (issue #27 item 5): ``python = "file.py"`` with
``kernel`` naming a ``@numba.cuda.jit`` or ``@triton.jit`` function. ``gpusim run exp.toml`` of each
(outputs saved with --save and checked against numpy), ``validation.experiment.simulate`` on a bundle
entry built by hand (the kernel file's text re-materialised and imported from a temp dir; no GPU), and
the errors a user can cause (both or neither of ptx/python, a missing kernel, keys that do not belong
to the front-end)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpusim.errors import GpusimError
from gpusim.experiment import load_experiment

NUMBA_PY = '''
from numba import cuda


@cuda.jit
def saxpy(out, x, y, a, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a * x[i] + y[i]


def helper():
    return 1
'''

NUMBA_TOML = '''
python = "kern_nb.py"
kernel = "saxpy"
grid = 4
block = 256
seed = 3
args = ["f32[1000]:fill=-1", "f32[1000]:random", "f32[1000]:random", "f32=2", "s32=1000"]
'''

TRITON_PY = '''
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
'''

TRITON_TOML = '''
python = "kern_tr.py"
kernel = "add_kernel"
grid = 3
seed = 5
args = ["f32[2500]:random", "f32[2500]:random", "f32[2500]:fill=-1", "s32=2500"]

[meta]
BLOCK_SIZE = 1024
num_warps = 2
'''


def _needs(frontend: str) -> None:
    if frontend == "numba":
        pytest.importorskip("numba.cuda.compiler", reason="needs gpusim[numba] (numba-cuda, nvidia-nvvm)")
    else:
        pytest.importorskip("triton")


def _write(tmp: Path, frontend: str, toml: str | None = None) -> Path:
    py, text = ("kern_nb.py", NUMBA_PY) if frontend == "numba" else ("kern_tr.py", TRITON_PY)
    (tmp / py).write_text(text)
    path = tmp / f"{frontend}.toml"
    path.write_text(toml if toml is not None else NUMBA_TOML if frontend == "numba" else TRITON_TOML)
    return path


def _check(frontend: str, out: dict) -> None:
    """Outputs equal the numpy oracle bit for bit (a = 2 makes a*x exact, so an FMA rounds as mul+add)."""
    if frontend == "numba":
        x, y = out["arg1"], out["arg2"]
        np.testing.assert_array_equal(out["arg0"], np.float32(2) * x + y)
    else:
        x, y = out["arg0"], out["arg1"]
        np.testing.assert_array_equal(out["arg2"], x + y)
    assert x.std() > 0.2 and not np.array_equal(x, y)  # random inputs, really


@pytest.mark.parametrize("frontend", ["numba", "triton"])
def test_gpusim_run_experiment(frontend, tmp_path, capsys):
    _needs(frontend)
    from gpusim.cli import main

    toml = _write(tmp_path, frontend)
    exp = load_experiment(toml)
    py = {"numba": "kern_nb.py", "triton": "kern_tr.py"}[frontend]
    assert exp.frontend == frontend and exp.ptx is None and exp.python == tmp_path / py
    assert exp.block == ((256,) if frontend == "numba" else (64,))  # Triton: 32 * num_warps
    saved = tmp_path / "out.npz"
    assert main(["run", str(toml), "--save", str(saved)]) == 0
    printed = capsys.readouterr().out
    assert f"grid {'4' if frontend == 'numba' else '3'} x block {'256' if frontend == 'numba' else '64'}" in printed
    with np.load(saved) as f:
        _check(frontend, dict(f))


@pytest.mark.parametrize("frontend", ["numba", "triton"])
def test_validation_simulate_rebuilds_the_python_file(frontend, tmp_path):
    _needs(frontend)
    from validation.experiment import simulate

    py, text = ("kern_nb.py", NUMBA_PY) if frontend == "numba" else ("kern_tr.py", TRITON_PY)
    entry = {"toml": NUMBA_TOML if frontend == "numba" else TRITON_TOML, "python_name": py, "python": text,
             "ptx": "the PTX the GPU side compiled (read by the report, not run)"}
    rec = simulate(f"exp:{frontend}", entry)  # nothing on disk: the entry's text is all there is
    assert rec["error"] is None, rec["error"]
    _check(frontend, rec["outputs"])
    assert len(rec["launches"]) == 1 and rec["launches"][0]["cycles"] > 0


@pytest.mark.parametrize("frontend", ["numba", "triton"])
def test_missing_kernel_names_the_file_and_key(frontend, tmp_path):
    _needs(frontend)
    base = NUMBA_TOML if frontend == "numba" else TRITON_TOML
    toml = _write(tmp_path, frontend, base.replace('kernel = "', 'kernel = "nope_'))
    with pytest.raises(GpusimError, match=rf"{toml}: 'kernel' = 'nope_.*kern_.*\.py has no such function \(its "
                                          rf"kernels: (saxpy|add_kernel)\)"):
        load_experiment(toml)


def test_kernel_that_is_not_a_kernel(tmp_path):
    _needs("numba")
    toml = _write(tmp_path, "numba", NUMBA_TOML.replace('"saxpy"', '"helper"'))
    with pytest.raises(GpusimError, match=r"'kernel' = 'helper': in .*kern_nb.py it is a function, not a "
                                          r"@numba.cuda.jit or @triton.jit kernel"):
        load_experiment(toml)


def test_both_or_neither_of_ptx_and_python(tmp_path):
    both = tmp_path / "both.toml"
    both.write_text('ptx = "k.ptx"\n' + NUMBA_TOML)
    with pytest.raises(GpusimError, match=rf"{both}: give exactly one of 'ptx' .* and 'python' .*, not both"):
        load_experiment(both)
    neither = tmp_path / "neither.toml"
    neither.write_text(NUMBA_TOML.replace('python = "kern_nb.py"', ""))
    with pytest.raises(GpusimError, match=rf"{neither}: give exactly one of 'ptx' .*, found neither"):
        load_experiment(neither)


def test_missing_python_file(tmp_path):
    toml = tmp_path / "x.toml"
    toml.write_text(NUMBA_TOML)
    with pytest.raises(GpusimError, match=rf"{toml}: 'python': no such file .*kern_nb.py"):
        load_experiment(toml)


def test_keys_that_do_not_belong_to_the_front_end(tmp_path):
    _needs("numba")
    _needs("triton")
    cases = [("numba", NUMBA_TOML.replace("block = 256\n", ""), r"missing key 'block'"),
             ("numba", NUMBA_TOML + "[meta]\nBLOCK_SIZE = 4\n", r"'meta' is for Triton kernels; saxpy is a Numba"),
             ("triton", "block = 128\n" + TRITON_TOML, r"'block' is not given for a Triton kernel"),
             ("triton", "shared_mem = 128\n" + TRITON_TOML, r"'shared_mem' is not given for a Triton kernel"),
             ("triton", TRITON_TOML.replace("num_warps = 2", "num_warps = 0"), r"'meta.num_warps' must be a positive")]
    for frontend, text, msg in cases:
        toml = _write(tmp_path, frontend, text)
        with pytest.raises(GpusimError, match=rf"{toml}: {msg}"):
            load_experiment(toml)
    ptx = tmp_path / "p.toml"
    ptx.write_text('ptx = "k.ptx"\nkernel = "k"\ngrid = 1\nblock = 1\nargs = []\n[meta]\nX = 1\n')
    with pytest.raises(GpusimError, match=rf"{ptx}: 'meta' is for Triton kernels \(a 'python' file\)"):
        load_experiment(ptx)


def test_a_sweep_refuses_a_python_experiment(tmp_path):
    _needs("numba")
    from gpusim.sweep.spec import SpecError, load_spec

    _write(tmp_path, "numba")
    spec = tmp_path / "s.toml"
    spec.write_text('[[kernels]]\nexperiment = "numba.toml"\n[[points]]\n')
    with pytest.raises(SpecError, match=r"kernels\[0\].experiment: .*numba.toml runs a numba kernel from a 'python' "
                                        r"file; sweeps take PTX/.cu experiments only"):
        load_spec(spec)
