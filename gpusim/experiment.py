"""Run any kernel from a PTX file with arguments described in text.

Owns: the argument mini-language shared by ``gpusim run FILE.ptx --arg ...``
and experiment TOML files, building the argument arrays, launching, and
summarising the arrays afterwards. Imports the public API, numpy and tomllib.

Argument forms (one per kernel parameter, in order)::

    u32=1048576            a scalar of a PTX type (s8..s64, u8..u64, f16, f32, f64)
    f32[1048576]           an array, zero-filled
    f32[1024,1024]:random  uniform random in [0, 1) (integers: 0..99)
    u32[4096]:range        0, 1, 2, ...
    f32[256]:ones          every element 1
    f32[256]:fill=2.5      every element 2.5

An experiment TOML file holds ``ptx`` (a ``.ptx`` file, or a ``.cu`` file of CUDA C compiled
by NVRTC; relative to the TOML file), ``kernel``,
``grid``, ``block``, optional ``shared_mem``, ``gpu``, ``seed``, ``[set]``
(config overrides) and ``args`` (a list of the strings above).

Instead of ``ptx`` (exactly one of the two), ``python`` names a Python file (relative to the TOML
file) holding the ``@numba.cuda.jit`` or ``@triton.jit`` function ``kernel``; the file is imported
by path and the front-end is told from the function object. A Numba kernel takes ``grid``,
``block`` and ``shared_mem`` as above. A Triton kernel takes ``grid`` as its program grid and
``[meta]``, its constexprs and launch options (``BLOCK_SIZE = 1024``, ``num_warps = 4``) passed by
name; its block is ``32 * num_warps`` threads (``num_warps`` 4 if not given) and its dynamic shared
memory is Triton's own, so ``block`` and ``shared_mem`` are refused. :func:`launcher_of` launches
any of the three on gpusim (through :mod:`gpusim.frontends.numba` / :mod:`gpusim.frontends.triton`,
which import numba-cuda / Triton only when such a file is used).
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import gpusim
from gpusim.errors import GpusimError

__all__ = ["ArgSpec", "parse_arg", "Experiment", "load_experiment", "build_args", "summarize", "kernel_of",
           "python_kernel", "launcher_of"]

_DTYPES = {"s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64, "u8": np.uint8, "u16": np.uint16,
           "u32": np.uint32, "u64": np.uint64, "f16": np.float16, "f32": np.float32, "f64": np.float64}
#: Bytes of one array argument built on the host (its initial values) at most.
_MAX_HOST_BYTES = 1 << 34
_ARG = re.compile(r"^(?P<ty>[suf]\d+)(?:=(?P<value>[^\[]+)|\[(?P<shape>[\d,\s]+)\](?::(?P<init>random|range|ones|zeros|fill=.+))?)$")


@dataclass(frozen=True)
class ArgSpec:
    """One kernel argument: a scalar (``value``) or an array (``shape``, ``init``)."""

    ty: str
    value: str | None = None
    shape: tuple[int, ...] | None = None
    init: str = "zeros"
    text: str = ""


def parse_arg(text: str, where: str = "--arg") -> ArgSpec:
    """Parse one argument description (see the module docstring).
    Raises GpusimError naming ``where`` and the accepted forms."""
    m = _ARG.match(text.strip())
    if not m or m["ty"] not in _DTYPES:
        raise GpusimError(f"{where}: cannot read {text!r}; use TYPE=VALUE (u32=1024) or TYPE[SHAPE][:INIT] "
                          f"(f32[1024]:random; INIT is random, range, ones, zeros or fill=X; TYPE one of "
                          f"{', '.join(_DTYPES)})")
    if m["value"] is not None:
        return ArgSpec(m["ty"], value=m["value"].strip(), text=text)
    shape = tuple(int(s) for s in m["shape"].split(",") if s.strip())
    return ArgSpec(m["ty"], shape=shape, init=m["init"] or "zeros", text=text)


def build_args(specs: list[ArgSpec], rng: np.random.Generator) -> tuple[list[Any], dict[int, Any]]:
    """Create the launch arguments on the current device.
    Returns (args, {position: gpusim.ndarray} for the array arguments)."""
    args, arrays = [], {}
    for i, s in enumerate(specs):
        dt = np.dtype(_DTYPES[s.ty])
        if s.shape is None:
            try:
                value = float(s.value) if dt.kind == "f" else int(s.value, 0)
            except ValueError:
                raise GpusimError(f"argument {i} ({s.text}): {s.value!r} is not a {s.ty} value") from None
            if dt.kind in "iu":
                info = np.iinfo(dt)
                if not info.min <= value <= info.max:
                    raise GpusimError(f"argument {i} ({s.text}): {s.ty} takes {info.min}..{info.max}, got {value}")
            elif abs(value) > float(np.finfo(dt).max) and abs(value) != float("inf"):
                raise GpusimError(f"argument {i} ({s.text}): {value!r} is beyond the range of {s.ty} "
                                  f"(largest {float(np.finfo(dt).max)}); write inf for infinity")
            args.append(dt.type(value))
            continue
        n = int(np.prod(s.shape, dtype=object))
        if n * dt.itemsize > _MAX_HOST_BYTES:
            raise GpusimError(f"argument {i} ({s.text}): {n:,} elements of {s.ty} are {n * dt.itemsize:,} bytes, more "
                              f"than gpusim builds on the host ({_MAX_HOST_BYTES:,} bytes)")
        try:
            if s.init == "random":
                host = rng.random(n).astype(dt) if dt.kind == "f" else rng.integers(0, 100, n).astype(dt)
            elif s.init == "range":
                host = np.arange(n).astype(dt)
            elif s.init == "ones":
                host = np.ones(n, dt)
            elif s.init.startswith("fill="):
                host = np.full(n, float(s.init[5:]), dt)
            else:
                host = np.zeros(n, dt)
        except MemoryError:
            raise GpusimError(f"argument {i} ({s.text}): the host has no memory for its {n * dt.itemsize:,} bytes") from None
        except (ValueError, OverflowError):
            raise GpusimError(f"argument {i} ({s.text}): fill value {s.init[5:]!r} is not a {s.ty} value") from None
        arr = gpusim.asarray(host.reshape(s.shape))
        arrays[i] = arr
        args.append(arr)
    return args, arrays


@dataclass
class Experiment:
    """A kernel launch described in a TOML file.

    ``ptx`` (a .ptx/.cu file) or ``python`` (a .py file) is set, the other None. ``frontend`` is
    ``"ptx"``, ``"numba"`` or ``"triton"``; ``function`` the Numba dispatcher or Triton JITFunction
    (None for ``"ptx"``); ``meta`` Triton's constexprs and launch options; ``block`` for Triton is
    ``(32 * num_warps,)``."""

    ptx: Path | None
    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    args: list[ArgSpec]
    shared_mem: int = 0
    gpu: str = "h100"
    seed: int = 0
    overrides: dict[str, Any] = field(default_factory=dict)
    python: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    frontend: str = "ptx"
    function: Any = field(default=None, repr=False)

    @property
    def source(self) -> Path:
        """The kernel file: ``ptx`` or ``python``."""
        return self.python if self.python is not None else self.ptx  # type: ignore[return-value]


def _dims(v, key: str, path: Path) -> tuple[int, ...]:
    vals = [v] if isinstance(v, int) else v
    if not isinstance(vals, list) or not 1 <= len(vals) <= 3 or not all(isinstance(x, int) for x in vals):
        raise GpusimError(f"{path}: '{key}' must be an integer or a list of 1 to 3 integers, got {v!r}")
    return tuple(vals)


#: The type each experiment key takes (grid/block/args/meta are checked where they are read).
_KEY_TYPES = {"ptx": (str, "a file name (str)"), "python": (str, "a file name (str)"), "kernel": (str, "a kernel name (str)"),
              "shared_mem": (int, "an integer >= 0 (bytes)"), "gpu": (str, "a configuration name or .toml path (str)"),
              "seed": (int, "an integer >= 0"), "set": (dict, "a table of config overrides ([set])")}


def _check_types(data: dict, path: Path) -> None:
    """GpusimError naming the file and the key for a value of the wrong type or range."""
    for key, (ty, what) in _KEY_TYPES.items():
        if key not in data:
            continue
        v = data[key]
        if not isinstance(v, ty) or isinstance(v, bool) or (ty is int and v < 0) or (ty is str and (not v or "\0" in v)):
            raise GpusimError(f"{path}: '{key}' must be {what}, got {v!r}")


def kernel_of(xp: Any, path: str | Path, kernel: str) -> Any:
    """Kernel ``kernel`` of the file ``path`` through ``xp``'s ``RawModule`` (``xp`` is :mod:`gpusim`, or
    ``cupy`` in validation): a ``.ptx`` file is loaded by path, a ``.cu`` file of CUDA C is compiled from its
    text (CuPy's ``path`` takes only compiled files), with ``kernel`` as a name expression when it names a
    template instantiation (``add<float>``)."""
    path = Path(path)
    if path.suffix != ".cu":
        return xp.RawModule(path=str(path)).get_function(kernel)
    try:
        code = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise GpusimError(f"{path}: cannot read the CUDA C source ({exc})") from None
    names = [kernel] if "<" in kernel else None
    return xp.RawModule(code=code, name_expressions=names).get_function(kernel)


def python_kernel(path: str | Path, kernel: str, where: str | Path = "python_kernel()") -> tuple[str, Any]:
    """Import the Python file ``path`` by path and return (``"numba"`` or ``"triton"``, its function
    ``kernel``): a ``numba.cuda`` kernel dispatcher or a Triton ``JITFunction``. The module is registered
    in ``sys.modules`` under a name made of the file's path (Triton reads the source with ``inspect``).

    Raises GpusimError naming ``where`` (the TOML file) and the key ('python' or 'kernel') for a missing
    or failing file, a missing function, or an object that is neither kind of kernel."""
    path = Path(path)
    if not path.is_file():
        raise GpusimError(f"{where}: 'python': no such file {path}")
    name = f"gpusim_experiment_{path.stem}_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception as exc:
        del sys.modules[name]
        raise GpusimError(f"{where}: 'python': importing {path} failed: {type(exc).__name__}: {exc}") from None
    fn = getattr(module, kernel, None)
    if fn is None:
        found = sorted(k for k, v in vars(module).items() if _frontend_of(v))
        raise GpusimError(f"{where}: 'kernel' = {kernel!r}: {path} has no such function (its "
                          f"kernels: {', '.join(found) or 'none'})")
    frontend = _frontend_of(fn)
    if frontend is None:
        raise GpusimError(f"{where}: 'kernel' = {kernel!r}: in {path} it is a {type(fn).__name__}, "
                          f"not a @numba.cuda.jit or @triton.jit kernel")
    return frontend, fn


def _frontend_of(obj: Any) -> str | None:
    """``"numba"`` for a numba.cuda dispatcher, ``"triton"`` for a Triton JITFunction, else None (neither
    package is imported unless the object's class comes from it)."""
    mod = type(obj).__module__ or ""
    if mod.startswith("numba"):
        from numba.cuda.dispatcher import CUDADispatcher

        return "numba" if isinstance(obj, CUDADispatcher) else None
    if mod.startswith("triton"):
        from triton.runtime.jit import JITFunction

        return "triton" if isinstance(obj, JITFunction) else None
    return None


def launcher_of(exp: Experiment):
    """A callable ``launch(grid, block, args, shared_mem=0)`` running ``exp``'s kernel on the current
    :class:`gpusim.Device` and returning its LaunchResult: the PTX/CUDA C file through
    :func:`kernel_of`, a Numba kernel through :func:`gpusim.frontends.numba.kernel` (``k[grid, block, 0,
    shared_mem](*args)``), a Triton kernel through :func:`gpusim.frontends.triton.jit` (``k[grid](*args,
    **exp.meta)``; ``block`` and ``shared_mem`` are Triton's own and ignored)."""
    if exp.frontend == "numba":
        from gpusim.frontends.numba import kernel

        nk = kernel(exp.function)
        return lambda grid, block, args, shared_mem=0: nk[tuple(grid), tuple(block), 0, shared_mem](*args)
    if exp.frontend == "triton":
        from gpusim.frontends.triton import jit

        tk, meta = jit(exp.function), dict(exp.meta)
        return lambda grid, block, args, shared_mem=0: tk[tuple(grid)](*args, **meta)
    rk = kernel_of(gpusim, exp.ptx, exp.kernel)  # type: ignore[arg-type]
    return lambda grid, block, args, shared_mem=0: rk(grid, block, tuple(args), shared_mem=shared_mem)


def load_experiment(path: str | Path, kernel_file: str | Path | None = None) -> Experiment:
    """Read an experiment TOML file; errors name the file and the key. A ``python`` file is imported
    (see :func:`python_kernel`). ``kernel_file`` replaces the file that ``ptx``/``python`` names (validation
    re-materialises a bundle's copy of it)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise GpusimError(f"{path}: cannot read experiment file: {exc}") from None
    known = {"ptx", "python", "kernel", "grid", "block", "shared_mem", "gpu", "seed", "set", "args", "meta"}
    extra = sorted(set(data) - known)
    if extra:
        raise GpusimError(f"{path}: unknown key(s) {', '.join(extra)} (known: {', '.join(sorted(known))})")
    if ("ptx" in data) == ("python" in data):
        raise GpusimError(f"{path}: give exactly one of 'ptx' (a .ptx or .cu file) and 'python' (a .py file with a "
                          f"@numba.cuda.jit or @triton.jit kernel), {'not both' if 'ptx' in data else 'found neither'}")
    for key in ("kernel", "grid", "args") + (("block",) if "ptx" in data else ()):
        if key not in data:
            raise GpusimError(f"{path}: missing key '{key}'")
    if not isinstance(data["args"], list):
        raise GpusimError(f"{path}: 'args' must be a list of argument strings")
    if "meta" in data and "python" not in data:
        raise GpusimError(f"{path}: 'meta' is for Triton kernels (a 'python' file), not a 'ptx' file")
    key = "ptx" if "ptx" in data else "python"
    _check_types(data, path)
    source = Path(kernel_file) if kernel_file is not None else (path.parent / str(data[key])).resolve()
    exp = Experiment(
        ptx=source if key == "ptx" else None, kernel=str(data["kernel"]),
        grid=_dims(data["grid"], "grid", path), block=_dims(data.get("block", 1), "block", path),
        args=[parse_arg(str(a), f"{path}: args[{i}]") for i, a in enumerate(data["args"])],
        shared_mem=int(data.get("shared_mem", 0)), gpu=str(data.get("gpu", "h100")), seed=int(data.get("seed", 0)),
        overrides=dict(data.get("set", {})), python=source if key == "python" else None)
    if key == "python":
        exp.frontend, exp.function = python_kernel(source, exp.kernel, path)
        meta = data.get("meta", {})
        if not isinstance(meta, dict):
            raise GpusimError(f"{path}: 'meta' must be a table ([meta]) of Triton constexprs and launch options")
        if exp.frontend == "numba":
            if "block" not in data:
                raise GpusimError(f"{path}: missing key 'block' (a Numba kernel launches [grid, block])")
            if meta:
                raise GpusimError(f"{path}: 'meta' is for Triton kernels; {exp.kernel} is a Numba kernel")
        else:
            for bad in ("block", "shared_mem"):
                if bad in data:
                    raise GpusimError(f"{path}: '{bad}' is not given for a Triton kernel: it launches 32 * num_warps "
                                      f"threads per program with its own shared memory (set num_warps in [meta])")
            warps = meta.get("num_warps", 4)
            if not isinstance(warps, int) or isinstance(warps, bool) or warps < 1:
                raise GpusimError(f"{path}: 'meta.num_warps' must be a positive integer, got {warps!r}")
            exp.meta, exp.block = dict(meta), (32 * warps,)
    return exp


def summarize(arrays: dict[int, Any]) -> list[tuple]:
    """Rows (argument, shape, dtype, min, max, mean, first values) of the array arguments."""
    rows = []
    for i, arr in arrays.items():
        h = arr.get()
        flat = h.reshape(-1)
        first = ", ".join(f"{v:g}" if h.dtype.kind == "f" else str(v) for v in flat[:4])
        rows.append((i, "x".join(map(str, h.shape)), str(h.dtype),
                     float(flat.min()) if flat.size else 0.0, float(flat.max()) if flat.size else 0.0,
                     float(flat.astype(np.float64).mean()) if flat.size else 0.0, first))
    return rows
