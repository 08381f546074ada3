"""``@numba.cuda.jit`` kernels on gpusim with Numba's launch syntax (issue #27, part 3).

The kernels of ``validation/frontends/numba_kernels.py`` (vector add, the docs' shared-memory
``fast_matmul``, a shuffle + atomic reduction, a 2-D kernel, a grid-stride loop, a device function) run
through :func:`gpusim.frontends.numba.kernel` and equal their numpy oracles bit for bit, in functional and
timing mode; their PTX is ``.version 9.0`` and assembles with ptxas. Also: the decorator's forms, declared
signatures and Numba's conversions, Numba's kernel ABI (shape, strides, size of C, Fortran and gpusim
arrays; scalars, complex numbers, tuples), host arrays copied back (``cuda.In``/``cuda.Out``), dynamic
shared memory, the per-(types, arch) cache and the errors a user can cause.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.errors import CompileError, GpusimError, LaunchError, PTXError

pytest.importorskip("numba.cuda.compiler", reason="needs gpusim[numba] (numba-cuda, nvidia-nvvm)")

from numba import cuda, float32, int32  # noqa: E402

from gpusim.frontends.numba import NumbaKernel, jit, kernel  # noqa: E402
from validation.frontends.numba_kernels import CASES  # noqa: E402


def _run_case(case, mode="functional"):
    """Launch a case's kernel on gpusim (host arrays, copied back as Numba does); return (args, result)."""
    args = case.inputs(np.random.default_rng(7))
    grid, block = case.launch(args)
    with gpusim.Device("h100", mode=mode):
        res = kernel(case.kernel)[grid, block](*args)
    return args, res


def _bits(x):
    return np.ascontiguousarray(x).view(np.uint8)


@pytest.mark.parametrize("case", [c for c in CASES if c.oracle is not None], ids=lambda c: c.name)
def test_case_equals_numpy_oracle_bit_for_bit(case):
    args, _ = _run_case(case)
    for out, want in zip(case.outputs, case.oracle(args)):
        assert args[out].dtype == np.asarray(want).dtype
        assert np.array_equal(_bits(args[out]), _bits(np.asarray(want)))


def test_libdevice_math_case_runs_close_to_numpy():
    """``exp_sqrt`` (libdevice's expf: ex2.approx) has the GPU as its reference; here it is within
    a few float32 ulps of numpy's float64 result."""
    case = next(c for c in CASES if c.name == "exp_sqrt")
    (a, out), _ = _run_case(case)
    want = (np.exp(a.astype(np.float64)) / 2 + np.sqrt(np.abs(a.astype(np.float64)))).astype(np.float32)
    assert np.max(np.abs(out.view(np.int32) - want.view(np.int32))) <= 4


@pytest.mark.parametrize("name", ["fast_matmul", "warp_sum", "saxpy_stride"])
def test_case_in_timing_mode(name):
    case = next(c for c in CASES if c.name == name)
    args, res = _run_case(case, mode="timing")
    for out, want in zip(case.outputs, case.oracle(args)):
        assert np.array_equal(_bits(args[out]), _bits(np.asarray(want)))
    assert res.cycles > 0
    grid, block = case.launch(args)
    threads = int(np.prod(grid)) * int(np.prod(block))
    assert res.metrics["smsp__thread_inst_executed.sum"] > threads


@pytest.mark.ptxas
def test_every_ptx_is_version_9_0_and_assembles(tmp_path):
    from gpusim.ptxas import assemble

    with gpusim.Device("h100"):
        for case in CASES:
            k = kernel(case.kernel)
            args = case.inputs(np.random.default_rng(0))
            ptx = k.inspect_ptx(k.argument_types(args))
            assert "\n.version 9.0\n" in ptx and "\n.target sm_90\n" in ptx
            path = tmp_path / f"{case.name}.ptx"
            path.write_text(ptx)
            assert len(assemble(path, "sm_90")) > 0


# ----------------------------------------------------------------------------- the decorator's forms
def _axpy(a, x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + float32(1.0)


def test_decorator_forms_compile_the_same_kernel():
    x = np.arange(40, dtype=np.float32)
    want = (np.float32(3) * x + np.float32(1)).astype(np.float32)
    plain, fast = jit(_axpy), jit(fastmath=True)(_axpy)
    for k in (plain, jit()(_axpy), fast, jit(debug=False, opt=True, lineinfo=True)(_axpy), jit(cuda.jit(_axpy)),
              kernel(cuda.jit(fastmath=True)(_axpy)), jit("void(float32, float32[::1], float32[::1])")(_axpy)):
        assert isinstance(k, NumbaKernel) and k.__name__ == "_axpy" and k.py_func is _axpy
    assert kernel(cuda.jit(fastmath=True)(_axpy)).options["fastmath"] is True
    with gpusim.Device("h100"):
        for k in (plain, fast, kernel(cuda.jit(_axpy))):
            out = np.zeros_like(x)
            k[1, 64](np.float32(3), x, out)
            assert np.array_equal(out, want)
        # fastmath reaches NVVM: its PTX flushes denormals (.ftz), the default's does not
        sig = plain.argument_types((np.float32(3), x, x))
        assert ".ftz" in fast.inspect_ptx(sig) and ".ftz" not in plain.inspect_ptx(sig)


def test_declared_signature_converts_like_numba_and_refuses_others():
    k = jit("void(float32, float32[:], float32[:])")(_axpy)      # layout A accepts C arrays
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    with gpusim.Device("h100"):
        k[1, 32](3.0, x, out)                                     # Python float -> float32 (declared)
        assert np.array_equal(out, 3 * x + 1)
        assert len(k.inspect_ptx()) == 1
        with pytest.raises(GpusimError, match="no matching definition.*array\\(float64"):
            k[1, 32](3.0, x.astype(np.float64), out)
    with pytest.raises(GpusimError, match="void return type"):
        jit("int32(int32[:])")(lambda a: 0)


def test_eager_signatures_of_a_numba_dispatcher_are_kept():
    disp = cuda.jit(_axpy)                                         # lazy numba dispatcher
    assert kernel(disp).signatures is None
    k = jit(["void(float32, float32[::1], float32[::1])", "void(float64, float64[::1], float64[::1])"])(_axpy)
    assert [str(t) for t in k.signatures[1]] == ["float64", "array(float64, 1d, C)", "array(float64, 1d, C)"]


# ----------------------------------------------------------------------------- the ABI
@jit
def _meta(a, out):
    out[0] = a.shape[0]
    out[1] = a.shape[1]
    out[2] = a.strides[0]
    out[3] = a.strides[1]
    out[4] = a.size
    out[5] = a.ndim
    out[6] = int32(a[1, 2] * 10)


@pytest.mark.parametrize("order", ["C", "F", "gpusim"])
def test_array_abi_shape_strides_size_and_data(order):
    host = np.arange(15, dtype=np.float64).reshape(3, 5) / 10
    with gpusim.Device("h100"):
        a = gpusim.asarray(host) if order == "gpusim" else np.asarray(host, order=order)
        out = np.zeros(7, np.int64)
        _meta[1, 1](a, out)
        strides = (40, 8) if order == "gpusim" else a.strides
        assert out.tolist() == [3, 5, strides[0], strides[1], 15, 2, int(host[1, 2] * 10)]
        raw = _meta.compile(_meta.argument_types((a, out)))
        # meminfo, parent, nitems, itemsize, data, then ndim shapes and ndim strides: 2-D a, 1-D out
        assert [p.size for p in raw.kernel.params] == [8] * ((5 + 2 * 2) + (5 + 2 * 1))


@jit
def _scalars(i8, u16, i, f, b, z, t, out):
    out[0] = i8
    out[1] = u16
    out[2] = i
    out[3] = f
    out[4] = b
    out[5] = z.real
    out[6] = z.imag
    out[7] = t[0]
    out[8] = t[1]


def test_scalar_abi_widths_and_values():
    out = np.zeros(9)
    args = (np.int8(-5), np.uint16(65000), 2**40 + 3, 0.1, True, 1.5 - 2.25j, (7, np.float32(0.5)), out)
    with gpusim.Device("h100"):
        _scalars[1, 1](*args)
        assert out.tolist() == [-5, 65000, 2**40 + 3, 0.1, 1, 1.5, -2.25, 7, 0.5]
        types = [str(t) for t in _scalars.argument_types(args)]
        assert types[:6] == ["int8", "uint16", "int64", "float64", "bool", "complex128"]
        sizes = [p.size for p in _scalars.compile(_scalars.argument_types(args)).kernel.params]
        assert sizes[:8] == [1, 2, 8, 8, 1, 8, 8, 8]                  # complex: real, imaginary


@jit
def _double(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i] * 2
        a[i] = -1


def test_host_arrays_copy_back_and_in_out_wrappers():
    a0 = np.arange(10, dtype=np.int32)
    with gpusim.Device("h100"):
        a, b = a0.copy(), np.zeros(10, np.int32)
        _double[1, 32](a, b)                                           # both copied back, as Numba does
        assert np.array_equal(b, 2 * a0) and (a == -1).all()
        a, b = a0.copy(), np.full(10, 5, np.int32)
        _double[1, 32](cuda.In(a), cuda.Out(b))                        # In: not copied back; Out: not copied in
        assert np.array_equal(a, a0) and np.array_equal(b, 2 * a0)
        da, db = gpusim.asarray(a0), gpusim.zeros(10, np.int32)        # gpusim arrays: used in place
        _double[1, 32](da, db)
        assert np.array_equal(db.get(), 2 * a0) and (da.get() == -1).all()


@jit
def _reverse_dyn(a, out):
    s = cuda.shared.array(0, dtype=float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    out[cuda.grid(1)] = s[cuda.blockDim.x - 1 - t]


def test_four_item_config_sets_dynamic_shared_memory():
    a = np.arange(64, dtype=np.float32)
    out = np.zeros_like(a)
    with gpusim.Device("h100"):
        _reverse_dyn[2, 32, 0, 32 * 4](a, out)
        assert np.array_equal(out.reshape(2, 32), a.reshape(2, 32)[:, ::-1])
        _reverse_dyn.configure(2, 32, None, 32 * 4)(a, out)
        with pytest.raises(LaunchError, match="shared_mem=100000 B of dynamic shared memory exceeds"):
            _reverse_dyn[2, 32, 0, 100000](a, out)


# ----------------------------------------------------------------------------- cache
def test_ptx_cached_per_types_and_arch():
    k = jit(_axpy)
    x = np.ones(4, np.float32)
    with gpusim.Device("h100"):
        k[1, 32](np.float32(2), x, x.copy())
        first = k.compile(k.argument_types((np.float32(2), x, x)))
        k[1, 32](np.float32(2), x, x.copy())
        assert k.compile(k.argument_types((np.float32(2), x, x))) is first
        k[1, 32](np.float32(2), x.astype(np.float64), x.astype(np.float64))
        assert len(k.inspect_ptx()) == 2
    with gpusim.Device("a100"):
        out = np.zeros(4, np.float32)
        k[1, 32](np.float32(2), x, out)
        assert np.array_equal(out, np.full(4, 3, np.float32))
        (ptx,) = k.inspect_ptx().values()
        assert "\n.target sm_80\n" in ptx


# ----------------------------------------------------------------------------- errors
def test_user_errors_are_gpusim_errors_naming_the_rule():
    k = jit(_axpy)
    x = np.ones(4, np.float32)
    with gpusim.Device("h100"):
        with pytest.raises(LaunchError, match="launch configuration was not specified"):
            k(np.float32(1), x, x)
        with pytest.raises(LaunchError, match="got 1 item"):
            k[(4,)]
        with pytest.raises(GpusimError, match="argument 1 .*not contiguous"):
            k[1, 32](np.float32(1), np.ones(8, np.float32)[::2], x)
        with pytest.raises(GpusimError, match="argument 0: Numba cannot type a object"):
            k[1, 32](object(), x, x)
        with pytest.raises(CompileError, match="numba-cuda: TypingError"):
            jit(lambda a: a.no_such_attribute)[1, 1](x)
        with pytest.raises(GpusimError, match="cannot link"):
            jit(link=["shim.cu"])(_axpy)


def test_unsupported_ptx_constructs_are_named():
    x = np.ones(4, np.float32)

    def body(a, b):
        b[0] = a[0]

    with gpusim.Device("h100"):
        with pytest.raises(PTXError, match="numba-cuda PTX of body.*device functions.*debug=True"):
            jit(debug=True, opt=False)(body)[1, 1](x, x.copy())

        def hmul(a, b):
            b[0] = cuda.fp16.hmul(a[0], a[0])

        with pytest.raises(GpusimError, match="calls .*hmul.*no linker"):
            jit(hmul)[1, 1](x.astype(np.float16), x.astype(np.float16))


def test_device_functions_with_and_without_signature():
    @jit("float32(float32)", device=True)          # compiled at decoration, for the current device: no GPU
    def square(v):
        return v * v

    @jit(device=True)
    def inc(v):
        return v + float32(1)

    @jit
    def apply(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = inc(square(a[i]))

    a = np.arange(-3, 5, dtype=np.float32)
    ro = a.copy()
    ro.flags.writeable = False                      # typed read-only; not copied back
    out = np.zeros_like(a)
    with gpusim.Device("h100"):
        apply[1, 32](ro, out)
    assert np.array_equal(out, a * a + 1) and str(apply.argument_types((ro, out))[0]).startswith("readonly")
