"""Theoretical occupancy: exactly the algorithm of NVIDIA's ``cuda_occupancy.h``.

Owns: how many blocks of a kernel fit on one SM (``cudaOccMaxActiveBlocksPerMultiprocessor``),
which resource limits it (the ``launch__occupancy_limit_*`` values of Nsight Compute), the
block size that maximises occupancy (``cudaOccMaxPotentialOccupancyBlockSize``), and the
what-if sweeps behind the calculator's three charts. Pure computation on a
:class:`gpusim.config.GPUConfig`; no I/O.

Must not import: simpy, cupy, matplotlib, or gpusim modules other than
:mod:`gpusim.config` and :mod:`gpusim.errors`.

Sources (keys of shared/reference/hardware-facts.md §0; rules restated in its §4):

* OCC / OCC13: ``cuda_occupancy.h`` of CUDA 12.6 / 13.0 (identical for cc 7.0-9.0). Each
  rule below names the header function it ports.
* MEAS §4.1: the port agreed with ``cuOccupancyMaxActiveBlocksPerMultiprocessor`` on an H100
  for every case tried; ``validation/reports/h100/occupancy_h100.csv`` is the committed
  driver table this module is tested against (``tests/test_occupancy.py``).

The device-dependent constants of the header's switch statements (blocks per SM, register
and shared-memory granularity, sub-partitions, legal carveouts, barriers per block slot) are
read from the configuration, whose shipped values equal the header's; so a what-if override
(``sm.max_blocks=16``) changes the answer the way a different GPU would.

One measured refinement of the header (H100 driver table, 10065 rows): the driver applies the
header's opt-in shared-memory rules (``FUNC_SHMEM_LIMIT_OPTIN``: per-block limit
``sharedMemPerBlockOptin``, and ``dynamic_smem`` must not exceed the ``max_dynamic_smem``
attribute) only when that attribute was raised above its default
(``sharedMemPerBlock - static_smem``); with the default or a lowered attribute it uses
``FUNC_SHMEM_LIMIT_DEFAULT`` (per-block limit ``sharedMemPerBlock``, no attribute check). For
default and raised attributes this is the header's answer exactly.

Deliberate differences from the header, none of which changes a block count:

* Inputs no real kernel can have are errors (:class:`gpusim.errors.LaunchError`) rather than
  silent zeros: registers per thread above ``sm.max_registers_per_thread`` (255; ptxas never
  emits more), static shared memory above the 48 KB static limit (ptxas rejects it), a
  ``max_dynamic_smem`` attribute the driver refuses to set, a carveout outside -1..100, a
  negative size, a block size of 0 or less (the header's ``CUDA_OCC_ERROR_INVALID_INPUT``).
* ``limiters`` lists the limits equal to the final block count. The header sets its
  ``limitingFactors`` bits before applying the barrier limit, so when the barrier limit is
  lower it also reports limits that no longer bind.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Mapping

from gpusim.config import GPUConfig, load
from gpusim.errors import LaunchError

__all__ = [
    "LIMITER_NAMES",
    "NCU_LIMIT_METRICS",
    "OccupancyResult",
    "PotentialBlockSize",
    "max_active_blocks",
    "launch_carveout",
    "max_potential_block_size",
    "max_block_size_for_registers",
    "sweep",
    "curves",
]

#: Resource limits in Nsight Compute's order; ``limit_<name>`` fields of the result.
LIMITER_NAMES: tuple[str, ...] = ("warps", "registers", "shared_mem", "blocks", "barriers")

#: Nsight Compute metric name of each limit (NCU "Launch/Occupancy Metrics"; hardware-facts §7).
NCU_LIMIT_METRICS: Mapping[str, str] = {n: f"launch__occupancy_limit_{n}" for n in LIMITER_NAMES}

#: Named barriers per block: PTX ``bar.sync a`` takes a in 0..15 (PTX ISA, "bar").
MAX_BARRIERS_PER_BLOCK = 16

_LIMITER_LABELS = {
    "warps": "warps",
    "registers": "registers",
    "shared_mem": "shared memory",
    "blocks": "blocks per SM",
    "barriers": "barriers",
}


def _ceil_div(x: int, y: int) -> int:
    """``__occDivideRoundUp``."""
    return (x + y - 1) // y


def _round_up(x: int, y: int) -> int:
    """``__occRoundUp``."""
    return y * _ceil_div(x, y)


@dataclass(frozen=True)
class OccupancyResult:
    """Theoretical occupancy of one launch configuration on one SM.

    ``limit_*`` are blocks per SM allowed by each resource (Nsight Compute's
    ``launch__occupancy_limit_*``); ``None`` means the resource sets no limit (the header's
    ``INT_MAX``: no registers, no shared memory on cc 7.x, or no barrier limit before cc 9.0).
    """

    gpu: str
    block_size: int
    regs_per_thread: int
    static_smem: int
    dynamic_smem: int
    max_dynamic_smem: int
    carveout: int
    barriers: int
    warps_per_block: int
    blocks_per_sm: int
    active_warps: int
    max_warps: int
    occupancy: float
    limit_warps: int
    limit_registers: int | None
    limit_shared_mem: int | None
    limit_blocks: int
    limit_barriers: int | None
    limiters: tuple[str, ...]
    registers_per_warp_allocated: int
    registers_per_block_allocated: int
    shared_mem_per_block_allocated: int
    shared_mem_config_bytes: int
    reason: str

    @property
    def registers_per_thread_allocated(self) -> int:
        """``launch__registers_per_thread_allocated`` (per-thread count rounded to the warp unit)."""
        return self.registers_per_warp_allocated // 32

    @property
    def occupancy_pct(self) -> float:
        """Theoretical occupancy in percent (``sm__maximum_warps_per_active_cycle_pct``)."""
        return 100.0 * self.occupancy

    def limit(self, name: str) -> int | None:
        """The block limit of resource ``name`` (one of :data:`LIMITER_NAMES`)."""
        if name not in LIMITER_NAMES:
            raise KeyError(f"unknown limiter {name!r}; known: {', '.join(LIMITER_NAMES)}")
        return getattr(self, f"limit_{name}")

    @property
    def limited_by(self) -> str:
        """The binding limiters in words, e.g. ``"warps, registers"``."""
        return ", ".join(_LIMITER_LABELS[n] for n in self.limiters)

    def ncu_metrics(self) -> dict[str, float | int | None]:
        """The values under their Nsight Compute launch/occupancy metric names."""
        metrics: dict[str, float | int | None] = {
            NCU_LIMIT_METRICS[n]: self.limit(n) for n in LIMITER_NAMES
        }
        metrics.update(
            {
                "launch__block_size": self.block_size,
                "launch__registers_per_thread": self.regs_per_thread,
                "launch__registers_per_thread_allocated": self.registers_per_thread_allocated,
                "launch__shared_mem_per_block_static": self.static_smem,
                "launch__shared_mem_per_block_dynamic": self.dynamic_smem,
                "launch__shared_mem_per_block_allocated": self.shared_mem_per_block_allocated,
                "sm__maximum_warps_avg_per_active_cycle": self.active_warps,
                "sm__maximum_warps_per_active_cycle_pct": self.occupancy_pct,
            }
        )
        return metrics

    def _repr_html_(self) -> str:
        """Jupyter display: an HTML table (:func:`gpusim.notebook.occupancy_html`)."""
        from gpusim.notebook import occupancy_html

        return occupancy_html(self)

    def as_row(self) -> dict[str, Any]:
        """A flat dict for CSV/JSON (limiters joined with ``+``; unlimited = ``None``)."""
        row = asdict(self)
        row["limiters"] = "+".join(self.limiters)
        row["occupancy_pct"] = round(self.occupancy_pct, 4)
        return row


@dataclass(frozen=True)
class PotentialBlockSize:
    """Result of :func:`max_potential_block_size` (``cudaOccupancyMaxPotentialBlockSize``)."""

    block_size: int
    min_grid_size: int
    blocks_per_sm: int
    occupancy: float
    result: OccupancyResult | None


def _config(gpu: GPUConfig | str) -> GPUConfig:
    return gpu if isinstance(gpu, GPUConfig) else load(gpu)


def _check_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise LaunchError(f"{name} must be an integer, got {value!r}")
    return value


def _align_up_carveout(cfg: GPUConfig, size: int) -> int:
    """``cudaOccAlignUpShmemSizeVoltaPlus``: round up to the next legal carveout."""
    for carveout in cfg.sm.shared_carveouts_bytes:
        if size <= carveout:
            return carveout
    raise LaunchError(
        f"{size} bytes of shared memory per SM exceed the largest carveout of {cfg.name} "
        f"({cfg.sm.shared_carveouts_bytes[-1]} bytes)"
    )


def _carveout_preference(cfg: GPUConfig, carveout: int) -> int:
    """``cudaOccSMemPreferenceVoltaPlus``: the preferred shared memory per SM, in bytes.

    -1 (``SHAREDMEM_CARVEOUT_DEFAULT``) prefers ``sharedMemPerMultiprocessor``; otherwise
    ``carveout * sharedMemPerMultiprocessor / 100`` (integer division), rounded up to a legal
    carveout. MEAS §4.1: the driver followed this for carveouts -1, 0, 10, 25, 50, 75, 100.
    """
    shared_per_sm = cfg.sm.shared_per_sm_bytes
    preference = shared_per_sm if carveout == -1 else (carveout * shared_per_sm) // 100
    return _align_up_carveout(cfg, preference)


def launch_carveout(cfg: GPUConfig, occ: "OccupancyResult") -> int:
    """The shared-memory carveout the driver configures for a launch, bytes per SM; the rest of the
    unified L1/shared array (``l1.unified_bytes``) is the L1's data capacity.

    With the default preference (``carveout == -1``) the driver does not configure the occupancy
    calculator's preference (all of shared memory, ``shared_mem_config_bytes``) but the smallest
    legal carveout that holds the blocks the SM runs (``blocks_per_sm`` x the allocated shared memory
    per block, the reserve included), and at least ``l1.carveout_kib``. Checked against
    ``launch__shared_mem_config_size`` of the 58 distinct H100 launches of the suite
    (validation/reports/h100/hardware_h100.json): equal on 47. On the others the driver took a
    larger carveout (64 KB for matmul_tiled, matmul_smem_regtile and conv1d_shared, 100 KB for
    shared_stride: about twice what their blocks need) or a smaller one below the 32 KB floor
    (8 or 16 KB for blocks of 512 and 1,024 threads), so their L1 is 24-36 KB off.
    An explicit preference (0-100) configures what the occupancy calculator computes.
    """
    if occ.carveout != -1 or occ.blocks_per_sm == 0:
        return occ.shared_mem_config_bytes
    need = occ.blocks_per_sm * occ.shared_mem_per_block_allocated
    return max(cfg.l1.carveout_kib * 1024, _align_up_carveout(cfg, need))


def _validate(
    cfg: GPUConfig,
    block_size: int,
    regs_per_thread: int,
    static_smem: int,
    dynamic_smem: int,
    max_dynamic_smem: int | None,
    carveout: int,
    barriers: int,
) -> int:
    """Check inputs; return the effective ``maxDynamicSharedSizeBytes`` attribute."""
    for name, value in (
        ("block_size", block_size),
        ("regs_per_thread", regs_per_thread),
        ("static_smem", static_smem),
        ("dynamic_smem", dynamic_smem),
        ("carveout", carveout),
        ("barriers", barriers),
    ):
        _check_int(name, value)
    sm = cfg.sm
    if block_size <= 0:
        # cudaOccMaxActiveBlocksPerMultiprocessor: blockSize <= 0 -> CUDA_OCC_ERROR_INVALID_INPUT;
        # the driver answers CUDA_ERROR_INVALID_VALUE (validation/reports/h100).
        raise LaunchError(f"block_size must be at least 1 thread, got {block_size}")
    if not 0 <= regs_per_thread <= sm.max_registers_per_thread:
        raise LaunchError(
            f"regs_per_thread must be 0..{sm.max_registers_per_thread} on {cfg.name} "
            f"(sm.max_registers_per_thread), got {regs_per_thread}"
        )
    for name, value in (("static_smem", static_smem), ("dynamic_smem", dynamic_smem)):
        if value < 0:
            raise LaunchError(f"{name} must be >= 0 bytes, got {value}")
    if static_smem > sm.shared_per_block_bytes:
        raise LaunchError(
            f"static_smem={static_smem} bytes exceeds the static shared-memory limit of "
            f"{sm.shared_per_block_bytes} bytes per block on {cfg.name} "
            "(sm.shared_per_block_bytes; ptxas rejects such a kernel: use dynamic shared memory)"
        )
    optin_dynamic = sm.shared_per_block_optin_bytes - static_smem
    if max_dynamic_smem is None:
        # Default of CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: sharedMemPerBlock - static
        # (hardware-facts §4 inputs; read back from the driver in validation/reports/h100).
        attribute = sm.shared_per_block_bytes - static_smem
    else:
        attribute = _check_int("max_dynamic_smem", max_dynamic_smem)
        if not 0 <= attribute <= optin_dynamic:
            raise LaunchError(
                f"max_dynamic_smem={attribute} bytes is out of range: the driver accepts 0.."
                f"{optin_dynamic} (sm.shared_per_block_optin_bytes {sm.shared_per_block_optin_bytes} "
                f"- static_smem {static_smem}); cudaFuncSetAttribute fails with cudaErrorInvalidValue"
            )
    if not -1 <= carveout <= 100:
        # cudaOccSMemPreferenceVoltaPlus: outside -1..100 -> CUDA_OCC_ERROR_INVALID_INPUT.
        raise LaunchError(f"carveout must be -1 (default) or a percentage 0..100, got {carveout}")
    if not 0 <= barriers <= MAX_BARRIERS_PER_BLOCK:
        raise LaunchError(f"barriers must be 0..{MAX_BARRIERS_PER_BLOCK} per block, got {barriers}")
    return attribute


def max_active_blocks(
    gpu: GPUConfig | str,
    block_size: int,
    regs_per_thread: int,
    static_smem: int = 0,
    dynamic_smem: int = 0,
    max_dynamic_smem: int | None = None,
    carveout: int = -1,
    barriers: int = 1,
) -> OccupancyResult:
    """Blocks of one kernel that fit on one SM (``cudaOccupancyMaxActiveBlocksPerMultiprocessor``).

    Arguments mirror the CUDA inputs (hardware-facts §4): ``block_size`` threads;
    ``regs_per_thread`` (``numRegs``, e.g. from ``ptxas -v``); ``static_smem`` bytes
    (``sharedSizeBytes``); ``dynamic_smem`` bytes of this launch; ``max_dynamic_smem`` the
    ``cudaFuncAttributeMaxDynamicSharedMemorySize`` attribute (``None`` = the driver default,
    ``sm.shared_per_block_bytes - static_smem``); ``carveout`` the
    ``cudaFuncAttributePreferredSharedMemoryCarveout`` percentage (-1 = default); ``barriers``
    block barriers the kernel uses (``ptxas -v`` "used N barriers"; the CUDA C++ conversion
    from ``cudaFuncAttributes`` assumes 1).

    A launch that cannot run at all gives ``blocks_per_sm == 0`` with ``reason`` saying why,
    where the driver answers 0 (block too large, too many registers for the block, too much
    shared memory). Impossible inputs raise :class:`gpusim.errors.LaunchError`.
    """
    cfg = _config(gpu)
    attribute = _validate(
        cfg, block_size, regs_per_thread, static_smem, dynamic_smem, max_dynamic_smem, carveout, barriers
    )
    sm = cfg.sm
    warp_size = cfg.warp_size
    warps_per_block = _ceil_div(block_size, warp_size)
    reasons: list[str] = []

    # --- Warps: cudaOccMaxBlocksPerSMWarpsLimit (partitioned global caching is off for cc >= 7).
    if block_size > cfg.max_threads_per_block:
        limit_warps = 0
        reasons.append(
            f"block of {block_size} threads exceeds max_threads_per_block ({cfg.max_threads_per_block})"
        )
    else:
        limit_warps = sm.max_warps // warps_per_block

    # --- Blocks: cudaOccMaxBlocksPerMultiprocessor (32 for cc 7.0/8.0/9.0, 16 for 8.6).
    limit_blocks = sm.max_blocks

    # --- Registers: cudaOccMaxBlocksPerSMRegsLimit.
    regs_per_warp = _round_up(regs_per_thread * warp_size, sm.register_alloc_unit)
    regs_per_block = regs_per_warp * warps_per_block
    # "Hardware check": the warp count is rounded up to the sub-partitions.
    regs_assumed = regs_per_warp * _round_up(warps_per_block, sm.register_sub_partitions)
    limit_registers: int | None
    if regs_assumed > sm.max_registers_per_block or regs_per_block > sm.max_registers_per_block:
        limit_registers = 0
        reasons.append(
            f"{warps_per_block} warps x {regs_per_warp} registers per warp "
            f"(rounded up to {_round_up(warps_per_block, sm.register_sub_partitions)} warps for the "
            f"{sm.register_sub_partitions} sub-partitions) = {max(regs_assumed, regs_per_block)} registers "
            f"exceed the {sm.max_registers_per_block} a block may use"
        )
    elif regs_per_warp == 0:
        limit_registers = None
    else:
        warps_per_sub_partition = (sm.registers // sm.register_sub_partitions) // regs_per_warp
        limit_registers = (warps_per_sub_partition * sm.register_sub_partitions) // warps_per_block

    # --- Shared memory: cudaOccMaxBlocksPerSMSmemLimit + cudaOccSMemPerBlock.
    granularity = sm.shared_alloc_granularity_bytes
    static_total = static_smem + sm.reserved_shared_per_block_bytes
    smem_per_block = _round_up(static_total + dynamic_smem, granularity)
    # The driver behaves like the header with shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN only
    # when the kernel's max_dynamic_smem attribute was raised above its default
    # (sharedMemPerBlock - static); otherwise like FUNC_SHMEM_LIMIT_DEFAULT, which neither
    # raises the per-block limit nor checks dynamic_smem against the attribute. (H100 driver
    # table: 6 of the 61 rows with a lowered attribute and dynamic_smem above it got blocks,
    # which the always-OPTIN header would make 0; default and raised attributes agree either way.)
    opt_in = attribute > sm.shared_per_block_bytes - static_smem
    max_usage = static_total + attribute
    if opt_in and max_usage > sm.shared_per_block_bytes:
        per_block_limit = sm.shared_per_block_optin_bytes
    else:
        per_block_limit = sm.shared_per_block_bytes
    # "Starting Ampere, CUDA driver reserves additional shared memory per block" (cc >= 8; the
    # reserve is 0 on cc 7.x, so adding it unconditionally is the same).
    per_block_limit += sm.reserved_shared_per_block_bytes
    limit_shared_mem: int | None
    config_bytes = 0
    if opt_in and dynamic_smem > attribute:
        limit_shared_mem = 0
        reasons.append(
            f"dynamic_smem={dynamic_smem} bytes exceeds the kernel's max_dynamic_smem attribute "
            f"({attribute} bytes; the driver allows up to {sm.shared_per_block_optin_bytes - static_smem})"
        )
    elif smem_per_block > per_block_limit:
        limit_shared_mem = 0
        hint = (
            f"; raise max_dynamic_smem (up to {sm.shared_per_block_optin_bytes - static_smem}) to opt in to "
            f"{sm.shared_per_block_optin_bytes} bytes per block"
            if not opt_in and smem_per_block <= sm.shared_per_block_optin_bytes + sm.reserved_shared_per_block_bytes
            else ""
        )
        reasons.append(
            f"{smem_per_block} bytes of shared memory per block (static {static_smem} + dynamic "
            f"{dynamic_smem} + reserved {sm.reserved_shared_per_block_bytes}, rounded to "
            f"{granularity}) exceed the per-block limit of {per_block_limit} bytes{hint}"
        )
    else:
        preference = _carveout_preference(cfg, carveout)
        # The preference is used if at least one block fits; otherwise the block's own size,
        # rounded up to a legal carveout (Volta+ branch of cudaOccMaxBlocksPerSMSmemLimit).
        config_bytes = preference if preference >= smem_per_block else _align_up_carveout(cfg, smem_per_block)
        limit_shared_mem = config_bytes // smem_per_block if smem_per_block > 0 else None

    # --- Barriers: cudaOccMaxBlocksPerSMBlockBarrierLimit, applied for cc >= 9.0 only.
    limit_barriers: int | None = None
    if cfg.compute_capability >= (9, 0) and barriers > 0:
        limit_barriers = (limit_blocks * sm.barriers_per_block_slot) // barriers

    limits = {
        "warps": limit_warps,
        "registers": limit_registers,
        "shared_mem": limit_shared_mem,
        "blocks": limit_blocks,
        "barriers": limit_barriers,
    }
    blocks = min(v for v in limits.values() if v is not None)
    limiters = tuple(n for n in LIMITER_NAMES if limits[n] == blocks)
    active_warps = blocks * warps_per_block
    return OccupancyResult(
        gpu=cfg.name,
        block_size=block_size,
        regs_per_thread=regs_per_thread,
        static_smem=static_smem,
        dynamic_smem=dynamic_smem,
        max_dynamic_smem=attribute,
        carveout=carveout,
        barriers=barriers,
        warps_per_block=warps_per_block,
        blocks_per_sm=blocks,
        active_warps=active_warps,
        max_warps=sm.max_warps,
        occupancy=active_warps / sm.max_warps,
        limit_warps=limit_warps,
        limit_registers=limit_registers,
        limit_shared_mem=limit_shared_mem,
        limit_blocks=limit_blocks,
        limit_barriers=limit_barriers,
        limiters=limiters,
        registers_per_warp_allocated=regs_per_warp,
        registers_per_block_allocated=regs_per_block,
        shared_mem_per_block_allocated=smem_per_block,
        shared_mem_config_bytes=config_bytes,
        reason="; ".join(reasons),
    )


def max_block_size_for_registers(gpu: GPUConfig | str, regs_per_thread: int) -> int:
    """Largest block (threads) the register file admits: ``CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK``.

    The largest multiple of the warp size whose warps pass both register checks of
    ``cudaOccMaxBlocksPerSMRegsLimit`` (MEAS §4.1: 251 regs -> 256, 168 -> 384, 128 -> 512,
    96 -> 640, 80 -> 768, 72 -> 896), capped at ``max_threads_per_block``.
    """
    cfg = _config(gpu)
    sm = cfg.sm
    _check_int("regs_per_thread", regs_per_thread)
    if not 0 <= regs_per_thread <= sm.max_registers_per_thread:
        raise LaunchError(
            f"regs_per_thread must be 0..{sm.max_registers_per_thread}, got {regs_per_thread}"
        )
    regs_per_warp = _round_up(regs_per_thread * cfg.warp_size, sm.register_alloc_unit)
    best = 0
    for warps in range(1, cfg.max_threads_per_block // cfg.warp_size + 1):
        assumed = regs_per_warp * _round_up(warps, sm.register_sub_partitions)
        if assumed <= sm.max_registers_per_block and regs_per_warp * warps <= sm.max_registers_per_block:
            best = warps
    return best * cfg.warp_size


def max_potential_block_size(
    gpu: GPUConfig | str,
    regs_per_thread: int,
    static_smem: int = 0,
    dynamic_smem: int | Callable[[int], int] = 0,
    block_size_limit: int = 0,
    max_dynamic_smem: int | None = None,
    carveout: int = -1,
    barriers: int = 1,
) -> PotentialBlockSize:
    """The block size with the highest occupancy, like ``cudaOccupancyMaxPotentialBlockSize``.

    Port of ``cudaOccMaxPotentialOccupancyBlockSize``: block sizes are tried from
    ``min(max_threads_per_block, register limit, block_size_limit)`` (0 = no limit) downwards
    in steps of the warp size; the largest ``blocks * block_size`` wins and ties keep the
    larger block; the search stops early at full occupancy. ``dynamic_smem`` may be a
    function of the block size (``...VariableSMem``). ``min_grid_size = blocks * sm_count``.
    Returns block size 0 when no block size fits.
    """
    cfg = _config(gpu)
    _check_int("block_size_limit", block_size_limit)
    if block_size_limit < 0:
        raise LaunchError(f"block_size_limit must be >= 0 (0 = none), got {block_size_limit}")
    limit = min(cfg.max_threads_per_block, max_block_size_for_registers(cfg, regs_per_thread))
    if block_size_limit:
        limit = min(limit, block_size_limit)
    granularity = cfg.warp_size
    best_size = best_blocks = best_threads = 0
    best_result: OccupancyResult | None = None
    occupancy_limit = cfg.sm.max_threads
    aligned = _round_up(limit, granularity)
    while aligned > 0:
        size = min(limit, aligned)
        dyn = dynamic_smem(size) if callable(dynamic_smem) else dynamic_smem
        result = max_active_blocks(
            cfg, size, regs_per_thread, static_smem, int(dyn), max_dynamic_smem, carveout, barriers
        )
        threads = size * result.blocks_per_sm
        if threads > best_threads:
            best_size, best_blocks, best_threads, best_result = size, result.blocks_per_sm, threads, result
        if best_threads == occupancy_limit:
            break
        aligned -= granularity
    return PotentialBlockSize(
        block_size=best_size,
        min_grid_size=best_blocks * cfg.sm_count,
        blocks_per_sm=best_blocks,
        occupancy=best_result.occupancy if best_result else 0.0,
        result=best_result,
    )


def _values(name: str, value: int | Iterable[int] | None) -> list[Any]:
    if value is None or isinstance(value, int):
        return [value]
    values = list(value)
    if not values:
        raise LaunchError(f"{name}: empty sweep range")
    return values


def sweep(
    gpu: GPUConfig | str,
    *,
    block_size: int | Iterable[int],
    regs_per_thread: int | Iterable[int],
    static_smem: int | Iterable[int] = 0,
    dynamic_smem: int | Iterable[int] = 0,
    max_dynamic_smem: int | None | Iterable[int] = None,
    carveout: int | Iterable[int] = -1,
    barriers: int | Iterable[int] = 1,
) -> list[OccupancyResult]:
    """:func:`max_active_blocks` over the cartesian product of the given values.

    Every argument is one value or an iterable of values; the result lists one
    :class:`OccupancyResult` per combination, the last argument varying fastest.
    """
    cfg = _config(gpu)
    axes = [
        _values("block_size", block_size),
        _values("regs_per_thread", regs_per_thread),
        _values("static_smem", static_smem),
        _values("dynamic_smem", dynamic_smem),
        _values("max_dynamic_smem", max_dynamic_smem),
        _values("carveout", carveout),
        _values("barriers", barriers),
    ]
    return [max_active_blocks(cfg, *combo) for combo in itertools.product(*axes)]


def curves(
    gpu: GPUConfig | str,
    block_size: int,
    regs_per_thread: int,
    static_smem: int = 0,
    dynamic_smem: int = 0,
    max_dynamic_smem: int | None = None,
    carveout: int = -1,
    barriers: int = 1,
) -> dict[str, list[tuple[int, OccupancyResult]]]:
    """The three occupancy-calculator curves around one launch (Nsight Compute "Occupancy").

    Returns ``{"block_size": ..., "registers": ..., "shared_mem": ...}``, each a list of
    ``(x, result)``: block sizes in warp steps up to ``max_threads_per_block`` (plus the
    launch's own size); registers per thread 1..``sm.max_registers_per_thread``; shared
    memory per block (static + dynamic, bytes) from ``static_smem`` to the opt-in limit in
    allocation-granularity steps (plus the launch's own size), computed as if the kernel had
    opted in to the largest dynamic shared memory. Everything else stays at the launch's values.
    """
    cfg = _config(gpu)
    sm = cfg.sm
    max_active_blocks(cfg, block_size, regs_per_thread, static_smem, dynamic_smem, max_dynamic_smem, carveout, barriers)

    sizes = sorted(set(range(cfg.warp_size, cfg.max_threads_per_block + 1, cfg.warp_size)) | {block_size})
    by_block = [
        (b, max_active_blocks(cfg, b, regs_per_thread, static_smem, dynamic_smem, max_dynamic_smem, carveout, barriers))
        for b in sizes
        if b <= cfg.max_threads_per_block
    ]
    by_regs = [
        (r, max_active_blocks(cfg, block_size, r, static_smem, dynamic_smem, max_dynamic_smem, carveout, barriers))
        for r in range(1, sm.max_registers_per_thread + 1)
    ]
    optin_dynamic = sm.shared_per_block_optin_bytes - static_smem
    top = sm.shared_per_block_optin_bytes
    step = sm.shared_alloc_granularity_bytes
    totals = sorted(set(range(static_smem, top + 1, step)) | {top, static_smem + dynamic_smem})
    by_smem = [
        (t, max_active_blocks(cfg, block_size, regs_per_thread, static_smem, t - static_smem, optin_dynamic, carveout, barriers))
        for t in totals
        if static_smem <= t <= top
    ]
    return {"block_size": by_block, "registers": by_regs, "shared_mem": by_smem}
