"""CUDA C as CuPy takes it: ``RawModule(code=...)``/``RawKernel`` compiled by NVRTC (issue #27, part 1).

Eleven kernels in one source (``validation/frontends/cuda_kernels.py``) run on gpusim: the exact ones equal
their numpy oracles bit for bit, the others are close to them, and every one gives the same bits as the
same source compiled by ``nvcc -ptx`` and loaded as PTX. Also: templates through ``name_expressions``,
compile errors with NVRTC's log, the on-disk cache, a launch on another GPU's device, the CLI and
experiment files with a ``.cu`` file.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest

import gpusim
from gpusim.errors import CompileError, GpusimError

pytest.importorskip("cuda.bindings.nvrtc", reason="needs gpusim[cuda] (cuda-bindings, nvidia-cuda-nvrtc)")

from gpusim import nvrtc  # noqa: E402
from validation.frontends.cuda_kernels import LOWERED, NAME_EXPRESSIONS, SOURCE, cases  # noqa: E402


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    """Each test compiles into its own cache folder."""
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path / "kernel_cache"))


def _run(module, case, seed=0):
    """Launch ``case`` of ``module`` on the current device; its output arrays as numpy arrays."""
    host = case.make_args(np.random.default_rng(seed))
    dev_args = tuple(gpusim.asarray(a) if isinstance(a, np.ndarray) else a for a in host)
    module.get_function(case.kernel)(case.grid, case.block, dev_args)
    return host, [dev_args[i].get() for i in case.outputs]


def _nvcc_module(tmp_path):
    """The same source compiled by ``nvcc -ptx`` with CuPy's options (templates instantiated explicitly)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("needs nvcc")
    cu = tmp_path / "kernels.cu"
    cu.write_text(SOURCE + "\ntemplate __global__ void scale_add<float>(const float*, float*, float, int);\n"
                  "template __global__ void scale_add<int>(const int*, int*, int, int);\n")
    ptx = tmp_path / "kernels.ptx"
    subprocess.run([nvcc, "-ptx", "-arch=sm_90", "-ftz=true", str(cu), "-o", str(ptx)], check=True)
    return gpusim.RawModule(path=ptx)


def test_ten_kernels_match_oracles_and_nvcc(dev, tmp_path):
    mod = gpusim.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=NAME_EXPRESSIONS)
    ref = _nvcc_module(tmp_path)
    lowered = {name: mod.get_lowered_name(name) for name in NAME_EXPRESSIONS}
    assert lowered == LOWERED  # the names the GPU script looks the nvcc build's kernels up by
    all_cases = cases()
    assert len({c.kernel.split("<")[0] for c in all_cases}) >= 10  # one template twice
    for case in all_cases:
        host, got = _run(mod, case)
        expect = case.oracle(host)
        for g, e in zip(got, expect):
            if case.exact:
                np.testing.assert_array_equal(g, e, err_msg=case.kernel)
            else:
                np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-6, err_msg=case.kernel)
        ref_case = case if "<" not in case.kernel else type(case)(**{**case.__dict__, "kernel": lowered[case.kernel]})
        _, want = _run(ref, ref_case)
        for g, w in zip(got, want):
            assert g.tobytes() == w.tobytes(), f"{case.kernel}: NVRTC and nvcc outputs differ"


def test_templates_by_name_expression(dev):
    mod = gpusim.RawModule(code=SOURCE, name_expressions=NAME_EXPRESSIONS)
    k = mod.get_function("scale_add<int>")
    assert k.name == mod.get_lowered_name("scale_add<int>") == "_Z9scale_addIiEvPKT_PS0_S0_i"
    assert mod.get_function(k.name) is k
    with pytest.raises(GpusimError, match="not one of this module's name_expressions"):
        mod.get_lowered_name("scale_add<double>")


def test_raw_kernel_has_cupys_signature(dev):
    src = 'extern "C" __global__ void twice(int* x) { x[threadIdx.x] *= 2; }'
    k = gpusim.RawKernel(src, "twice", options=("-std=c++17",))
    x = gpusim.asarray(np.arange(32, dtype=np.int32))
    k((1,), (32,), (x,))
    np.testing.assert_array_equal(x.get(), np.arange(32) * 2)
    assert (k.name, k.code, k.options) == ("twice", src, ("-std=c++17",))
    with pytest.raises(GpusimError, match="no kernel named 'thrice'"):
        gpusim.RawKernel(src, "thrice")


def test_compile_error_carries_nvrtc_log_with_line():
    src = 'extern "C" __global__ void k(float* x) {\n  x[0] = 1.0f;\n  x[1] = undefined_name;\n}\n'
    with pytest.raises(CompileError) as info:
        gpusim.RawModule(code=src)
    assert "kern.cu(3): error: identifier \"undefined_name\" is undefined" in str(info.value)
    assert "undefined_name" in info.value.log and "-ftz=true" in info.value.options


def test_no_standard_library_as_under_cupy():
    """NVRTC has no C++ standard library headers; CuPy fails the same way on the GPU machine."""
    with pytest.raises(CompileError, match="cstdint"):
        gpusim.RawModule(code='#include <cstdint>\nextern "C" __global__ void k(int* x) { x[0] = 1; }')


def test_cuda_headers_are_found():
    src = ('#include <cuda_fp16.h>\nextern "C" __global__ void h(__half* x) '
           '{ x[threadIdx.x] = __hadd(x[threadIdx.x], x[threadIdx.x]); }')
    with gpusim.Device("h100"):
        x = gpusim.asarray(np.array([1.5, -2.25, 3.0, 65504.0], np.float16))
        gpusim.RawModule(code=src).get_function("h")((1,), (4,), (x,))
        np.testing.assert_array_equal(x.get(), np.array([3.0, -4.5, 6.0, np.inf], np.float16))


def test_disk_cache_hits_and_survives_damage(tmp_path):
    src = 'extern "C" __global__ void k(int* x) { x[threadIdx.x] = threadIdx.x; }'
    first = nvrtc.compile_cuda(src, arch="sm_90")
    again = nvrtc.compile_cuda(src, arch="sm_90")
    assert (first.cached, again.cached) == (False, True) and again.ptx == first.ptx
    other = nvrtc.compile_cuda(src, arch="sm_90", options=("-DX=1",))
    assert not other.cached  # options are part of the key
    entries = list(nvrtc.cache_dir().glob("*.json"))
    assert len(entries) == 2
    for e in entries:
        e.write_text("{not json")
    assert not nvrtc.compile_cuda(src, arch="sm_90").cached  # a damaged entry is compiled again
    assert nvrtc.compile_cuda(src, arch="sm_90").cached


def test_launch_on_another_gpu_compiles_for_its_architecture():
    src = 'extern "C" __global__ void inc(int* x) { x[threadIdx.x] += 1; }'
    with gpusim.Device("h100"):
        k = gpusim.RawKernel(src, "inc")
    assert k.module.module_arch == "sm_90"
    with gpusim.Device("a100"):
        x = gpusim.asarray(np.zeros(32, np.int32))
        k((1,), (32,), (x,))
        np.testing.assert_array_equal(x.get(), np.ones(32, np.int32))
        assert k.module._retargeted["sm_80"].module.target == "sm_80"


def test_timing_mode_runs_cuda_c():
    with gpusim.Device("h100", mode="timing"):
        mod = gpusim.RawModule(code=SOURCE, name_expressions=NAME_EXPRESSIONS)
        case = next(c for c in cases() if c.kernel == "histogram64")
        host, (bins,) = _run(mod, case)
    np.testing.assert_array_equal(bins, case.oracle(host)[0])


@pytest.mark.parametrize("kwargs, rule", [
    ({"code": b"extern \"C\" __global__ void k() {}"}, "takes a str"),
    ({"code": "__global__ void k() {}", "jitify": True}, "jitify"),
    ({"code": "__global__ void k() {}", "backend": "nvcc"}, "backend='nvcc'"),
])
def test_bad_arguments_are_named(kwargs, rule):
    with pytest.raises(GpusimError, match=rule):
        gpusim.RawModule(**kwargs)


def test_missing_nvrtc_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    monkeypatch.setitem(sys.modules, "cuda.bindings.nvrtc", None)
    with pytest.raises(GpusimError, match=r"gpusim\[cuda\]"):
        gpusim.RawModule(code='extern "C" __global__ void k() {}')


def test_cli_runs_a_cu_file_and_an_experiment(tmp_path, capsys):
    from gpusim.cli import main

    cu = tmp_path / "kernels.cu"
    cu.write_text(SOURCE)
    assert main(["run", str(cu), "--kernel", "vadd_i32", "--grid", "4", "--block", "128", "--arg", "s32[1024]:range",
                 "--arg", "s32[1024]:range", "--arg", "s32[1024]", "--arg", "s32=1024"]) == 0
    out = capsys.readouterr().out
    assert "vadd_i32 on h100" in out and "smsp__inst_executed.sum" in out
    toml = tmp_path / "exp.toml"
    toml.write_text('ptx = "kernels.cu"\nkernel = "scale_add<int>"\ngrid = 4\nblock = 256\n'
                    'args = ["s32[1024]:range", "s32[1024]:ones", "s32=3", "s32=1024"]\n')
    assert main(["run", str(toml)]) == 0
    assert "scale_add<int> on h100" in capsys.readouterr().out


def test_sweep_over_a_cu_kernel(tmp_path):
    from gpusim.sweep import load_spec, run

    (tmp_path / "kernels.cu").write_text(SOURCE)
    spec = tmp_path / "exp.toml"
    spec.write_text('name = "cu"\nmetrics = ["smsp__inst_executed.sum"]\n[[kernels]]\nptx = "kernels.cu"\n'
                    'kernel = "scale_add<int>"\nthreads = 1024\nargs = ["s32[1024]:range", "s32[1024]", "s32=2", '
                    '"s32=1024"]\n[sweep]\nblock = [128, 256]\n')
    res = run(spec, tmp_path / "out", jobs=1, progress=False, echo=lambda m: None)
    assert not res.failures() and res.column("block") == [128, 256]
    assert len(set(res.column("smsp__inst_executed.sum"))) == 1  # the same work either way
    bad = tmp_path / "bad.toml"
    bad.write_text(spec.read_text().replace("scale_add<int>", "scale_sub<int>"))
    with pytest.raises(GpusimError, match="has no kernel named 'scale_sub<int>'"):
        load_spec(bad)
