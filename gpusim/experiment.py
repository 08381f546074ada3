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
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import gpusim
from gpusim.errors import GpusimError

__all__ = ["ArgSpec", "parse_arg", "Experiment", "load_experiment", "build_args", "summarize"]

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
    """A kernel launch described in a TOML file."""

    ptx: Path
    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    args: list[ArgSpec]
    shared_mem: int = 0
    gpu: str = "h100"
    seed: int = 0
    overrides: dict[str, Any] = field(default_factory=dict)


def _dims(v, key: str, path: Path) -> tuple[int, ...]:
    vals = [v] if isinstance(v, int) else v
    if not isinstance(vals, list) or not 1 <= len(vals) <= 3 or not all(isinstance(x, int) for x in vals):
        raise GpusimError(f"{path}: '{key}' must be an integer or a list of 1 to 3 integers, got {v!r}")
    return tuple(vals)


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


def load_experiment(path: str | Path) -> Experiment:
    """Read an experiment TOML file; errors name the file and the key."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise GpusimError(f"{path}: cannot read experiment file: {exc}") from None
    known = {"ptx", "kernel", "grid", "block", "shared_mem", "gpu", "seed", "set", "args"}
    extra = sorted(set(data) - known)
    if extra:
        raise GpusimError(f"{path}: unknown key(s) {', '.join(extra)} (known: {', '.join(sorted(known))})")
    for key in ("ptx", "kernel", "grid", "block", "args"):
        if key not in data:
            raise GpusimError(f"{path}: missing key '{key}'")
    if not isinstance(data["args"], list):
        raise GpusimError(f"{path}: 'args' must be a list of argument strings")
    return Experiment(
        ptx=(path.parent / data["ptx"]).resolve(), kernel=str(data["kernel"]),
        grid=_dims(data["grid"], "grid", path), block=_dims(data["block"], "block", path),
        args=[parse_arg(str(a), f"{path}: args[{i}]") for i, a in enumerate(data["args"])],
        shared_mem=int(data.get("shared_mem", 0)), gpu=str(data.get("gpu", "h100")), seed=int(data.get("seed", 0)),
        overrides=dict(data.get("set", {})))


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
