"""CuPy's ``ElementwiseKernel`` and ``ReductionKernel``: CUDA C generated from their parameter lists and
expressions, compiled by NVRTC (:mod:`gpusim.nvrtc`, through ``RawModule(code=...)``) and launched on the current device.

Owns: parsing CuPy's parameter lists (``"float32 x, T y, raw T z"``), binding type placeholders from the
arguments, allocating outputs, the generated kernels and their launches. Reaches the engines only through
the public API (:class:`gpusim.RawModule`, :mod:`gpusim.ndarray`); never imports simpy or cupy.

The common cases, with CuPy's signatures and call conventions (CuPy 14, ``cupy/_core/_kernel.pyx`` and
``_reduction.pyx``): element-wise operations over arrays of one shape and scalars, ``raw`` arrays indexed by
``i``, ``_ind.size()``, ``size=``, ``preamble``, ``loop_prep``/``after_loop``, ``no_return`` and
``return_tuple``; reductions over all axes or a tuple of axes, ``keepdims``, ``reduce_type``, ``identity``,
``map_expr``/``reduce_expr`` (``a``, ``b``)/``post_map_expr`` (``a`` and the output names).

What differs from CuPy, and why:
- Inputs of different shapes are broadcast by copying them to the broadcast shape first (CuPy indexes them
  with zero strides): the outputs are the same, the simulated memory traffic is not CuPy's.
- A reduction over axes that are not the trailing ones transposes the input into a new array first.
- The generated code is gpusim's (a grid-stride loop of ``blockDim.x = 128`` threads, CuPy's default block;
  a reduction runs one CTA of 256 threads per output element, a strided partial reduction per thread and a
  shared-memory tree), not CuPy's ``CArray``/``CIndexer`` code; integer results equal CuPy's, and
  floating-point reductions may round differently (the order of the additions differs, as it does between
  CuPy versions).
- Complex types and CuPy's headers (``thrust``, ``cupy/complex.cuh``) are not available.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from gpusim.errors import GpusimError
from gpusim.module import RawModule
from gpusim.ndarray import asarray, empty, ndarray

__all__ = ["ElementwiseKernel", "ReductionKernel"]

#: numpy dtype -> CUDA C type (CuPy's ``_scalar.get_typename``).
_CTYPES = {
    np.dtype(np.bool_): "bool", np.dtype(np.int8): "signed char", np.dtype(np.uint8): "unsigned char",
    np.dtype(np.int16): "short", np.dtype(np.uint16): "unsigned short", np.dtype(np.int32): "int",
    np.dtype(np.uint32): "unsigned int", np.dtype(np.int64): "long long", np.dtype(np.uint64): "unsigned long long",
    np.dtype(np.float16): "__half", np.dtype(np.float32): "float", np.dtype(np.float64): "double",
}
#: CuPy's default block size for element-wise kernels (``block_size`` argument).
_BLOCK = 128
#: Threads per CTA of a reduction (one CTA per output element).
_REDUCE_BLOCK = 256


@dataclass(frozen=True)
class _Param:
    """One entry of a CuPy parameter list: ``[raw] TYPE name``; ``dtype`` None for a placeholder."""

    name: str
    type_name: str
    dtype: np.dtype | None
    raw: bool


def _parse_params(text: str, what: str) -> list[_Param]:
    """Parse ``"float32 x, T y, raw T z"``. Raises GpusimError naming the entry and the rule."""
    if not isinstance(text, str):
        raise GpusimError(f"{what} must be a str such as 'float32 x, T y', got {type(text).__name__}")
    params = []
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        words = item.split()
        raw = words[0] == "raw"
        words = words[1:] if raw else words
        if len(words) != 2 or not re.fullmatch(r"[A-Za-z_]\w*", words[1]):
            raise GpusimError(f"{what}: {item!r} is not '[raw] TYPE NAME' (e.g. 'float32 x' or 'raw T y')")
        type_name, name = words
        try:
            dtype = np.dtype(type_name) if not re.fullmatch(r"[A-Z]\w*", type_name) else None
        except TypeError:
            raise GpusimError(f"{what}: {item!r}: {type_name!r} is neither a numpy dtype name nor a type "
                              "placeholder (an identifier starting with a capital letter, e.g. T)") from None
        if dtype is not None and dtype not in _CTYPES:
            raise GpusimError(f"{what}: {item!r}: gpusim's CUDA C kernels take {', '.join(map(str, _CTYPES))}, "
                              f"not {dtype}")
        if name in {p.name for p in params}:
            raise GpusimError(f"{what}: the name {name!r} appears twice")
        params.append(_Param(name, type_name, dtype, raw))
    return params


def _dtype_of(arg: Any) -> np.dtype | None:
    """The dtype an argument binds a placeholder to: arrays' and numpy scalars'; None for Python scalars."""
    if isinstance(arg, (ndarray, np.ndarray, np.generic)):
        return arg.dtype
    return None


def _python_scalar_dtype(arg: Any) -> np.dtype:
    if isinstance(arg, bool):
        return np.dtype(np.bool_)
    if isinstance(arg, int):
        return np.dtype(np.int64)
    if isinstance(arg, float):
        return np.dtype(np.float64)
    raise GpusimError(f"cannot pass a {type(arg).__name__} to a CUDA C kernel")


def _bind(params: list[_Param], args: Sequence[Any], kname: str) -> dict[str, np.dtype]:
    """Type placeholder -> dtype, from arrays and numpy scalars first, then Python scalars (int64/float64),
    as CuPy binds them. Raises GpusimError when two arguments bind one placeholder to different dtypes."""
    types: dict[str, np.dtype] = {}
    for p, a in zip(params, args):
        dt = _dtype_of(a)
        if p.dtype is None and dt is not None:
            if p.type_name in types and types[p.type_name] != dt:
                raise GpusimError(f"{kname}: argument {p.name!r} binds {p.type_name} to {dt}, but an earlier "
                                  f"argument bound it to {types[p.type_name]}")
            types[p.type_name] = dt
    for p, a in zip(params, args):
        if p.dtype is None and p.type_name not in types and a is not None:
            types[p.type_name] = _python_scalar_dtype(a)
    return types


def _dtype(p: _Param, types: dict[str, np.dtype], kname: str) -> np.dtype:
    dt = p.dtype if p.dtype is not None else types.get(p.type_name)
    if dt is None:
        raise GpusimError(f"{kname}: the type {p.type_name} of {p.name!r} is bound by no argument; pass an array "
                          "or numpy scalar of that type")
    if dt not in _CTYPES:
        raise GpusimError(f"{kname}: {p.name!r} is {dt}; gpusim's CUDA C kernels take {', '.join(map(str, _CTYPES))}")
    return dt


def _typedefs(types: dict[str, np.dtype]) -> str:
    return "".join(f"typedef {_CTYPES[dt]} {name};\n" for name, dt in types.items())


def _ctype(p: _Param) -> str:
    """The CUDA C type of a parameter: its dtype's, or the placeholder's name (typedef'd by :func:`_typedefs`)."""
    return _CTYPES[p.dtype] if p.dtype is not None else p.type_name


def _header(dtypes: Sequence[np.dtype]) -> str:
    return "#include <cuda_fp16.h>\n" if np.dtype(np.float16) in dtypes else ""


def _to_device(arg: Any) -> Any:
    return asarray(arg) if isinstance(arg, np.ndarray) else arg


def _scalar(value: Any, dt: np.dtype, what: str) -> np.generic:
    try:
        return dt.type(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise GpusimError(f"{what}: cannot convert {value!r} to {dt} ({exc})") from None


def _contiguous(arg: ndarray, writeback: list | None = None) -> ndarray:
    """``arg`` itself when C-contiguous, else a C-contiguous copy (the generated kernels index arrays as
    contiguous; CuPy's index a view through its strides). An output's copy is added to ``writeback`` as
    (view, copy), to be written back into the view after the launch."""
    if arg.flags.c_contiguous:
        return arg
    copy = arg.copy()
    if writeback is not None:
        writeback.append((arg, copy))
    return copy


def _broadcast_shape(arrays: list[ndarray], where: str) -> tuple[int, ...]:
    """The numpy broadcast shape of the input arrays. Raises GpusimError naming the shapes."""
    try:
        return tuple(np.broadcast_shapes(*(a.shape for a in arrays)))
    except ValueError:
        raise GpusimError(f"{where}: the input shapes {', '.join(str(a.shape) for a in arrays)} do not broadcast "
                          "together") from None


def _broadcast(arr: ndarray, shape: tuple[int, ...]) -> ndarray:
    """``arr`` copied to ``shape`` (numpy broadcasting) when its shape differs; itself otherwise."""
    if arr.shape == shape:
        return arr
    return asarray(np.ascontiguousarray(np.broadcast_to(arr.get(), shape)))


def _prepare(k, args: Sequence[Any]) -> tuple[list, dict[str, np.dtype], list[ndarray]]:
    """What both kernel kinds do first with a call's arguments: check their count (the inputs, then
    optionally every output), copy host arrays to the device and bind the type placeholders. Returns
    (the arguments, placeholder -> dtype, the non-raw input arrays)."""
    nin, nout = len(k.in_params), len(k.out_params)
    if len(args) not in (nin, nin + nout):
        raise GpusimError(f"{type(k).__name__} {k.name} takes {nin} input(s) and optionally {nout} output(s), "
                          f"got {len(args)} argument(s)")
    args = [_to_device(a) for a in args]
    types = _bind(k.in_params + k.out_params[:len(args) - nin], args, k.name)
    return args, types, [a for p, a in zip(k.in_params, args) if isinstance(a, ndarray) and not p.raw]


class _Compiled:
    """A generated source compiled once per (source, options) and device architecture."""

    def __init__(self) -> None:
        self._modules: dict[tuple[str, tuple[str, ...]], Any] = {}

    def function(self, source: str, name: str, options: tuple[str, ...]):
        key = (source, options)
        if key not in self._modules:
            self._modules[key] = RawModule(code=source, options=options)
        return self._modules[key].get_function(name)


class ElementwiseKernel:
    """An element-wise kernel defined by CUDA C snippets, like ``cupy.ElementwiseKernel``.

    Args:
        in_params: input parameters, ``"float32 x, T y, raw T z"`` (numpy dtype names or type placeholders;
            ``raw`` arrays are indexed by the operation itself, ``z[i]``).
        out_params: output parameters, same form.
        operation: CUDA C statements run for each index ``i`` (``ptrdiff_t``), with each non-raw parameter
            bound to its element (outputs by reference) and ``_ind.size()`` the element count.
        name: the kernel's name.
        reduce_dims: accepted for CuPy compatibility (the arrays are contiguous either way).
        preamble: CUDA C put before the kernel (helper functions, ``#define``).
        no_return: return None instead of the outputs.
        return_tuple: return a tuple even for one output.
        loop_prep, after_loop: CUDA C before and after each thread's loop.
        options: NVRTC options.

    Calling it, ``k(*args, size=None, block_size=None)``: the inputs, then optionally the outputs (arrays
    it writes); outputs not given are allocated with the broadcast shape of the inputs and their dtype.
    Host numpy arrays are copied to the device. Returns the output array, or a tuple of them.

    Raises:
        GpusimError: a malformed parameter list, a wrong number of arguments, a placeholder bound to two
            dtypes or to none, an output of the wrong shape, or no array to size the launch (pass ``size``).
        gpusim.errors.CompileError: the generated CUDA C did not compile (the message has NVRTC's log).
    """

    def __init__(self, in_params: str, out_params: str, operation: str, name: str = "kernel",
                 reduce_dims: bool = True, preamble: str = "", no_return: bool = False, return_tuple: bool = False,
                 loop_prep: str = "", after_loop: str = "", options: Sequence[str] = ()):
        self.name = name
        self.in_params = _parse_params(in_params, f"ElementwiseKernel {name}: in_params")
        self.out_params = _parse_params(out_params, f"ElementwiseKernel {name}: out_params")
        clash = {p.name for p in self.in_params} & {p.name for p in self.out_params}
        if clash:
            raise GpusimError(f"ElementwiseKernel {name}: {', '.join(sorted(clash))} is both an input and an output")
        if not self.out_params and not no_return:
            raise GpusimError(f"ElementwiseKernel {name}: out_params is empty; pass no_return=True for a kernel "
                              "with no outputs")
        self.operation, self.preamble, self.loop_prep, self.after_loop = operation, preamble, loop_prep, after_loop
        self.no_return, self.return_tuple, self.options = no_return, return_tuple, tuple(options)
        self._compiled = _Compiled()

    def __call__(self, *args, size: int | None = None, block_size: int | None = None, stream=None):
        nin = len(self.in_params)
        args, types, arrays = _prepare(self, args)
        if arrays:
            shape = _broadcast_shape(arrays, f"ElementwiseKernel {self.name}")
        elif size is not None:
            shape = (int(size),)
        else:
            raise GpusimError(f"ElementwiseKernel {self.name}: no non-raw array argument gives the size; pass size=")
        if size is not None and arrays and int(size) != math.prod(shape):
            raise GpusimError(f"ElementwiseKernel {self.name}: size={size} but the arrays have {math.prod(shape)} "
                              "elements")
        launch_args, outputs, writeback = [], [], []
        for k, p in enumerate(self.in_params + self.out_params):
            dt = _dtype(p, types, self.name)
            arg = args[k] if k < len(args) else empty(shape, dt)  # an output not given is allocated
            if k >= nin:
                if not isinstance(arg, ndarray):
                    raise GpusimError(f"ElementwiseKernel {self.name}: output {p.name!r} must be an array")
                if not p.raw and arg.shape != shape:
                    raise GpusimError(f"ElementwiseKernel {self.name}: output {p.name!r} has shape {arg.shape}, "
                                      f"the inputs broadcast to {shape}")
                if arg.dtype != dt:
                    raise GpusimError(f"ElementwiseKernel {self.name}: output {p.name!r} is {arg.dtype}, its "
                                      f"parameter {p.type_name} is {dt}")
                outputs.append(arg)
                arg = _contiguous(arg, writeback)
            elif isinstance(arg, ndarray):
                if arg.dtype != dt:
                    arg = asarray(arg.get().astype(dt))  # CuPy casts inputs to the parameter's type
                if not p.raw:
                    arg = _broadcast(arg, shape)
                arg = _contiguous(arg)
            else:
                arg = _scalar(arg, dt, f"ElementwiseKernel {self.name}: argument {p.name!r}")
            launch_args.append(arg)
        source = self._source([p for p in self.in_params + self.out_params], launch_args, types)
        n = math.prod(shape)
        block = int(block_size or _BLOCK)
        fn = self._compiled.function(source, self.name, self.options)
        if n:
            fn((max(1, -(-n // block)),), (block,), tuple(launch_args) + (np.int64(n),))
        for view, copy in writeback:
            view[...] = copy
        if self.no_return:
            return None
        return tuple(outputs) if self.return_tuple or len(outputs) > 1 else outputs[0]

    def _source(self, params: list[_Param], args: list[Any], types: dict[str, np.dtype]) -> str:
        sig, raw_binds, elem_binds = [], [], []
        for p, a in zip(params, args):
            ctype, const = _ctype(p), "const " if p in self.in_params else ""
            if not isinstance(a, ndarray):
                sig.append(f"const {ctype} {p.name}")
                continue
            sig.append(f"{const}{ctype}* __restrict__ _raw_{p.name}")
            if p.raw:
                raw_binds.append(f"{const}{ctype}* {p.name} = _raw_{p.name};")
            else:
                elem_binds.append(f"{const}{ctype}{'' if const else '&'} {p.name} = _raw_{p.name}[i];")
        return (f"{_header([a.dtype for a in args])}{_typedefs(types)}{self.preamble}\n"
                "struct _CIndex { long long n; __device__ long long size() const { return n; } };\n"
                f'extern "C" __global__ void {self.name}({", ".join(sig + ["long long _n"])}) {{\n'
                f"  const _CIndex _ind = {{_n}};\n  {' '.join(raw_binds)}\n  {self.loop_prep};\n"
                "  for (ptrdiff_t i = (ptrdiff_t)blockIdx.x * blockDim.x + threadIdx.x; i < _n;"
                " i += (ptrdiff_t)blockDim.x * gridDim.x) {\n"
                f"    {' '.join(elem_binds)}\n    {self.operation};\n  }}\n  {self.after_loop};\n}}\n")


class ReductionKernel:
    """A reduction defined by CUDA C expressions, like ``cupy.ReductionKernel``.

    Args:
        in_params: input parameters (``"T x, T y"``; arrays of one shape after broadcasting, or scalars).
        out_params: output parameters (``"T z"``).
        map_expr: the value each input element contributes (``"x * y"``).
        reduce_expr: combines two partial values ``a`` and ``b`` (``"a + b"``, ``"max(a, b)"``).
        post_map_expr: writes an output from the reduced value ``a`` (``"z = a"``).
        identity: the reduction's identity, as CUDA C text (``"0"``, ``"-INFINITY"`` is not in NVRTC: use a
            literal such as ``"-3.402823466e38f"``).
        name: the kernel's name.
        reduce_type: the dtype of the partial values (default: the first output's).
        reduce_dims: accepted for CuPy compatibility.
        preamble: CUDA C put before the kernel.
        options: NVRTC options.

    Calling it, ``k(*args, axis=None, keepdims=False)``: ``axis`` None reduces every axis, an int or tuple
    those axes. Outputs not given are allocated. Returns the output array (0-d for a full reduction).

    Raises:
        GpusimError: as :class:`ElementwiseKernel`, and an axis out of range.
        gpusim.errors.CompileError: the generated CUDA C did not compile.
    """

    def __init__(self, in_params: str, out_params: str, map_expr: str, reduce_expr: str, post_map_expr: str,
                 identity: str | None, name: str = "reduce_kernel", reduce_type: str | None = None,
                 reduce_dims: bool = True, preamble: str = "", options: Sequence[str] = ()):
        self.name = name
        self.in_params = _parse_params(in_params, f"ReductionKernel {name}: in_params")
        self.out_params = _parse_params(out_params, f"ReductionKernel {name}: out_params")
        if not self.out_params:
            raise GpusimError(f"ReductionKernel {name}: out_params is empty")
        if identity is None:
            raise GpusimError(f"ReductionKernel {name}: gpusim needs an identity (CUDA C text such as '0')")
        self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
        self.identity, self.reduce_type, self.preamble = str(identity), reduce_type, preamble
        self.options = tuple(options)
        self._compiled = _Compiled()

    def __call__(self, *args, axis=None, keepdims: bool = False, stream=None):
        nin = len(self.in_params)
        args, types, arrays = _prepare(self, args)
        if not arrays:
            raise GpusimError(f"ReductionKernel {self.name}: no input array to reduce")
        shape = _broadcast_shape(arrays, f"ReductionKernel {self.name}")
        axes = self._axes(axis, len(shape))
        kept = [d for d in range(len(shape)) if d not in axes]
        out_shape = tuple(1 if d in axes else shape[d] for d in range(len(shape))) if keepdims \
            else tuple(shape[d] for d in kept)
        n_out, n_red = math.prod(shape[d] for d in kept), math.prod(shape[d] for d in axes)
        order = kept + sorted(axes)
        launch_args, outputs, writeback = [], [], []
        for k, p in enumerate(self.in_params + self.out_params):
            dt = _dtype(p, types, self.name)
            arg = args[k] if k < len(args) else empty(out_shape, dt)
            if k >= nin:
                if not isinstance(arg, ndarray) or arg.shape != out_shape or arg.dtype != dt:
                    raise GpusimError(f"ReductionKernel {self.name}: output {p.name!r} must be a {dt} array of "
                                      f"shape {out_shape}")
                outputs.append(arg)
                arg = _contiguous(arg, writeback)
            elif isinstance(arg, ndarray):
                host = None if arg.dtype == dt else arg.get().astype(dt)
                if arg.shape != shape or order != sorted(order):
                    host = np.broadcast_to(arg.get() if host is None else host, shape).transpose(order)
                arg = asarray(np.ascontiguousarray(host)) if host is not None else _contiguous(arg)
            else:
                arg = _scalar(arg, dt, f"ReductionKernel {self.name}: argument {p.name!r}")
            launch_args.append(arg)
        rtype = np.dtype(self.reduce_type) if self.reduce_type else _dtype(self.out_params[0], types, self.name)
        source = self._source(launch_args, types, rtype)
        fn = self._compiled.function(source, self.name, self.options)
        if n_out:
            fn((n_out,), (_REDUCE_BLOCK,), tuple(launch_args) + (np.int64(n_red),))
        for view, copy in writeback:
            view[...] = copy
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _axes(self, axis, ndim: int) -> list[int]:
        if axis is None:
            return list(range(ndim))
        items = axis if isinstance(axis, (tuple, list)) else (axis,)
        out = []
        for a in items:
            if not isinstance(a, (int, np.integer)) or not -ndim <= a < ndim:
                raise GpusimError(f"ReductionKernel {self.name}: axis {a!r} is out of range for {ndim} dimension(s)")
            out.append(int(a) % ndim)
        if len(set(out)) != len(out):
            raise GpusimError(f"ReductionKernel {self.name}: axis {axis!r} repeats an axis")
        return sorted(out)

    def _source(self, args: list[Any], types: dict[str, np.dtype], rtype: np.dtype) -> str:
        sig, loads, outs = [], [], []
        for p, a in zip(self.in_params + self.out_params, args):
            ctype = _ctype(p)
            if p in self.out_params:
                sig.append(f"{ctype}* __restrict__ _raw_{p.name}")
                outs.append(f"{ctype}& {p.name} = _raw_{p.name}[_out];")
            elif isinstance(a, ndarray):
                sig.append(f"const {ctype}* __restrict__ _raw_{p.name}")
                loads.append(f"const {ctype} {p.name} = _raw_{p.name}[_out * _nred + _j];")
            else:
                sig.append(f"const {ctype} {p.name}")
        block = _REDUCE_BLOCK
        return (f"{_header([a.dtype for a in args] + [rtype])}{_typedefs(types)}"
                f"typedef {_CTYPES[rtype]} _type_reduce;\n"
                f"{self.preamble}\n"
                f"__device__ __forceinline__ _type_reduce _reduce_op(const _type_reduce a, const _type_reduce b) "
                f"{{ return ({self.reduce_expr}); }}\n"
                f'extern "C" __global__ void {self.name}({", ".join(sig + ["long long _nred"])}) {{\n'
                f"  __shared__ _type_reduce _sdata[{block}];\n"
                "  const long long _out = blockIdx.x;\n"
                f"  _type_reduce _acc = ({self.identity});\n"
                "  for (long long _j = threadIdx.x; _j < _nred; _j += blockDim.x) {\n"
                f"    {' '.join(loads)}\n    _acc = _reduce_op(_acc, (_type_reduce)({self.map_expr}));\n  }}\n"
                "  _sdata[threadIdx.x] = _acc;\n  __syncthreads();\n"
                f"  for (int _s = {block // 2}; _s > 0; _s >>= 1) {{\n"
                "    if (threadIdx.x < _s) _sdata[threadIdx.x] = _reduce_op(_sdata[threadIdx.x], _sdata[threadIdx.x + _s]);\n"
                "    __syncthreads();\n  }\n"
                f"  if (threadIdx.x == 0) {{ const _type_reduce a = _sdata[0]; {' '.join(outs)} {self.post_map_expr}; }}\n"
                "}\n")
