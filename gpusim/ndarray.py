"""Arrays in simulated global memory, mirroring ``cupy.ndarray``: views, indexing, creation.

Owns: :class:`ndarray`, a (device allocation, byte offset, shape, byte strides, dtype) view of
one allocation of a :class:`gpusim.Device`, as a CuPy array is; its basic indexing, slicing and
reshaping (views sharing memory, with numpy's and CuPy's rules), host transfers, and the creation
functions (``asarray``, ``array``, ``empty``, ``zeros``, ``ones``, ``full``, ``arange``, the
``*_like`` forms, ``ascontiguousarray``, ``asnumpy``). Every layout rule is numpy's own: an
operation is applied to a numpy array over the allocation's bytes with the view's offset, shape
and strides, and the result's layout is read back, so ``x[2:5]``, ``x.T`` or ``x.view(np.uint32)``
give exactly numpy's (and CuPy's) shape, strides and offset. Data movement and element-wise
assignment happen on the host, through that numpy array. Arithmetic is not simulated.

Imports numpy, the device and gpusim.errors; never simpy or cupy.
"""

from __future__ import annotations

import math
import operator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from gpusim.device import Device, get_device
from gpusim.errors import ArrayIndexError, GpusimError, OutOfMemoryError

__all__ = ["ndarray", "MemoryPointer", "Flags", "asarray", "array", "ascontiguousarray", "empty", "zeros", "ones",
           "full", "arange", "empty_like", "zeros_like", "ones_like", "full_like", "asnumpy"]


@dataclass(frozen=True)
class MemoryPointer:
    """Like ``cupy.cuda.MemoryPointer``: ``ptr`` is the device address (int). ``ptr + n``
    (``MemoryPointer + int``) is the address ``n`` bytes on, as in CuPy; the pointer keeps the
    array it came from alive."""

    ptr: int
    _owner: Any = field(default=None, compare=False, repr=False)

    def __int__(self) -> int:
        return self.ptr

    def __add__(self, offset: int) -> "MemoryPointer":
        return MemoryPointer(self.ptr + operator.index(offset), self._owner)

    def __sub__(self, offset: int) -> "MemoryPointer":
        return MemoryPointer(self.ptr - operator.index(offset), self._owner)


class Flags:
    """``x.flags`` as CuPy has it: ``c_contiguous``, ``f_contiguous``, ``owndata`` (attributes, or
    ``flags["C_CONTIGUOUS"]``). Contiguity follows numpy's relaxed rule (axes of length 1 and
    empty arrays do not break it)."""

    def __init__(self, c_contiguous: bool, f_contiguous: bool, owndata: bool):
        self.c_contiguous, self.f_contiguous, self.owndata = c_contiguous, f_contiguous, owndata

    def __getitem__(self, name: str) -> bool:
        key = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
               "F": "f_contiguous", "OWNDATA": "owndata"}.get(str(name).upper())
        if key is None:
            raise KeyError(name)
        return getattr(self, key)

    def __repr__(self) -> str:
        return "\n".join(f"  {k.upper()} : {getattr(self, k)}" for k in ("c_contiguous", "f_contiguous", "owndata"))


# ---------------------------------------------------------------------- argument checks
def _dim(v, what: str) -> int:
    """One dimension: an integer (Python, numpy), never a float or bool. Raises GpusimError naming ``what``."""
    if isinstance(v, (bool, np.bool_)) or not hasattr(v, "__index__"):
        raise GpusimError(f"{what}: {v!r} is a {type(v).__name__}, not an integer")
    return operator.index(v)


def _shape_arg(shape, what: str = "shape", allow_minus_one: bool = False) -> tuple[int, ...]:
    """A shape argument (an int or a sequence of ints) as a tuple. Raises GpusimError naming ``what``
    (e.g. ``"zeros(shape)"``) for a float or bool dimension, a negative one (but -1 where
    ``allow_minus_one``), or a non-sequence."""
    what = f"{what[:-1]}={shape!r})" if what.endswith(")") else f"{what}={shape!r}"
    if isinstance(shape, ndarray):
        raise GpusimError(f"{what}: got a gpusim.ndarray; pass a tuple of ints")
    if hasattr(shape, "__index__") or isinstance(shape, (float, np.floating, bool, np.bool_)):
        items = (shape,)
    else:
        try:
            items = tuple(shape)
        except TypeError:
            raise GpusimError(f"{what}: {shape!r} is not an int or a sequence of ints") from None
    dims = tuple(_dim(v, what) for v in items)
    for d in dims:
        if d < 0 and not (allow_minus_one and d == -1):
            raise GpusimError(f"{what}: negative dimensions are not allowed")
    return dims


def _dtype_arg(dtype, what: str = "dtype") -> np.dtype:
    """A numpy dtype of fixed-size values device memory can hold. Raises GpusimError naming ``what``."""
    what = f"{what[:-1]}={dtype!r})" if what.endswith(")") else f"{what}={dtype!r}"
    if isinstance(dtype, (int, float, np.number)) and not isinstance(dtype, type):
        raise GpusimError(f"{what}: not a data type (pass e.g. np.float32 or 'int32')")
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError) as exc:
        raise GpusimError(f"{what}: not a data type ({exc})") from None
    if dt.hasobject or dt.kind in "OSU" or dt.itemsize == 0:
        raise GpusimError(f"{what}: {dt} cannot live in device memory (numbers and fixed-size records only)")
    return dt


def _order_arg(order, allowed: str, what: str) -> str:
    o = "C" if order is None and "K" not in allowed else "K" if order is None else str(order).upper()
    if o not in allowed:
        raise GpusimError(f"{what}: order={order!r} is not one of {', '.join(repr(a) for a in allowed)}")
    return o


def _contiguous_strides(shape: tuple[int, ...], itemsize: int, order: str) -> tuple[int, ...]:
    strides, step = [0] * len(shape), itemsize
    axes = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for k in axes:
        strides[k] = step
        step *= max(shape[k], 1)
    return tuple(strides)


def _extent(shape, strides, itemsize: int) -> tuple[int, int]:
    """Bytes before and after (exclusive) the first element that a view covers: (lo <= 0, hi > 0)."""
    if any(s == 0 for s in shape):
        return 0, 0
    lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0) + itemsize
    return lo, hi


@contextmanager
def _numpy_rules(what: str):
    """Report numpy's refusal of an operation as a GpusimError naming ``what``."""
    try:
        yield
    except GpusimError:
        raise
    except IndexError as exc:  # numpy's AxisError is an IndexError too
        raise ArrayIndexError(f"{what}: {exc}") from None
    except (ValueError, TypeError, OverflowError) as exc:  # OverflowError: a Python int beyond a C long or the dtype
        raise GpusimError(f"{what}: {exc}") from None
    except MemoryError as exc:  # a host-side temporary numpy cannot allocate
        raise OutOfMemoryError(f"{what}: the host running the simulation cannot hold it ({exc})") from None


def _check_capacity(device: Device, nbytes: int, what: str) -> None:
    """OutOfMemoryError when ``nbytes`` more do not fit in the device's memory (``dram.capacity_bytes``)."""
    cap = getattr(device.config.dram, "capacity_bytes", None)
    in_use = sum(a.nbytes for a in device.memory.allocations)
    if cap is not None and in_use + nbytes > cap:
        raise OutOfMemoryError(f"cudaErrorMemoryAllocation: {what}: out of memory allocating {nbytes:,} bytes "
                               f"(allocated so far: {in_use:,} bytes) on {device.config.name}, whose device memory "
                               f"holds {cap:,} bytes (dram.capacity_bytes)")


def _allocate(device: Device, nbytes: int, owner: object):
    """An allocation of ``nbytes`` on ``device`` freed with ``owner``, or an OutOfMemoryError named as
    CUDA names it when the device's memory (``dram.capacity_bytes``) or the host cannot hold it."""
    cfg = device.config
    cap = getattr(cfg.dram, "capacity_bytes", None)
    in_use = sum(a.nbytes for a in device.memory.allocations)
    if cap is not None and in_use + nbytes > cap:
        raise OutOfMemoryError(f"cudaErrorMemoryAllocation: out of memory allocating {nbytes:,} bytes (allocated so "
                               f"far: {in_use:,} bytes) on {cfg.name}, whose device memory holds {cap:,} bytes "
                               f"(dram.capacity_bytes)")
    try:
        return device.memory.allocate(nbytes, owner=owner)
    except (MemoryError, ValueError) as exc:
        raise OutOfMemoryError(f"cudaErrorMemoryAllocation: out of memory allocating {nbytes:,} bytes (allocated so "
                               f"far: {in_use:,} bytes): the host running the simulation cannot hold them "
                               f"({type(exc).__name__}: {exc})") from None


def _is_basic(key: tuple) -> bool:
    """Whether an index tuple is basic indexing (ints, slices, ``...``, ``None``): a view."""
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice):
            continue
        if isinstance(k, (bool, np.bool_, np.ndarray, ndarray, list)) or not hasattr(k, "__index__"):
            return False
    return True


def _host_key(key) -> Any:
    """An index with gpusim arrays (integer or boolean index arrays) replaced by host copies."""
    if isinstance(key, ndarray):
        return key.get()
    if isinstance(key, tuple):
        return tuple(k.get() if isinstance(k, ndarray) else k for k in key)
    return key


def _host_value(value) -> Any:
    return value.get() if isinstance(value, ndarray) else value


# ---------------------------------------------------------------------- the array
class ndarray:
    """An array in the global memory of a simulated device, like ``cupy.ndarray``: a view
    (allocation, byte offset, shape, byte strides, dtype) of one device allocation.

    Args:
        shape: an int or a tuple of ints (>= 0).
        dtype: a numpy dtype (default float64, as in CuPy).
        memptr: as in ``cupy.ndarray(shape, dtype, memptr)``: view existing device memory instead of
            allocating: a :class:`MemoryPointer` (``x.data``, ``x.data + 16``), an int address, or a
            :class:`ndarray` (e.g. what ``RawModule.get_global`` returns).
        strides: byte strides (with ``memptr`` only); default the contiguous strides of ``order``.
        order: ``'C'`` (row-major, default) or ``'F'`` (column-major) for the default strides.
        device: the owning device (default: the current one).

    A new array (no ``memptr``) owns a fresh, zero-filled allocation. Indexing with ints, slices
    (steps, negative too), ``...`` and ``None`` returns a view sharing memory (``x[2:5]``, ``x[::-2]``,
    ``x[:, None]``; a single element is a 0-d view, as in CuPy); integer-array and boolean indexing
    returns a copy, as CuPy does. ``x[key] = value`` writes scalars, gpusim arrays and host arrays
    through any index (numpy's broadcasting and casting). Kernels get ``x.data.ptr``: the address of
    the view's first element (``x[16:]`` passes the base address plus 16 elements), as on a GPU.

    Attributes/properties: ``shape``, ``dtype``, ``strides`` (bytes), ``itemsize``, ``size``,
    ``nbytes``, ``ndim``, ``flags``, ``base`` (the array owning the memory, for views; else None),
    ``data`` (a :class:`MemoryPointer`), ``device``, ``T``, ``__cuda_array_interface__``.

    Raises:
        GpusimError: a float, bool or negative dimension (names ``shape``); a dtype that is not a
            numeric type (names ``dtype``); a ``memptr`` view that does not fit in one allocation.
        OutOfMemoryError: the allocation exceeds the device's memory (``dram.capacity_bytes``:
            ``cudaErrorMemoryAllocation``) or the host's.
    """

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C", *, device: Device | None = None,
                 _what: str = "ndarray"):
        shape = _shape_arg(shape, f"{_what}(shape)")
        dtype = _dtype_arg(dtype, f"{_what}(dtype)")
        order = _order_arg(order, "CF", "ndarray")
        self._keep = None
        if memptr is None:
            if strides is not None:
                raise GpusimError("ndarray(strides=...) views existing memory: pass memptr= too")
            self.device = device or get_device()
            alloc, offset = _allocate(self.device, math.prod(shape) * dtype.itemsize, self), 0
        else:
            if isinstance(memptr, ndarray):
                self.device, ptr, self._keep = memptr.device, memptr.data.ptr, memptr._owner()
            else:
                self.device = device or get_device()
                ptr = int(memptr.ptr if hasattr(memptr, "ptr") else operator.index(memptr))
                self._keep = getattr(memptr, "_owner", None)
            alloc = self.device.memory.find(ptr)
            offset = ptr - alloc.base if alloc is not None else 0
        if strides is None:
            strides = _contiguous_strides(shape, dtype.itemsize, order)
        else:
            strides = (strides,) if hasattr(strides, "__index__") else tuple(strides)
            strides = tuple(_dim(s, f"ndarray(strides={strides!r})") for s in strides)
            if len(strides) != len(shape):
                raise GpusimError(f"ndarray(strides={strides}): {len(strides)} strides for {len(shape)} dimensions")
        if memptr is not None:
            lo, hi = _extent(shape, strides, dtype.itemsize)
            if alloc is None or offset + lo < 0 or offset + hi > alloc.nbytes:
                raise GpusimError(f"memptr {ptr:#x}: an array of shape {shape}, strides {strides} and dtype {dtype} "
                                  f"(bytes {lo}..{hi} around the pointer) does not fit inside one device "
                                  f"allocation there")
        self._alloc, self._offset, self._shape, self._strides, self._dtype = alloc, offset, shape, strides, dtype
        self._base: ndarray | None = None

    @classmethod
    def _make(cls, device: Device, alloc, offset: int, shape, strides, dtype, base: "ndarray | None") -> "ndarray":
        """A view on ``alloc`` (no checks: the caller got the layout from numpy)."""
        self = object.__new__(cls)
        self.device, self._alloc, self._offset = device, alloc, int(offset)
        self._shape, self._strides, self._dtype = tuple(shape), tuple(strides), np.dtype(dtype)
        self._base, self._keep = base, None
        return self

    # ------------------------------------------------------------ layout
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @shape.setter
    def shape(self, new) -> None:
        """In-place reshape, allowed only where no copy is needed (numpy's rule)."""
        h, what = self._host().view(), f"setting shape {new!r} of an array of shape {self._shape}"
        with _numpy_rules(what):
            try:
                h.shape = _shape_arg(new, "shape", allow_minus_one=True)
            except AttributeError as exc:  # numpy's refusal to copy
                raise GpusimError(f"{what}: {exc}") from None
        self._shape, self._strides = h.shape, h.strides

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def strides(self) -> tuple[int, ...]:
        """Bytes from one element to the next along each axis (may be negative or 0)."""
        return self._strides

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return math.prod(self._shape)

    @property
    def nbytes(self) -> int:
        return self.size * self._dtype.itemsize

    @property
    def base(self) -> "ndarray | None":
        """The array that owns the memory of a view (as CuPy: never a view itself), else None."""
        return self._base

    @property
    def flags(self) -> Flags:
        h = self._host()
        return Flags(bool(h.flags.c_contiguous), bool(h.flags.f_contiguous), self._base is None)

    @property
    def data(self) -> MemoryPointer:
        """The device address of the first element (``.data.ptr``): the allocation's base plus the view's offset."""
        return MemoryPointer(self._alloc.base + self._offset, self._owner())

    @property
    def T(self) -> "ndarray":
        return self.transpose()

    @property
    def __cuda_array_interface__(self) -> dict:
        """Version 3 of the CUDA Array Interface: ``shape``, ``typestr``, ``descr``, ``data``
        ``(ptr, read_only=False)`` (0 for an empty array), ``strides`` (None when C-contiguous), ``version``."""
        return {"shape": self._shape, "typestr": self._dtype.str, "descr": self._dtype.descr,
                "data": (self.data.ptr if self.size else 0, False),
                "strides": None if self.flags.c_contiguous else self._strides, "version": 3}

    # ------------------------------------------------------------ host side
    def _host(self) -> np.ndarray:
        """A numpy array over the allocation's bytes with this view's layout (writes land in device memory)."""
        offset = self._offset if self.size else 0  # an empty view's offset may lie past the end, as numpy's may
        return np.ndarray(self._shape, self._dtype, buffer=self._alloc.data, offset=offset, strides=self._strides)

    def _bytes(self) -> np.ndarray:
        """The bytes of a C-contiguous array (a uint8 window on the allocation, no copy)."""
        if not self.flags.c_contiguous:
            raise GpusimError("internal: _bytes() of a non-contiguous view")
        return self._alloc.data[self._offset:self._offset + self.nbytes]

    def _owner(self) -> "ndarray":
        """The array whose collection frees this one's memory (``base``, or itself)."""
        return self if self._base is None else self._base

    def _wrap(self, r: np.ndarray) -> "ndarray":
        """``r``, the result of a numpy operation on :meth:`_host`: a view of the same memory if numpy
        made one, else a new device array holding its values."""
        root = r
        while root is not None and root is not self._alloc.data:
            root = root.base if isinstance(root, np.ndarray) else None
        if root is None:
            return _upload(r, self.device, "K")
        offset = r.__array_interface__["data"][0] - self._alloc.data.__array_interface__["data"][0]
        return ndarray._make(self.device, self._alloc, offset, r.shape, r.strides, r.dtype, self._owner())

    def get(self, stream=None, order: str = "C", out: np.ndarray | None = None, blocking: bool = True) -> np.ndarray:
        """A host (numpy) copy of the contents, shape ``self.shape``, in ``order`` ('C', 'F' or 'A');
        into ``out`` (a numpy array of the same shape and dtype) if given."""
        h = self._host()
        if out is not None:
            if not isinstance(out, np.ndarray) or out.shape != self._shape or out.dtype != self._dtype:
                raise GpusimError(f"get(out=...): out must be a numpy array of shape {self._shape} and dtype "
                                  f"{self._dtype}")
            out[...] = h
            return out
        return np.array(h, order=_order_arg(order, "CFA", "get()"), copy=True)

    def set(self, arr, stream=None) -> None:
        """Copy a host array of the same shape into this array (or view), cast to its dtype."""
        with _numpy_rules("set()"):
            arr = np.asarray(_host_value(arr))
        if arr.shape != self._shape:
            raise GpusimError(f"set(): shape {arr.shape} does not match the array's shape {self._shape}")
        with _numpy_rules("set()"):
            self._host()[...] = arr

    def fill(self, value) -> None:
        """Set every element (of the view) to ``value``, cast to the dtype."""
        with _numpy_rules("fill()"):
            self._host()[...] = _host_value(value)

    def item(self):
        """The one element of a size-1 array, as a Python scalar."""
        if self.size != 1:
            raise GpusimError(f"item(): the array has {self.size} elements, not 1")
        return self._host().item()

    def tolist(self):
        """The contents as nested Python lists (numpy's ``tolist``)."""
        return self._host().tolist()

    def __bool__(self) -> bool:
        """The truth of a one-element array (numpy's rule: more elements raise GpusimError)."""
        with _numpy_rules("bool() of a gpusim.ndarray"):
            return bool(self._host())

    def __int__(self) -> int:
        with _numpy_rules("int() of a gpusim.ndarray"):
            return int(self._host())

    def __float__(self) -> float:
        with _numpy_rules("float() of a gpusim.ndarray"):
            return float(self._host())

    # ------------------------------------------------------------ indexing
    def __getitem__(self, key) -> "ndarray":
        """Basic indexing returns a view (a 0-d view for one element); advanced indexing a copy."""
        key = _host_key(key)
        items = key if isinstance(key, tuple) else (key,)
        h = self._host()
        with _numpy_rules(f"index {key!r} of an array of shape {self._shape}"):
            if _is_basic(items):
                return self._wrap(h[items if any(k is Ellipsis for k in items) else items + (Ellipsis,)])
            return _upload(np.asarray(h[key]), self.device, "C")

    def __setitem__(self, key, value) -> None:
        """Write a scalar, a gpusim array or a host array into the elements ``key`` selects (any index;
        numpy's broadcasting and casting)."""
        key, value = _host_key(key), _host_value(value)
        with _numpy_rules(f"assignment to index {key!r} of an array of shape {self._shape}"):
            self._host()[key] = value

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of unsized object (a 0-d gpusim.ndarray)")
        return self._shape[0]

    def __iter__(self) -> Iterator["ndarray"]:
        """Views of the sub-arrays along the first axis (as CuPy iterates)."""
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._shape[0]))

    # ------------------------------------------------------------ views and copies
    def reshape(self, *shape, order: str = "C") -> "ndarray":
        """The same elements in another shape: a view when the layout allows (always for a contiguous
        array), else a copy, as numpy decides. One dimension may be -1. Raises GpusimError when the
        sizes differ."""
        shape = shape[0] if len(shape) == 1 and not hasattr(shape[0], "__index__") else shape
        asked = _shape_arg(shape, "reshape(shape)", allow_minus_one=True)
        known = math.prod(s for s in asked if s != -1)
        shape = asked
        if asked.count(-1) == 1 and known and self.size % known == 0:
            shape = tuple(self.size // known if s == -1 else s for s in asked)
        if -1 in shape or math.prod(shape) != self.size:
            raise GpusimError(f"cannot reshape an array of size {self.size} into shape {shape}")
        with _numpy_rules("reshape()"):  # numpy is given the -1 too: its strides for length-1 axes depend on it
            return self._wrap(self._host().reshape(asked, order=_order_arg(order, "CFA", "reshape()")))

    def ravel(self, order: str = "C") -> "ndarray":
        """A 1-D view when the layout allows, else a copy (numpy's rule)."""
        with _numpy_rules("ravel()"):
            return self._wrap(self._host().ravel(order=_order_arg(order, "CFAK", "ravel()")))

    def flatten(self, order: str = "C") -> "ndarray":
        """A 1-D copy."""
        return _upload(self._host().flatten(order=_order_arg(order, "CFAK", "flatten()")), self.device, "C")

    def transpose(self, *axes) -> "ndarray":
        """A view with the axes permuted (reversed without ``axes``)."""
        axes = axes[0] if len(axes) == 1 and (axes[0] is None or not hasattr(axes[0], "__index__")) else axes
        with _numpy_rules(f"transpose({axes!r})"):
            return self._wrap(self._host().transpose(axes or None))

    def swapaxes(self, axis1: int, axis2: int) -> "ndarray":
        """A view with two axes exchanged."""
        with _numpy_rules(f"swapaxes({axis1!r}, {axis2!r})"):
            return self._wrap(self._host().swapaxes(axis1, axis2))

    def squeeze(self, axis=None) -> "ndarray":
        """A view without the length-1 axes (or only those in ``axis``; a longer one raises)."""
        with _numpy_rules(f"squeeze(axis={axis!r})"):
            return self._wrap(self._host().squeeze(axis))

    def view(self, dtype=None) -> "ndarray":
        """The same bytes as another dtype (numpy's rules: with another itemsize the last axis must
        be contiguous and its length in bytes divisible by the new itemsize; its length changes)."""
        if dtype is None:
            return self._wrap(self._host().view())
        dt = _dtype_arg(dtype, "view(dtype)")
        with _numpy_rules(f"view({dt})"):
            return self._wrap(self._host().view(dt))

    def copy(self, order: str = "C") -> "ndarray":
        """A new array (same device) with the same contents; ``order`` 'C', 'F', 'A' or 'K' (numpy's
        meaning; 'K' keeps a Fortran-ordered array Fortran-ordered, anything else becomes C)."""
        order = _order_arg(order, "CFAK", "copy()")
        return _upload(self._host(), self.device, order)

    def astype(self, dtype, order: str = "K", casting=None, subok=None, copy: bool = True) -> "ndarray":
        """A copy cast to ``dtype`` (numpy's casting); ``self`` when ``copy=False`` and nothing changes."""
        dt = _dtype_arg(dtype, "astype(dtype)")
        order = _order_arg(order, "CFAK", "astype()")
        if not copy and dt == self._dtype and (order in "AK" or self.flags[order]):
            return self
        with _numpy_rules(f"astype({dt})"):
            host = self._host().astype(dt, casting=casting or "unsafe")
        return _upload(host, self.device, order)

    # ------------------------------------------------------------ printing
    def __repr__(self) -> str:
        return repr(self._host())

    def __str__(self) -> str:
        return str(self._host())


def _upload(host: np.ndarray, device: Device | None, order: str = "K") -> ndarray:
    """A new device array holding ``host``'s values: Fortran order for ``order='F'``, or for 'K'/'A'
    when ``host`` is Fortran- and not C-contiguous; C order otherwise."""
    fortran = order == "F" or (order in "KA" and host.flags.f_contiguous and not host.flags.c_contiguous)
    out = ndarray(host.shape, host.dtype, order="F" if fortran else "C", device=device)
    out._host()[...] = host
    return out


# ---------------------------------------------------------------------- creation
def asarray(a, dtype=None, order=None) -> ndarray:
    """``a`` on the current device: a :class:`ndarray` of the requested dtype is returned as is (a
    view stays a view, as in CuPy); anything numpy accepts is copied there (Fortran-ordered host
    arrays stay Fortran-ordered, as CuPy's ``order='K'``). Raises GpusimError for an array numpy
    cannot make or a dtype device memory cannot hold."""
    order = _order_arg(order, "CFAK", "asarray()")
    if isinstance(a, ndarray):
        if (dtype is None or _dtype_arg(dtype, "asarray(dtype)") == a.dtype) and (order in "AK" or a.flags[order]):
            return a
        return a.astype(a.dtype if dtype is None else dtype, order=order)
    with _numpy_rules("asarray()"):
        host = np.asarray(a, dtype=None if dtype is None else _dtype_arg(dtype, "asarray(dtype)"))
    _dtype_arg(host.dtype, "asarray(a.dtype)")
    return _upload(host, get_device(), order)


def array(obj, dtype=None, copy: bool = True, order: str = "K") -> ndarray:
    """Like ``cupy.array``: a copy of ``obj`` (a gpusim array, or anything numpy accepts) on the
    current device; ``copy=False`` returns ``obj`` itself when it needs no change."""
    if isinstance(obj, ndarray) and copy:
        return obj.astype(obj.dtype if dtype is None else dtype, order=order)
    return asarray(obj, dtype, order)


def ascontiguousarray(a, dtype=None) -> ndarray:
    """``a`` as a C-contiguous array: itself when it already is one (of ``dtype``), else a copy."""
    return asarray(a, dtype, order="C")


def empty(shape, dtype=float, order: str = "C") -> ndarray:
    """An array on the current device. Like device memory from cudaMalloc it
    is not meaningful before it is written; here it holds zeros."""
    return ndarray(shape, dtype, order=order, _what="empty")


def zeros(shape, dtype=float, order: str = "C") -> ndarray:
    """A zero-filled array on the current device (shape: int or tuple of ints; raises GpusimError for
    a float or negative dimension and OutOfMemoryError beyond the device's memory)."""
    return ndarray(shape, dtype, order=order, _what="zeros")


def ones(shape, dtype=float, order: str = "C") -> ndarray:
    """An array of ones on the current device."""
    return _full(shape, 1, dtype, order, "ones")


def full(shape, fill_value, dtype=None, order: str = "C") -> ndarray:
    """An array filled with ``fill_value`` (dtype: ``fill_value``'s numpy dtype when not given)."""
    return _full(shape, fill_value, dtype, order, "full")


def _full(shape, fill_value, dtype, order: str, what: str) -> ndarray:
    dtype = np.asarray(_host_value(fill_value)).dtype if dtype is None else dtype
    out = ndarray(shape, dtype, order=order, _what=what)
    out.fill(fill_value)
    return out


def arange(start, stop=None, step=1, dtype=None) -> ndarray:
    """``numpy.arange``'s values on the current device (computed on the host). Raises OutOfMemoryError,
    before computing anything, when its length is beyond the device's memory (8 bytes an element)."""
    with _numpy_rules("arange()"):
        lo, hi = (0, start) if stop is None else (start, stop)
        if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
               for v in (lo, hi, step)) and step and math.isfinite(float(hi) - float(lo)):
            _check_capacity(get_device(), max(0, math.ceil((float(hi) - float(lo)) / float(step))) * 8, "arange()")
        host = np.arange(start, stop, step, dtype=None if dtype is None else _dtype_arg(dtype, "arange(dtype)"))
    return _upload(host, get_device(), "C")


def _like(a, dtype, order, shape, what: str = "empty_like") -> ndarray:
    if not isinstance(a, (ndarray, np.ndarray)):
        a = np.asarray(a)
    dtype = a.dtype if dtype is None else dtype
    order = _order_arg(order, "CFAK", f"{what}()")
    if order in "AK":
        order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
    return ndarray(a.shape if shape is None else shape, dtype, order=order, _what=what)


def empty_like(a, dtype=None, order: str = "K", subok=None, shape=None) -> ndarray:
    """An array of ``a``'s shape and dtype (or those given) on the current device; 'K' keeps a
    Fortran-ordered ``a``'s order."""
    return _like(a, dtype, order, shape)


def zeros_like(a, dtype=None, order: str = "K", subok=None, shape=None) -> ndarray:
    """A zero-filled array like ``a`` (see :func:`empty_like`)."""
    return _like(a, dtype, order, shape, "zeros_like")


def ones_like(a, dtype=None, order: str = "K", subok=None, shape=None) -> ndarray:
    """An array of ones like ``a`` (see :func:`empty_like`)."""
    return full_like(a, 1, dtype, order, subok, shape)


def full_like(a, fill_value, dtype=None, order: str = "K", subok=None, shape=None) -> ndarray:
    """An array like ``a`` (see :func:`empty_like`) filled with ``fill_value``."""
    out = _like(a, dtype, order, shape, "full_like")
    out.fill(fill_value)
    return out


def asnumpy(a, stream=None, order: str = "C", out=None) -> np.ndarray:
    """Like ``cupy.asnumpy``: a host copy of ``a``."""
    return a.get(order=order, out=out) if isinstance(a, ndarray) else np.asarray(a, order=order)
