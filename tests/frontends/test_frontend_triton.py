"""@triton.jit kernels on gpusim (gpusim.frontends.triton): the tutorial kernels of
validation/frontends/triton_kernels.py compiled by Triton 3.6 for cc 90 and cc 80, launched with
Triton's conventions and checked bit for bit against numpy oracles (inputs chosen so that the exact
result does not depend on the order of the reductions), Triton's specialization and cache, the error
that names an unmodelled instruction's PTX line and Triton source line, and ptxas accepting the PTX."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("triton")

import gpusim  # noqa: E402
from gpusim.frontends.triton import compute_capability, jit  # noqa: E402
from validation.frontends import triton_kernels as tk  # noqa: E402

GPUS = ["h100", "a100"]  # cc 90 (Triton writes .target sm_90a) and cc 80


@pytest.mark.parametrize("gpu", GPUS)
def test_vector_add_bit_exact_with_grid_callable(gpu):
    inp = tk.inputs("add_small")
    with gpusim.Device(gpu) as dev:
        x, y = gpusim.asarray(inp["x"]), gpusim.asarray(inp["y"])
        out = gpusim.zeros(x.shape, np.float32)
        res = tk.launch_add(jit(tk.add_kernel), x, y, out, x.size)
        assert compute_capability(dev) == {"h100": 90, "a100": 80}[gpu]
    assert res.grid == (3, 1, 1) and res.block == (128, 1, 1)  # cdiv(3000, 1024) programs of 4 warps
    np.testing.assert_array_equal(out.get(), inp["x"] + inp["y"])


def test_vector_add_host_arrays_and_numpy_scalars_copy_in_and_out():
    inp = tk.inputs("add_small")
    out = np.full(3000, -1, np.float32)
    with gpusim.Device("h100"):
        res = jit(tk.add_kernel)[(2,)](inp["x"], inp["y"], out, np.int32(2000), BLOCK_SIZE=1024, num_warps=2)
    assert res.block == (64, 1, 1)
    np.testing.assert_array_equal(out[:2000], inp["x"][:2000] + inp["y"][:2000])
    assert (out[2000:] == -1).all()  # masked off: untouched, and copied back as it was


@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("shape", [(3, 300), (2, 256)])
def test_softmax_bit_exact_on_exact_inputs(gpu, shape):
    x, want = tk.softmax_exact_inputs(*shape, seed=shape[1])
    y = np.zeros_like(x)
    with gpusim.Device(gpu):
        res = tk.launch_softmax(jit(tk.softmax_kernel), gpusim.asarray(x), y_dev := gpusim.asarray(y))
    assert res.grid == (shape[0], 1, 1) and res.block == (128, 1, 1)
    np.testing.assert_array_equal(y_dev.get(), want)


def test_softmax_random_rows_close_to_float64():
    x = tk.inputs("softmax_small")["x"]
    y = np.zeros_like(x)
    with gpusim.Device("h100"):
        tk.launch_softmax(jit(tk.softmax_kernel), x, y)
    ref = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(y, ref, rtol=2e-6, atol=0)


def _fma32(a, b, c):
    """fma.rn.f32 for operands whose exact a*b+c fits in a float64 (as here): one rounding."""
    return (a.astype(np.float64) * b + c).astype(np.float32)


@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("block", [None, 64])  # one trip per pass, and four (BLOCK_SIZE 64 < N)
def test_layer_norm_forward(gpu, block):
    """Rows c + (v, -v) shuffled (v small integers): the mean (c) and the variance are exact in any
    order; rstd = 1/sqrt.approx(var + eps) within 2 ulp of float64; y bit-exact given the kernel's
    mean and rstd: fma((x - mean) * rstd, w, b)."""
    ins = tk.layer_norm_exact_inputs(3, 256, seed=5)
    x, w, b = ins["x"], ins["w"], ins["b"]
    m = x.shape[0]
    y, mean, rstd = np.zeros_like(x), np.zeros(m, np.float32), np.zeros(m, np.float32)
    with gpusim.Device(gpu):
        res = tk.launch_layer_norm(jit(tk.layer_norm_fwd_kernel), x, w, b, y, mean, rstd, eps=1e-5, block=block)
    assert res.block == (32, 1, 1)  # num_warps = max(BLOCK_SIZE // 256, 1)
    np.testing.assert_array_equal(mean, x.mean(1, dtype=np.float64).astype(np.float32))
    var = ((x - mean[:, None]).astype(np.float64) ** 2).mean(1)
    ulp = np.spacing(rstd)
    assert (np.abs(rstd - 1 / np.sqrt(var + np.float32(1e-5))) <= 2 * ulp).all()
    x_hat = (x - mean[:, None]) * rstd[:, None]  # float32 ops, as the kernel
    np.testing.assert_array_equal(y, _fma32(x_hat, w, b))


def test_specialization_and_cache_follow_triton():
    """Triton's binder decides: 32 is divisible by 16 ('D'), 17 is not, 1 becomes a constant, 2^33
    is an int64; one compiled kernel per specialization."""
    k = jit(tk.add_kernel)
    buf = np.zeros(64, np.float32)
    with gpusim.Device("h100"):
        cks = {n: k.compile(buf, buf, buf, n, BLOCK_SIZE=64) for n in (32, 48, 17, 1, 1 << 33)}
        k[(1,)](buf, buf, buf, 32, BLOCK_SIZE=64)
        k[(1,)](buf, buf, buf, 48, BLOCK_SIZE=64)  # same key as 32: no new kernel
        k[(1,)](buf, buf, buf, 17, BLOCK_SIZE=64)
        d = gpusim.zeros(64, np.float32)
        off4 = gpusim.ndarray((60,), np.float32, d.data.ptr + 4)  # an address not divisible by 16
        ck_off = k.compile(off4, d, d, 32, BLOCK_SIZE=64)
    assert len(k._cache) == 5  # 32 and 48 share one; 17, 1, 2^33 and the misaligned pointer one each
    assert cks[48] is cks[32]
    params = {n: re.findall(r"\.param \.(\w+)", c.asm["ptx"]) for n, c in cks.items()}
    assert params[32] == ["u64"] * 3 + ["u32"] + ["u64"] * 2  # x, y, out, n, two scratch pointers
    assert params[1] == ["u64"] * 3 + ["u64"] * 2  # n == 1 is a constexpr: no parameter
    assert params[1 << 33][3] == "u64"  # i64
    div16 = [["tt.divisibility", 16]]
    assert cks[32].src.attrs[(3,)] == div16 and cks[17].src.attrs[(3,)] == []
    assert cks[32].src.attrs[(0,)] == div16 and ck_off.src.attrs[(0,)] == []


def test_compiles_for_the_device_arch():
    buf = np.zeros(16, np.float32)
    with gpusim.Device("h100"):
        t90 = jit(tk.add_kernel).compile(buf, buf, buf, 16, BLOCK_SIZE=16).asm["ptx"]
    with gpusim.Device("a100"):
        t80 = jit(tk.add_kernel).compile(buf, buf, buf, 16, BLOCK_SIZE=16).asm["ptx"]
    assert ".target sm_90a" in t90 and ".target sm_80" in t80


def test_unmodelled_instruction_names_ptx_line_and_triton_line():
    path = Path(tk.__file__)
    py_line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if "gdc_wait()" in ln)
    x = np.zeros(100, np.float32)
    with gpusim.Device("h100"), pytest.raises(gpusim.PTXError) as info:
        jit(tk.gdc_kernel)[(1,)](x, 100, BLOCK=128)
    msg = str(info.value)
    assert "unsupported instruction 'griddepcontrol'" in msg
    ptx_line = info.value.line
    src = Path(info.value.file).read_text().splitlines()[ptx_line - 1]
    assert "griddepcontrol.wait" in src and info.value.file.endswith("gdc_kernel.ptx")
    # the Triton source line, from .loc (by file name: Triton's cache keeps the .file path of the checkout that
    # compiled the kernel first, so another clone of the repository may see that one's path)
    assert re.search(rf"[/\\]{re.escape(path.name)}:{py_line}:\d+, from \.loc\)", msg), msg


def test_bad_arguments_are_named():
    with gpusim.Device("h100"):
        with pytest.raises(gpusim.GpusimError, match="argument 2"):
            jit(tk.add_kernel)[(1,)](np.zeros(4, np.float32), np.zeros(4, np.float32), object(), 4, BLOCK_SIZE=4)
        with pytest.raises(gpusim.LaunchError, match="grid"):
            jit(tk.add_kernel)[(0,)](np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32), 4,
                                     BLOCK_SIZE=4)
        with pytest.raises(gpusim.LaunchError, match="num_wraps"):
            jit(tk.add_kernel)[(1,)](np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32), 4,
                                     BLOCK_SIZE=4, num_wraps=4)


@pytest.mark.ptxas
@pytest.mark.parametrize("gpu", GPUS)
def test_ptxas_13_assembles_triton_ptx(gpu, tmp_path):
    from gpusim.ptxas import assemble

    x, y = np.zeros((2, 300), np.float32), np.zeros((2, 300), np.float32)
    w = np.zeros(300, np.float32)
    with gpusim.Device(gpu) as dev:
        cks = [jit(tk.add_kernel).compile(w, w, w, 300, BLOCK_SIZE=1024),
               jit(tk.softmax_kernel).compile(y, x, 300, 300, 300, BLOCK_SIZE=512),
               jit(tk.layer_norm_fwd_kernel).compile(x, y, w, w, w, w, 300, 300, 1e-5, BLOCK_SIZE=512, num_warps=2)]
        for ck in cks:
            path = tmp_path / f"{ck.metadata.name}.ptx"
            path.write_text(ck.asm["ptx"])
            target = re.search(r"\.target (\w+)", ck.asm["ptx"]).group(1)
            assert target.rstrip("a") == dev.config.arch
            assert len(assemble(path, target)) > 0


@pytest.mark.parametrize("gpu", GPUS)  # cc 90: cp.async + wgmma; cc 80: cp.async + ldmatrix + mma.sync
def test_matmul_tutorial_exact_on_integer_inputs(gpu):
    """Small integers: every fp32 partial sum is exact, so c is fl16(a @ b) in any order."""
    rng = np.random.default_rng(3)
    m, n, k = tk.CASES["matmul_small"][1]
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float16)
    with gpusim.Device(gpu):
        res = tk.launch_matmul(jit(tk.matmul_kernel), a, b, c)
    assert res.grid == (4, 1, 1) and res.block == (128, 1, 1)
    np.testing.assert_array_equal(c, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16))


def test_small_cases_bit_exact_against_the_h100(capsys):
    """Every small tutorial case on random inputs equals what the H100 computed with Triton 3.6
    (validation/reports/h100/frontends/triton: the GPU's outputs). Softmax and layer norm divide with
    div.full.f32, which the H100 computes as a * MUFU.RCP(b), 1-2 ulp from the correctly rounded quotient."""
    from validation.frontends.triton_on_gpu import compare

    npz = Path(__file__).resolve().parents[2] / "validation/reports/h100/frontends/triton/gpu/triton_h100.npz"
    assert compare(npz, "h100", large=False) == 0, capsys.readouterr().out
    assert capsys.readouterr().out.count("bit-exact") == 14


def test_matmul_tutorial_in_timing_mode_with_sass_costs():
    """The tutorial matmul (128x128x32 tiles, 3 stages, wgmma on cc 90) in timing mode, with the SASS-aware
    issue order that queues outcomes out of order: a warp whose queue was full sat at a wgmma beside a
    warpgroup still behind, and the run-ahead loop came back to that wgmma for ever at one simulated cycle.
    Its output equals the H100's."""
    ref = np.load(Path(__file__).resolve().parents[2] / "validation/reports/h100/frontends/triton/gpu/triton_h100.npz")
    kernels = {"matmul": jit(tk.KERNELS["matmul"])}
    with gpusim.Device("h100", mode="timing", max_cycles=1_000_000):
        ins = {k: gpusim.asarray(v) for k, v in tk.inputs("matmul_small").items()}
        outs = tk.empty_outputs("matmul_small", gpusim)
        res = tk.run_case(kernels, "matmul_small", ins, outs)
    assert res.metrics["sm__cycles_elapsed.avg"] > 0
    assert outs["c"].get().tobytes() == ref["matmul_small/c"].tobytes()


def test_wgmma_is_asynchronous_in_the_timing_model():
    """Back-to-back wgmma.mma_async into one accumulator do not wait for each other's D (they chain in the
    tensor pipe's queue: PTX ISA 9.0, the accumulator is off limits until wgmma.wait_group), and the warp
    goes on past them; wgmma.wait_group N holds it until the older groups are done."""
    kernels = {"matmul": jit(tk.KERNELS["matmul"])}
    tk_cases = dict(tk.CASES)
    try:
        tk.CASES["mm_async"] = ("matmul", (128, 128, 256))
        with gpusim.Device("h100", mode="timing", record_events=True):
            ins = {k: gpusim.asarray(v) for k, v in tk.inputs("mm_async").items()}
            outs = tk.empty_outputs("mm_async", gpusim)
            res = tk.run_case(kernels, "mm_async", ins, outs)
    finally:
        tk.CASES.clear()
        tk.CASES.update(tk_cases)
    instrs = next(iter(kernels["matmul"]._cache.values())).kernel.kernel.instrs
    first = res.events[0]
    warp = [e for e in res.events if (e.cta, e.warp) == (first.cta, first.warp)]
    ops = [(e, instrs[e.pc].op if e.pc < len(instrs) else "") for e in warp]
    wgmmas = [e for e, op in ops if op == "wgmma.mma_async"]
    assert len(wgmmas) == 4 * (256 // 32)  # four a k-step
    loop = [e.cycle for e in wgmmas]
    # a k-step's four issue back to back (the second of a pair waited for the first's D, 114 cycles, before)
    assert all(b - a < 40 for a, b in zip(loop[0::4], loop[3::4]))
    # the last wgmma.wait_group 0 holds the warp until the last k-step's four have been through the pipe:
    # 4 x 16 m16n8k16 steps x sm.wgmma_step_interval (4) cycles after the first of them issued
    last_wait = [i for i, (e, op) in enumerate(ops) if op == "wgmma.wait_group"][-1]
    assert ops[last_wait + 1][0].cycle >= loop[-4] + 4 * 16 * 4
