"""Arrays in simulated global memory, mirroring the part of ``cupy.ndarray``
that kernel launches need.

Owns: :class:`ndarray` (a typed, C-contiguous window on one allocation of a
:class:`gpusim.Device`) and the creation functions ``asarray``, ``array``,
``empty``, ``zeros``, ``empty_like``, ``zeros_like``. Imports numpy and the
device; never simpy or cupy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpusim.device import Device, get_device
from gpusim.errors import GpusimError

__all__ = ["ndarray", "asarray", "array", "empty", "zeros", "empty_like", "zeros_like", "asnumpy"]


@dataclass(frozen=True)
class MemoryPointer:
    """Like ``cupy.cuda.MemoryPointer``: ``ptr`` is the device address (int)."""

    ptr: int

    def __int__(self) -> int:
        return self.ptr


class ndarray:
    """A C-contiguous array in the global memory of a simulated device.

    Args:
        shape: int or tuple of ints.
        dtype: a numpy dtype (default float64, as in CuPy).
        memptr: as in ``cupy.ndarray(shape, dtype, memptr)``: view existing device
            memory instead of allocating: a :class:`MemoryPointer` (``x.data``) or a
            :class:`ndarray` (e.g. what ``RawModule.get_global`` returns). Raises
            GpusimError if the view does not fit inside one allocation.
        device: the owning device (default: the current one).

    Only what moves data and feeds kernels is provided: ``get()``, ``set()``,
    ``shape``, ``dtype``, ``size``, ``nbytes``, ``ndim``, ``data.ptr``,
    ``reshape``, ``copy``, ``fill``. Arithmetic is not simulated: do it on
    ``.get()``.
    """

    def __init__(self, shape, dtype=float, memptr=None, *, device: Device | None = None, _alloc=None,
                 _offset: int = 0):
        self.shape = tuple(int(s) for s in ((shape,) if np.isscalar(shape) else shape))
        if any(s < 0 for s in self.shape):
            raise GpusimError(f"negative dimensions are not allowed: {self.shape}")
        self.dtype = np.dtype(dtype)
        self.device = device or get_device()
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * self.dtype.itemsize
        if memptr is not None:
            if isinstance(memptr, ndarray):
                self.device, ptr = memptr.device, memptr.data.ptr
            else:
                ptr = int(memptr.ptr if hasattr(memptr, "ptr") else memptr)
            _alloc = self.device.memory.find(ptr)
            if _alloc is None or ptr + self.nbytes > _alloc.base + _alloc.nbytes:
                raise GpusimError(f"memptr {ptr:#x}: an array of shape {self.shape} and dtype {self.dtype} "
                                  f"({self.nbytes} bytes) does not fit inside one device allocation there")
            _offset = ptr - _alloc.base
        self._alloc = _alloc if _alloc is not None else self.device.memory.allocate(self.nbytes, owner=self)
        self._offset = _offset

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def data(self) -> MemoryPointer:
        """The device address of the first element (``.data.ptr``)."""
        return MemoryPointer(self._alloc.base + self._offset)

    def _bytes(self) -> np.ndarray:
        return self._alloc.data[self._offset:self._offset + self.nbytes]

    def get(self) -> np.ndarray:
        """A numpy copy of the contents (shape ``self.shape``)."""
        return self._bytes().copy().view(self.dtype).reshape(self.shape)

    def set(self, arr) -> None:
        """Copy a host array of the same shape into this array."""
        arr = np.ascontiguousarray(arr, dtype=self.dtype)
        if arr.shape != self.shape:
            raise GpusimError(f"set(): shape {arr.shape} does not match the array's shape {self.shape}")
        self._bytes()[...] = arr.reshape(-1).view(np.uint8)

    def fill(self, value) -> None:
        """Set every element to ``value``."""
        self.set(np.full(self.shape, value, self.dtype))

    def copy(self) -> "ndarray":
        """A new array with the same contents, on the same device."""
        out = ndarray(self.shape, self.dtype, device=self.device)
        out._bytes()[...] = self._bytes()
        return out

    def reshape(self, *shape) -> "ndarray":
        """A view with another shape (same memory); one dimension may be -1."""
        shape = tuple(int(s) for s in (shape[0] if len(shape) == 1 and not np.isscalar(shape[0]) else shape))
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if shape.count(-1) == 1 and known and self.size % known == 0:
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        if -1 in shape or int(np.prod(shape, dtype=np.int64)) != self.size:
            raise GpusimError(f"cannot reshape an array of size {self.size} into shape {shape}")
        return ndarray(shape, self.dtype, device=self.device, _alloc=self._alloc, _offset=self._offset)

    def ravel(self) -> "ndarray":
        return self.reshape(-1)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"gpusim.ndarray(shape={self.shape}, dtype={self.dtype}, ptr={self.data.ptr:#x})"


def asarray(a, dtype=None) -> ndarray:
    """Copy a host array (or anything numpy accepts) to the current device.
    A :class:`ndarray` of the requested dtype is returned as is."""
    if isinstance(a, ndarray) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    host = a.get() if isinstance(a, ndarray) else a
    host = np.ascontiguousarray(host, dtype=dtype)
    out = ndarray(host.shape, host.dtype)
    out.set(host)
    return out


array = asarray


def empty(shape, dtype=float) -> ndarray:
    """An array on the current device. Like device memory from cudaMalloc it
    is not meaningful before it is written; here it holds zeros."""
    return ndarray(shape, dtype)


def zeros(shape, dtype=float) -> ndarray:
    """A zero-filled array on the current device."""
    return ndarray(shape, dtype)


def empty_like(a: ndarray, dtype=None) -> ndarray:
    return ndarray(a.shape, dtype or a.dtype)


def zeros_like(a: ndarray, dtype=None) -> ndarray:
    return ndarray(a.shape, dtype or a.dtype)


def asnumpy(a) -> np.ndarray:
    """Like ``cupy.asnumpy``: a host copy of ``a``."""
    return a.get() if isinstance(a, ndarray) else np.asarray(a)
