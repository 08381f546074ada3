"""One exception hierarchy: every error a user can cause is a gpusim.GpusimError."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import gpusim
import isa
import isa.errors
from gpusim.cli import main
from gpusim.errors import USER_ERRORS
from tests.functional.test_engine import PTX_MISALIGNED as MISALIGNED

BAD_PTX = """
.version 9.0
.target sm_90
.address_size 64
.visible .entry k()
{
    frobnicate.u32 %r1, 1;
    ret;
}
"""


def test_hierarchy_is_exported_from_gpusim_and_rooted_in_isa():
    assert gpusim.GpusimError is isa.errors.GpusimError is isa.GpusimError
    assert gpusim.PTXError is isa.PTXError
    for cls, also in ((gpusim.PTXError, ValueError), (gpusim.ConfigError, ValueError),
                      (gpusim.LaunchError, ValueError), (gpusim.KernelFault, RuntimeError)):
        assert issubclass(cls, gpusim.GpusimError) and issubclass(cls, also), cls
        assert cls.__name__ in gpusim.__all__
    assert USER_ERRORS == (gpusim.GpusimError,)


def _parse_error():
    gpusim.RawModule(code=BAD_PTX)


def _config_error():
    gpusim.Device("h100").config.with_overrides({"sm.max_warps": -1})


def _launch_error():
    with gpusim.Device("h100"):
        k = gpusim.RawModule(code=MISALIGNED).get_function("mis")
        k((1,), (2000,), (gpusim.zeros(64, np.uint32),))


def _kernel_fault():
    with gpusim.Device("h100"):
        k = gpusim.RawModule(code=MISALIGNED).get_function("mis")
        k((1,), (32,), (gpusim.zeros(64, np.uint32),))


@pytest.mark.parametrize("cause, cls", [
    (_parse_error, gpusim.PTXError), (_config_error, gpusim.ConfigError),
    (_launch_error, gpusim.LaunchError), (_kernel_fault, gpusim.KernelFault),
], ids=["bad PTX", "bad config", "bad launch", "kernel fault"])
def test_except_gpusim_error_catches_every_user_error(cause, cls):
    try:
        cause()
    except gpusim.GpusimError as exc:
        assert type(exc) is cls
    else:  # pragma: no cover
        pytest.fail(f"{cause.__name__} raised nothing")


def test_cli_prints_a_parse_error_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.ptx"
    bad.write_text(BAD_PTX)
    code = main(["run", str(bad), "--kernel", "k", "--grid", "1", "--block", "32"])
    err = capsys.readouterr().err
    assert code == 2, err
    first, *rest = err.splitlines()
    assert first.startswith("gpusim run: error: ") and "bad.ptx:7:5: unsupported instruction 'frobnicate'" in first
    assert "Traceback" not in err


def test_isa_imports_without_gpusim():
    code = ("import sys, isa; isa.parse_file; "
            "assert not [m for m in sys.modules if m == 'gpusim' or m.startswith('gpusim.')], 'gpusim imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
