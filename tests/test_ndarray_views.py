"""``gpusim.ndarray`` views with CuPy's semantics (issue #29, part 5).

Every view operation is compared exactly with numpy on the same data: random basic indexes of random
shapes (hypothesis) give numpy's values, shape, strides and byte offset, and writes through a view land
where numpy's land; random chains of view operations (slices, transposes, reshapes, dtype views) keep
numpy's layout and memory sharing. Kernels (a PTX kernel, a Numba kernel, CuPy's ElementwiseKernel and
ReductionKernel) launched on views read and write exactly the view's elements. Bad shapes, dtypes,
indexes and allocations beyond the device's memory raise named GpusimErrors.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpusim
from gpusim.errors import ArrayIndexError, GpusimError, OutOfMemoryError

PTX_DIR = Path(__file__).parent / "functional" / "ptx"
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def _device():
    with gpusim.Device("h100", sass=False) as d:
        yield d


def _offset(a: np.ndarray, base: np.ndarray) -> int:
    return a.__array_interface__["data"][0] - base.__array_interface__["data"][0]


# ----------------------------------------------------------------------------- random basic indexing
shapes = st.lists(st.integers(0, 5), min_size=0, max_size=4).map(tuple)


@st.composite
def shape_and_key(draw):
    shape = draw(shapes)
    items = []
    for n in shape[:draw(st.integers(0, len(shape)))]:
        if n and draw(st.booleans()):
            items.append(draw(st.integers(-n, n - 1)))
        else:
            bound = st.none() | st.integers(-n - 2, n + 2)
            items.append(slice(draw(bound), draw(bound), draw(st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3]))))
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    if draw(st.booleans()):  # an out-of-range integer now and then
        items.append(draw(st.integers(-9, 9)))
    key = items[0] if len(items) == 1 and draw(st.booleans()) else tuple(items)
    return shape, key


@FAST
@given(shape_and_key(), st.integers(0, 2**32 - 1))
def test_basic_index_is_numpys_view_and_writes_land_where_numpys_do(sk, seed):
    shape, key = sk
    rng = np.random.default_rng(seed)
    h = rng.integers(-1000, 1000, size=shape).astype(np.int32)
    d = gpusim.asarray(h)
    try:
        items = key if isinstance(key, tuple) else (key,)
        want = h[items if any(k is Ellipsis for k in items) else items + (Ellipsis,)]  # 0-d view, not a scalar
    except IndexError:
        with pytest.raises(ArrayIndexError) as err:
            d[key]
        assert isinstance(err.value, IndexError) and f"of an array of shape {shape}" in str(err.value)
        return
    assert np.array_equal(h[key], want)
    v = d[key]
    assert isinstance(v, gpusim.ndarray) and v.base is d and v.dtype == np.int32
    assert v.shape == want.shape
    np.testing.assert_array_equal(v.get(), want)
    if want.size:  # (numpy gives empty arrays arbitrary strides)
        assert v.strides == want.strides and v.data.ptr - d.data.ptr == _offset(want, h)
    assert v.flags.c_contiguous == want.flags.c_contiguous and v.flags.f_contiguous == want.flags.f_contiguous
    assert not v.flags.owndata and d.flags.owndata
    # writes through the view: set() of host values, then a scalar through __setitem__ of the base
    vals = rng.integers(-1000, 1000, size=want.shape).astype(np.int32)
    v.set(vals)
    want[...] = vals
    np.testing.assert_array_equal(d.get(), h)
    d[key] = 77
    h[key] = 77
    np.testing.assert_array_equal(d.get(), h)


# ----------------------------------------------------------------------------- random chains of view operations
def _ops(ndim_hint: int):
    ax = st.integers(-4, 3)
    return st.one_of(
        st.tuples(st.just("slice"), ax, st.integers(-3, 3), st.integers(-3, 6),
                  st.sampled_from([-2, -1, 1, 2, 3])),
        st.tuples(st.just("T")),
        st.tuples(st.just("transpose"), st.permutations(range(ndim_hint))),
        st.tuples(st.just("swapaxes"), ax, ax),
        st.tuples(st.just("reshape"), st.sampled_from([(-1,), (2, -1), (-1, 3), (3, 2, -1), (1, -1, 1)])),
        st.tuples(st.just("ravel")),
        st.tuples(st.just("squeeze")),
        st.tuples(st.just("newaxis")),
        st.tuples(st.just("view"), st.sampled_from([np.int16, np.uint32, np.float32, np.int64, np.uint8])),
    )


def _apply(x, op):
    """Apply one operation to a numpy or a gpusim array (the same spelling on both)."""
    kind = op[0]
    if kind == "slice":
        _, axis, start, stop, step = op
        key = [slice(None)] * max(x.ndim, 1)     # a 0-d array: too many indices, on both
        key[axis % max(x.ndim, 1)] = slice(start, stop, step)
        return x[tuple(key)]
    if kind == "T":
        return x.T
    if kind == "transpose":
        return x.transpose(*op[1]) if len(op[1]) == x.ndim else x.transpose()
    if kind == "swapaxes":
        return x.swapaxes(op[1], op[2])
    if kind == "reshape":
        return x.reshape(op[1])
    if kind == "ravel":
        return x.ravel()
    if kind == "squeeze":
        return x.squeeze()
    if kind == "newaxis":
        return x[:, None] if x.ndim else x[None]
    return x.view(op[1])


@FAST
@given(st.sampled_from([(24,), (4, 6), (2, 3, 4), (6, 1, 4), (0, 3)]), st.data())
def test_chains_of_view_operations_keep_numpys_layout_and_sharing(shape, data):
    h = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) * 3 + 1
    d = gpusim.asarray(h)
    hx, dx = h, d
    for op in data.draw(st.lists(_ops(len(shape)), min_size=1, max_size=5)):
        try:
            hy = _apply(hx, op)
        except (ValueError, IndexError, TypeError):
            with pytest.raises(GpusimError):
                _apply(dx, op)
            break
        dy = _apply(dx, op)
        assert dy.shape == hy.shape and dy.dtype == hy.dtype
        np.testing.assert_array_equal(dy.get(), hy)
        root = hy
        while root.base is not None:
            root = root.base
        assert (dy._alloc is d._alloc) == (root is h), op    # a view exactly where numpy makes one
        if root is h and hy.size:
            assert dy.strides == hy.strides and dy.data.ptr - d.data.ptr == _offset(hy, h), op
        hx, dx = hy, dy
    # a write through the last view lands where numpy's lands
    if hx.size and np.shares_memory(hx, h):
        hx[...] = np.arange(hx.size, dtype=hx.dtype).reshape(hx.shape)
        dx[...] = np.arange(hx.size, dtype=hx.dtype).reshape(hx.shape)
        np.testing.assert_array_equal(d.get(), h)


def test_reshape_copies_when_numpy_must_and_views_otherwise():
    h = np.arange(24, dtype=np.float32).reshape(4, 6)
    d = gpusim.asarray(h)
    v = d.reshape(2, 12)
    assert v.base is d and v.data.ptr == d.data.ptr
    t = d.T.reshape(-1)                      # not expressible with strides: a copy
    assert t.base is None and t.flags.owndata
    np.testing.assert_array_equal(t.get(), h.T.reshape(-1))
    s = d[:, ::2].reshape(2, 2, 3)           # a strided view numpy can still reshape
    assert s.base is d and s.strides == h[:, ::2].reshape(2, 2, 3).strides
    f = d.reshape(6, 4, order="F")
    np.testing.assert_array_equal(f.get(), h.reshape(6, 4, order="F"))
    assert d.flatten().base is None and d.ravel().base is d and d[:, 1].ravel().base is None
    with pytest.raises(GpusimError, match=r"cannot reshape an array of size 24 into shape \(5, -1\)"):
        d.reshape(5, -1)
    with pytest.raises(GpusimError, match=r"reshape\(shape=\(2.5, -1\)\): 2.5 is a float, not an integer"):
        d.reshape(2.5, -1)
    x = gpusim.zeros((4, 6))
    x.shape = (3, 8)
    assert x.shape == (3, 8) and x.strides == (64, 8)
    with pytest.raises(GpusimError, match=r"setting shape"):
        x.T.shape = (24,)


def test_views_of_other_dtypes_follow_numpys_last_axis_rule():
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = gpusim.asarray(h)
    u = d.view(np.uint32)
    np.testing.assert_array_equal(u.get(), h.view(np.uint32))
    b = d.view(np.uint8)
    assert b.shape == (3, 16) and b.strides == (16, 1)
    w = d.view(np.float64)
    assert w.shape == (3, 2)
    np.testing.assert_array_equal(w.get(), h.view(np.float64))
    w[1, 0] = 2.5                            # the two float32 of row 1, columns 0-1
    np.testing.assert_array_equal(d.get()[1, :2], np.array([2.5]).view(np.float32))
    with pytest.raises(GpusimError, match=r"view\(float64\)"):
        d[:, ::2].view(np.float64)           # last axis not contiguous
    with pytest.raises(GpusimError, match=r"view\(float64\)"):
        d[:, :3].view(np.float64)            # 12 bytes do not divide into 8
    with pytest.raises(GpusimError, match=r"view\(dtype=.*\): <U4 cannot live in device memory"):
        d.view("U4")


def test_copies_casts_transfers_and_orders():
    h = np.arange(30, dtype=np.int16).reshape(5, 6)
    d = gpusim.asarray(h)
    v = d[1:4, ::-2]
    c = v.copy()
    assert c.flags.c_contiguous and c.base is None and c.data.ptr != v.data.ptr
    np.testing.assert_array_equal(c.get(), h[1:4, ::-2])
    f = v.copy(order="F")
    assert f.flags.f_contiguous and not f.flags.c_contiguous and f.strides == (2, 6)
    np.testing.assert_array_equal(f.get(), h[1:4, ::-2])
    a = v.astype(np.float32)
    assert a.dtype == np.float32 and a.flags.c_contiguous
    np.testing.assert_array_equal(a.get(), h[1:4, ::-2].astype(np.float32))
    assert d.astype(np.int16, copy=False) is d and d.astype(np.int16) is not d
    assert v.get(order="F").flags.f_contiguous
    out = np.empty((3, 3), np.int16)
    assert v.get(out=out) is out and np.array_equal(out, h[1:4, ::-2])
    v.set(np.full((3, 3), -1))
    h[1:4, ::-2] = -1
    np.testing.assert_array_equal(d.get(), h)
    d.T[::2].fill(9)
    h.T[::2] = 9
    np.testing.assert_array_equal(d.get(), h)
    with pytest.raises(GpusimError, match=r"set\(\): shape \(3,\) does not match the array's shape \(3, 3\)"):
        v.set(np.zeros(3))
    # Fortran order survives asarray (CuPy's order='K'); the *_like functions keep it
    hf = np.asfortranarray(h)
    df = gpusim.asarray(hf)
    assert df.flags.f_contiguous and df.strides == hf.strides
    assert gpusim.empty_like(df).strides == hf.strides and gpusim.zeros_like(df, order="C").flags.c_contiguous
    assert gpusim.ascontiguousarray(df).flags.c_contiguous and gpusim.ascontiguousarray(d) is d
    assert gpusim.asarray(v) is v                       # a view stays a view, as in CuPy
    assert gpusim.array(d) is not d and np.array_equal(gpusim.array(d).get(), h)


def test_advanced_indexing_copies_and_assigns_through_the_base():
    h = np.arange(20, dtype=np.float64).reshape(4, 5)
    d = gpusim.asarray(h)
    idx = np.array([3, 0, 3])
    r = d[idx, 1:]
    assert r.base is None                     # a copy, as in CuPy
    np.testing.assert_array_equal(r.get(), h[idx, 1:])
    r.fill(0)
    np.testing.assert_array_equal(d.get(), h)  # the copy does not alias
    mask = h % 3 == 0
    np.testing.assert_array_equal(d[mask].get(), h[mask])
    np.testing.assert_array_equal(d[gpusim.asarray(mask)].get(), h[mask])   # a device mask, too
    d[mask] = -1.0
    d[[0, 2], [4, 4]] = gpusim.asarray(np.array([7.0, 8.0]))
    h[mask] = -1.0
    h[[0, 2], [4, 4]] = [7.0, 8.0]
    np.testing.assert_array_equal(d.get(), h)
    d[1:3, ::2] = h[:2, :3] * 10              # a host array into a view
    h[1:3, ::2] = h[:2, :3] * 10
    np.testing.assert_array_equal(d.get(), h)
    with pytest.raises(ArrayIndexError, match=r"index 9 is out of bounds for axis 1 with size 5"):
        d[[0, 1], 9]
    with pytest.raises(ArrayIndexError, match=r"assignment to index"):
        d[4] = 1.0


def test_array_protocols_len_iter_and_interface():
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = gpusim.asarray(h)
    assert len(d) == 3 and len(d.T) == 4
    rows = list(d)
    assert [r.data.ptr - d.data.ptr for r in rows] == [0, 16, 32] and all(r.base is d for r in rows)
    np.testing.assert_array_equal(np.stack([r.get() for r in d.T]), h.T)
    z = d[1, 2]
    assert z.shape == () and z.item() == 6.0 and z.data.ptr == d.data.ptr + 24
    with pytest.raises(TypeError):
        len(z)
    with pytest.raises(TypeError):
        iter(z)
    cai = d.__cuda_array_interface__
    assert cai == {"shape": (3, 4), "typestr": "<f4", "descr": [("", "<f4")], "data": (d.data.ptr, False),
                   "strides": None, "version": 3}
    vi = d[:, 1::2].__cuda_array_interface__
    assert vi["strides"] == (16, 8) and vi["data"] == (d.data.ptr + 4, False)
    assert gpusim.zeros((0, 3)).__cuda_array_interface__["data"] == (0, False)
    assert repr(d[0]) == repr(h[0]) and str(d[::2]) == str(h[::2])
    assert d.itemsize == 4 and d[:, ::3].nbytes == 24 and d.T.flags["F_CONTIGUOUS"] and not d.T.flags["C"]
    # an ndarray viewing another's memory (memptr) keeps it alive and checks the extent
    m = gpusim.ndarray((2, 2), np.float32, d.data + 8, strides=(16, 4))
    np.testing.assert_array_equal(m.get(), h[:, 2:][:2])
    with pytest.raises(GpusimError, match=r"does not fit inside one device allocation"):
        gpusim.ndarray((3, 3), np.float32, d.data + 8, strides=(16, 4))


def test_creation_functions_equal_numpy():
    for got, want in [
        (gpusim.ones((2, 3), np.int8), np.ones((2, 3), np.int8)),
        (gpusim.ones(4), np.ones(4)),
        (gpusim.full((3,), 2.5, np.float32), np.full((3,), 2.5, np.float32)),
        (gpusim.full(2, 7), np.full(2, 7)),
        (gpusim.arange(10), np.arange(10)),
        (gpusim.arange(1, 2, 0.25, dtype=np.float32), np.arange(1, 2, 0.25, dtype=np.float32)),
        (gpusim.ones_like(np.zeros((2, 2), np.int16)), np.ones((2, 2), np.int16)),
        (gpusim.full_like(gpusim.zeros(3, np.uint8), 200), np.full(3, 200, np.uint8)),
        (gpusim.zeros_like(gpusim.ones((2, 3)), dtype=np.int32), np.zeros((2, 3), np.int32)),
        (gpusim.empty_like(gpusim.ones(2), shape=(4,)), np.zeros(4)),
    ]:
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got.get(), want)
    assert gpusim.full((2, 2), 1, order="F").flags.f_contiguous


# ----------------------------------------------------------------------------- kernels on views
def test_ptx_kernel_reads_and_writes_through_view_pointers():
    """``load_offset`` stores out[i] = in[i + offset] for its 32 threads: launched on ``y[16:]`` with
    ``x[8:]`` it writes y[16:48] = x[8:40] and no other element."""
    k = gpusim.RawModule(path=PTX_DIR / "memory.ptx").get_function("load_offset")
    x = np.arange(64, dtype=np.uint32) * 7 + 3
    dx, dy = gpusim.asarray(x), gpusim.zeros(64, np.uint32)
    k((1,), (32,), (dx[8:], dy[16:], np.uint32(0)))
    want = np.zeros(64, np.uint32)
    want[16:48] = x[8:40]
    np.testing.assert_array_equal(dy.get(), want)
    # a 2-D row view: the pointer is the row's first element
    d2 = gpusim.zeros((4, 32), np.uint32)
    k((1,), (32,), (dx, d2[2], np.uint32(5)))
    want2 = np.zeros((4, 32), np.uint32)
    want2[2] = x[5:37]
    np.testing.assert_array_equal(d2.get(), want2)


def test_numba_kernel_gets_a_views_shape_and_strides():
    pytest.importorskip("numba.cuda.compiler", reason="needs gpusim[numba] (numba-cuda, nvidia-nvvm)")
    from gpusim.frontends.numba import _typeof, jit

    @jit
    def scale(a, out):
        i, j = a.shape[0], a.shape[1]
        out[0], out[1], out[2], out[3] = i, j, a.strides[0], a.strides[1]
        for r in range(i):
            for c in range(j):
                a[r, c] = a[r, c] * 10

    h = np.arange(30, dtype=np.float64).reshape(5, 6)
    d = gpusim.asarray(h)
    v = d[1:4, ::-2]
    meta = np.zeros(4, np.int64)
    scale[1, 1](v, meta)
    assert meta.tolist() == [3, 3, 48, -16]
    assert str(_typeof("scale", 0, v)) == "array(float64, 2d, A)"
    h[1:4, ::-2] *= 10
    np.testing.assert_array_equal(d.get(), h)
    scale[1, 1](d.T, meta)                    # Fortran-contiguous: layout F
    assert meta.tolist() == [6, 5, 8, 48]
    assert str(_typeof("scale", 0, d.T)) == "array(float64, 2d, F)" and str(_typeof("scale", 0, d)).endswith("C)")
    np.testing.assert_array_equal(d.get(), h * 10)


def test_cupy_kernels_take_views(tmp_path, monkeypatch):
    pytest.importorskip("cuda.bindings.nvrtc", reason="needs gpusim[cuda] (cuda-bindings, nvidia-cuda-nvrtc)")
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path / "kernel_cache"))
    dbl = gpusim.ElementwiseKernel("float32 x", "float32 y", "y = x * 2 + 1", "dbl_plus")
    h = np.arange(40, dtype=np.float32).reshape(5, 8)
    d = gpusim.asarray(h)
    out = gpusim.zeros((8, 5), np.float32)
    dbl(d[:, ::-1], out.T)                    # a reversed input and a transposed output view
    np.testing.assert_array_equal(out.get(), (h[:, ::-1] * 2 + 1).T)
    total = gpusim.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sum_rows")
    got = total(d[1:, ::2].T, axis=1)        # a strided, transposed input
    np.testing.assert_array_equal(got.get(), h[1:, ::2].T.sum(axis=1))


# ----------------------------------------------------------------------------- errors
def test_bad_shapes_dtypes_and_allocations_raise_named_errors():
    with pytest.raises(GpusimError, match=r"zeros\(shape=3.5\): 3.5 is a float, not an integer"):
        gpusim.zeros(3.5)
    with pytest.raises(GpusimError, match=r"empty\(shape=\(2, -3\)\): negative dimensions are not allowed"):
        gpusim.empty((2, -3))
    with pytest.raises(GpusimError, match=r"ones\(shape=\(2, True\)\): True is a bool, not an integer"):
        gpusim.ones((2, True))
    with pytest.raises(GpusimError, match=r"zeros\(dtype=2.0\): not a data type"):
        gpusim.zeros(3, 2.0)
    with pytest.raises(GpusimError, match=r"full\(dtype='object'\): object cannot live in device memory"):
        gpusim.full(3, 1, "object")
    with pytest.raises(OutOfMemoryError, match=r"cudaErrorMemoryAllocation: out of memory allocating "
                                               r"8,796,093,022,208 bytes .* 85,017,493,504 bytes \(dram.capacity_bytes\)"):
        gpusim.zeros(2**40)
    try:
        gpusim.zeros(2**40)
    except MemoryError as exc:                # a MemoryError too, like cupy.cuda.memory.OutOfMemoryError
        assert isinstance(exc, GpusimError)
    with gpusim.Device("h100", overrides={"dram.capacity_bytes": 4096}):
        a = gpusim.zeros(3000, np.uint8)
        with pytest.raises(OutOfMemoryError, match=r"allocating 2,000 bytes \(allocated so far: 3,000 bytes\)"):
            gpusim.zeros(2000, np.uint8)
        del a
        assert gpusim.zeros(4000, np.uint8).nbytes == 4000   # freed memory is available again
    d = gpusim.zeros((3, 4))
    for key, msg in [(3, r"index 3 is out of bounds for axis 0 with size 3"), ((0, -5), r"index -5 is out of bounds"),
                     ((0, 0, 0), r"too many indices"), (1.5, r"only integers, slices")]:
        with pytest.raises(ArrayIndexError, match=msg) as err:
            d[key]
        assert isinstance(err.value, IndexError)
    with pytest.raises(GpusimError, match=r"transpose\(\(0, 0\)\)"):
        d.transpose(0, 0)
    with pytest.raises(GpusimError, match=r"squeeze\(axis=0\)"):
        d.squeeze(0)
