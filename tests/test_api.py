"""The CuPy-like API: arrays, modules, launches, and the errors CUDA would give."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.errors import GpusimError, LaunchError


def test_arrays_round_trip_and_share_memory_on_reshape(dev):
    x = np.arange(12, dtype=np.float32)
    d = gpusim.asarray(x)
    assert d.shape == (12,) and d.dtype == np.float32 and d.nbytes == 48
    v = d.reshape(3, -1)
    v.set(np.ones((3, 4), np.float32))
    np.testing.assert_array_equal(d.get(), np.ones(12, np.float32))
    assert d.data.ptr % 256 == 0
    assert gpusim.zeros((2, 3), np.int32).get().tolist() == [[0, 0, 0], [0, 0, 0]]
    with pytest.raises(GpusimError, match=r"cannot reshape an array of size 12 into shape \(5, -1\)"):
        d.reshape(5, -1)


def test_device_context_selects_config_and_memory():
    with gpusim.Device("a100") as a:
        arr = gpusim.zeros(4, np.uint32)
        assert arr.device is a and a.config.name.lower().startswith("a100")
    assert gpusim.Device("h100", mode="timing").mode == "timing"
    with pytest.raises(GpusimError, match=r"unknown mode 'cycle'; choose one of functional, timing"):
        gpusim.Device("h100", mode="cycle")
    with pytest.raises(GpusimError, match=r"max_cycles=...\): expected a positive integer, or 0 for no limit, got -1"):
        gpusim.Device("h100", mode="timing", max_cycles=-1)
    assert gpusim.Device("h100", mode="timing", max_cycles=0).max_cycles >= 2**62  # 0: no limit


@pytest.fixture
def diverge(kernels):
    return kernels("control").get_function("diverge")


@pytest.mark.parametrize("args, message", [
    ((), r"diverge takes 2 argument\(s\) \(.u64 diverge_out, .u32 diverge_n\), got 0"),
    (("OUT", 5), r"argument 1 \(.param .u32 diverge_n\): got a Python int, which has no fixed width; "
                 r"pass a numpy scalar such as np.uint32\(...\)"),
    (("OUT", np.int64(5)), r"argument 1 \(.param .u32 diverge_n\): got int64 \(8 bytes\) but the parameter is 4 bytes"),
    ((np.zeros(4, np.uint32), np.uint32(4)), r"argument 0 \(.param .u64 diverge_out\): got a host numpy array; "
                                              r"copy it to the device first with gpusim.asarray\(\)"),
    (("OUT", "OUT"), r"argument 1 \(.param .u32 diverge_n\): got an array, but the parameter is 4 bytes"),
])
def test_wrong_arguments_name_the_parameter(dev, diverge, args, message):
    out = gpusim.zeros(4, np.uint32)
    args = tuple(out if isinstance(a, str) else a for a in args)
    with pytest.raises(GpusimError, match=message):
        diverge((1,), (32,), args)


@pytest.mark.parametrize("grid, block, smem, message", [
    ((1,), (1025,), 0, r"block \(1025, 1, 1\) has 1025 threads; .* allows at most 1024 per block "
                       r"\(CUDA error: invalid configuration argument\)"),
    ((1,), (1, 1, 65), 0, r"block dimension z=65 exceeds 64"),
    ((1, 65536), (32,), 0, r"grid dimension y=65536 exceeds 65535"),
    ((0,), (32,), 0, r"grid \(0, 1, 1\) has a dimension below 1"),
    ((1,), (32,), 60000, r"shared_mem=60000 B of dynamic shared memory exceeds the kernel's limit of 49152 B .*"
                         r"raise kernel.max_dynamic_shared_size_bytes first \(up to 232448 B\) "
                         r"\(CUDA error: too many resources requested for launch\)"),
    ((1,), "32", 0, r"block must be an int or a tuple of 1 to 3 ints, got '32'"),
])
def test_impossible_launches_fail_like_cuda(dev, diverge, grid, block, smem, message):
    with pytest.raises(LaunchError, match=message):
        diverge(grid, block, (gpusim.zeros(4, np.uint32), np.uint32(4)), shared_mem=smem)


def test_raising_the_dynamic_shared_memory_limit(dev, diverge):
    diverge.max_dynamic_shared_size_bytes = 100_000
    out = gpusim.zeros(32, np.uint32)
    diverge((1,), (32,), (out, np.uint32(32)), shared_mem=100_000)
    assert out.get()[1] == 3 + 1
    with pytest.raises(LaunchError, match=r"max_dynamic_shared_size_bytes=300000 is outside 0..232448"):
        diverge.max_dynamic_shared_size_bytes = 300_000


def test_module_errors(dev, kernels, tmp_path):
    mod = kernels("control")
    with pytest.raises(GpusimError, match=r"control.ptx: no kernel named 'nope' \(kernels in this module: "
                                          r"bad_barrier, diverge, reverse_block, spin\)"):
        mod.get_function("nope")
    with pytest.raises(GpusimError, match=r"exactly one of code= \(PTX text or CUDA C source\) or path="):
        gpusim.RawModule()
    with pytest.raises(gpusim.PTXError, match=r"missing.ptx:0:0: cannot read PTX file"):
        gpusim.RawModule(path=tmp_path / "missing.ptx")
