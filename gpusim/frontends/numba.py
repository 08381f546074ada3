"""``@numba.cuda.jit`` kernels on gpusim, launched with Numba's syntax: ``kernel[grid, block](args)``.

Owns: :func:`jit` (the decorator, mirroring ``numba.cuda.jit``), :func:`kernel` (adapts an existing
``numba.cuda`` dispatcher) and :class:`NumbaKernel` (what both return): typing the launch arguments as
Numba types them, compiling the Python function with numba-cuda to PTX for the current device's
compute capability (no GPU needed: ``numba.cuda.compile_ptx``, NVVM from the ``nvidia-nvvm`` wheel),
caching the PTX and its parsed module per (argument types, architecture), copying host numpy arrays to
the device and back as Numba does, packing the parameters by Numba's kernel ABI, and launching through
:class:`gpusim.RawKernel`, which checks the launch and runs it in the device's mode.

Numba's kernel ABI (numba-cuda 0.30, ``numba/cuda/dispatcher.py``: ``_Kernel._prepare_args``): every
argument is flattened into consecutive ``.param`` entries.  An array of ``ndim`` dimensions becomes
``3 + 2 * ndim + 2`` of them, all 8 bytes: ``meminfo`` (0), ``parent`` (0), ``nitems``, ``itemsize``,
``data`` (the device address), ``shape[0..ndim)``, ``strides[0..ndim)`` (bytes).  Integers pass at their
width (``int8`` -> ``.u8``), ``boolean`` as one byte, ``float16`` as its 16 bits, complex numbers as two
floats (real, imaginary), tuples element by element, datetimes as int64.

numba-cuda (the ``numba`` extra) is imported only inside the functions that need it.  Imports the
public API (:mod:`gpusim.device`, :mod:`gpusim.module`, :mod:`gpusim.ndarray`); never simpy or cupy.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import re
from typing import Any, Sequence

import numpy as np

from gpusim.device import get_device
from gpusim.errors import CompileError, GpusimError, LaunchError, PTXError
from gpusim.module import RawKernel, RawModule
from gpusim.ndarray import ndarray

__all__ = ["jit", "kernel", "NumbaKernel", "PTX_VERSION_MAX"]

#: The newest PTX ISA the pinned toolchain accepts (ptxas 13.0 and the GPU machine's CUDA 13.0 driver):
#: NVVM 13.0 (``nvidia-nvvm==13.0.*``) writes ``.version 9.0``; NVVM 13.5 writes 9.5.
PTX_VERSION_MAX = (9, 0)

_INSTALL = 'pip install "gpusim[numba]" (numba-cuda and the nvidia-nvvm==13.0.* wheel)'


def numpy_compat() -> None:
    """Let numba-cuda 0.30 compile under numpy >= 2.5: its array lowering registers an overload of
    ``numpy.row_stack``, which numpy 2.5 removed (an alias of ``vstack``; numba's own CPU target checks for
    it, numba-cuda 0.30.4 does not). With numpy 2.5.2 every compile failed with "module 'numpy' has no
    attribute 'row_stack'" (seen on the GPU machine). Restores the alias where it is missing."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack


def _numba_cuda():
    """``numba.cuda`` (imported here, once it is needed), or a GpusimError saying how to install it."""
    numpy_compat()
    try:
        from numba import cuda
        from numba.cuda import compile_ptx  # noqa: F401  (numba-cuda, not numba's old built-in target)
    except ImportError as exc:
        raise GpusimError(f"gpusim.frontends.numba needs numba-cuda: {_INSTALL} ({exc})") from None
    return cuda


def _is_dispatcher(obj: Any) -> bool:
    try:
        from numba.cuda.dispatcher import CUDADispatcher
    except ImportError:
        return False
    return isinstance(obj, CUDADispatcher)


def jit(func_or_sig=None, device: bool = False, inline="never", forceinline: bool = False, link=(), debug=None,
        opt=None, lineinfo: bool = False, cache: bool = False, launch_bounds=None, lto=None,
        shared_memory_carveout=None, **kws):
    """Compile a Python function as a gpusim kernel, like ``numba.cuda.jit``.

    Forms (as in Numba): ``@jit``, ``@jit()``, ``@jit(fastmath=True, debug=..., opt=..., lineinfo=...,
    launch_bounds=...)``, ``@jit("void(float32[::1], int32)")`` or a list of signatures (compiled at the
    first launch for the device's architecture, and then the only ones accepted, with Numba's conversion
    rules), and ``jit(numba_dispatcher)`` (same as :func:`kernel`).  ``device=True`` returns a real
    ``numba.cuda`` device function (kernels call it; numba-cuda compiles it into their PTX).

    Args:
        func_or_sig: the function, a signature or list of signatures, or an existing dispatcher.
        debug, opt, lineinfo, fastmath (in ``kws``), launch_bounds: passed to numba-cuda as ``numba.cuda.jit``
            does (``launch_bounds`` becomes ``.maxntid``, which gpusim enforces at launch).
        link: refused if not empty: gpusim runs one PTX module and has no linker.
        inline, forceinline, cache, lto, shared_memory_carveout, max_registers (in ``kws``): accepted and
            ignored (they change how the driver links or places the kernel, not what it computes).

    Returns:
        a :class:`NumbaKernel` (or a decorator that makes one; a numba device dispatcher for ``device=True``).

    Raises:
        GpusimError: numba-cuda is not installed (needed at once only for signatures and device functions),
            ``link`` is given, or a kernel signature returns a value.
    """
    if isinstance(func_or_sig, NumbaKernel) or _is_dispatcher(func_or_sig):
        return kernel(func_or_sig)
    if device:
        cuda = _numba_cuda()
        options = dict(device=True, inline=inline, forceinline=forceinline, debug=debug, opt=opt,
                       lineinfo=lineinfo, **kws)
        if func_or_sig is None or callable(func_or_sig):
            return cuda.jit(func_or_sig, **options)
        numba_decorator = cuda.jit(func_or_sig, **options)

        def decorate(func):
            with _compiling_for(_cc(get_device().config.arch)):   # a signature compiles now, for this device
                return numba_decorator(func)
        return decorate
    if link:
        raise GpusimError(f"jit(link={link!r}): gpusim runs one PTX module and cannot link other files; "
                          f"write the linked code as a @cuda.jit(device=True) function instead")
    options = {"debug": debug, "opt": opt, "lineinfo": lineinfo, "fastmath": bool(kws.get("fastmath", False)),
               "launch_bounds": launch_bounds}
    if callable(func_or_sig):
        return NumbaKernel(func_or_sig, options)
    sigs = None if func_or_sig is None else func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]
    return lambda func: NumbaKernel(func, options, sigs)


def kernel(dispatcher) -> "NumbaKernel":
    """Run an existing ``numba.cuda.jit`` kernel on gpusim: ``kernel(my_kernel)[grid, block](args)``.

    Takes the dispatcher's Python function and its options (``debug``, ``opt``, ``lineinfo``,
    ``fastmath``, ``launch_bounds``) and, where it was declared with signatures, those signatures; the
    dispatcher itself is not used (it needs a GPU to compile for).

    Raises:
        GpusimError: ``dispatcher`` is not a ``numba.cuda`` kernel dispatcher (a device function, say).
    """
    if isinstance(dispatcher, NumbaKernel):
        return dispatcher
    if not _is_dispatcher(dispatcher):
        raise GpusimError(f"gpusim.frontends.numba.kernel() takes a @numba.cuda.jit kernel, got "
                          f"{type(dispatcher).__name__}")
    t = dispatcher.targetoptions
    if t.get("device"):
        raise GpusimError(f"{dispatcher.py_func.__name__} is a device function (device=True), not a kernel; "
                          f"launch the kernel that calls it")
    if t.get("link"):
        raise GpusimError(f"{dispatcher.py_func.__name__}: gpusim cannot link the files in link={t['link']!r}")
    options = {k: t.get(k) for k in ("debug", "opt", "lineinfo", "launch_bounds")}
    options["fastmath"] = bool(t.get("fastmath", False))
    sigs = None if dispatcher._can_compile else [tuple(s) for s in dispatcher.overloads]
    return NumbaKernel(dispatcher.py_func, options, sigs)


class NumbaKernel:
    """A Numba kernel for gpusim (made by :func:`jit` or :func:`kernel`); configure, then call:
    ``k[grid, block](*args)`` or ``k[grid, block, stream, dynamic_shared_bytes](*args)``.

    Arguments are typed as Numba types them: numpy scalars by dtype, Python ``int`` -> ``int64``,
    ``float`` -> ``float64``, ``bool`` -> ``boolean``, ``complex`` -> ``complex128``, tuples element-wise,
    arrays by (dtype, ndim, layout).  Arrays may be :class:`gpusim.ndarray` (used in place) or host numpy
    arrays (C- or Fortran-contiguous), which are copied to the device before the launch and back after it,
    as Numba does; ``numba.cuda.In/Out/InOut`` wrappers choose the copies as in Numba.

    Attributes:
        py_func: the Python function.
        options: what numba-cuda compiles it with (debug, opt, lineinfo, fastmath, launch_bounds).
        signatures: the declared argument-type tuples, or None (compiled per argument types, lazily).
    """

    def __init__(self, py_func, options: dict, signatures: Sequence | None = None):
        self.py_func = py_func
        self.options = dict(options)
        #: the declared argument-type tuples (numba types), or None for a lazily compiled kernel
        self.signatures: list[tuple] | None = (None if signatures is None else
                                               [_normalize_sig(py_func.__name__, s) for s in signatures])
        #: (argument types, arch) -> (RawKernel, PTX text)
        self._compiled: dict[tuple, tuple[RawKernel, str]] = {}
        functools.update_wrapper(self, py_func)

    # ------------------------------------------------------------------ configuration
    def __getitem__(self, config) -> "_Launch":
        config = config if isinstance(config, tuple) else (config,)
        if len(config) not in (2, 3, 4):
            raise LaunchError(f"{self.__name__}[...]: give [grid, block], [grid, block, stream] or "
                              f"[grid, block, stream, dynamic_shared_bytes] (Numba's launch configuration), "
                              f"got {len(config)} item(s)")
        grid, block = config[0], config[1]
        shared = config[3] if len(config) == 4 else 0
        if not isinstance(shared, (int, np.integer)) or isinstance(shared, bool):
            raise LaunchError(f"{self.__name__}[...]: dynamic shared memory (the 4th item) must be an int "
                              f"number of bytes, got {shared!r}")
        return _Launch(self, grid, block, int(shared))

    def configure(self, griddim, blockdim, stream=0, sharedmem=0) -> "_Launch":
        """``k.configure(grid, block, stream, sharedmem)`` is ``k[grid, block, stream, sharedmem]``."""
        return self[griddim, blockdim, stream, sharedmem]

    def __call__(self, *args, **kwargs):
        raise LaunchError(f"{self.__name__}: kernel launch configuration was not specified. Use the syntax "
                          f"kernel[blockspergrid, threadsperblock](arg0, arg1, ...)")

    # ------------------------------------------------------------------ typing and compiling
    def argument_types(self, args: Sequence[Any]) -> tuple:
        """The numba types of ``args`` as this kernel compiles for them: as Numba types them, then
        matched against the declared signatures (if any) with Numba's conversion rules.

        Raises:
            GpusimError: an argument Numba cannot type, or no declared signature accepts the types.
        """
        _numba_cuda()
        got = tuple(_typeof(self.__name__, i, a) for i, a in enumerate(args))
        sigs = self.signatures
        if sigs is None:
            return got
        if got in sigs:
            return got
        from numba.cuda.descriptor import cuda_target
        from numba.cuda.types import void
        from numba.cuda.typing.templates import Signature

        cases = [Signature(void, s, None) for s in sigs]
        try:
            found = cuda_target.typing_context.resolve_overload(self.__name__, cases, got, {},
                                                                unsafe_casting=True)
        except TypeError as exc:
            raise GpusimError(f"{self.__name__}: argument types {_fmt(got)} match several signatures: {exc}") from None
        if found is None:
            have = "; ".join(_fmt(s) for s in sigs)
            raise GpusimError(f"{self.__name__}: no matching definition for argument type(s) {_fmt(got)} "
                              f"(declared: {have})")
        return tuple(found.args)

    def compile(self, argtypes: tuple, arch: str | None = None) -> RawKernel:
        """Compile (once per argument types and architecture) and return the :class:`gpusim.RawKernel`.

        Args:
            argtypes: numba types, one per argument.
            arch: ``"sm_90"``-style; default the current device's (``config.arch``).

        Raises:
            CompileError: numba-cuda could not compile the function for these types (its message inside).
            GpusimError: numba-cuda or NVVM missing, NVVM writes PTX newer than ``.version 9.0``.
            isa.PTXError: the PTX uses something gpusim cannot parse.
        """
        arch = arch or get_device().config.arch
        key = (tuple(argtypes), arch)
        if key not in self._compiled:
            ptx = self._ptx(tuple(argtypes), arch)
            try:
                mod = RawModule(code=ptx)
            except PTXError as exc:
                lines = ptx.splitlines()
                hint = ("; numba-cuda leaves a device function uninlined with debug=True, and for libdevice's "
                        "slow paths (float64 math.sin/cos/tan)" if ".func" in exc.reason else "")
                raise PTXError(f"<numba-cuda PTX of {self.__name__}{_fmt(argtypes)} for {arch}>", exc.line,
                               exc.column, exc.reason + hint,
                               lines[exc.line - 1] if 0 < exc.line <= len(lines) else None) from None
            names = mod.kernel_names
            if len(names) != 1:
                raise GpusimError(f"{self.__name__}: numba-cuda's PTX has {len(names)} kernels ({names}); expected 1")
            self._compiled[key] = (mod.get_function(names[0]), ptx)
        return self._compiled[key][0]

    def inspect_ptx(self, argtypes: tuple | None = None, arch: str | None = None) -> str | dict:
        """The PTX for ``argtypes`` (compiled if needed), or, without ``argtypes``, ``{argtypes: PTX}`` of
        every compiled signature for ``arch`` (default the current device's), like ``inspect_asm``."""
        arch = arch or get_device().config.arch
        if argtypes is not None:
            self.compile(tuple(argtypes), arch)
            return self._compiled[(tuple(argtypes), arch)][1]
        return {k[0]: v[1] for k, v in self._compiled.items() if k[1] == arch}

    def _ptx(self, argtypes: tuple, arch: str) -> str:
        cuda = _numba_cuda()
        cc = _cc(arch)
        from numba.cuda.cudadrv.error import NvvmSupportError
        from numba.cuda.types import void

        o = self.options
        try:
            with _compiling_for(cc):
                ptx, _ = cuda.compile_ptx(self.py_func, void(*argtypes), debug=o.get("debug"),
                                          lineinfo=bool(o.get("lineinfo")), fastmath=o.get("fastmath", False),
                                          cc=cc, opt=o.get("opt"), launch_bounds=o.get("launch_bounds"))
        except NvvmSupportError as exc:
            raise GpusimError(f"{self.__name__}: numba-cuda found no NVVM library: {_INSTALL} ({exc})") from None
        except Exception as exc:  # numba's TypingError, LoweringError, UnsupportedError ...
            if type(exc).__module__.split(".")[0] != "numba":
                raise
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CompileError(f"{self.__name__}{_fmt(argtypes)} for {arch}: numba-cuda: {type(exc).__name__}: "
                               f"{first}", log=str(exc), options=tuple(f"{k}={v}" for k, v in o.items())) from exc
        ver = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", ptx, re.M)
        if ver and (int(ver.group(1)), int(ver.group(2))) > PTX_VERSION_MAX:
            raise GpusimError(f"{self.__name__}: numba-cuda's NVVM wrote PTX .version {ver.group(1)}.{ver.group(2)}; "
                              f"gpusim's toolchain (ptxas 13.0, the CUDA 13.0 driver) accepts up to "
                              f"{PTX_VERSION_MAX[0]}.{PTX_VERSION_MAX[1]}: install nvidia-nvvm==13.0.*")
        _check_linked(self.__name__, ptx)
        return ptx


def _cc(arch: str) -> tuple[int, int]:
    """The compute capability of an ``sm_XY`` architecture name: ``"sm_90"`` -> ``(9, 0)``."""
    m = re.fullmatch(r"sm_(\d+)(\d)[af]?", arch)
    if m is None:
        raise GpusimError(f"device architecture {arch!r} is not of the form sm_XY")
    return int(m.group(1)), int(m.group(2))


@contextlib.contextmanager
def _compiling_for(cc: tuple[int, int]):
    """Compile for compute capability ``cc`` without a GPU: numba-cuda compiles the device functions a
    kernel calls (``@cuda.jit(device=True)``) for ``get_current_device().compute_capability``, which needs
    a CUDA driver; inside this block (under numba's compiler lock) that name in ``numba.cuda.dispatcher``
    answers ``cc`` instead."""
    from numba.cuda import dispatcher
    from numba.cuda.core.compiler_lock import global_compiler_lock

    class _Target:
        compute_capability = cc

    with global_compiler_lock:
        saved = dispatcher.get_current_device
        dispatcher.get_current_device = lambda: _Target
        try:
            yield
        finally:
            dispatcher.get_current_device = saved


class _Launch:
    """A configured launch (``kernel[grid, block, stream, shared]``); calling it runs the kernel."""

    def __init__(self, kern: NumbaKernel, grid, block, shared: int):
        self.kernel, self.griddim, self.blockdim, self.sharedmem = kern, grid, block, shared

    def __call__(self, *args):
        """Launch on the current device and wait; returns the :class:`LaunchResult` (Numba returns None).

        Raises:
            GpusimError: an argument of a type or layout that cannot be passed (names the argument).
            LaunchError, KernelFault: as :meth:`gpusim.RawKernel.__call__`.
        """
        k = self.kernel
        dev = get_device()
        argtypes = k.argument_types(args)
        raw = k.compile(argtypes, dev.config.arch)
        values: list[np.generic] = []
        writeback: list = []
        keep: list = []
        for i, (ty, val) in enumerate(zip(argtypes, args)):
            _flatten(k.__name__, i, ty, val, dev, values, writeback, keep)
        params = raw.kernel.params
        if len(values) != len(params) or any(np.dtype(v.dtype).itemsize != p.size for v, p in zip(values, params)):
            raise GpusimError(f"{k.__name__}: the arguments {_fmt(argtypes)} flatten to {len(values)} parameters "
                              f"but numba-cuda's PTX declares {len(params)} ({', '.join('.' + p.ty for p in params)}): "
                              f"an argument type gpusim does not pack by Numba's ABI")
        res = raw(_dims(self.griddim, "grid"), _dims(self.blockdim, "block"), values, shared_mem=self.sharedmem)
        for fn in writeback:
            fn()
        return res


def _dims(value, what: str):
    """Numba's dimension forms (int, or tuple of 1 to 3 ints) as RawKernel takes them."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, (tuple, list)) and all(isinstance(v, (int, np.integer)) for v in value):
        return tuple(int(v) for v in value)
    raise LaunchError(f"{what} must be an int or a tuple of 1 to 3 ints (Numba's launch configuration), got {value!r}")


# ---------------------------------------------------------------------- typing
def _fmt(types_: Sequence) -> str:
    return "(" + ", ".join(str(t) for t in types_) + ")"


def _normalize_sig(name: str, sig) -> tuple:
    """The argument types of a declared signature (a string, a numba Signature or a tuple of types)."""
    _numba_cuda()
    from numba.cuda import types
    from numba.cuda.core import sigutils

    if isinstance(sig, tuple) and all(isinstance(t, types.Type) for t in sig):
        return sig
    try:
        args, ret = sigutils.normalize_signature(sig)
    except Exception as exc:
        raise GpusimError(f"{name}: signature {sig!r} is not a Numba signature ({type(exc).__name__}: {exc})") from None
    if ret is not None and ret != types.void:
        raise GpusimError(f"{name}: signature {sig!r}: a CUDA kernel must have void return type")
    return tuple(args)


def _typeof(name: str, i: int, val: Any):
    """The numba type of argument ``i`` as Numba's CUDA dispatcher types it (``typeof(val, Purpose.argument)``);
    a :class:`gpusim.ndarray` as a device array: ``Array(dtype, ndim, layout)``, layout 'C' or 'F' for a
    contiguous array (C first, as Numba's ``typeof`` picks) and 'A' for a strided view."""
    from numba.cuda import types
    from numba.cuda.args import ArgHint
    from numba.cuda.np.numpy_support import from_dtype
    from numba.cuda.typing.typeof import Purpose, typeof

    inner = val.value if isinstance(val, ArgHint) else val
    if isinstance(inner, ndarray):
        try:
            flags = inner.flags
            layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
            return types.Array(from_dtype(inner.dtype), inner.ndim, layout)
        except Exception:
            raise GpusimError(f"{name}: argument {i}: Numba has no type for arrays of dtype {inner.dtype}") from None
    try:
        ty = typeof(inner, Purpose.argument)
    except Exception as exc:
        raise GpusimError(f"{name}: argument {i}: Numba cannot type a {type(inner).__name__} ({exc})") from None
    if ty is None:
        raise GpusimError(f"{name}: argument {i}: Numba cannot type a {type(inner).__name__}")
    return ty


# ---------------------------------------------------------------------- the ABI
def _flatten(name: str, i: int, ty, val, dev, out: list, writeback: list, keep: list) -> None:
    """Append argument ``i``'s parameters (numpy scalars of the parameter widths) to ``out``, following
    numba-cuda's ``_Kernel._prepare_args`` (see the module docstring); host arrays are copied to ``dev``
    and a copy-back is appended to ``writeback``."""
    from numba.cuda import types
    from numba.cuda.args import ArgHint

    where = f"{name}: argument {i} ({ty})"
    if isinstance(ty, types.Array):
        ptr, shape, strides, itemsize, size = _device_array(where, val, dev, writeback, keep)
        out += [np.uint64(0), np.uint64(0), np.int64(size), np.int64(itemsize), np.uint64(ptr)]
        out += [np.int64(s) for s in shape] + [np.int64(s) for s in strides]
        return
    if isinstance(val, ArgHint):
        val = val.value
    if isinstance(ty, types.Boolean):
        out.append(np.uint8(bool(val)))
    elif isinstance(ty, types.Integer):
        try:
            v = operator.index(val)
        except TypeError:
            raise GpusimError(f"{where}: got {val!r}, not an integer") from None
        bits = ty.bitwidth
        out.append(np.array(v & ((1 << bits) - 1), np.dtype(f"u{bits // 8}")).view(np.dtype(str(ty)))[()])
    elif ty == types.float16:
        out.append(np.float16(val).view(np.uint16))
    elif ty in (types.float32, types.float64):
        out.append(np.dtype(str(ty)).type(val))
    elif ty in (types.complex64, types.complex128):
        f = np.float32 if ty == types.complex64 else np.float64
        out += [f(complex(val).real), f(complex(val).imag)]
    elif isinstance(ty, (types.NPDatetime, types.NPTimedelta)):
        out.append(np.int64(np.asarray(val).view(np.int64)))
    elif isinstance(ty, types.CPointer):
        out.append(np.uint64(int(val)))
    elif isinstance(ty, types.BaseTuple):
        for t, v in zip(ty, val):
            _flatten(name, i, t, v, dev, out, writeback, keep)
    elif isinstance(ty, types.EnumMember):
        _flatten(name, i, ty.dtype, val.value, dev, out, writeback, keep)
    else:
        raise GpusimError(f"{where}: gpusim does not pass arguments of this type to Numba kernels (arrays, "
                          f"scalars, complex numbers, tuples and enums are supported)")


def _device_array(where: str, val, dev, writeback: list, keep: list):
    """(device address, shape, strides in bytes, itemsize, size) of an array argument: a gpusim array as
    it is, a host numpy array copied to ``dev`` (and back after the launch unless wrapped in ``cuda.In``)."""
    from numba.cuda.args import In, Out

    copy_in, copy_out = True, True
    if isinstance(val, In):
        copy_out, val = False, val.value
    elif isinstance(val, Out):  # InOut is an Out that copies in
        copy_in, val = type(val).copy_input, val.value
    if isinstance(val, ndarray):
        if val.device is not dev:
            raise GpusimError(f"{where}: the array lives on another gpusim.Device than the one launching")
        return val.data.ptr, val.shape, val.strides, val.dtype.itemsize, val.size  # a view's own layout
    if not isinstance(val, np.ndarray):
        raise GpusimError(f"{where}: got a {type(val).__name__}; pass a gpusim.ndarray or a host numpy array")
    if not (val.flags.c_contiguous or val.flags.f_contiguous):
        raise GpusimError(f"{where}: the host array is not contiguous (strides {val.strides}); pass "
                          f"np.ascontiguousarray(...) or a gpusim array")
    order = "C" if val.flags.c_contiguous else "F"
    dbuf = ndarray((max(val.nbytes, 1),), np.uint8, device=dev)
    keep.append(dbuf)
    flat = val.ravel(order=order)               # a view: the array's memory in address order
    if copy_in:
        dbuf._bytes()[:val.nbytes] = flat.view(np.uint8)
    if copy_out and val.flags.writeable:        # a read-only array is typed read-only: the kernel cannot write it

        def back(flat=flat, dbuf=dbuf, n=val.nbytes):
            flat.view(np.uint8)[...] = dbuf._bytes()[:n]
        writeback.append(back)
    return dbuf.data.ptr, val.shape, val.strides, val.itemsize, val.size


def _check_linked(name: str, ptx: str) -> None:
    """Refuse PTX that calls functions it only declares (``.extern .func``): on a GPU numba-cuda links
    them (NRT, cudadevrt for grid sync, ``link=`` files); gpusim has no linker."""
    defined = set(re.findall(r"^\s*(?:\.visible\s+|\.weak\s+)?\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", ptx, re.M))
    for m in re.finditer(r"^\s*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", ptx, re.M):
        if m.group(1) not in defined:
            raise GpusimError(f"{name}: the kernel calls {m.group(1)}, which numba-cuda links from other code "
                              f"on a GPU (the C++ shims of the fp16/bf16 intrinsics, NRT, cudadevrt, link= files); "
                              f"gpusim runs one PTX module and has no linker")
