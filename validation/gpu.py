"""Finding the GPU side (CuPy, a CUDA device, Nsight Compute) and stamping provenance.

Owns: :func:`require_cupy` (CuPy and a usable device, or :class:`GpuUnavailable`
with a message that says what is missing and what to do instead),
:func:`provenance` (what a report must say about where its
hardware numbers came from) and :func:`device_slug` (``"h100"``, ``"h200"``:
the tag in report file names).  :func:`find_ncu` is :func:`validation.ncu.find_ncu`, and the
device fields of :func:`provenance` come from :func:`validation.probekit.device_info`, which the
probe scripts use too.

Imports cupy only inside :func:`require_cupy` and :func:`provenance`; must not
import gpusim's engines (gpusim.functional, gpusim.timing) or simpy.
"""

from __future__ import annotations

import os
import pathlib
import platform
import re
import subprocess
import time

from gpusim.errors import GpusimError
from validation import ncu as ncu_mod
from validation import probekit
from validation.ncu import find_ncu

__all__ = ["GpuUnavailable", "require_cupy", "find_ncu", "provenance", "device_slug", "git_commit", "ROOT"]

ROOT = pathlib.Path(__file__).resolve().parents[1]

NO_GPU_HINT = ("run it on a machine with an NVIDIA GPU and CuPy (pip install 'gpusim[gpu]', or the cupy "
               "wheel for your CUDA version), or rebuild the report from hardware data collected earlier: "
               "gpusim validate --from validation/reports/h100/hardware_h100.json")


class GpuUnavailable(GpusimError):
    """CuPy is not installed, or it finds no usable CUDA device (the message says which)."""


def require_cupy(hint: str = NO_GPU_HINT):
    """Return the ``cupy`` module once it has been checked to reach a CUDA device.

    Raises :class:`GpuUnavailable` (a :class:`gpusim.errors.GpusimError`: the CLI prints it
    and exits with status 2) when CuPy cannot be imported or sees no device; the message
    ends with ``hint`` (what to do instead).
    """
    if os.environ.get("GPUSIM_NO_GPU"):          # lets tests and users force the no-GPU path
        raise GpuUnavailable(f"GPUSIM_NO_GPU is set, so no GPU is used; {hint}")
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA install raising at import
        raise GpuUnavailable(f"CuPy is not available ({type(exc).__name__}: {exc}); {hint}") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise GpuUnavailable(f"CuPy found no usable CUDA device ({type(exc).__name__}: {exc}); "
                             f"{hint}") from None
    if count < 1:
        raise GpuUnavailable(f"CuPy sees no CUDA device; {hint}")
    return cupy


def _run(cmd: list[str], timeout: float = 30.0) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def git_commit() -> str | None:
    """The ``GPUSIM_GIT_COMMIT`` environment variable when set (copies of a tree, whose ``.git``
    may be missing or stale), else ``git rev-parse HEAD`` (+ ``-dirty`` when tracked files
    differ), else None."""
    if os.environ.get("GPUSIM_GIT_COMMIT"):      # explicit wins: a copied tree may carry a stale .git
        return os.environ["GPUSIM_GIT_COMMIT"]
    head = _run(["git", "rev-parse", "HEAD"])
    if re.fullmatch(r"[0-9a-f]{40}", head):
        dirty = _run(["git", "status", "--porcelain", "--untracked-files=no"])
        return head + ("-dirty" if dirty else "")
    return os.environ.get("GPUSIM_GIT_COMMIT") or None


def device_slug(name: str) -> str:
    """Short lower-case tag of a GPU name for file names: "NVIDIA H100 80GB HBM3" -> "h100"."""
    m = re.search(r"\b([A-Z]{1,3}\d{2,4}[A-Z]?)\b", name.upper().replace("NVIDIA", ""))
    return (m.group(1) if m else re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "gpu").lower()


def provenance(cupy=None, ncu: str | None = None) -> dict:
    """Where the numbers come from: host, gpusim, and (with ``cupy``) the GPU and its software.

    Keys: time_utc, host_python, gpusim_version, gpusim_commit; with cupy: gpu_name, slug,
    compute_capability, sm_count, sm_clock_khz (cudaDevAttrClockRate: the maximum boost clock),
    memory_clock_khz, l2_bytes, driver_version and cuda_runtime_version (CUDA's encoding,
    13000 = 13.0), cupy_version, nvidia_smi (name, driver, current/max SM and memory clocks,
    power, persistence mode, read just now; clocks are only read, never set); with ncu: ncu_path,
    ncu_version.
    """
    import gpusim

    info: dict = {"time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "host_python": platform.python_version(), "gpusim_version": gpusim.__version__,
                  "gpusim_commit": git_commit()}
    if cupy is not None:
        dev = probekit.device_info(cupy)
        info.update(gpu_name=dev["name"], slug=device_slug(dev["name"]),
                    **{k: dev[k] for k in ("compute_capability", "sm_count", "sm_clock_khz", "memory_clock_khz",
                                           "l2_bytes", "driver_version", "cuda_runtime_version", "cupy_version")})
        smi = _run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,"
                    "clocks.max.mem,power.draw,persistence_mode", "--format=csv,noheader"])
        info["nvidia_smi"] = smi or None
    if ncu:
        info["ncu_path"] = ncu
        info["ncu_version"] = ncu_mod.version(ncu)
    return info
