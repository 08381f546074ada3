"""Per-kernel resource usage of PTX, read from NVIDIA's ``ptxas`` assembler.

Owns: finding a ``ptxas`` executable, running ``ptxas -v -arch=<arch>`` on a PTX file,
parsing its per-kernel report (registers, static shared memory, local/stack bytes, spills,
barriers, constant bank 0), caching the answers by file content, assembling PTX to a cubin,
and a ptxas-free estimate of static shared memory from a kernel's ``.shared`` declarations.

Must not import: simpy, cupy, or gpusim modules other than :mod:`gpusim.errors`. Runs only
``ptxas`` itself (never a GPU, never the network).

Where ``ptxas`` comes from, in order: the ``GPUSIM_PTXAS`` environment variable; ``ptxas``
on ``PATH``; the PyPI wheel ``nvidia-cuda-nvcc`` (``site-packages/nvidia/cu13/bin/ptxas``;
older wheels ``nvidia/cuda_nvcc/bin/ptxas``, ``nvidia/cu12/bin/ptxas``); ``$CUDA_HOME/bin``
and ``/usr/local/cuda/bin``. The cache lives in memory and in ``$GPUSIM_CACHE_DIR/ptxas``
(default ``~/.cache/gpusim/ptxas``), keyed by the SHA-256 of the PTX, the architecture and
the ptxas build.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gpusim.errors import GpusimError

__all__ = [
    "PtxasError",
    "PtxasNotFoundError",
    "ResourceUsage",
    "find_ptxas",
    "ptxas_version",
    "resource_usage",
    "assemble",
    "parse_ptxas_output",
    "static_shared_from_ptx",
    "kernel_names",
]

#: Seconds one ptxas run may take before it is abandoned.
TIMEOUT_S = 120


_memory_cache: dict[str, dict[str, "ResourceUsage"]] = {}


class PtxasError(GpusimError):
    """ptxas failed on a PTX file (the message carries ptxas's own diagnostics)."""


class PtxasNotFoundError(PtxasError):
    """No ptxas executable could be found."""


@dataclass(frozen=True)
class ResourceUsage:
    """What ``ptxas -v`` reports for one kernel (``.entry``)."""

    kernel: str
    arch: str
    registers: int
    static_shared_bytes: int
    local_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int
    barriers: int
    constant_bytes: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _site_dirs() -> list[Path]:
    dirs: list[str] = []
    try:
        dirs.extend(site.getsitepackages())
    except AttributeError:  # pragma: no cover - virtualenv without getsitepackages
        pass
    try:
        dirs.append(site.getusersitepackages())
    except AttributeError:  # pragma: no cover
        pass
    dirs.extend(p for p in sys.path if p and p.endswith("-packages"))
    seen: list[Path] = []
    for d in dirs:
        path = Path(d)
        if path not in seen:
            seen.append(path)
    return seen


def find_tool(name: str, env_var: str, wheel_dirs: tuple[str, ...] = ()) -> str | None:
    """Path of a usable CUDA tool ``name`` (``"ptxas"``, ``"nvdisasm"``), or ``None``.

    Order: the ``env_var`` environment variable; ``name`` on ``PATH``; the PyPI wheels'
    ``site-packages/nvidia/{cu13,<wheel_dirs>,cu12}/bin``; ``$CUDA_HOME/bin``,
    ``$CUDA_PATH/bin`` and ``/usr/local/cuda/bin``.
    """
    exe = f"{name}.exe" if os.name == "nt" else name
    override = os.environ.get(env_var)
    if override:
        path = Path(override).expanduser()
        return str(path) if _is_executable(path) else None
    on_path = shutil.which(name)
    if on_path:
        return on_path
    layouts = [("nvidia", "cu13", "bin")] + [("nvidia", d, "bin") for d in wheel_dirs] + [("nvidia", "cu12", "bin")]
    for base in _site_dirs():
        for layout in layouts:
            candidate = base.joinpath(*layout, exe)
            if _is_executable(candidate):
                return str(candidate)
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            candidate = Path(root) / "bin" / exe
            if _is_executable(candidate):
                return str(candidate)
    return None


def find_ptxas() -> str | None:
    """Path of a usable ``ptxas``, or ``None`` (see the module docstring for the search order)."""
    return find_tool("ptxas", "GPUSIM_PTXAS", ("cuda_nvcc",))


def _require_ptxas(ptxas: str | None) -> str:
    found = ptxas or find_ptxas()
    if not found:
        raise PtxasNotFoundError(
            "ptxas not found: install the CUDA toolkit or `pip install nvidia-cuda-nvcc`, put "
            "ptxas on PATH or set GPUSIM_PTXAS=/path/to/ptxas (the occupancy CLI also accepts "
            "--regs N instead)"
        )
    return found


def ptxas_version(ptxas: str | None = None) -> str:
    """The last line of ``ptxas --version`` (e.g. ``Cuda compilation tools, release 13.0, V13.0.88``)."""
    exe = _require_ptxas(ptxas)
    proc = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=TIMEOUT_S)
    lines = [line.strip() for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    for line in lines:
        if line.startswith("Cuda compilation tools"):
            return line
    return lines[-1] if lines else "unknown"


def _arch_name(arch: Any) -> str:
    name = getattr(arch, "arch", arch)  # a GPUConfig works too
    if not isinstance(name, str) or not re.fullmatch(r"sm_\d+[af]?", name):
        raise PtxasError(f"arch must look like 'sm_90', got {name!r}")
    return name


def run_tool(cmd: list[str], what: str) -> subprocess.CompletedProcess:
    """Run a CUDA tool (``cmd[0]``) with text output; ``what`` is what it runs on, for errors
    (``"k.ptx for sm_90"`` gives "ptxas failed on k.ptx for sm_90 (exit status 255): ...").
    Raises :class:`PtxasError` when it cannot start, runs longer than :data:`TIMEOUT_S` seconds
    or exits non-zero (with its own diagnostics)."""
    name = Path(cmd[0]).name
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise PtxasError(f"{name} did not finish within {TIMEOUT_S} s on {what}") from None
    except OSError as exc:
        raise PtxasError(f"cannot run {cmd[0]}: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        raise PtxasError(f"{name} failed on {what} (exit status {proc.returncode}):\n"
                         f"{(proc.stdout + proc.stderr).strip()}")
    return proc


def _run(exe: str, ptx: Path, arch: str, output: Path, verbose: bool) -> str:
    cmd = [exe, f"-arch={arch}", "-o", str(output), str(ptx)]
    if verbose:
        cmd.insert(1, "-v")
    proc = run_tool(cmd, f"{ptx} for {arch}")
    return (proc.stdout + proc.stderr).strip()


_RE_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_RE_PROPS = re.compile(r"Function properties for (\S+)")
_RE_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_RE_USED = re.compile(r"Used (\d+) registers")
_RE_BARRIERS = re.compile(r"used (\d+) barriers")
_RE_SMEM = re.compile(r"(\d+) bytes smem")
_RE_CMEM = re.compile(r"(\d+) bytes cmem\[0\]")


def parse_ptxas_output(text: str, arch: str) -> dict[str, ResourceUsage]:
    """Parse the ``ptxas -v`` report into one :class:`ResourceUsage` per kernel.

    Understands the CUDA 11-13 format::

        ptxas info    : Compiling entry function 'kern' for 'sm_90'
        ptxas info    : Function properties for kern
            0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
        ptxas info    : Used 8 registers, used 4 barriers, 1000 bytes smem, 352 bytes cmem[0]

    Non-entry ``.func`` properties are ignored; fields ptxas omits count as 0.
    """
    entries: dict[str, dict[str, int]] = {}
    stacks: dict[str, tuple[int, int, int]] = {}
    current_entry: str | None = None
    current_props: str | None = None
    for line in text.splitlines():
        if m := _RE_ENTRY.search(line):
            current_entry = m.group(1)
            entries[current_entry] = {}
            continue
        if m := _RE_PROPS.search(line):
            current_props = m.group(1)
            continue
        if (m := _RE_STACK.search(line)) and current_props:
            stacks[current_props] = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
            continue
        if (m := _RE_USED.search(line)) and current_entry is not None:
            info = entries[current_entry]
            info["registers"] = int(m.group(1))
            for key, regex in (("barriers", _RE_BARRIERS), ("smem", _RE_SMEM), ("cmem", _RE_CMEM)):
                if found := regex.search(line):
                    info[key] = int(found.group(1))
    usage = {}
    for name, info in entries.items():
        stack = stacks.get(name, (0, 0, 0))
        usage[name] = ResourceUsage(
            kernel=name,
            arch=arch,
            registers=info.get("registers", 0),
            static_shared_bytes=info.get("smem", 0),
            local_bytes=stack[0],
            spill_store_bytes=stack[1],
            spill_load_bytes=stack[2],
            barriers=info.get("barriers", 0),
            constant_bytes=info.get("cmem", 0),
        )
    return usage


def _cache_dir(name: str = "ptxas") -> Path:
    """``$GPUSIM_CACHE_DIR/<name>`` (default ``~/.cache/gpusim/<name>``)."""
    root = os.environ.get("GPUSIM_CACHE_DIR")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "gpusim"
    return base / name


def _ptxas_identity(exe: str) -> str:
    try:
        st = os.stat(os.path.realpath(exe))
        return f"{os.path.realpath(exe)}:{st.st_size}:{int(st.st_mtime)}"
    except OSError:
        return exe


def _read_ptx(ptx_path: str | os.PathLike[str]) -> tuple[Path, bytes]:
    path = Path(ptx_path)
    try:
        return path, path.read_bytes()
    except FileNotFoundError:
        raise PtxasError(f"{path}: no such PTX file") from None
    except OSError as exc:
        raise PtxasError(f"{path}: cannot read: {exc.strerror or exc}") from None


def resource_usage(
    ptx_path: str | os.PathLike[str],
    arch: Any,
    *,
    ptxas: str | None = None,
    use_cache: bool = True,
) -> dict[str, ResourceUsage]:
    """Per-kernel resources of a PTX file for ``arch`` (``"sm_90"`` or a ``GPUConfig``).

    Runs ``ptxas -v -arch=<arch>`` (once per file content, architecture and ptxas build;
    later calls are answered from the cache). Raises :class:`PtxasNotFoundError` when no
    ptxas exists and :class:`PtxasError` with ptxas's message when assembly fails.
    """
    arch_name = _arch_name(arch)
    path, data = _read_ptx(ptx_path)
    exe = _require_ptxas(ptxas)
    key = hashlib.sha256(data + b"\0" + arch_name.encode() + b"\0" + _ptxas_identity(exe).encode()).hexdigest()
    if use_cache and key in _memory_cache:
        return dict(_memory_cache[key])
    cache_file = _cache_dir() / f"{key}.json"
    if use_cache:
        try:
            stored = json.loads(cache_file.read_text())
            usage = {name: ResourceUsage(**fields) for name, fields in stored.items()}
            _memory_cache[key] = usage
            return dict(usage)
        except (OSError, ValueError, TypeError):
            pass
    with tempfile.TemporaryDirectory(prefix="gpusim-ptxas-") as tmp:
        text = _run(exe, path, arch_name, Path(tmp) / "out.cubin", verbose=True)
    usage = parse_ptxas_output(text, arch_name)
    if not usage:
        raise PtxasError(f"{path}: ptxas reported no kernel (.entry) for {arch_name}")
    if use_cache:
        _memory_cache[key] = usage
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp_file = cache_file.with_suffix(f".{os.getpid()}.tmp")
            tmp_file.write_text(json.dumps({k: v.as_dict() for k, v in usage.items()}, indent=1))
            os.replace(tmp_file, cache_file)
        except OSError:
            pass  # the disk cache is an optimisation only
    return dict(usage)


def assemble(
    ptx_path: str | os.PathLike[str],
    arch: Any,
    output: str | os.PathLike[str] | None = None,
    *,
    ptxas: str | None = None,
) -> bytes:
    """Assemble a PTX file with ``ptxas -arch=<arch>``; return the cubin's bytes.

    Also writes the cubin to ``output`` when given. Raises :class:`PtxasError` carrying
    ptxas's own diagnostics when the PTX does not assemble.
    """
    arch_name = _arch_name(arch)
    path, _ = _read_ptx(ptx_path)
    exe = _require_ptxas(ptxas)
    with tempfile.TemporaryDirectory(prefix="gpusim-ptxas-") as tmp:
        target = Path(tmp) / "out.cubin"
        _run(exe, path, arch_name, target, verbose=False)
        cubin = target.read_bytes()
    if output is not None:
        Path(output).write_bytes(cubin)
    return cubin


# --- ptxas-free estimate of static shared memory -------------------------------------------

_TYPE_BYTES = {
    "b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
    "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4,
    "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16,
}
_RE_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_RE_ENTRY_DECL = re.compile(r"\.entry\s+([A-Za-z_$%][\w$%]*)")
_RE_SHARED = re.compile(
    r"(?P<extern>\.extern\s+)?\.shared\s+(?:\.align\s+(?P<align1>\d+)\s+)?"
    r"(?:\.v(?P<vec>[248])\s+)?\.(?P<type>\w+)\s+(?:\.align\s+(?P<align2>\d+)\s+)?"
    r"(?P<name>[A-Za-z_$%][\w$%]*)\s*(?P<dims>(?:\[\s*\d*\s*\])*)"
)


def _entry_bodies(text: str) -> dict[str, tuple[int, int]]:
    """Span (start, end) of each ``.entry`` body, braces matched."""
    spans = {}
    for m in _RE_ENTRY_DECL.finditer(text):
        depth, i, start = 0, m.end(), -1
        paren = 0
        while i < len(text):
            ch = text[i]
            if ch == "(":
                paren += 1
            elif ch == ")":
                paren -= 1
            elif ch == "{" and paren == 0:
                if depth == 0:
                    start = i
                depth += 1
            elif ch == "}" and paren == 0 and depth:
                depth -= 1
                if depth == 0:
                    spans[m.group(1)] = (start, i + 1)
                    break
            elif ch == ";" and depth == 0 and paren == 0:
                break  # a declaration without a body
            i += 1
    return spans


def _shared_decls(text: str) -> list[tuple[int, str, int, int, bool]]:
    """(position, name, size, alignment, is_extern) of every ``.shared`` declaration."""
    decls = []
    for m in _RE_SHARED.finditer(text):
        elem = _TYPE_BYTES.get(m.group("type"))
        if elem is None:
            continue
        elem *= int(m.group("vec") or 1)
        count = 1
        for dim in re.findall(r"\[\s*(\d*)\s*\]", m.group("dims")):
            count *= int(dim) if dim else 0
        align = int(m.group("align1") or m.group("align2") or elem)
        extern = bool(m.group("extern"))
        decls.append((m.start(), m.group("name"), 0 if extern else elem * count, align, extern))
    return decls


def kernel_names(ptx_text: str) -> list[str]:
    """Names of the ``.entry`` kernels of a PTX module, in file order."""
    return list(_entry_bodies(_RE_COMMENTS.sub(" ", ptx_text)))


def static_shared_from_ptx(ptx_text: str) -> dict[str, int]:
    """Static shared memory per kernel from its ``.shared`` declarations (no ptxas needed).

    Counts the kernel's own ``.shared`` variables and the module-scope ones its body names,
    each aligned to its ``.align`` (default: element size). ``.extern .shared`` arrays (the
    dynamic shared memory) add no bytes, but ptxas rounds the static total up to their
    alignment so that the dynamic part starts aligned (checked against ptxas 13.0 for sm_90).
    ptxas may lay variables out differently, and drops unused ones, so prefer
    :func:`resource_usage` when ptxas exists.
    """
    text = _RE_COMMENTS.sub(" ", ptx_text)
    bodies = _entry_bodies(text)
    decls = _shared_decls(text)
    inside = {d[0] for d in decls for start, end in bodies.values() if start <= d[0] < end}
    module_level = [d for d in decls if d[0] not in inside]
    module_extern_align = max((d[3] for d in module_level if d[4]), default=1)
    result = {}
    for name, (start, end) in bodies.items():
        body = text[start:end]
        mine = [d for d in decls if start <= d[0] < end]
        used = [
            d for d in module_level
            if not d[4] and re.search(rf"(?<![\w$%]){re.escape(d[1])}(?![\w$%])", body)
        ]
        offset = 0
        for _, _, size, align, extern in used + mine:
            if not extern:
                offset = -(-offset // align) * align + size
        extern_align = max([module_extern_align] + [d[3] for d in mine if d[4]])
        result[name] = -(-offset // extern_align) * extern_align if offset else 0
    return result
