"""GPU configurations: typed, documented hardware descriptions loaded from TOML.

Owns: the configuration schema (:mod:`gpusim.config.models`) and its loading
(:mod:`gpusim.config.loader`). The shipped configurations are the TOML files of
the top-level ``configs`` package (``h100`` is the default); a user's own TOML
file works wherever a name does.

Must not import: simpy, cupy, or any gpusim module other than
:mod:`gpusim.errors`. Everything else in gpusim may import this package.

Example::

    from gpusim import config
    cfg = config.load("h100")
    small = cfg.with_overrides({"sm.max_warps": 48, "l2.size_bytes": 25_000_000})
    small.sm.max_threads        # 1536, derived from max_warps
"""

from __future__ import annotations

from gpusim.config.loader import DEFAULT, available, load, parse_override
from gpusim.config.models import (
    UNIT_NAMES,
    DRAMSpec,
    GPUConfig,
    L1Spec,
    L2Spec,
    SchedulerSpec,
    SharedMemSpec,
    SMSpec,
    UnitSpec,
)

__all__ = [
    "DEFAULT",
    "UNIT_NAMES",
    "DRAMSpec",
    "GPUConfig",
    "L1Spec",
    "L2Spec",
    "SMSpec",
    "SchedulerSpec",
    "SharedMemSpec",
    "UnitSpec",
    "available",
    "load",
    "parse_override",
]
