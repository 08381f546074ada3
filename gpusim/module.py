"""PTX modules and kernels, mirroring ``cupy.RawModule`` and ``cupy.RawKernel``.

Owns: loading a PTX file or text (CUDA C source is compiled to PTX first, by
:mod:`gpusim.nvrtc`), looking kernels up by name, checking a
launch the way the CUDA driver does (block and grid limits, shared memory,
``.reqntid``/``.maxntid``, argument count and widths) and packing arguments
into the parameter buffer, and handing the launch to the engine of the
device's mode. Imports isa, the device, the occupancy calculator, ptxas and
both engines; never cupy.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gpusim.device import Device, get_device
from gpusim.errors import GpusimError, LaunchError
from gpusim.functional.engine import Grid
from gpusim.functional.launch import LaunchResult, run_functional
from gpusim.ndarray import ndarray
from gpusim.nvrtc import is_ptx
from gpusim.occupancy import max_active_blocks
from gpusim.ptxas import PtxasError, resource_usage
from gpusim.sass import KernelSass, kernel_sass
from isa import parse, parse_file
from isa.ir import Kernel, Module, Param
from isa.types import TYPES

__all__ = ["RawModule", "RawKernel"]


class RawModule:
    """A module of kernels, like ``cupy.RawModule``: PTX text or a ``.ptx`` file, or CUDA C source
    compiled by NVRTC as CuPy compiles it (:mod:`gpusim.nvrtc`; needs ``gpusim[cuda]``).

    Args:
        code: PTX text (it has a ``.version`` directive) or CUDA C source (anything else).
        path: a ``.ptx`` file, or a ``.cu`` file of CUDA C (exactly one of ``code`` and ``path``;
            CuPy's ``path`` takes only compiled files, gpusim's also CUDA C).
        options: NVRTC options for CUDA C, as CuPy takes them (``("-std=c++17",)``); CuPy's own
            (``-ftz=true``, the target) follow them. Ignored for PTX.
        name_expressions: C++ names of template kernels to instantiate (``["add<float>"]``); pass one
            to :meth:`get_function` to get its lowered name's kernel.
        backend: ``"nvrtc"`` (CuPy's default; the only one gpusim has).
        translate_cucomplex, enable_cooperative_groups, jitify: CuPy's; gpusim supports only their
            default, False (it has no CuPy headers, no relocatable device code and no Jitify).

    CUDA C is compiled for the current device's architecture at construction, and again, once, for
    another device's when a kernel is launched there (CuPy compiles for the device in use).

    Raises:
        isa.PTXError: the PTX is malformed or uses an unsupported construct (file, line and column).
        gpusim.errors.CompileError: NVRTC rejected the CUDA C (carries NVRTC's log, ``kern.cu(line)``).
        gpusim.errors.GpusimError: neither or both of ``code`` and ``path``; ``code`` not a str; an
            unreadable file; an unsupported option value; NVRTC not installed.
    """

    def __init__(self, *, code: str | None = None, path: str | Path | None = None, options: Sequence[str] = (),
                 backend: str = "nvrtc", translate_cucomplex: bool = False, enable_cooperative_groups: bool = False,
                 name_expressions: Sequence[str] | None = None, jitify: bool = False):
        if (code is None) == (path is None):
            raise GpusimError("RawModule needs exactly one of code= (PTX text or CUDA C source) or path= (a .ptx "
                              "or .cu file)")
        if code is not None and not isinstance(code, str):
            raise GpusimError(f"RawModule(code=...) takes a str of PTX or CUDA C source, got {type(code).__name__}")
        if path is not None and not isinstance(path, (str, os.PathLike)):
            raise GpusimError(f"RawModule(path=...) takes a file path (str or os.PathLike), got {type(path).__name__}")
        self.code, self.options, self.backend = code, tuple(options), backend
        self.name_expressions = tuple(name_expressions) if name_expressions is not None else None
        #: CUDA C source and its program name, or None for a PTX module.
        self._cuda: tuple[str, str] | None = None
        #: Per architecture: (parsed module, name expression -> lowered name) of compiled CUDA C.
        self._by_arch: dict[str, tuple[Module, dict[str, str]]] = {}
        #: Per architecture: this CUDA C module compiled for another device's GPU.
        self._retargeted: dict[str, RawModule] = {}
        if path is not None:
            path = Path(path)
            if path.suffix == ".cubin":
                raise GpusimError(f"{path}: gpusim runs PTX, not cubin binaries")
            if path.suffix == ".cu":
                try:
                    self._cuda = (path.read_text(), str(path))
                except (OSError, UnicodeDecodeError) as exc:
                    raise GpusimError(f"{path}: cannot read the CUDA C source ({exc})") from None
            else:
                self.module: Module = _parse_cached(path)
        elif is_ptx(code):
            self.module = parse(code, "<code>")
        else:
            self._cuda = (code, "kern.cu")
        if self._cuda is not None:
            unsupported = {"backend": backend if backend != "nvrtc" else None,
                           "translate_cucomplex": translate_cucomplex or None,
                           "enable_cooperative_groups": enable_cooperative_groups or None, "jitify": jitify or None}
            for what, value in unsupported.items():
                if value is not None:
                    raise GpusimError(f"RawModule({what}={value!r}): gpusim compiles CUDA C with NVRTC and "
                                      f"CuPy's default options only (backend='nvrtc', {what} off)")
            self.module = self._compiled(get_device().config.arch)[0]
        self._kernels: dict[str, RawKernel] = {}
        #: Per device (by id): (device, {name: ndarray}) of the module's .global/.const variables.
        self._globals: dict[int, tuple[Device, dict[str, ndarray]]] = {}

    def _compiled(self, arch: str) -> tuple[Module, dict[str, str]]:
        """The CUDA C source compiled for ``arch`` and parsed (once per architecture)."""
        if arch not in self._by_arch:
            from gpusim.nvrtc import compile_cuda

            source, filename = self._cuda
            prog = compile_cuda(source, options=self.options, name_expressions=self.name_expressions or (),
                                arch=arch, filename=filename)
            self._by_arch[arch] = (parse(prog.ptx, f"{filename} (NVRTC PTX for {arch})"), prog.lowered)
        return self._by_arch[arch]

    def _kernel_for(self, arch: str, name: str) -> "RawKernel":
        """This module's kernel ``name`` compiled for ``arch`` (CUDA C launched on another GPU's device)."""
        if arch not in self._retargeted:
            other = object.__new__(RawModule)
            other.__dict__.update(self.__dict__)
            other.module, other._kernels, other._globals = self._compiled(arch)[0], {}, {}
            self._retargeted[arch] = other
        return self._retargeted[arch].get_function(name)

    def get_lowered_name(self, name: str) -> str:
        """The lowered (mangled) name of a name expression given at construction, like CuPy's
        ``RawModule.get_lowered_name``. Raises GpusimError for a name not among ``name_expressions``."""
        lowered = self._compiled(self.module_arch)[1] if self._cuda is not None else {}
        if name not in lowered:
            raise GpusimError(f"{name!r} is not one of this module's name_expressions "
                              f"({', '.join(self.name_expressions or ()) or 'none given'})")
        return lowered[name]

    @property
    def module_arch(self) -> str:
        """The architecture the module's PTX targets (``.target``, ``"sm_90"``)."""
        return self.module.target.split(",")[0].strip()

    def _place_globals(self, dev: Device) -> dict[str, ndarray]:
        """Allocate this module's ``.global``/``.const`` variables on ``dev`` (once per device,
        like the driver at module load: initialised from their initialisers, else zero) and
        make them the ones its kernels' symbols name in ``dev.memory``."""
        entry = self._globals.get(id(dev))
        if entry is None or entry[0] is not dev:
            arrays = {}
            for name, var in self.module.globals.items():
                arr = ndarray((var.size,), np.uint8, device=dev)
                if var.init is not None:
                    arr._bytes()[:len(var.init)] = np.frombuffer(var.init, np.uint8)
                arrays[name] = arr
            entry = self._globals[id(dev)] = (dev, arrays)
        for name, arr in entry[1].items():
            dev.memory.symbols[self.module.globals[name]] = arr.data.ptr
        return entry[1]

    def get_global(self, name: str) -> ndarray:
        """The module variable ``name`` (a ``.global`` / ``__device__`` or ``.const`` /
        ``__constant__`` variable) on the current device, like ``cupy.RawModule.get_global``.

        CuPy returns a ``cupy.cuda.MemoryPointer``; gpusim returns a :class:`gpusim.ndarray`
        of the variable's PTX element type (``.b8 x[20]`` -> 20 ``uint8``), which reads and
        writes it directly and also serves as the ``memptr`` of a typed view, so the same
        code runs on both: ``xp.ndarray((5,), np.float32, mod.get_global("c_weights"))``.
        Host writes are seen by every later launch of the module's kernels on this device.

        Raises:
            GpusimError: the module has no .global/.const variable of that name (lists them).
        """
        var = self.module.globals.get(name)
        if var is None:
            have = ", ".join(sorted(self.module.globals)) or "none"
            raise GpusimError(f"{self.module.path}: no .global/.const variable named {name!r} (module variables: {have})")
        arr = self._place_globals(get_device())[name]
        dtype = _GLOBAL_DTYPE.get(var.ty, None) or np.dtype(f"u{TYPES[var.ty].size}")
        return ndarray((var.size // dtype.itemsize,), dtype, arr)

    def get_function(self, name: str) -> "RawKernel":
        """The kernel ``name``: its ``.entry`` name, or one of ``name_expressions`` (its lowered name's
        kernel, as CuPy maps it). Raises GpusimError listing the module's kernels if there is none."""
        if self._cuda is not None and self.name_expressions and name in self.name_expressions:
            name = self.get_lowered_name(name)
        if name not in self.module.kernels:
            have = ", ".join(sorted(self.module.kernels)) or "none"
            raise GpusimError(f"{self.module.path}: no kernel named {name!r} (kernels in this module: {have})")
        if name not in self._kernels:
            self._kernels[name] = RawKernel._of(self, self.module.kernels[name])
        return self._kernels[name]

    @property
    def kernel_names(self) -> list[str]:
        """Names of the module's kernels, in file order."""
        return list(self.module.kernels)


_GLOBAL_DTYPE = {t: TYPES[t].dtype for t in TYPES if not t.startswith("b") and t != "pred"}

_CACHE: dict[tuple[str, int, int], Module] = {}


def _parse_cached(path: Path) -> Module:
    """Parse a PTX file once per (path, size, modification time): modules are
    read-only after parsing, so kernels loaded twice share one decoded form."""
    try:
        st = path.stat()
    except OSError:
        return parse_file(path)  # reports the unreadable file
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _CACHE:
        _CACHE[key] = parse_file(path)
    return _CACHE[key]


def _sass_counts(res: LaunchResult, sass: KernelSass) -> None:
    """Count instructions as the hardware does: ``smsp__inst_executed.sum`` and
    ``smsp__thread_inst_executed.sum`` become SASS-equivalent (:meth:`KernelSass.executed`);
    the PTX counts move to ``gpusim__ptx_inst_executed.sum`` / ``gpusim__ptx_thread_inst_executed.sum``;
    ``smsp__inst_executed_op_shared_{ld,st}.sum`` count the guarded shared loads and stores that
    warps issue with every lane off (:meth:`KernelSass.skipped_shared_executed`), as the H100 does."""
    m = res.metrics
    for kind, per_pc in (("inst", res.inst_executed), ("thread_inst", res.thread_inst_executed)):
        m[f"gpusim__ptx_{kind}_executed.sum"] = m[f"smsp__{kind}_executed.sum"]
        m[f"smsp__{kind}_executed.sum"] = sass.executed(per_pc)
    loads, stores = sass.skipped_shared_executed(res.inst_executed)
    for op, extra in (("ld", loads), ("st", stores)):
        key = f"smsp__inst_executed_op_shared_{op}.sum"
        if extra and key in m:
            m[key] += extra
    res.costs = sass.source


def _byte_count(value, what: str) -> int:
    """A byte count argument: an int (Python or numpy, not bool). Raises LaunchError naming ``what``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise LaunchError(f"{what} must be an int (bytes), got {type(value).__name__} {value!r}")
    return int(value)


def _dims(value, what: str) -> tuple[int, int, int]:
    vals = (value,) if isinstance(value, (int, np.integer)) else tuple(value) if isinstance(value, (tuple, list)) else None
    if vals is None or not 1 <= len(vals) <= 3 or not all(isinstance(v, (int, np.integer)) for v in vals):
        raise LaunchError(f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r}")
    vals = tuple(int(v) for v in vals) + (1,) * (3 - len(vals))
    if min(vals) < 1:
        raise LaunchError(f"{what} {vals} has a dimension below 1 (CUDA error: invalid configuration argument)")
    return vals  # type: ignore[return-value]


class RawKernel:
    """A kernel; call it to launch, like ``cupy.RawKernel``.

    ``RawKernel(code, name, options=(), ...)`` compiles CUDA C (or parses PTX) ``code`` as a one-kernel
    :class:`RawModule` with CuPy's signature and takes its kernel ``name``;
    :meth:`RawModule.get_function` returns the kernels of a module.

    Args:
        code: CUDA C source or PTX text.
        name: the kernel's symbol (an ``extern "C"`` name, else the mangled name).
        options, backend, translate_cucomplex, enable_cooperative_groups, jitify: as :class:`RawModule`.

    Raises:
        as :class:`RawModule` and :meth:`RawModule.get_function`.

    Attributes:
        name: the ``.entry`` name.
        kernel: the decoded kernel (:class:`isa.ir.Kernel`).
        max_dynamic_shared_size_bytes: the launch limit for dynamic shared
            memory (bytes); like ``cudaFuncAttributeMaxDynamicSharedMemorySize``
            it defaults to 48 KiB minus static shared memory and may be raised
            up to the GPU's opt-in limit.
    """

    def __init__(self, code: str, name: str, options: Sequence[str] = (), backend: str = "nvrtc",
                 translate_cucomplex: bool = False, enable_cooperative_groups: bool = False, jitify: bool = False):
        if not isinstance(name, str):
            raise GpusimError(f"RawKernel(code, name): name must be a str, got {type(name).__name__}")
        module = RawModule(code=code, options=options, backend=backend, translate_cucomplex=translate_cucomplex,
                           enable_cooperative_groups=enable_cooperative_groups, jitify=jitify)
        self._init(module, module.get_function(name).kernel)
        self.code, self.options = code, tuple(options)

    @classmethod
    def _of(cls, module: RawModule, kernel: Kernel) -> "RawKernel":
        """The kernel ``kernel`` of ``module`` (what :meth:`RawModule.get_function` returns)."""
        self = object.__new__(cls)
        self._init(module, kernel)
        self.code, self.options = module.code, module.options
        return self

    def _init(self, module: RawModule, kernel: Kernel) -> None:
        self.module, self.kernel, self.name = module, kernel, kernel.name
        self._max_dynamic: int | None = None
        self._regs: dict[str, int] = {}
        self._sass: dict[str, KernelSass] = {}

    @property
    def shared_size_bytes(self) -> int:
        """Static shared memory per CTA (bytes), from the ``.shared`` declarations."""
        return self.kernel.static_shared_bytes

    @property
    def local_size_bytes(self) -> int:
        """Local memory per thread (bytes), from the ``.local`` declarations."""
        return self.kernel.local_bytes

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        cfg = get_device().config
        if self._max_dynamic is not None:
            return self._max_dynamic
        return cfg.sm.shared_per_block_bytes - self.kernel.static_shared_bytes

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value: int) -> None:
        cfg = get_device().config
        limit = cfg.sm.shared_per_block_optin_bytes - self.kernel.static_shared_bytes
        value = _byte_count(value, "max_dynamic_shared_size_bytes")
        if not 0 <= value <= limit:
            raise LaunchError(f"max_dynamic_shared_size_bytes={value} is outside 0..{limit} for {self.name} on "
                              f"{cfg.name} (opt-in limit {cfg.sm.shared_per_block_optin_bytes} B minus "
                              f"{self.kernel.static_shared_bytes} B static; CUDA error: invalid value)")
        self._max_dynamic = int(value)

    def __call__(self, grid, block, args: Sequence[Any], *, shared_mem: int = 0, stream=None) -> LaunchResult:
        """Launch on the current device and wait for completion.

        Args:
            grid, block: int or tuple of up to 3 ints.
            args: one per ``.param``: :class:`gpusim.ndarray` for pointer
                parameters, numpy scalars of the parameter's width otherwise.
            shared_mem: dynamic shared memory per CTA, bytes.
            stream: accepted for CuPy compatibility and ignored.

        Returns:
            :class:`gpusim.functional.launch.LaunchResult` (CuPy returns None).

        Raises:
            LaunchError: an impossible launch, named as the CUDA error it mirrors.
            GpusimError: wrong arguments (names the argument and parameter).
            KernelFault: the kernel faulted (out-of-bounds, misaligned, deadlock).
        """
        dev = get_device()
        if self.module._cuda is not None and dev.config.arch != self.module.module_arch:
            return self.module._kernel_for(dev.config.arch, self.name)(grid, block, args, shared_mem=shared_mem)
        g = Grid(_dims(grid, "grid"), _dims(block, "block"))
        shared_mem = _byte_count(shared_mem, "shared_mem")
        self._check_launch(dev, g, shared_mem)
        params = self._pack(dev, args)
        if self.module.module.globals:
            self.module._place_globals(dev)
        sass = self._sass_costs(dev)
        if dev.mode == "timing":
            from gpusim.timing import Policy, run_timing  # SimPy is imported only by timing-mode users

            occ = max_active_blocks(dev.config, g.threads_per_block, self._registers(dev),
                                    self.kernel.static_shared_bytes, int(shared_mem),
                                    max(int(shared_mem), self.max_dynamic_shared_size_bytes))
            res = run_timing(self.kernel, g, params, dev.memory, int(shared_mem), dev.config, occ, dev.max_cycles,
                             dev.record_events, Policy() if dev.sampling is True else dev.sampling or None,
                             dev.max_steps, sass, jobs=dev.jobs)
            res.occupancy = occ
        else:
            res = run_functional(self.kernel, g, params, dev.memory, int(shared_mem), dev.config.sm_count,
                                 dev.config.sm.max_warps, dev.max_steps, jobs=dev.jobs)
        if sass is not None:
            _sass_counts(res, sass)
        return res

    def _sass_costs(self, dev: Device) -> KernelSass | None:
        """What ptxas makes of this kernel for the device's architecture (cached), or ``None``
        with ``Device(sass=False)``."""
        if not dev.sass:
            return None
        arch = dev.config.arch
        if arch not in self._sass:
            mod = self.module.module
            self._sass[arch] = kernel_sass(self.kernel, "\n".join(mod.source_lines), arch, source=str(mod.path))
        return self._sass[arch]

    def _registers(self, dev: Device) -> int:
        """Registers per thread for the occupancy: the device's override, else ``ptxas -v``
        for the device's architecture, else 32 (with a warning)."""
        if dev.regs_per_thread is not None:
            return dev.regs_per_thread
        key = dev.config.arch
        if key not in self._regs:
            try:
                path = self.module.module.path
                if not Path(path).is_file():
                    tmp = tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False)
                    with tmp:
                        tmp.write("\n".join(self.module.module.source_lines))
                    path = tmp.name
                # PTX for the architecture-specific target of the device's own architecture (Triton's
                # sm_90a on an sm_90 GPU) is assembled for that target: ptxas refuses sm_90a PTX for sm_90.
                target = self.module.module.target
                arch = target if target.rstrip("af") == key and target != key else dev.config
                self._regs[key] = resource_usage(path, arch)[self.name].registers
            except PtxasError as exc:
                warnings.warn(f"{self.name}: no register count from ptxas ({exc}); timing mode assumes 32 "
                              f"registers per thread (pass gpusim.Device(regs_per_thread=...) to choose)",
                              stacklevel=3)
                self._regs[key] = 32
        return self._regs[key]

    # ---------------------------------------------------------------- checks
    def _check_launch(self, dev: Device, g: Grid, shared_mem: int) -> None:
        cfg = dev.config
        if g.threads_per_block > cfg.max_threads_per_block:
            raise LaunchError(f"block {g.block} has {g.threads_per_block} threads; {cfg.name} allows at most "
                              f"{cfg.max_threads_per_block} per block (CUDA error: invalid configuration argument)")
        for axis, (v, lim) in enumerate(zip(g.block, cfg.max_block_dims)):
            if v > lim:
                raise LaunchError(f"block dimension {'xyz'[axis]}={v} exceeds {lim} on {cfg.name} "
                                  f"(CUDA error: invalid configuration argument)")
        for axis, (v, lim) in enumerate(zip(g.grid, cfg.max_grid_dims)):
            if v > lim:
                raise LaunchError(f"grid dimension {'xyz'[axis]}={v} exceeds {lim} on {cfg.name} "
                                  f"(CUDA error: invalid configuration argument)")
        if shared_mem < 0:
            raise LaunchError(f"shared_mem={shared_mem} is negative")
        static = self.kernel.static_shared_bytes
        if static > cfg.sm.shared_per_block_bytes:
            raise LaunchError(f"{self.name} declares {static} B of static shared memory; the limit is "
                              f"{cfg.sm.shared_per_block_bytes} B on {cfg.name} (use dynamic shared memory above "
                              f"48 KiB; ptxas: 'uses too much shared data'; CUDA error: too many resources requested "
                              f"for launch)")
        local = self.kernel.local_bytes
        if local > cfg.max_local_bytes_per_thread:
            raise LaunchError(f"{self.name} declares {local} B of .local memory per thread; the limit is "
                              f"{cfg.max_local_bytes_per_thread} B on {cfg.name} (CUDA error: too many resources "
                              f"requested for launch)")
        if shared_mem > self.max_dynamic_shared_size_bytes:
            hint = ("; raise kernel.max_dynamic_shared_size_bytes first (up to "
                    f"{cfg.sm.shared_per_block_optin_bytes - static} B)"
                    if shared_mem <= cfg.sm.shared_per_block_optin_bytes - static else "")
            raise LaunchError(f"{self.name}: shared_mem={shared_mem} B of dynamic shared memory exceeds the kernel's "
                              f"limit of {self.max_dynamic_shared_size_bytes} B on {cfg.name}{hint} "
                              f"(CUDA error: too many resources requested for launch)")
        req = self.kernel.directives.get("reqntid")
        if req and tuple(req) + (1,) * (3 - len(req)) != g.block:
            raise LaunchError(f"{self.name} requires block {tuple(req)} (.reqntid) but was launched with {g.block}")
        mx = self.kernel.directives.get("maxntid")
        if mx and g.threads_per_block > int(np.prod(mx)):
            raise LaunchError(f"{self.name} allows at most {int(np.prod(mx))} threads per block (.maxntid), "
                              f"launched with {g.threads_per_block}")

    def _pack(self, dev: Device, args: Sequence[Any]) -> np.ndarray:
        params = self.kernel.params
        if not isinstance(args, (tuple, list)):
            raise GpusimError(f"{self.name}: args must be a tuple of kernel arguments, got {type(args).__name__}")
        if len(args) != len(params):
            sig = ", ".join(f".{p.ty} {p.name}" for p in params)
            raise GpusimError(f"{self.name} takes {len(params)} argument(s) ({sig}), got {len(args)}")
        buf = np.zeros(max(16, self.kernel.param_bytes), np.uint8)
        for i, (arg, p) in enumerate(zip(args, params)):
            buf[p.offset:p.offset + p.size] = _arg_bytes(self.name, i, arg, p, dev)
        return buf


def _arg_bytes(kname: str, i: int, arg: Any, p: Param, dev: Device) -> np.ndarray:
    where = f"{kname}: argument {i} (.param .{p.ty} {p.name})"
    if isinstance(arg, ndarray):
        if p.size != 8:
            raise GpusimError(f"{where}: got an array, but the parameter is {p.size} bytes, not a 64-bit pointer")
        if arg.device is not dev:
            raise GpusimError(f"{where}: the array lives on another gpusim.Device than the one launching")
        return np.array([arg.data.ptr], np.uint64).view(np.uint8)
    if isinstance(arg, np.ndarray) and arg.ndim == 0:
        arg = arg[()]
    if isinstance(arg, np.generic) and not isinstance(arg, (np.bool_, np.object_)):
        if arg.dtype.itemsize != p.size:
            raise GpusimError(f"{where}: got {arg.dtype} ({arg.dtype.itemsize} bytes) but the parameter is "
                              f"{p.size} bytes; pass a numpy scalar of that width (e.g. np.uint32(n) for .u32)")
        return np.array([arg]).view(np.uint8)
    if isinstance(arg, np.ndarray):
        raise GpusimError(f"{where}: got a host numpy array; copy it to the device first with gpusim.asarray()")
    if isinstance(arg, (bool, int, float)):
        scalar = ("float32" if p.ty.startswith("f") else "int32" if p.ty.startswith("s")
                  else "uint32" if p.size == 4 else "uint64")
        raise GpusimError(f"{where}: got a Python {type(arg).__name__}, which has no fixed width; pass a numpy "
                          f"scalar such as np.{scalar}(...)")
    raise GpusimError(f"{where}: cannot pass a {type(arg).__name__}")
