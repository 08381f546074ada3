"""``@triton.jit`` kernels on gpusim, launched with Triton's conventions.

Owns: :func:`jit` and :class:`TritonKernel`, which compile a Triton kernel for the current device's
compute capability with Triton's own compiler and launch the PTX on gpusim: ``kernel[grid](*args,
BLOCK=..., num_warps=4, num_stages=3)`` with the grid a tuple or a callable of the bound arguments,
Triton's argument binding and specialization (its binder, ``create_function_from_signature``: int32
or int64 by value, divisibility by 16, integers equal to 1 become constants), one compiled kernel per
specialization, a block of ``32 * num_warps`` threads, ``metadata.shared`` bytes of dynamic shared
memory and the two scratch pointers Triton 3.x appends (null when their size is 0, else
``size * programs`` bytes, as Triton's CUDA launcher allocates).

Imports triton only inside functions (the ``triton`` extra), numpy and the public API
(:mod:`gpusim.module`, :mod:`gpusim.ndarray`, :mod:`gpusim.device`); never simpy, cupy or the engines.
Source of the conventions: Triton 3.6, ``triton/runtime/jit.py`` (``JITFunction.run``) and
``triton/backends/nvidia/driver.py`` (``make_launcher``, ``CudaLauncher.__call__``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from gpusim.device import Device, get_device
from gpusim.errors import CompileError, GpusimError, LaunchError
from gpusim.module import RawKernel, RawModule
from gpusim.ndarray import ndarray

__all__ = ["jit", "TritonKernel", "compute_capability"]

#: Triton's scalar signature types -> the numpy type of the kernel parameter (Triton's launcher passes
#: fp16/bf16 scalars as their 16-bit storage, ``FLOAT_STORAGE_TYPE`` in its CUDA driver).
_SCALAR = {"i1": np.int8, "u1": np.uint8, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
           "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
           "fp16": np.float16, "fp32": np.float32, "fp64": np.float64}


def _triton():
    try:
        import triton
        from triton.runtime.jit import JITFunction
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise GpusimError("gpusim.frontends.triton needs Triton: pip install 'gpusim[triton]' "
                          f"(triton==3.6.*) ({exc})") from None
    return triton, JITFunction


def compute_capability(dev: Device) -> int:
    """The device's compute capability as Triton's targets write it: ``config.arch`` ``"sm_90"`` -> 90
    (``Device("h100")``), ``"sm_80"`` -> 80 (``Device("a100")``). Raises GpusimError for another form."""
    arch = dev.config.arch
    digits = arch[3:].rstrip("af") if arch.startswith("sm_") else ""
    if not digits.isdigit():
        raise GpusimError(f"{dev.config.name}: config.arch {arch!r} is not of the form sm_NN")
    return int(digits)


def jit(fn=None, **jit_kwargs) -> "TritonKernel":
    """Make a Triton kernel launchable on gpusim.

    ``fn`` is a ``@triton.jit`` function (a ``triton.runtime.JITFunction``) or a plain Python function
    (then it is passed through ``triton.jit(fn, **jit_kwargs)`` first, so ``@gpusim.frontends.triton.jit``
    also works as the decorator). The same kernel source then runs on a GPU (``fn[grid](...)``) and on
    gpusim (``jit(fn)[grid](...)``).

    Raises:
        GpusimError: Triton is not installed, or ``fn`` is neither a function nor a JITFunction.
    """
    if fn is None:
        return lambda f: jit(f, **jit_kwargs)  # type: ignore[return-value]
    triton, JITFunction = _triton()
    if isinstance(fn, TritonKernel):
        return fn
    if not isinstance(fn, JITFunction):
        if not callable(fn):
            raise GpusimError(f"jit() takes a @triton.jit function or a Python function, got {type(fn).__name__}")
        fn = triton.jit(fn, **jit_kwargs)
    return TritonKernel(fn)


@dataclass
class _Loaded:
    """One specialization compiled for one compute capability and loaded as a gpusim module."""

    compiled: Any          # triton.compiler.CompiledKernel (asm["ptx"], metadata)
    module: RawModule
    kernel: RawKernel
    signature: dict        # parameter name -> Triton type ("*fp32", "i32", "constexpr", ...)


class _Pointer:
    """What Triton's binder sees for a device array: ``data_ptr()`` and a numpy ``dtype``."""

    def __init__(self, ptr: int, dtype: np.dtype):
        self.ptr, self.dtype = int(ptr), np.dtype(dtype)

    def data_ptr(self) -> int:
        return self.ptr


class TritonKernel:
    """A ``@triton.jit`` function made launchable on gpusim (make one with :func:`jit`).

    ``kernel[grid](*args, **kwargs)`` launches on the current :class:`gpusim.Device`:

    - ``grid``: a tuple of 1 to 3 ints, or a callable taking the dict of bound arguments (constexprs
      included: ``lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)``) and returning one.
    - ``args``/``kwargs``: the kernel's arguments, positional or by name, and Triton's launch options
      (``num_warps`` (default 4), ``num_stages``, ``enable_fp_fusion``, ...). Arrays: a
      :class:`gpusim.ndarray` (or anything whose ``data.ptr``/``data_ptr()`` is an address of the
      device's memory and which has a numpy ``dtype``), or a host ``numpy.ndarray``, copied to the
      device before the launch and back after it (writeable arrays only). Scalars: Python or numpy
      ints, floats and bools (numpy ones are passed as the Python values Triton's binder takes).

    The kernel is compiled by Triton for the device's compute capability (:func:`compute_capability`;
    Triton writes ``.target sm_90a`` for 90) once per specialization (Triton's cache key: the argument
    types, divisibility by 16, values equal to 1, constexprs and options), and launched with
    ``32 * num_warps`` threads per program and ``metadata.shared`` bytes of dynamic shared memory.

    Returns the launch's :class:`gpusim.functional.launch.LaunchResult` (Triton returns its
    ``CompiledKernel``; that one is :meth:`compile`'s result).

    Raises:
        CompileError: Triton could not compile the kernel (its message names the Python line).
        isa.PTXError: the PTX uses an instruction gpusim does not model yet (the message names the
            PTX file and line and the Triton source line, from ``.loc``).
        LaunchError: a bad grid, an unknown keyword, a launch gpusim does not support (``num_ctas > 1``).
        GpusimError: an argument gpusim cannot pass (names it).
        KernelFault: the kernel faulted on gpusim.
    """

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)
        #: compute capability -> (target, backend, binder, key cache)
        self._binders: dict[int, tuple] = {}
        #: (compute capability, Triton's cache key) -> the loaded kernel
        self._cache: dict[tuple[int, str], _Loaded] = {}

    def __repr__(self) -> str:
        return f"gpusim.frontends.triton.jit({self.fn!r})"

    def __getitem__(self, grid) -> Callable[..., Any]:
        """``kernel[grid]``: a callable that launches with that grid (as ``JITFunction.__getitem__``)."""
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    # ------------------------------------------------------------------ public
    def run(self, *args, grid, **kwargs):
        """Launch with ``grid`` (see the class docstring); returns the LaunchResult."""
        dev = get_device()
        host: list[tuple[np.ndarray, ndarray]] = []
        args = tuple(self._arg(dev, a, i, host) for i, a in enumerate(args))
        kwargs = {k: self._arg(dev, v, k, host) for k, v in kwargs.items()}
        loaded, bound, options = self._load(dev, args, kwargs)
        g = self._grid(grid, bound)
        md = loaded.compiled.metadata
        if getattr(md, "num_ctas", 1) != 1:
            raise LaunchError(f"{self.__name__}: num_ctas={md.num_ctas} (thread-block clusters) is not supported by "
                              f"gpusim's Triton launcher; launch with num_ctas=1")
        params = [self._param(dev, name, ty, bound[name]) for name, ty in loaded.signature.items()
                  if ty != "constexpr"]
        programs = g[0] * g[1] * g[2]
        scratch = [self._scratch(dev, md.global_scratch_size, md.global_scratch_align, programs),
                   self._scratch(dev, md.profile_scratch_size, md.profile_scratch_align, programs)]
        params += [ptr for ptr, _buf in scratch]  # the buffers stay alive until the launch returns
        kernel = loaded.kernel
        if md.shared > kernel.max_dynamic_shared_size_bytes:  # Triton's launcher raises the attribute too
            kernel.max_dynamic_shared_size_bytes = md.shared
        res = kernel(g, (32 * md.num_warps,), tuple(params), shared_mem=md.shared)
        for h, d in host:
            if h.flags.writeable:
                h[...] = d.get().reshape(h.shape)
        return res

    def compile(self, *args, **kwargs):
        """Compile (or fetch from the cache) the specialization these arguments select, for the current
        device, without launching; returns Triton's ``CompiledKernel`` (``.asm["ptx"]``, ``.metadata``).
        Host numpy arrays are not copied."""
        dev = get_device()
        args = tuple(self._arg(dev, a, i, None) for i, a in enumerate(args))
        kwargs = {k: self._arg(dev, v, k, None) for k, v in kwargs.items()}
        return self._load(dev, args, kwargs)[0].compiled

    warmup = compile

    # ------------------------------------------------------------------ binding and compiling
    def _binder(self, cc: int) -> tuple:
        if cc not in self._binders:
            triton, _ = _triton()
            from triton.backends.compiler import GPUTarget
            from triton.compiler import make_backend
            from triton.runtime.jit import create_function_from_signature

            target = GPUTarget("cuda", cc, 32)
            backend = make_backend(target)
            binder = create_function_from_signature(self.fn.signature, self.fn.params, backend)
            self._binders[cc] = (target, backend, binder, {})
        return self._binders[cc]

    def _load(self, dev: Device, args: tuple, kwargs: dict) -> tuple[_Loaded, dict, Any]:
        triton, JITFunction = _triton()
        from triton import knobs
        from triton.runtime.jit import compute_cache_key

        cc = compute_capability(dev)
        target, backend, binder, key_cache = self._binder(cc)
        kwargs = dict(kwargs)
        kwargs["debug"] = kwargs.get("debug", self.fn.debug) or knobs.runtime.debug
        kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
        try:
            bound, specialization, options = binder(*args, **kwargs)
        except TypeError as exc:  # wrong number or names of arguments, or a value Triton cannot pass
            raise GpusimError(f"{self.__name__}: {exc}") from None
        key = str(compute_cache_key(key_cache, specialization, options))
        loaded = self._cache.get((cc, key))
        if loaded is None:
            try:
                options, signature, constexprs, attrs = JITFunction._pack_args(self.fn, backend, kwargs, bound,
                                                                               specialization, options)
            except KeyError as exc:
                raise LaunchError(f"{self.__name__}: {exc.args[0]} (Triton's launch options: num_warps, "
                                  f"num_stages, num_ctas, enable_fp_fusion, ...)") from None
            src = triton.compiler.ASTSource(self.fn, signature, constexprs, attrs)
            try:
                compiled = triton.compile(src, target=target, options=options.__dict__)
            except Exception as exc:  # Triton's CompilationError names the kernel's Python line
                if type(exc).__name__ not in ("CompilationError", "CompileTimeAssertionFailure", "PTXASError",
                                              "OutOfResources"):
                    raise
                raise CompileError(f"{self.__name__}: Triton could not compile it for sm_{cc}: {exc}",
                                   log=str(exc)) from None
            module = self._module(compiled)
            loaded = _Loaded(compiled, module, module.get_function(compiled.metadata.name), signature)
            self._cache[(cc, key)] = loaded
        return loaded, bound, options

    @staticmethod
    def _module(compiled) -> RawModule:
        """The PTX as a gpusim module, read from Triton's cache file (so messages name a real file)."""
        group = getattr(compiled, "metadata_group", {}) or {}
        path = next((p for name, p in group.items() if str(name).endswith(".ptx")), None)
        if path is not None and Path(path).is_file():
            return RawModule(path=path)
        return RawModule(code=compiled.asm["ptx"])

    # ------------------------------------------------------------------ arguments
    def _arg(self, dev: Device, a: Any, where, host: list | None):
        """One argument as Triton's binder takes it: device arrays -> pointer objects, host arrays ->
        copied to the device, numpy scalars -> Python scalars."""
        names = getattr(self.fn, "arg_names", [])
        name = where if isinstance(where, str) else names[where] if where < len(names) else None
        what = f"{self.__name__}: argument {where}" + (f" ({name})" if name is not None and name != where else "")
        if isinstance(a, ndarray):
            if a.device is not dev:
                raise GpusimError(f"{what}: the array lives on another gpusim.Device than the one launching")
            return _Pointer(a.data.ptr, a.dtype)
        if isinstance(a, np.ndarray):
            if a.ndim == 0:
                return a[()].item()
            if host is None:
                return _Pointer(0x100, a.dtype)  # compile(): only the type and alignment matter
            d = ndarray(a.shape, a.dtype, device=dev)
            d.set(a)
            host.append((a, d))
            return _Pointer(d.data.ptr, a.dtype)
        if isinstance(a, np.generic):
            return a.item()
        if isinstance(a, (bool, int, float)) or a is None or isinstance(a, (str, tuple)):
            return a
        ptr = getattr(getattr(a, "data", None), "ptr", None)
        if ptr is None and callable(getattr(a, "data_ptr", None)):
            ptr = a.data_ptr()
        if ptr is not None:
            if dev.memory.find(int(ptr)) is None and int(ptr) != 0:
                raise GpusimError(f"{what}: address {int(ptr):#x} of the {type(a).__name__} is not in this "
                                  f"gpusim.Device's memory (pass a gpusim.ndarray or a host numpy array)")
            try:
                dtype = np.dtype(a.dtype)
            except TypeError:
                raise GpusimError(f"{what}: the {type(a).__name__} has no numpy dtype ({a.dtype!r})") from None
            return _Pointer(int(ptr), dtype)
        if type(a).__module__.startswith("triton"):
            return a  # a tl.dtype, tl.constexpr or other Triton value: the binder judges it
        raise GpusimError(f"{what}: cannot pass a {type(a).__name__} (pass a gpusim.ndarray, a host numpy array, "
                          f"or a Python/numpy scalar)")

    @staticmethod
    def _grid(grid, bound: dict) -> tuple[int, int, int]:
        if callable(grid):
            grid = grid(bound)
        vals = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        if not 1 <= len(vals) <= 3 or not all(isinstance(v, (int, np.integer)) for v in vals):
            raise LaunchError(f"the grid must be a tuple of 1 to 3 ints (or a callable returning one), got {grid!r}")
        vals = tuple(int(v) for v in vals) + (1,) * (3 - len(vals))
        if min(vals) < 1:
            raise LaunchError(f"grid {vals} has a dimension below 1 (Triton launches nothing; gpusim refuses it)")
        return vals  # type: ignore[return-value]

    def _param(self, dev: Device, name: str, ty, value) -> np.generic:
        """One kernel parameter from its Triton signature type and bound value."""
        where = f"{self.__name__}: argument {name!r} ({ty})"
        if isinstance(ty, tuple):
            raise GpusimError(f"{where}: tuple arguments are not supported by gpusim's Triton launcher yet")
        if ty.startswith("*"):
            ptr = value.data_ptr() if hasattr(value, "data_ptr") else value
            return np.uint64(int(ptr or 0))
        if ty == "bf16":
            bits = np.array([value], np.float32).view(np.uint32)[0]
            return np.uint16((int(bits) + 0x7FFF + ((int(bits) >> 16) & 1)) >> 16)
        np_ty = _SCALAR.get(ty)
        if np_ty is None:
            raise GpusimError(f"{where}: gpusim's Triton launcher cannot pass this type yet")
        if np.issubdtype(np_ty, np.integer):
            info = np.iinfo(np_ty)
            if not info.min <= int(value) <= info.max:
                raise GpusimError(f"{where}: {value} does not fit")
            return np_ty(int(value))
        return np_ty(value)

    @staticmethod
    def _scratch(dev: Device, size: int, align: int, programs: int) -> tuple[np.uint64, ndarray | None]:
        """Triton's global/profile scratch pointer and its buffer: null when the kernel needs none, else
        ``programs * size`` bytes (zeroed) aligned to ``align``, as ``CudaLauncher.__call__`` allocates
        per launch."""
        if not size:
            return np.uint64(0), None
        buf = ndarray((programs * int(size) + int(align),), np.uint8, device=dev)
        buf.fill(0)
        ptr = buf.data.ptr
        ptr += -ptr % max(1, int(align))
        return np.uint64(ptr), buf
