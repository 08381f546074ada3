"""CuPy's ElementwiseKernel and ReductionKernel on gpusim (issue #27, part 2): CuPy's signatures and call
conventions, outputs exact against numpy, and named errors."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.errors import GpusimError

pytest.importorskip("cuda.bindings.nvrtc", reason="needs gpusim[cuda] (cuda-bindings, nvidia-cuda-nvrtc)")


@pytest.fixture(autouse=True)
def _device(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path / "kernel_cache"))
    with gpusim.Device("h100") as d:
        yield d


def test_typed_elementwise_allocates_its_output():
    add = gpusim.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "add")
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    z = add(gpusim.asarray(x), y)  # a host array is copied in, as CuPy would refuse; gpusim accepts both
    assert isinstance(z, gpusim.ndarray) and z.dtype == np.float32
    np.testing.assert_array_equal(z.get(), x + y)


def test_placeholder_binds_from_the_array_and_casts_python_scalars():
    k = gpusim.ElementwiseKernel("T x, T y", "T z", "z = x * x + y", "sq_add")
    x = np.arange(-5, 5, dtype=np.int32)
    z = k(gpusim.asarray(x), 3)
    assert z.dtype == np.int32
    np.testing.assert_array_equal(z.get(), x * x + 3)
    z64 = k(gpusim.asarray(np.arange(4.0)), 0.5)
    np.testing.assert_array_equal(z64.get(), np.arange(4.0) ** 2 + 0.5)


def test_raw_arrays_index_with_i_and_ind_size():
    rev = gpusim.ElementwiseKernel("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "rev_add")
    x, y = np.arange(7, dtype=np.int64), np.arange(7, dtype=np.int64) * 10
    np.testing.assert_array_equal(rev(gpusim.asarray(x), gpusim.asarray(y)).get(), x + y[::-1])
    fill = gpusim.ElementwiseKernel("", "raw int32 out", "out[i] = (int)(i * i)", "squares", no_return=True)
    out = gpusim.zeros(9, np.int32)
    assert fill(out, size=9) is None
    np.testing.assert_array_equal(out.get(), np.arange(9) ** 2)


def test_given_output_is_written_in_place_and_checked():
    k = gpusim.ElementwiseKernel("float64 x", "float64 y", "y = 2 * x", "twice")
    out = gpusim.zeros(5, np.float64)
    assert k(gpusim.asarray(np.arange(5.0)), out) is out
    np.testing.assert_array_equal(out.get(), 2 * np.arange(5.0))
    with pytest.raises(GpusimError, match=r"output 'y' has shape \(4,\)"):
        k(gpusim.asarray(np.arange(5.0)), gpusim.zeros(4, np.float64))


def test_broadcasting_and_two_outputs():
    k = gpusim.ElementwiseKernel("int32 a, int32 b", "int32 s, int32 d", "s = a + b; d = a - b", "sum_diff")
    a, b = np.arange(4, dtype=np.int32).reshape(4, 1), np.arange(5, dtype=np.int32).reshape(1, 5) * 10
    s, d = k(gpusim.asarray(a), gpusim.asarray(b))
    assert s.shape == d.shape == (4, 5)
    np.testing.assert_array_equal(s.get(), a + b)
    np.testing.assert_array_equal(d.get(), a - b)
    one = gpusim.ElementwiseKernel("int32 a", "int32 b", "b = -a", "neg", return_tuple=True)
    (neg,) = one(gpusim.asarray(a))
    np.testing.assert_array_equal(neg.get(), -a)


@pytest.mark.parametrize("args, rule", [
    (("float32 x, float32", "float32 y", "y = x"), "not '\\[raw\\] TYPE NAME'"),
    (("complex64 x", "complex64 y", "y = x"), "not complex64"),
    (("float32 x", "float32 x", "x = x"), "both an input and an output"),
])
def test_malformed_parameter_lists_are_named(args, rule):
    with pytest.raises(GpusimError, match=rule):
        gpusim.ElementwiseKernel(*args)


def test_placeholder_bound_twice_is_an_error():
    k = gpusim.ElementwiseKernel("T x, T y", "T z", "z = x + y", "add_t")
    with pytest.raises(GpusimError, match="binds T to float32, but an earlier argument bound it to int32"):
        k(gpusim.asarray(np.zeros(3, np.int32)), gpusim.asarray(np.zeros(3, np.float32)))


def test_full_reduction_is_a_0d_array_and_exact_on_integers():
    total = gpusim.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sum_all")
    x = np.random.default_rng(2).integers(-10**6, 10**6, 3001, dtype=np.int64)
    y = total(gpusim.asarray(x))
    assert y.shape == () and y.dtype == np.int64
    assert int(y.get()) == int(x.sum())


def test_axis_reductions_with_keepdims():
    mx = gpusim.ReductionKernel("int32 x", "int32 m", "x", "max(a, b)", "m = a", "-2147483647 - 1", "imax")
    w = np.random.default_rng(3).integers(-1000, 1000, (7, 33, 5), dtype=np.int32)
    for axis, keep in (((0, 2), True), (1, False), (-1, False), (None, True)):
        got = mx(gpusim.asarray(w), axis=axis, keepdims=keep).get()
        np.testing.assert_array_equal(got, w.max(axis=axis, keepdims=keep), err_msg=f"axis={axis}")
    with pytest.raises(GpusimError, match="axis 3 is out of range for 3 dimension"):
        mx(gpusim.asarray(w), axis=3)


def test_dot_product_with_reduce_type_and_post_map():
    """Squares of small integers add exactly in float32; the post map takes the square root."""
    norm = gpusim.ReductionKernel("T x, T y", "float32 r", "x * y", "a + b", "r = sqrtf(a)", "0", "l2norm",
                                  reduce_type="float32")
    v = np.arange(64, dtype=np.float32).reshape(2, 32)
    got = norm(gpusim.asarray(v), gpusim.asarray(v), axis=1).get()
    np.testing.assert_array_equal(got, np.sqrt((v * v).sum(axis=1)).astype(np.float32))
