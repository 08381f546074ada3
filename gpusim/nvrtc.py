"""CUDA C source to PTX through NVRTC, as CuPy compiles ``RawModule(code=...)`` and ``RawKernel``.

A toolchain module, like :mod:`gpusim.ptxas`. Owns: the NVRTC call (NVIDIA's ``cuda-bindings`` over the
``nvidia-cuda-nvrtc`` wheel: no GPU and no CUDA install needed), the options CuPy adds to the user's, template
kernels' lowered names (``name_expressions``), the on-disk compile cache and compile errors with NVRTC's log.
Imports the standard library and :mod:`gpusim.errors` only; ``cuda.bindings`` is imported inside
:func:`compile_cuda`, so gpusim installs and runs PTX without it. Never imports simpy, cupy or the engines.

CuPy's options, reproduced so that a source compiled here gives the PTX CuPy compiles on the GPU
(CuPy 14, ``cupy/cuda/compiler.py`` ``_compile_with_cache_cuda`` and ``cupy/_core/core.pyx``
``compile_with_cache``): the user's options, then ``-I`` of the CUDA headers, then ``-ftz=true`` (CuPy
appends it after the user's options, so single-precision denormals flush unless the user's own option
comes later), then the target, ``-arch=compute_XX`` for the configured GPU. NVRTC brings no C++ standard
library: ``#include <cstdint>`` fails there as it does under CuPy.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from gpusim.errors import CompileError, GpusimError

__all__ = ["CudaProgram", "compile_cuda", "cache_dir", "is_ptx", "nvrtc_version", "include_dirs"]

#: Bump when the cache entry's layout changes.
_CACHE_FORMAT = 1
_INSTALL_HINT = "pip install 'gpusim[cuda]' (NVIDIA's cuda-bindings and the nvidia-cuda-nvrtc wheel)"


@dataclass(frozen=True)
class CudaProgram:
    """One compiled CUDA C source.

    Attributes:
        ptx: the PTX text NVRTC wrote (``.version``/``.target`` for the requested architecture).
        lowered: name expression -> lowered (mangled) kernel name, for ``name_expressions``
            (``"add<float>"`` -> ``"_Z3addIfEvPKT_PS0_i"``).
        options: every option NVRTC received, in order (the user's first, then CuPy's).
        log: NVRTC's compile log (warnings; empty when clean).
        cached: True when the PTX came from the on-disk cache.
    """

    ptx: str
    lowered: dict[str, str] = field(default_factory=dict)
    options: tuple[str, ...] = ()
    log: str = ""
    cached: bool = False


def is_ptx(text: str) -> bool:
    """True when ``text`` is a PTX module (it has a ``.version`` directive at the start of a line, as
    every PTX module must); CUDA C source has none."""
    return re.search(r"^\s*\.version\s+\d", text, re.M) is not None


def cache_dir() -> Path:
    """The compile cache folder: ``$GPUSIM_CACHE_DIR``, else ``$XDG_CACHE_HOME/gpusim/kernel_cache``
    (``~/.cache/gpusim/kernel_cache``), like CuPy's ``CUPY_CACHE_DIR`` / ``~/.cupy/kernel_cache``."""
    if os.environ.get("GPUSIM_CACHE_DIR"):
        return Path(os.environ["GPUSIM_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gpusim" / "kernel_cache"


def _bindings():
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise GpusimError(f"compiling CUDA C needs NVRTC, which is not installed ({exc}): {_INSTALL_HINT}") from None
    return nvrtc


def _check(nvrtc, result, what: str):
    """Unpack a cuda-bindings result tuple ``(status, *values)``; raise on a failed status."""
    status, *values = result if isinstance(result, tuple) else (result,)
    if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, msg = nvrtc.nvrtcGetErrorString(status)
        raise GpusimError(f"NVRTC {what} failed: {msg.decode(errors='replace')}")
    return values[0] if len(values) == 1 else values


def nvrtc_version() -> tuple[int, int]:
    """(major, minor) of the NVRTC library in use. Raises GpusimError when NVRTC is not installed."""
    nvrtc = _bindings()
    try:
        return tuple(_check(nvrtc, nvrtc.nvrtcVersion(), "nvrtcVersion"))  # type: ignore[return-value]
    except GpusimError:
        raise
    except Exception as exc:  # cuda-bindings found no libnvrtc
        raise GpusimError(f"NVRTC's library could not be loaded ({exc}): {_INSTALL_HINT}") from None


def include_dirs() -> list[str]:
    """Folders of the CUDA headers (``cuda_fp16.h``, ``cuda_bf16.h``...) handed to NVRTC with ``-I``, as CuPy
    adds ``$CUDA_PATH/include``: the ``nvidia-cuda-runtime`` wheel's ``nvidia/cu13/include`` when installed,
    else ``$CUDA_PATH/include`` / ``$CUDA_HOME/include`` / ``/usr/local/cuda/include`` where it exists."""
    found = []
    try:
        import nvidia  # namespace package of NVIDIA's wheels

        for root in nvidia.__path__:
            inc = Path(root) / "cu13" / "include"
            if (inc / "cuda_fp16.h").is_file():
                found.append(str(inc))
                break
    except ImportError:
        pass
    if not found:
        for env in ("CUDA_PATH", "CUDA_HOME"):
            if os.environ.get(env) and (Path(os.environ[env]) / "include").is_dir():
                found.append(str(Path(os.environ[env]) / "include"))
                break
        else:
            if Path("/usr/local/cuda/include").is_dir():
                found.append("/usr/local/cuda/include")
    return found


def arch_option(arch: str) -> str:
    """The NVRTC target option for a configuration's ``arch`` (``"sm_90"`` -> ``"-arch=compute_90"``).

    Raises:
        GpusimError: ``arch`` is not of the form ``sm_NN`` or ``sm_NNa``.
    """
    m = re.fullmatch(r"sm_(\d+[af]?)", arch)
    if m is None:
        raise GpusimError(f"cannot compile CUDA C for architecture {arch!r} (expected sm_NN)")
    return f"-arch=compute_{m.group(1)}"


def compile_cuda(source: str, *, options: Sequence[str] = (), name_expressions: Sequence[str] = (),
                 arch: str = "sm_90", filename: str = "kern.cu", use_cache: bool = True) -> CudaProgram:
    """Compile CUDA C ``source`` to PTX for ``arch`` with NVRTC, as CuPy does, through the on-disk cache.

    Args:
        source: CUDA C++ source text.
        options: NVRTC options, as given to CuPy (``("-std=c++17", "-DN=4")``); CuPy's own follow them.
        name_expressions: C++ names of template instantiations to keep (``"add<float>"``); their
            lowered names are in :attr:`CudaProgram.lowered`.
        arch: the configured GPU's architecture (``config.arch``, ``"sm_90"``).
        filename: the program name NVRTC's messages use (``kern.cu(12): error: ...``).
        use_cache: look up and store the result in :func:`cache_dir` (keyed by source, options,
            name expressions, architecture and NVRTC version).

    Returns:
        :class:`CudaProgram`.

    Raises:
        CompileError: NVRTC rejected the source; the message carries NVRTC's log, whose lines name
            ``filename(line)``.
        GpusimError: NVRTC is not installed, or ``options`` is not a sequence of strings.
    """
    if isinstance(options, str) or not all(isinstance(o, str) for o in options):
        raise GpusimError(f"options must be a tuple of strings (NVRTC options), got {options!r}")
    if isinstance(name_expressions, str) or not all(isinstance(n, str) for n in name_expressions):
        raise GpusimError(f"name_expressions must be a sequence of strings, got {name_expressions!r}")
    version = nvrtc_version()
    opts = tuple(options) + tuple(f"-I{d}" for d in include_dirs()) + ("-ftz=true", arch_option(arch))
    key = hashlib.sha256(json.dumps([_CACHE_FORMAT, source, opts, list(name_expressions), arch, version,
                                     filename]).encode()).hexdigest()
    path = cache_dir() / f"{key}.json"
    if use_cache:
        hit = _read_cache(path)
        if hit is not None:
            return CudaProgram(hit["ptx"], dict(hit["lowered"]), opts, hit["log"], cached=True)
    prog = _compile(source, opts, tuple(name_expressions), filename, arch)
    if use_cache:
        _write_cache(path, {"ptx": prog.ptx, "lowered": prog.lowered, "log": prog.log})
    return prog


def _compile(source: str, opts: tuple[str, ...], names: tuple[str, ...], filename: str, arch: str) -> CudaProgram:
    nvrtc = _bindings()
    prog = _check(nvrtc, nvrtc.nvrtcCreateProgram(source.encode(), filename.encode(), 0, [], []), "nvrtcCreateProgram")
    try:
        for name in names:
            _check(nvrtc, nvrtc.nvrtcAddNameExpression(prog, name.encode()), f"nvrtcAddNameExpression({name!r})")
        raw = [o.encode() for o in opts]
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(raw), raw)
        size = _check(nvrtc, nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
        buf = b" " * size
        _check(nvrtc, nvrtc.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
        log = buf.rstrip(b"\0").decode(errors="replace").strip()
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(f"{filename}: NVRTC could not compile it for {arch} (options: {' '.join(opts)}):\n{log}",
                               log=log, options=opts)
        size = _check(nvrtc, nvrtc.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
        buf = b" " * size
        _check(nvrtc, nvrtc.nvrtcGetPTX(prog, buf), "nvrtcGetPTX")
        ptx = buf.rstrip(b"\0").decode()
        lowered = {}
        for name in names:
            low = _check(nvrtc, nvrtc.nvrtcGetLoweredName(prog, name.encode()), f"nvrtcGetLoweredName({name!r})")
            lowered[name] = low.decode()
        return CudaProgram(ptx, lowered, opts, log)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _read_cache(path: Path) -> dict | None:
    """A cache entry, or None when absent or unreadable (a damaged entry is compiled again)."""
    try:
        entry = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or not {"ptx", "lowered", "log"} <= entry.keys():
        return None
    return entry


def _write_cache(path: Path, entry: dict) -> None:
    """Store an entry atomically (a temporary file renamed over the name, as CuPy's lock-free cache does);
    a cache folder that cannot be written is skipped silently: the compile result is still returned."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(entry))
        os.replace(tmp, path)
    except OSError:
        pass
