"""Bad input never crashes, hangs or lies (issue #29): one test per finding.

The command line's one error path (argparse types for numbers, one line per GpusimError,
OSError and Ctrl-C, a traceback and a request to report anything else), GpusimErrors instead
of raw Python errors from the API, configuration bounds, PTX limits checked at load and
launch, ``%tid.w`` and friends reading 0, and the watchdog in both modes.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

import gpusim
from gpusim.cli import INTERNAL_ERROR, main
from gpusim.errors import ConfigError, GpusimError, KernelFault, LaunchError, PTXError
from gpusim.functional import watchdog

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 a)\n{\n"


def _ptx(tmp_path, body: str, name: str = "k.ptx") -> str:
    path = tmp_path / name
    path.write_text(HEAD + body + "}\n")
    return str(path)


def _launch(path: str, mode: str = "functional", grid=1, block=32, **dev):
    with gpusim.Device("h100", mode, regs_per_thread=32, sass=False, **dev):
        k = gpusim.RawModule(path=path).get_function("k")
        out = gpusim.zeros(4, np.uint32)
        k((grid,), (block,), (out,))
        return out.get()


RET = "ret;\n"
#: An endless loop that changes a register on every iteration (its state never repeats).
COUNT = ".reg .b32 %r<3>;\nloop:\nadd.u32 %r1, %r1, 1;\nbra loop;\n"
#: ``loop: bra loop;`` and a spin on a flag no thread sets: their state repeats.
LOOP = "loop:\nbra loop;\n"
SPIN = (".reg .b64 %rd<3>;\n.reg .b32 %r<3>;\n.reg .pred %p<2>;\nld.param.u64 %rd1, [a];\n"
        "cvta.to.global.u64 %rd2, %rd1;\nspin:\nld.volatile.global.u32 %r1, [%rd2];\nsetp.eq.u32 %p1, %r1, 0;\n"
        "@%p1 bra spin;\nret;\n")


# ---------------------------------------------------------------- the command line
def test_cli_negative_size_is_one_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--case", "reduce_v1", "-n", "-5"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == "gpusim run: error: argument -n: must be a positive integer, got -5"
    assert "Traceback" not in err


def test_cli_seed_and_budget_types(capsys):
    for argv, msg in ((["run", "--seed", "x"], "argument --seed: must be an integer >= 0, got 'x'"),
                      (["run", "--max-steps", "-1"], "argument --max-steps: must be an integer >= 0 (0 = no limit), "
                                                     "got -1"),
                      (["step", "reduce_v0", "--warp", "-2"], "argument --warp: must be an integer >= 0, got -2")):
        with pytest.raises(SystemExit):
            main(argv)
        assert capsys.readouterr().err.splitlines()[-1].endswith(msg)


def test_cli_scalar_argument_out_of_range(tmp_path, capsys):
    path = _ptx(tmp_path, RET)
    for spec, msg in (("u32=-1", "u32 takes 0..4294967295, got -1"), ("s8=200", "s8 takes -128..127, got 200"),
                      ("f16=1e6", "1000000.0 is beyond the range of f16")):
        assert main(["run", path, "--kernel", "k", "--grid", "1", "--block", "32", "--arg", spec]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"gpusim run: error: argument 0 ({spec}): {msg}")


def test_cli_oserror_is_one_line_status_1(tmp_path, capsys):
    path = _ptx(tmp_path, RET)
    out = tmp_path / "no_such_dir" / "x.npz"
    assert main(["run", path, "--kernel", "k", "--grid", "1", "--block", "32", "--arg", "u32[4]",
                 "--save", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gpusim run: error: ") and "No such file or directory" in err


@pytest.mark.parametrize("exc, status, line", [
    (KeyboardInterrupt(), 130, "gpusim run: interrupted"),
    (ZeroDivisionError("boom"), INTERNAL_ERROR, "gpusim run: internal error (a bug in gpusim, not in your input): "
                                                "please report it with the command you ran and the traceback above"),
])
def test_cli_interrupt_and_internal_error(monkeypatch, capsys, exc, status, line):
    import gpusim.cli.run as run_cmd

    def boom(args):
        raise exc
    monkeypatch.setattr(run_cmd, "run", boom)
    assert main(["run"]) == status
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == line
    assert ("Traceback" in err) == (status == INTERNAL_ERROR)


def test_cli_max_steps_stops_a_loop(tmp_path, capsys):
    path = _ptx(tmp_path, COUNT, "count.ptx")
    assert main(["run", path, "--kernel", "k", "--grid", "1", "--block", "32", "--arg", "u32[2]",
                 "--max-steps", "500"]) == 2
    err = capsys.readouterr().err
    assert "no completion after 500 instruction steps (max_steps)" in err and re.search(r"count.ptx:[89] ", err)


# ---------------------------------------------------------------- the API
@pytest.mark.parametrize("gpu", [None, 5])
def test_device_of_a_wrong_type(gpu):
    with pytest.raises(ConfigError, match=rf"Device\(gpu\): expected a configuration name .* got {type(gpu).__name__}"):
        gpusim.Device(gpu)
    with pytest.raises(ConfigError, match=r"expected a GPU configuration name"):
        gpusim.config.load(gpu)


def test_raw_module_of_bytes():
    with pytest.raises(GpusimError, match=r"RawModule\(code=...\) takes a str of PTX or CUDA C source, got bytes"):
        gpusim.RawModule(code=b".version 8.0")


@pytest.mark.parametrize("path, value, bound", [
    ("sm.max_warps", 10**9, "less than or equal to 64"), ("sm.max_blocks", 33, "less than or equal to 32"),
    ("sm_count", 10**6, "less than or equal to 1024"), ("l2.size_bytes", 2**40, "less than or equal to 1073741824"),
    ("max_grid_dims", [2**31, 1, 1], "max_grid_dims x=2147483648 is outside 1..2147483647"),
])
def test_impossible_config_is_refused(path, value, bound):
    with pytest.raises(ConfigError, match=rf"{path}.*{bound}"):
        gpusim.Device("h100", overrides={path: value})


def test_budgets_zero_means_unlimited():
    dev = gpusim.Device("h100", max_steps=0, max_cycles=0)
    assert dev.max_steps >= 2**62 and dev.max_cycles >= 2**62
    with pytest.raises(GpusimError, match=r"Device\(max_steps=...\): expected a positive integer, or 0"):
        gpusim.Device("h100", max_steps=1.5)


# ---------------------------------------------------------------- PTX limits
def test_huge_register_declaration_is_refused_at_once(tmp_path):
    t0 = time.perf_counter()
    with pytest.raises(PTXError, match=r"k.ptx:6:11: %r<100000000> declares 100,000,000 registers; gpusim allows at "
                                       r"most 65,536 per declaration"):
        gpusim.RawModule(path=_ptx(tmp_path, ".reg .b32 %r<100000000>;\n" + RET))
    assert time.perf_counter() - t0 < 2


def test_registers_per_kernel_are_bounded(tmp_path):
    body = ".reg .b32 %r<40000>;\n.reg .b64 %rd<40000>;\n" + RET
    with pytest.raises(PTXError, match=r"k.ptx:7:11: %rd<40000> brings kernel 'k' to 80,000 registers"):
        gpusim.RawModule(path=_ptx(tmp_path, body))


def test_deeply_nested_blocks(tmp_path):
    n = 1663  # ptxas 13.0's deepest
    assert _launch(_ptx(tmp_path, "{\n" * n + RET + "}\n" * n)).tolist() == [0, 0, 0, 0]
    with pytest.raises(PTXError, match=r"k.ptx:1669:1: \{ \} blocks nested more than 1663 deep"):
        gpusim.RawModule(path=_ptx(tmp_path, "{\n" * 2000 + RET + "}\n" * 2000))


def test_branch_to_a_register_is_refused_at_load(tmp_path):
    body = ".reg .pred %p;\n.reg .b32 %r<3>;\nsetp.eq.u32 %p, %r1, 0;\n@%p bra %r1;\n" + RET
    with pytest.raises(PTXError, match=r"k.ptx:9:9: the target of 'bra' must be a label, not %r1"):
        gpusim.RawModule(path=_ptx(tmp_path, body))


def test_huge_local_and_shared_arrays_fail_the_launch(tmp_path):
    local = _ptx(tmp_path, ".local .align 4 .b8 buf[2000000000];\n" + RET, "local.ptx")
    with pytest.raises(LaunchError, match=r"k declares 2000000000 B of .local memory per thread; the limit is 524288 B "
                                          r"on h100 \(CUDA error: too many resources requested for launch\)"):
        _launch(local)
    shared = _ptx(tmp_path, ".shared .align 4 .b8 buf[65536];\n" + RET, "shared.ptx")
    with pytest.raises(LaunchError, match=r"k declares 65536 B of static shared memory; the limit is 49152 B on h100 "
                                          r".*too many resources requested for launch"):
        _launch(shared)


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_fourth_component_of_thread_and_block_ids_reads_zero(tmp_path, mode):
    body = (".reg .b32 %r<5>;\n.reg .b64 %rd<3>;\nmov.u32 %r1, %tid.w;\nmov.u32 %r2, %ntid.w;\nmov.u32 %r3, %ctaid.w;\n"
            "mov.u32 %r4, %nctaid.w;\nld.param.u64 %rd1, [a];\ncvta.to.global.u64 %rd2, %rd1;\n"
            "st.global.v4.u32 [%rd2], {%r1, %r2, %r3, %r4};\n" + RET)
    out = _launch(_ptx(tmp_path, body), mode, grid=3, block=40)
    assert out.tolist() == [0, 0, 0, 0]  # the x components would give tid 39, ntid 40, ctaid 2, nctaid 3


# ---------------------------------------------------------------- the watchdog
@pytest.fixture
def fast_watchdog(monkeypatch):
    """Fingerprint at every opportunity (the default waits 0.25 s between fingerprints)."""
    monkeypatch.setattr(watchdog, "INTERVAL_S", 0.0)


@pytest.mark.parametrize("mode, budget, msg", [
    ("functional", {"max_steps": 2000}, r"no completion after 2,000 instruction steps \(max_steps\).*"
                                        r"gpusim.Device\(max_steps=N\) or 'gpusim run --max-steps N' \(0 = unlimited\)"),
    ("timing", {"max_cycles": 10_000}, r"no completion after 10,000 cycles \(max_cycles\).*"
                                     r"gpusim.Device\(max_cycles=N\) or 'gpusim run --max-cycles N' \(0 = unlimited\)"),
])
def test_budget_stops_a_loop_whose_state_never_repeats(tmp_path, mode, budget, msg):
    t0 = time.perf_counter()
    with pytest.raises(KernelFault, match=msg) as exc:
        _launch(_ptx(tmp_path, COUNT, "count.ptx"), mode, **budget)
    assert re.search(r"count.ptx:(8 'add.u32 %r1, %r1, 1;'|9 'bra loop;')", str(exc.value))
    assert "block (0, 0, 0) warp 0" in str(exc.value)
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize("mode", ["functional", "timing"])
@pytest.mark.parametrize("body, line", [(LOOP, r"loop.ptx:7 'bra loop;'"), (SPIN, r"loop.ptx:1[234] ")])
def test_repeating_state_is_an_endless_loop(tmp_path, fast_watchdog, mode, body, line):
    t0 = time.perf_counter()
    with pytest.raises(KernelFault, match=r"watchdog: endless loop: the state of every (resident )?thread") as exc:
        _launch(_ptx(tmp_path, body, "loop.ptx"), mode, grid=2, block=64)
    assert re.search(line, str(exc.value)) and "block (0, 0, 0) warp 0" in str(exc.value)
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_repeat_check_never_stops_a_loop_that_progresses(tmp_path, fast_watchdog, mode):
    body = (".reg .b32 %r<3>;\n.reg .b64 %rd<3>;\n.reg .pred %p<2>;\nmov.u32 %r1, 0;\nloop:\nadd.u32 %r1, %r1, 1;\n"
            "setp.lt.u32 %p1, %r1, 3000;\n@%p1 bra loop;\nld.param.u64 %rd1, [a];\ncvta.to.global.u64 %rd2, %rd1;\n"
            "st.global.u32 [%rd2], %r1;\n" + RET)
    assert _launch(_ptx(tmp_path, body), mode)[0] == 3000


# Slow by design (up to ~10 s): the DEFAULT watchdog, no budget given, stops an endless loop.
@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_default_watchdog_stops_an_endless_loop_within_10_s(tmp_path, mode):
    t0 = time.perf_counter()
    with pytest.raises(KernelFault, match=r"watchdog"):
        with gpusim.Device("h100", mode):
            k = gpusim.RawModule(path=_ptx(tmp_path, LOOP)).get_function("k")
            k((1,), (32,), (gpusim.zeros(1, np.uint32),))
    assert time.perf_counter() - t0 < 10
