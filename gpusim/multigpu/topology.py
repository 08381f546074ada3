"""Multi-GPU topologies: the GPUs of one machine, their links, NCCL's tuning constants and DDP's reducer
constants, as typed pydantic models loaded from TOML (``configs/topologies/*.toml``).

Owns: the schema (:class:`Topology`, :class:`LinkSpec`, :class:`NCCLSpec`, :class:`ProtocolSpec`,
:class:`DDPSpec`), finding a shipped topology by name (:func:`available`, :func:`load_topology`) and
turning every failure into a :class:`gpusim.errors.ConfigError` naming the file and the dotted field path
(through :func:`gpusim.config.overrides.validate`, the GPU configurations' own validation).

Every number lives in the TOML file with its source in a comment: NCCL's source (``[NCCL-SRC file]``,
NCCL 2.27-2.28, github.com/NVIDIA/nccl), PyTorch's (``[PT-SRC file]``), a data sheet (``[H100-DS]``),
a fit to a measurement (``[MEAS file]``) or ``ASSUMED`` for a model choice.

Must not import: simpy, cupy, torch, the engines (gpusim.functional, gpusim.timing).
"""

from __future__ import annotations

import importlib.resources
import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpusim.config.overrides import apply_overrides, validate
from gpusim.errors import ConfigError

__all__ = ["LinkSpec", "ProtocolSpec", "NCCLSpec", "DDPSpec", "Topology", "PROTOCOLS", "available",
           "load_topology"]

#: NCCL's three protocols, in the order a growing message moves through them.
PROTOCOLS: tuple[str, ...] = ("LL", "LL128", "Simple")

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_PACKAGE = "configs"
_SUBDIR = "topologies"


def _int(description: str, **bounds) -> int:
    return Field(..., strict=True, description=description, **bounds)


class LinkSpec(BaseModel):
    """How each GPU reaches the others: NVLink point to point, NVLink through NVSwitches, or PCIe."""

    model_config = _FROZEN

    kind: Literal["nvlink", "nvswitch", "pcie"] = Field(..., description="link type: 'nvlink' (direct GPU-GPU "
                                                         "links), 'nvswitch' (all GPUs through NVSwitches), 'pcie'")
    generation: int = _int("NVLink generation (2..5) or PCIe generation (3..6)", ge=1, le=8)
    count: int = _int("links per GPU (NVLink: links; PCIe: 1 per x16 port)", ge=1, le=64)
    GBps_per_link: float = Field(..., gt=0, le=10_000, description="bandwidth of one link, one direction, GB/s "
                                                                   "(1e9 bytes/s)")
    bw_efficiency: float = Field(..., gt=0, le=1, description="fraction of count x GBps_per_link a collective's "
                                                              "data reaches (protocol overheads aside): fitted")

    @property
    def GBps(self) -> float:
        """Peak bandwidth out of one GPU, one direction, GB/s (``count x GBps_per_link``)."""
        return self.count * self.GBps_per_link


class ProtocolSpec(BaseModel):
    """One NCCL protocol (LL, LL128 or Simple): its buffers, payload fraction, bandwidth caps and latencies."""

    model_config = _FROZEN

    enabled: bool = Field(True, description="whether NCCL may choose this protocol on this topology")
    buffer_bytes: int = _int("bytes of one connection's FIFO buffer per channel (all NCCL_STEPS steps)", ge=64)
    payload: float = Field(..., gt=0, le=1, description="fraction of the bytes on the wire that are data "
                                                        "(LL: 8 of 16, LL128: 120 of 128, Simple: 1)")
    per_channel_max_GBps: float = Field(..., ge=0, description="bandwidth cap of one channel, GB/s (0 = none)")
    max_GBps: float = Field(..., ge=0, description="bandwidth cap of all channels together, GB/s (0 = none)")
    base_latency_us: float = Field(..., ge=0, description="fixed latency of one collective (kernel start, "
                                                          "first flags), microseconds")
    hop_latency_us: float = Field(..., ge=0, description="latency of one step over one link, microseconds")
    tree_payload: float = Field(..., gt=0, le=1, description="bandwidth factor of this protocol in the tree "
                                                             "algorithm (NCCL's tuner)")
    tree_per_channel_max_GBps: float = Field(..., ge=0, description="tree: bandwidth cap of one channel, GB/s "
                                                                    "(0 = none)")
    tree_base_latency_us: float = Field(..., ge=0, description="tree: fixed latency of one collective, microseconds")
    tree_hop_latency_us: float = Field(..., ge=0, description="tree: latency of one step over one link, microseconds")
    threads: int = _int("threads of one channel (a CTA) with this protocol", ge=32, le=1024)
    thread_threshold: int = _int("bytes per thread below which NCCL drops a channel (NCCL's threadThresholds)",
                                 ge=1)


class NCCLSpec(BaseModel):
    """NCCL's structure on this topology: channels, FIFO steps, chunking and the three protocols."""

    model_config = _FROZEN

    version: str = Field(..., description="NCCL version these constants describe")
    max_channels: int = _int("channels (rings; one CTA each) NCCL builds on this topology", ge=1, le=64)
    steps: int = _int("FIFO slots of a connection (NCCL_STEPS)", ge=2, le=64)
    chunk_steps: int = _int("steps in one chunk of a ring all-reduce / reduce-scatter / all-gather, "
                            "Simple protocol (ALLREDUCE_CHUNKSTEPS)", ge=1)
    slice_steps: int = _int("steps in one slice, Simple protocol (ALLREDUCE_SLICESTEPS)", ge=1)
    tree_efficiency: float = Field(..., gt=0, le=1, description="bandwidth factor of the tree algorithm "
                                                                "(NCCL's tuner)")
    call_overhead_us: float = Field(..., ge=0, description="least time between two back-to-back collectives "
                                                           "issued by the framework (host side), microseconds")
    launch_us: float = Field(..., ge=0, description="time added to every collective on the GPU beyond NCCL's "
                                                    "base latency (launch, stream synchronisation), microseconds")
    bw_factor: dict[str, float] = Field(..., description="factor on the channel bandwidth per collective "
                                        "(all_reduce, reduce_scatter, all_gather, broadcast): what the ring's "
                                        "transport model leaves out (fitted)")
    protocols: dict[str, ProtocolSpec] = Field(..., description="the protocols by name: LL, LL128, Simple")

    @field_validator("protocols")
    @classmethod
    def _protocols(cls, v: dict[str, ProtocolSpec]) -> dict[str, ProtocolSpec]:
        missing = [p for p in PROTOCOLS if p not in v]
        extra = [p for p in v if p not in PROTOCOLS]
        if missing or extra:
            raise ValueError(f"must be exactly {', '.join(PROTOCOLS)}"
                             + (f"; missing {', '.join(missing)}" if missing else "")
                             + (f"; unknown {', '.join(extra)}" if extra else ""))
        if not any(p.enabled for p in v.values()):
            raise ValueError("at least one protocol must be enabled")
        return v

    @field_validator("bw_factor")
    @classmethod
    def _bw_factor(cls, v: dict[str, float]) -> dict[str, float]:
        colls = ("all_reduce", "reduce_scatter", "all_gather", "broadcast")
        if sorted(v) != sorted(colls) or not all(0 < x <= 2 for x in v.values()):
            raise ValueError(f"must give each of {', '.join(colls)} a factor in (0, 2]")
        return v

    @model_validator(mode="after")
    def _check(self) -> NCCLSpec:
        if self.chunk_steps % self.slice_steps or self.chunk_steps > self.steps:
            raise ValueError(f"chunk_steps ({self.chunk_steps}) must be a multiple of slice_steps "
                             f"({self.slice_steps}) and at most steps ({self.steps})")
        return self


class DDPSpec(BaseModel):
    """PyTorch DistributedDataParallel's reducer on this machine."""

    model_config = _FROZEN

    first_bucket_bytes: int = _int("cap of the first bucket (the first gradients ready), bytes", ge=1)
    reducer_passes: float = Field(..., ge=0, description="passes over the gradient bytes in GPU memory the "
                                                         "reducer adds (copy into the bucket, divide, copy out); "
                                                         "each reads and writes every byte")
    overlap_slowdown: float = Field(..., ge=1, description="factor on backward compute while a collective runs "
                                                           "beside it (NCCL's CTAs take SMs and memory bandwidth)")
    hook_time_scale: float = Field(..., gt=0, le=2, description="factor on per-layer times measured with CUDA "
                                   "events at module hooks (they include the hooks' own gaps): used by "
                                   "layers_from_probe only")
    step_overhead_us: float = Field(..., ge=0, description="per-step time outside the layers' forward and backward "
                                                           "(loss, activations, zero_grad, framework), microseconds")


class Topology(BaseModel):
    """A machine of ``max_gpus`` identical GPUs, its links and the constants of NCCL and DDP on it.

    Load with :func:`load_topology`; what-ifs with :meth:`with_overrides` (dotted paths such as
    ``"link.count"`` or ``"nccl.protocols.LL128.enabled"``).
    """

    model_config = _FROZEN

    name: str = Field(..., min_length=1, description="topology name")
    description: str = Field("", description="one line on the machine")
    gpu: str = Field(..., description="GPU model")
    max_gpus: int = _int("GPUs on this machine", ge=1, le=1024)
    hbm_GBps: float = Field(..., gt=0, description="one GPU's memory bandwidth, GB/s (the optimizer step and the "
                                                   "reducer's copies)")
    link: LinkSpec
    nccl: NCCLSpec
    ddp: DDPSpec

    def with_overrides(self, overrides: dict) -> Topology:
        """A validated copy with dotted-path fields replaced (raises :class:`ConfigError` naming the path)."""
        return apply_overrides(self, overrides)


def _dir():
    return importlib.resources.files(_PACKAGE) / _SUBDIR


def available() -> list[str]:
    """Names of the shipped topologies (``configs/topologies/*.toml`` stems), sorted."""
    return sorted(e.name[:-5] for e in _dir().iterdir() if e.name.endswith(".toml"))


def load_topology(name_or_path: str | os.PathLike[str] | Topology) -> Topology:
    """A :class:`Topology` by shipped name (``"hgx_h100_nvswitch"``) or path of a TOML file.

    Raises :class:`ConfigError` naming the file and the field (``link.count: ...``) for a file that is
    missing, not TOML, or breaks the schema.
    """
    if isinstance(name_or_path, Topology):
        return name_or_path
    text = os.fspath(name_or_path)
    if text.endswith(".toml") or os.sep in text or "/" in text:
        path = Path(text)
    else:
        names = available()
        if text.lower() not in names:
            raise ConfigError(f"topology {text!r}: not a shipped topology (known: {', '.join(names)}; "
                              f"or give the path of a .toml file)")
        path = Path(str(_dir() / f"{text.lower()}.toml"))
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such topology file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    return validate(Topology, data, str(path))
