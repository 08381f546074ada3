"""What the fuzz harness found (issue #29, part 7): each input exactly as the fuzzer made it, which
raised a raw Python error (or an internal-error traceback from the command line) before its fix,
and the GpusimError it raises now."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.errors import ConfigError, GpusimError, LaunchError, OutOfMemoryError
from tests.fuzz.strategies import TINY_PTX, _files, run_cli


@pytest.fixture
def kernel():
    with gpusim.Device("h100", regs_per_thread=32, sass=False) as dev:
        yield dev, gpusim.RawModule(code=TINY_PTX).get_function("k")


# ---------------------------------------------------------------- the API
@pytest.mark.parametrize("smem, got", [(None, "NoneType None"), ("x", "str 'x'"), (1.5, "float 1.5"),
                                       (True, "bool True")])
def test_shared_mem_of_a_wrong_type(kernel, smem, got):  # was TypeError/ValueError from int(shared_mem)
    dev, k = kernel
    with pytest.raises(LaunchError, match=rf"^shared_mem must be an int \(bytes\), got {got}$"):
        k((1,), (32,), (gpusim.zeros(32, np.uint32), np.uint32(32)), shared_mem=smem)


@pytest.mark.parametrize("value", [[1, 2], b"bytes", float("inf")])
def test_max_dynamic_shared_size_of_a_wrong_type(kernel, value):  # was TypeError/ValueError/OverflowError
    with pytest.raises(LaunchError, match=r"^max_dynamic_shared_size_bytes must be an int \(bytes\), got "):
        kernel[1].max_dynamic_shared_size_bytes = value


def test_huge_axis_and_fill_values():  # were OverflowError: Python int too large to convert to C long
    with gpusim.Device("h100"):
        a = gpusim.asarray([0, 1])
        with pytest.raises(GpusimError, match=r"^swapaxes\(10{30}, 0\): Python int too large"):
            a.swapaxes(10**30, 0)
        with pytest.raises(GpusimError, match=r"^fill\(\): Python int too large to convert to C long"):
            gpusim.full(0, 10**30, "<u2")
        with pytest.raises(GpusimError, match=r"^asarray\(\): "):
            gpusim.asarray(2**63, "i8,f4")


def test_arange_beyond_the_device_memory_is_refused_before_computing():  # was numpy's MemoryError (or a 16 GB fill)
    with gpusim.Device("h100", overrides={"dram.capacity_bytes": 1 << 30}):
        with pytest.raises(OutOfMemoryError, match=r"^cudaErrorMemoryAllocation: arange\(\): out of memory allocating "
                                                   r"17,179,869,184 bytes .* holds 1,073,741,824 bytes"):
            gpusim.arange(2**31, dtype=">f8")
        assert gpusim.arange(1, 2, 0.25).get().tolist() == [1.0, 1.25, 1.5, 1.75]


@pytest.mark.parametrize("regs", [(), "", 32.0, True])
def test_device_regs_per_thread_of_a_wrong_type(regs):  # () and '' were TypeError/ValueError from int()
    with pytest.raises(GpusimError, match=r"^regs_per_thread must be 1\.\.255 on v100, got "):
        gpusim.Device("v100", regs_per_thread=regs)


def test_override_path_that_is_not_a_str():  # was AttributeError: 'int' object has no attribute 'split'
    with pytest.raises(ConfigError, match=r"^override 1: a field path is a str \(e.g. 'sm.max_warps'\), not a int"):
        gpusim.Device("a5000", overrides={1: 2})


def test_raw_module_path_of_a_wrong_type():  # was TypeError from pathlib
    with pytest.raises(GpusimError, match=r"^RawModule\(path=...\) takes a file path \(str or os.PathLike\), got int"):
        gpusim.RawModule(path=5)


# ---------------------------------------------------------------- experiment files
EXP = 'ptx = "k.ptx"\nkernel = "k"\ngrid = 1\nblock = 32\nargs = ["u32[64]", "u32=32"]\n'


@pytest.mark.parametrize("text, msg", [
    (b"\xff" + b'ptx = "k.ptx"\ngrid = 1\nblock = 32\nargs = []\n',  # was UnicodeDecodeError
     r"exp.toml: cannot read experiment file: 'utf-8' codec can't decode byte 0xff"),
    (EXP.replace('"k.ptx"', '"é\\u0000"').encode(),  # was ValueError: embedded null byte
     r"exp.toml: 'ptx' must be a file name \(str\), got 'é\\x00'"),
    (EXP.replace("grid = 1", 'grid = 1\nseed = "h100"').encode(),  # was ValueError from int()
     r"exp.toml: 'seed' must be an integer >= 0, got 'h100'"),
    (EXP.replace("grid = 1", "grid = 1\nshared_mem = -4").encode(), r"exp.toml: 'shared_mem' must be an integer >= 0"),
    (EXP.replace("grid = 1", "grid = 1\nset = 3").encode(), r"exp.toml: 'set' must be a table of config overrides"),
])
def test_experiment_file_errors_name_the_file_and_key(tmp_path, text, msg):
    from gpusim.experiment import load_experiment

    (tmp_path / "exp.toml").write_bytes(text)
    with pytest.raises(GpusimError, match=msg):
        load_experiment(tmp_path / "exp.toml")


# ---------------------------------------------------------------- the command line
@pytest.mark.parametrize("argv, msg", [
    # was KeyError: 'point' (an internal error): a CSV file that is not a sweep's results
    (["sweep", "plot", "results.csv", "--x", "nope", "--y", "", "--y", "nope"],
     "gpusim sweep: error: results.csv: row 1 has no integer 'point' column: not a table 'gpusim sweep' wrote"),
    # was UnicodeDecodeError (an internal error): a binary GPU configuration file
    (["diagram", "coalescing", "divergent_branch", "--gpu", "bin.toml", "-n", "256"],
     "gpusim diagram: error: bin.toml: invalid TOML: 'utf-8' codec can't decode byte 0xff"),
    # was UnicodeDecodeError (an internal error): a binary PTX file
    (["occupancy", "bin.ptx", "--csv", "out.csv", "--barriers", "17", "--kernel", ""],
     "gpusim occupancy: error: bin.ptx: not a PTX text file ('utf-8' codec can't decode byte 0xff"),
    # was gpusim.suite.SizeError (a ValueError: an internal error) from the viz commands' suite run
    (["source", "warp_vote", "-n", "99999999999999999999999", "--block", "x", "--shared-mem", "16"],
     "gpusim source: error: -n 99999999999999999999999: warp_vote: n=99999999999999999999999 must be a multiple of "
     "32 (whole warps)"),
    (["step", "warp_vote", "-n", "33"], "gpusim step: error: -n 33: warp_vote: n=33 must be a multiple of 32"),
    # was ValueError: embedded null byte (an internal error) from the configuration loader
    (["occupancy", "adir", "--gpu", "\\\\∞/∞\x00", "--set", '_[}\x00"\n*'],
     "gpusim occupancy: error: '\\\\\\\\∞/∞\\x00': a configuration name or path cannot contain a NUL character"),
])
def test_cli_bad_files_are_one_error_line(tmp_path, monkeypatch, capsys, argv, msg):
    from gpusim.cli import main

    _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(msg) and err.count("\n") == 1


def test_sweep_with_a_binary_ptx_file(tmp_path):  # was UnicodeDecodeError (found reading the code the fuzzer led to)
    from gpusim.sweep import load_spec

    _files(tmp_path)
    (tmp_path / "s.toml").write_text('[[kernels]]\nptx = "bin.ptx"\nkernel = "k"\nargs = []\ngrid = 1\nblock = 32\n')
    with pytest.raises(GpusimError, match=r"kernels\[0\]\.ptx: .*bin.ptx is not a text file"):
        load_spec(tmp_path / "s.toml")


def test_run_cli_reports_a_traceback(tmp_path, monkeypatch):
    """The harness itself: an internal error of the command line is a finding, not a rejection."""
    import gpusim.cli.isa as isa_cmd
    from tests.fuzz.strategies import RawTraceback

    def boom(args):
        raise KeyError("x")
    monkeypatch.setattr(isa_cmd, "run", boom)
    monkeypatch.setattr(isa_cmd, "register", _register_with(isa_cmd.register, boom))
    with pytest.raises(RawTraceback, match=r"KeyError"):
        run_cli(["isa"], tmp_path)


def _register_with(register, func):
    def reg(sub):
        register(sub)
        sub.choices["isa"].set_defaults(func=func)
    return reg
