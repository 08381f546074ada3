"""A third ``xp`` besides gpusim and CuPy: :class:`DryRun` launches nothing but checks every launch.

Owns :class:`DryRun` and :func:`entry_params` (the ``.entry`` parameter lists and
``.reqntid`` of a PTX text).  Used by the static tests and ``validation/probes/*.py --dry``.

Imports numpy, the standard library and :mod:`.launch` only; never gpusim's engines, never cupy.
"""

from __future__ import annotations

import pathlib
import re

import numpy as np

from .launch import DEFAULT_DYNAMIC_SMEM

__all__ = ["DryRun", "entry_params"]


_ENTRY_RE = re.compile(r"\.entry\s+([A-Za-z_$%][\w$]*)\s*\(([^)]*)\)", re.DOTALL)
_PARAM_RE = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([\w$]+)(\[\d+\])?")
_REQNTID_RE = re.compile(r"\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?")


def entry_params(ptx_text: str) -> dict[str, dict]:
    """``{entry: {"params": [ptx type, ...], "reqntid": (x, y, z) | None}}`` for every ``.entry``."""
    out = {}
    for m in _ENTRY_RE.finditer(ptx_text):
        params = [p.group(1) for p in _PARAM_RE.finditer(m.group(2))]
        tail = ptx_text[m.end(): ptx_text.find("{", m.end())]
        r = _REQNTID_RE.search(tail)
        req = tuple(int(g or 1) for g in r.groups()) if r else None
        out[m.group(1)] = {"params": params, "reqntid": req}
    return out


class DryRun:
    """An ``xp`` that launches nothing: checks each launch and records it.

    Arrays are host numpy arrays behind a ``.get()``; kernels are never run,
    so outputs stay as allocated (zeros).  Each launch is checked against the
    PTX entry: the argument count, each argument's kind (array <-> ``.u64``,
    ``np.uint32``/``np.int32`` <-> ``.u32``/``.s32``/``.b32``, ``np.float32`` <->
    ``.f32``), block size (<= 1024 threads, ``.reqntid``), grid and shared
    memory (<= 227 KiB).  Violations raise ``ValueError``; the checked
    launches are in ``self.log`` as ``(kernel, grid, block, shared_mem)``.
    Only the API subset the suite may use exists here, so a case that uses
    anything else fails with AttributeError.
    """

    class ndarray:
        def __init__(self, host: np.ndarray):
            self._host = host
            self.shape = host.shape
            self.dtype = host.dtype
            self.size = host.size

        def get(self) -> np.ndarray:
            return self._host.copy()

    def __init__(self) -> None:
        self.log: list[tuple] = []

    def asarray(self, a) -> DryRun.ndarray:
        return DryRun.ndarray(np.array(a, copy=True))

    def zeros(self, shape, dtype) -> DryRun.ndarray:
        return DryRun.ndarray(np.zeros(shape, dtype))

    def empty(self, shape, dtype) -> DryRun.ndarray:
        return DryRun.ndarray(np.zeros(shape, dtype))

    def RawModule(self, *, path: str) -> _DryModule:
        return _DryModule(self, pathlib.Path(path))


class _DryModule:
    def __init__(self, dry: DryRun, path: pathlib.Path):
        self.dry = dry
        self.path = path
        self.entries = entry_params(path.read_text())
        self.max_dynamic: dict[str, int] = {}   #: kernel -> raised max_dynamic_shared_size_bytes

    def get_function(self, name: str) -> _DryKernel:
        if name not in self.entries:
            raise ValueError(f"{self.path.name}: no .entry {name!r}")
        return _DryKernel(self, name)


_SCALAR_KINDS = {
    "u32": (np.uint32, np.int32), "s32": (np.int32, np.uint32), "b32": (np.uint32, np.int32),
    "f32": (np.float32,), "u64": (np.uint64, np.int64), "s64": (np.int64, np.uint64), "b64": (np.uint64, np.int64),
}


class _DryKernel:
    def __init__(self, module: _DryModule, name: str):
        self.module = module
        self.name = name

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        """CUDA's launch limit for dynamic shared memory: 48 KiB unless raised (static smem ignored)."""
        return self.module.max_dynamic.get(self.name, DEFAULT_DYNAMIC_SMEM)

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value: int) -> None:
        if not 0 <= int(value) <= 227 * 1024:
            raise ValueError(f"{self.module.path.name}:{self.name}: max_dynamic_shared_size_bytes={value} "
                             f"outside 0..{227 * 1024}")
        self.module.max_dynamic[self.name] = int(value)

    def __call__(self, grid, block, args, shared_mem: int = 0):
        where = f"{self.module.path.name}:{self.name}"
        info = self.module.entries[self.name]
        grid = (grid,) if isinstance(grid, int) else tuple(grid)
        block = (block,) if isinstance(block, int) else tuple(block)
        if not (1 <= len(grid) <= 3 and 1 <= len(block) <= 3):
            raise ValueError(f"{where}: grid {grid} / block {block} must have 1 to 3 dimensions")
        if any(int(g) < 1 for g in grid) or any(int(b) < 1 for b in block):
            raise ValueError(f"{where}: grid {grid} and block {block} must be positive")
        threads = int(np.prod(block))
        if threads > 1024:
            raise ValueError(f"{where}: block {block} has {threads} threads (> 1024)")
        req = info["reqntid"]
        if req is not None and tuple(block) + (1,) * (3 - len(block)) != req:
            raise ValueError(f"{where}: block {block} but .reqntid {req}")
        if not (0 <= int(shared_mem) <= 227 * 1024):
            raise ValueError(f"{where}: shared_mem {shared_mem} out of range")
        if int(shared_mem) > self.max_dynamic_shared_size_bytes:
            raise ValueError(f"{where}: shared_mem {shared_mem} exceeds max_dynamic_shared_size_bytes "
                             f"{self.max_dynamic_shared_size_bytes} (raise it first, as CUDA requires)")
        params = info["params"]
        if len(args) != len(params):
            raise ValueError(f"{where}: {len(args)} arguments for {len(params)} .param")
        for i, (arg, ptype) in enumerate(zip(args, params)):
            if isinstance(arg, DryRun.ndarray):
                if ptype not in ("u64", "b64", "s64"):
                    raise ValueError(f"{where}: argument {i} is an array but .param is .{ptype}")
            elif isinstance(arg, np.generic):
                kinds = _SCALAR_KINDS.get(ptype, ())
                if type(arg) not in kinds:
                    raise ValueError(f"{where}: argument {i} is {type(arg).__name__} but .param is .{ptype}")
            else:
                raise ValueError(f"{where}: argument {i} is {type(arg).__name__}: pass an array or a numpy scalar")
        self.module.dry.log.append((self.name, grid, block, int(shared_mem)))
        return None
