"""The pydantic models of a GPU description (one :class:`GPUConfig` per GPU).

Owns: the schema of a GPU configuration (field names, units, bounds) and the
cross-field rules that make a configuration self-consistent. Every model is
frozen and rejects unknown fields (``extra="forbid"``); every field has a
``description`` that names its unit. Integer fields are strict (a TOML ``1.0``
or ``true`` is not a register count).

Must not import: simpy, cupy, or any other gpusim module except
:mod:`gpusim.config.overrides` and :mod:`gpusim.errors` (the configuration is read by everything, so it depends on
nothing).

Where the numbers come from is not this module's business: the TOML files in
the top-level ``configs`` package carry them, each with its source key from
``shared/reference/hardware-facts.md``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpusim.config.overrides import apply_overrides

__all__ = [
    "UNIT_NAMES",
    "UnitSpec",
    "SchedulerSpec",
    "SMSpec",
    "SharedMemSpec",
    "L1Spec",
    "L2Spec",
    "DRAMSpec",
    "GPUConfig",
]

#: Functional-unit classes, as the ISA's opcode table names them (``isa.Unit``
#: plus ``fp64``). A configuration must give a :class:`UnitSpec` for each.
UNIT_NAMES: tuple[str, ...] = ("alu", "fma", "imad", "fp64", "sfu", "lsu", "shfl", "branch", "sync", "tensor")

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def _int(description: str, **bounds: Any) -> Any:
    """A strict integer field (no bool, no float) with a description."""
    return Field(..., strict=True, description=description, **bounds)


class UnitSpec(BaseModel):
    """One functional-unit class of an SM sub-partition (gem5 ``FUDesc`` style)."""

    model_config = _FROZEN

    latency: int = _int("cycles from issue until a dependent instruction may use the result "
        "(at most 100000: ASSUMED bound, over 100 times the slowest DRAM latency measured, §3)", ge=1, le=100_000)
    issue_interval: int = _int(
        "cycles one pipe of this class is busy per warp instruction (1 = fully pipelined, "
        "32 lanes/cycle; 2 = 16 lanes/cycle, ...)",
        ge=1,
    )
    count: int = _int("pipes of this class per warp scheduler (SM sub-partition); at most 64 (ASSUMED bound)",
                      ge=1, le=64)


class SchedulerSpec(BaseModel):
    """The warp schedulers of one SM."""

    model_config = _FROZEN

    count: int = _int("warp schedulers (= SM sub-partitions, SMSPs) per SM; at most 64 (one per warp slot)",
                      ge=1, le=64)
    issue_width: int = _int("warp instructions one scheduler issues per cycle; at most 64 (ASSUMED bound: 1 on "
                            "every GPU gpusim describes, PG-MP)", ge=1, le=64)
    policy: str = Field(
        ...,
        min_length=1,
        description="warp selection policy of the timing model (a model choice, not a "
        "hardware fact), by registered name: 'lrr' (loose round robin), 'gto' (greedy-then-oldest), "
        "'two_level', 'oldest_cta' (the oldest CTA's warps first, round robin inside a CTA: the order "
        "H100 clock stamps show with several CTAs an SM), or one added with "
        "gpusim.timing.policies.register_policy (checked when a "
        "timing launch starts)",
    )
    group_warps: int = _int("timing model: warps per fetch group of the two_level policy, warps", ge=1)


class SMSpec(BaseModel):
    """Per-SM resource limits (the inputs of the occupancy calculation) and pipelines."""

    model_config = _FROZEN

    max_warps: int = _int("resident warps per SM (maxThreadsPerMultiProcessor / warpSize), warps; at most 64, "
                          "the most of any NVIDIA GPU so far (PG13 technical-specification table: 64 on cc 7.0-9.0, "
                          "48 on 8.6/8.9, 32 on 7.5)", ge=1, le=64)
    max_blocks: int = _int("resident thread blocks per SM (maxBlocksPerMultiProcessor), blocks; at most 32, the "
                           "most of any compute capability (OCC cudaOccMaxBlocksPerMultiprocessor: 32 on 7.0, 8.0, "
                           "9.x)", ge=1, le=32)
    registers: int = _int("32-bit registers per SM (regsPerMultiprocessor), registers; at most 65536, the "
                          "register file of every compute capability since 3.0 (PG13 technical-specification table)",
                          ge=1, le=65536)
    max_registers_per_block: int = _int("32-bit registers one block may use (regsPerBlock), registers; at most "
                                        "65536 (PG13)", ge=1, le=65536)
    max_registers_per_thread: int = _int("registers one thread may use, registers", ge=1, le=256)
    register_alloc_unit: int = _int(
        "register allocation granularity, registers per warp (a warp gets "
        "roundup(regs_per_thread * warp_size, this))",
        ge=1,
    )
    register_sub_partitions: int = _int(
        "register-file sub-partitions per SM; registers are allocated to warps per sub-partition; at most 64 "
        "(one per warp)", ge=1, le=64
    )
    shared_per_sm_bytes: int = _int("shared memory per SM (sharedMemPerMultiprocessor), bytes", ge=0)
    shared_per_block_bytes: int = _int(
        "shared memory per block without opt-in (sharedMemPerBlock; the static limit), bytes", ge=0
    )
    shared_per_block_optin_bytes: int = _int(
        "shared memory per block with dynamic opt-in (sharedMemPerBlockOptin), bytes", ge=0
    )
    reserved_shared_per_block_bytes: int = _int(
        "shared memory the driver reserves for every block (reservedSharedMemPerBlock), bytes", ge=0
    )
    shared_alloc_granularity_bytes: int = _int("shared-memory allocation granularity per block, bytes", ge=1)
    shared_carveouts_kib: tuple[int, ...] = Field(
        ...,
        min_length=1,
        description="legal shared-memory carveouts of the unified L1/shared array, KiB, ascending",
    )
    barriers_per_block_slot: int = _int(
        "block barriers available per resident-block slot (cc >= 9 occupancy barrier limit = "
        "max_blocks * this / barriers per block), barriers",
        ge=1,
    )
    mio_queue_cycles: int = _int(
        "timing model: a sub-partition's shared-memory (MIO) backlog, in data-stage cycles (from the SM's "
        "data stage ending its latest shared access), above which its warps stall in mio_throttle, cycles", ge=0)
    mio_queue_instructions: int | None = Field(
        None, strict=True, ge=1, description="timing model: a sub-partition's MIO queue, in shared-memory "
        "instructions waiting for the data stage; when set it replaces mio_queue_cycles (a warp stalls in "
        "mio_throttle while this many of its sub-partition's shared instructions have not reached the data "
        "stage) and the sub-partition's global and local accesses enter the L1TEX behind them, "
        "instructions; default None (the cycles rule, global accesses not queued)")
    lg_queue_cycles: int = _int(
        "timing model: L1 tag-stage backlog above which global and local accesses stall in lg_throttle, "
        "cycles", ge=0)
    cta_launch_cycles: int = _int(
        "timing model: cycles from a CTA's retirement until its SM may start the next CTA of the grid, cycles",
        ge=0)
    barrier_arrive_cycles: float = Field(
        ..., ge=0, description="timing model: SM cycles the SM's barrier unit takes to count one warp's arrival "
        "at a bar.sync (the barrier's cost grows by this per warp of the CTA), cycles")
    const_transaction_cycles: int = Field(
        1, strict=True, ge=0, description="timing model: cycles each constant-cache transaction after the "
        "first adds to a ld.const whose lanes read k distinct addresses (served one after the other), cycles; "
        "default 1 (ASSUMED: no measurement)")
    wgmma_step_interval: int | None = Field(
        None, strict=True, ge=1, le=64, description="cycles a sub-partition's tensor pipe takes per m16n8k16-sized "
        "step of a warp's share of wgmma.mma_async (an m64nNk16 is N/8 steps a warp); null = the tensor unit's "
        "issue_interval (mma.sync's)")
    predicate_latency: int | None = Field(
        None, strict=True, ge=1, description="cycles from an instruction that writes a predicate (PTX setp; SASS "
        "ISETP, FSETP, DSETP, PLOP3) until one that reads it (a guarded instruction, a branch, selp) may issue, "
        "cycles; null = the writer's unit latency")
    sass_latency: dict[str, int] = Field(
        default_factory=dict, description="latencies of SASS instructions that differ from their unit's, keyed by "
        "opcode prefix ('IMAD.HI' matches 'IMAD.HI.U32'), cycles: each SASS instruction of an expansion, and a PTX "
        "instruction ptxas makes one such instruction of, gets it")
    sass_pipes: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="pipes a SASS instruction holds that differ from its unit's issue_interval, "
        "keyed by opcode prefix as sass_latency is, each {unit name: cycles it holds that unit's pipe}: such a SASS "
        "instruction (a PTX instruction's only one, or one of an expansion) holds each listed pipe of its "
        "sub-partition that long (its own unit's entry replaces the unit's issue_interval), cycles")
    scheduler: SchedulerSpec = Field(..., description="warp schedulers of one SM")
    units: dict[str, UnitSpec] = Field(
        ...,
        description="functional-unit classes keyed by the ISA's unit name: " + ", ".join(UNIT_NAMES),
    )

    @field_validator("shared_carveouts_kib")
    @classmethod
    def _carveouts_ascending(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(v < 0 for v in value):
            raise ValueError("carveouts must be >= 0 KiB")
        if list(value) != sorted(set(value)):
            raise ValueError(f"carveouts must be strictly ascending, got {list(value)}")
        return value

    @field_validator("sass_pipes")
    @classmethod
    def _pipes_known(cls, value: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
        for op, holds in value.items():
            unknown = sorted(set(holds) - set(UNIT_NAMES))
            if unknown:
                raise ValueError(f"sass_pipes[{op!r}] names unknown unit(s) {', '.join(map(repr, unknown))}; "
                                 f"the unit classes are {', '.join(UNIT_NAMES)}")
            bad = [u for u, c in holds.items() if not isinstance(c, int) or isinstance(c, bool) or c < 1]
            if bad:
                raise ValueError(f"sass_pipes[{op!r}][{bad[0]!r}] must be a whole number of cycles >= 1, "
                                 f"got {holds[bad[0]]!r}")
        return value

    @field_validator("units")
    @classmethod
    def _known_units(cls, value: dict[str, UnitSpec]) -> dict[str, UnitSpec]:
        unknown = sorted(set(value) - set(UNIT_NAMES))
        if unknown:
            raise ValueError(
                f"unknown functional unit(s) {', '.join(map(repr, unknown))}; "
                f"the unit classes are {', '.join(UNIT_NAMES)}"
            )
        missing = [u for u in UNIT_NAMES if u not in value]
        if missing:
            raise ValueError(f"missing functional unit(s): {', '.join(missing)}")
        return value

    @property
    def max_threads(self) -> int:
        """Resident threads per SM (``maxThreadsPerMultiProcessor``) = ``max_warps * 32``.

        Derived, not stored, so that a what-if override of ``sm.max_warps`` changes both.
        """
        return self.max_warps * GPUConfig.WARP_SIZE

    @property
    def shared_carveouts_bytes(self) -> tuple[int, ...]:
        """The legal carveouts in bytes."""
        return tuple(k * 1024 for k in self.shared_carveouts_kib)

    @property
    def max_warps_per_scheduler(self) -> int:
        """Warp slots of one scheduler (``max_warps / scheduler.count``)."""
        return self.max_warps // self.scheduler.count


class SharedMemSpec(BaseModel):
    """Banked shared memory (timing side; the capacity limits live in :class:`SMSpec`)."""

    model_config = _FROZEN

    banks: int = _int("shared-memory banks; at most 1024 (ASSUMED bound; 32 on every GPU since cc 2.0, PG13)",
                      ge=1, le=1024)
    bank_width_bytes: int = _int("width of one bank, bytes per bank per cycle", ge=1)
    latency_cycles: int = _int("load-to-use latency of a conflict-free shared load, SM cycles "
        "(at most 100000: ASSUMED bound, over 100 times the slowest DRAM latency measured, §3)", ge=1, le=100_000)
    bytes_per_cycle: int = _int("shared-memory data bandwidth per SM (one wavefront), bytes per cycle", ge=1)
    conflict_latency_cycles: int = Field(
        1, strict=True, ge=1, description="cycles each wavefront beyond an access's conflict-free count (one a "
        "32-bit warp access, two a 64-bit, four a 128-bit) adds to its latency (the data stage still takes one "
        "cycle a wavefront), cycles; default 1")


class L1Spec(BaseModel):
    """The per-SM L1 data cache (the part of the unified array not carved out as shared memory)."""

    model_config = _FROZEN

    unified_bytes: int = _int("capacity of the unified L1 + shared-memory array per SM, bytes; at most 4 MiB "
                              "(ASSUMED bound: 16 times the H100's 256 KB)", ge=1, le=4 * 2**20)
    carveout_kib: int = _int(
        "shared-memory carveout assumed when sizing L1 (L1 = unified - carveout), KiB; must be "
        "one of sm.shared_carveouts_kib",
        ge=0,
    )
    line_bytes: int = _int("cache line size, bytes", ge=1)
    sector_bytes: int = _int("sector size (smallest unit filled from L2), bytes", ge=1)
    latency_cycles: int = _int("load-to-use latency of a global load that hits in L1, SM cycles "
        "(at most 100000: ASSUMED bound, over 100 times the slowest DRAM latency measured, §3)", ge=1, le=100_000)
    mshrs: int = _int("miss-status holding registers (outstanding line misses) per SM, entries; at most 65536 "
                      "(ASSUMED bound)", ge=1, le=65536)
    tag_lines_per_cycle: float = Field(
        ..., gt=0, description="timing model: distinct 128-byte lines the L1's tag stage looks up a cycle for "
        "one global or local load; the data stage's bank wavefronts (shared memory's rule) bound it too, lines/cycle")
    miss_requests_per_cycle: float = Field(
        0.0, ge=0, description="timing model: line requests of loads (misses, and L1-bypassing loads) one SM's "
        "L1 sends the L2 a cycle, requests per SM cycle; 0 = no limit beyond the tag stage (the default)")
    hits_wait_for_fills: bool = Field(
        False, description="timing model: a load that hits sectors an earlier miss of this L1 is still fetching "
        "from the L2 gets its data no earlier than that miss does; false = a hit returns after latency_cycles "
        "whether or not its data has arrived (the default)")
    write_combine_lines: int = Field(
        0, strict=True, ge=0, description="timing model: lines of the SM's most recent global stores (LRU) that a "
        "store to the same line joins instead of sending L2 a request of its own, lines; 0 = every line of every "
        "store is a request (the default)")
    store_merge_lines: int = Field(
        0, strict=True, ge=0, description="timing model: a warp's store of store_merge_lane_bytes a lane spanning "
        "at most this many lines, whose previous memory instruction was such a store, joins that store's request: "
        "the sectors both write in part add no L2 sector and no write data, lines; 0 = no store merges (the default)")
    store_merge_instructions: int = Field(
        8, strict=True, ge=0, description="timing model: the most instructions a warp may issue from one store to "
        "the next for store_merge_lines to merge them, instructions (PTX; SASS for a PTX instruction gpusim issues as "
        "several)")
    store_merge_lane_bytes: int = Field(
        4, strict=True, ge=1, description="timing model: the access width, bytes a lane, of the stores that "
        "store_merge_lines applies to")

    @property
    def size_bytes(self) -> int:
        """L1 data capacity for the configured carveout, bytes."""
        return self.unified_bytes - self.carveout_kib * 1024

    def size_for_carveout(self, carveout_bytes: int) -> int:
        """L1 data capacity when ``carveout_bytes`` of the unified array are shared memory."""
        return self.unified_bytes - carveout_bytes


class L2Spec(BaseModel):
    """The device-wide L2 cache."""

    model_config = _FROZEN

    size_bytes: int = _int("total L2 capacity, bytes; at most 1 GiB (ASSUMED bound: 20 times the H100's 50 MB; "
                           "the timing model keeps a tag per line)", ge=1, le=2**30)
    line_bytes: int = _int("cache line size, bytes", ge=1)
    sector_bytes: int = _int("sector size, bytes", ge=1)
    partitions: int = _int("L2 partitions (near/far halves on A100/H100)", ge=1)
    slices: int | None = Field(None, strict=True, ge=1, description="L2 slices in total, or null if not modelled")
    latency_cycles: int = _int("load-to-use latency of a global load that hits in the near L2 partition, SM cycles "
        "(at most 100000: ASSUMED bound, over 100 times the slowest DRAM latency measured, §3)", ge=1, le=100_000)
    bandwidth_bytes_per_s: float = Field(
        ..., gt=0, description="L2 data bandwidth of the whole device (all slices) for the sectors it reads "
        "(loads, atomics), bytes per second; also for the sectors it writes unless write_bandwidth_bytes_per_s is set")
    write_bandwidth_bytes_per_s: float | None = Field(
        None, gt=0, description="timing model: the same slices' rate for the sectors stores write, which share "
        "the slices' time with the reads, bytes per second; null = bandwidth_bytes_per_s (the default)")
    write_data_bytes_per_s: float | None = Field(
        None, gt=0, description="timing model: the rate store data travels from the SMs to the L2, GPU-wide, a "
        "path of its own before the slices (a store's data waits its turn there; its SM goes on, held only by the "
        "request port's backlog, write_queue_cycles), bytes per second; null = no limit beyond the slices (the default)")
    write_requests_per_cycle: float = Field(
        0.0, ge=0, description="timing model: write requests (one per line a store sends after write combining) "
        "the whole L2 accepts a cycle; a store waits its turn, and its SM's L1 with it, requests per SM cycle; "
        "0 = no limit beyond the bandwidth (the default)")
    read_requests_per_cycle: float = Field(
        0.0, ge=0, description="timing model: read requests (a line each, of loads that missed or bypassed L1) "
        "the whole L2 takes a cycle, requests per SM cycle; 0 = no limit beyond the bandwidth (the default)")
    shared_request_port: bool = Field(
        False, description="timing model: reads, writes and atomics share one L2 request port (each request holds "
        "it for 1 / its kind's rate: read_requests_per_cycle, write_requests_per_cycle, atomic_*requests_per_cycle); "
        "false = a port per kind (the default)")
    writeback_queue_cycles: float = Field(
        0.0, ge=0, description="timing model: how far DRAM's server may be booked ahead (write-backs and the "
        "reads that complete partly written sectors) before a store or atomic holds its SM's L1, cycles; "
        "0 = writes never wait for DRAM (the default)")
    write_queue_cycles: float = Field(
        0.0, ge=0, description="timing model: how far (in cycles of the write-request port's work) the L2's "
        "queue of write requests may run ahead before a store holds its SM's L1, cycles; 0 = a store holds the L1 "
        "until its requests are taken (the default)")
    atomic_serial_cycles: int = Field(
        1, strict=True, ge=0, description="timing model: cycles each further update of one address adds to "
        "a warp's atom/red executed in L2 (lanes updating the same address are applied one after the other), "
        "cycles; default 1 (ASSUMED: no measurement)")
    atomic_address_cycles: float = Field(
        0.0, ge=0, description="timing model, contended atomics: cycles one address is busy with each update "
        "of an integer or bitwise atom/red request, GPU-wide (its next update, from any SM, starts no earlier); "
        "setting this, atomic_slice_cycles or atomic_requests_per_cycle turns the contended-atomics model on "
        "(lanes of a warp on one address become separate L2 requests, replacing atomic_serial_cycles); 0 = off "
        "(the default)")
    atomic_address_cycles_float: float = Field(
        0.0, ge=0, description="timing model, contended atomics: the same for floating-point atom/red "
        "(add.f32/f64/f16...), cycles; 0 = atomic_address_cycles (the default)")
    atomic_slice_cycles: float = Field(
        0.0, ge=0, description="timing model, contended atomics: cycles an integer atom/red request of one "
        "sector holds the atomic unit of its L2 slice (the slice: a hash of the address's atomic_granule_bytes "
        "granule over `slices`); 0 = no per-slice limit (the default)")
    atomic_slice_cycles_float: float = Field(
        0.0, ge=0, description="timing model, contended atomics: the same for floating-point requests (unused where "
        "atomic_full_sector_cycles is set), cycles; 0 = atomic_slice_cycles (the default)")
    atomic_sector_cycles: float = Field(
        0.0, ge=0, description="timing model, contended atomics: cycles each further sector of one request "
        "adds to its slice's time (unused where atomic_full_sector_cycles is set), cycles; default 0")
    atomic_full_sector_cycles: float = Field(
        0.0, ge=0, description="timing model, contended atomics: when set, a request holds its slice's atomic "
        "unit per sector it updates, this for a sector whose eight 4-byte words it all updates and "
        "atomic_slice_cycles for one it updates in part, integer or float alike, cycles; 0 = the first "
        "sector atomic_slice_cycles(_float), each further one atomic_sector_cycles (the default)")
    slice_read_cycles: float = Field(
        0.0, ge=0, description="timing model, contended atomics: cycles a read request (a line of a load) holds "
        "the atomic unit of its L2 slice (atomic_granule_bytes granules hashed over `slices`, as an atomic's): "
        "reads and atomics take turns at a slice, so reads homed with a hot address wait behind its updates "
        "(needs atomic_slice_cycles); cycles; 0 = reads pass the atomic units (the default)")
    slice_read_sector_cycles: float = Field(
        0.0, ge=0, description="timing model, contended atomics: cycles each sector of a read request holds its "
        "slice's atomic unit where that is longer than slice_read_cycles (the slice's data path), cycles; "
        "default 0")
    atomic_granule_bytes: int = Field(
        512, strict=True, ge=1, description="timing model, contended atomics: bytes of consecutive addresses "
        "homed in one L2 slice, bytes; default 512")
    atomic_requests_per_cycle: float = Field(
        0.0, ge=0, description="timing model, contended atomics: red requests (no value returned) the whole "
        "L2 takes a cycle, requests per SM cycle; 0 = no limit (the default)")
    atomic_return_requests_per_cycle: float = Field(
        0.0, ge=0, description="timing model, contended atomics: atom requests (old value returned) the whole "
        "L2 takes a cycle, requests per SM cycle; 0 = atomic_requests_per_cycle (the default)")
    atomic_queue_requests: int = Field(
        32, strict=True, ge=1, description="timing model, contended atomics: atomic requests one SM may have "
        "waiting in the L2 (taken by the port, not yet started at their slice's atomic unit or address); past "
        "that its L1 stage holds until they fall back to this many, requests; default 32")
    localizes_far_reads: bool = Field(
        False, description="timing model: the L2 is `partitions` caches of size_bytes / partitions, each homing "
        "a hash's share of the lines; an SM reading a line homed in another partition looks up the copy in its "
        "own first, then the home, and leaves a copy in its own; writes go home and drop the copies; false = one "
        "cache of size_bytes (the default)")
    dirty_places: int = Field(
        1, strict=True, ge=1, le=8, description="timing model: places of the capacity a written (dirty) line takes "
        "until it is evicted; 2 = the L2 holds half its capacity of written data (the default 1: a line's size)")
    hits_wait_for_fills: bool = Field(
        False, description="timing model: a read that hits sectors an earlier miss is still fetching from DRAM "
        "gets its data no earlier than that miss does; false = a hit returns after latency_cycles whether or not "
        "its data has arrived (the default)")
    coalesce_window_cycles: float = Field(
        0.0, ge=0, description="timing model: Hopper's L2 request coalescer: a read that bypasses the L1 "
        "(ld.global.cg, cp.async.cg, volatile) of sectors that such a read by another SM requested at most this many "
        "cycles before, and whose data has not yet returned, joins "
        "that request: it holds no L2 bandwidth, is not counted in lts__t_sectors, and its data returns with that "
        "request's (at least one L2 latency later); SM cycles; 0 = no coalescing (the default)")
    far_latency_cycles: int | None = Field(
        None,
        strict=True,
        ge=1,
        description="load-to-use latency of an L2 hit at a line's home in the far partition (no copy near), SM "
        "cycles; a DRAM read of a line homed far pays the same extra over latency_cycles; null = same as "
        "latency_cycles",
    )
    partition_granule_bytes: int = Field(
        128, strict=True, ge=1, description="timing model: bytes of the address range whose lines share an L2 "
        "partition home (a power of two, at least line_bytes); default 128 (each line homed on its own)")
    sm_partitions: tuple[int, ...] | None = Field(
        None, description="timing model: the L2 partition near each SM, by %smid: at least sm_count entries, each "
        "0 to partitions - 1 (unused with one partition; a sampled slice of k SMs gets k entries in the GPU's "
        "proportions, gpusim.timing.sampling.slice_sides); "
        "measured per chip, as which TPCs are fused off differs; null = SM s near partition s % partitions "
        "(the default)")


class DRAMSpec(BaseModel):
    """Device memory."""

    model_config = _FROZEN

    bandwidth_bytes_per_s: float = Field(..., gt=0, description="peak DRAM bandwidth, bytes per second")
    efficiency: float = Field(..., gt=0, le=1, description="fraction of the peak bandwidth the timing model's DRAM "
                              "server sustains (refresh, row and read/write turnarounds), 0-1")
    read_efficiency: float | None = Field(
        None, gt=0, le=1, description="fraction of the peak bandwidth a stream of reads alone sustains, 0-1; writes "
        "then take the share that leaves a copy (as many bytes written as read) at efficiency; None = reads and "
        "writes both at efficiency (the default)")
    latency_cycles: int = _int("load-to-use latency of a global load that misses L1 and L2, SM cycles "
        "(at most 100000: ASSUMED bound, over 100 times the slowest DRAM latency measured, §3)", ge=1, le=100_000)
    queue_cycles: float = Field(
        0.0, ge=0, description="the loaded-latency curve: a DRAM read waits queue_cycles x u / (1 - u) beyond "
        "latency_cycles, u the DRAM's utilisation of its peak bandwidth (reads and writes) over about the last "
        "latency_cycles, SM cycles; 0 = a fixed latency (the default)")
    latency_clock_hz: float | None = Field(
        None, gt=0, description="the SM clock (Hz) at which latency_cycles and queue_cycles were measured: at "
        "another clock_hz both scale by clock_hz / latency_clock_hz, so that DRAM's latency stays the same in "
        "nanoseconds (DRAM runs on its own memory clock, which the SM clock does not move); null = both stay "
        "the same in SM cycles at every clock_hz (the default)")
    row_bytes: int | None = Field(
        None, strict=True, ge=128, description="timing model: bytes of a DRAM row (page), a multiple of l2.line_bytes; "
        "null = rows not modelled (the default)")
    open_rows: int = Field(
        0, strict=True, ge=0, description="timing model: rows DRAM keeps open (the least recently opened closes "
        "first), rows")
    row_activations_per_s: float = Field(
        0.0, ge=0, description="timing model: row activations of reads the whole DRAM makes a second beside "
        "moving the bytes (each costs its server 1/this), per second; 0 = rows not modelled (the default)")
    write_row_activations_per_s: float = Field(
        0.0, ge=0, description="timing model: the same for write-backs, per second; 0 = row_activations_per_s")
    translation_pages: int = Field(
        0, strict=True, ge=0, description="timing model: pages (translation_page_bytes each) whose DRAM reads pay "
        "no translation miss, the last pages DRAM reads touched (LRU), pages; 0 = not modelled (the default)")
    translation_page_bytes: int = Field(
        2 << 20, strict=True, ge=4096, description="timing model: bytes of a page of the translation_pages reach, a "
        "multiple of l2.line_bytes, bytes")
    translation_misses_per_s: float = Field(
        0.0, ge=0, description="timing model: DRAM reads outside the translation_pages reach the whole DRAM serves "
        "a second (each holds its server 1/this beyond its bytes and rows), per second; 0 = not modelled")
    channels: int = Field(
        0, strict=True, ge=0, le=4096, description="timing model: DRAM channels, each draining its own write-backs "
        "(write_drain_bytes); 0 = write drains not modelled (the default)")
    read_channel_bytes: int | None = Field(
        None, strict=True, ge=1, description="timing model: reads queue at DRAM channels: each range of this many "
        "bytes (a multiple of l2.line_bytes) is served by one of read_channels channels, each at its share of the "
        "read bandwidth, first come, first served, after the device-wide server; null = the device-wide server "
        "only (the default)")
    read_channels: int | None = Field(
        None, strict=True, ge=1, description="timing model: the channels reads queue at (read_channel_bytes); "
        "null = channels (a sampled slice gets its share of them)")
    channel_bytes: int = Field(
        128, strict=True, ge=1, description="timing model: consecutive bytes one DRAM channel takes before the "
        "next (a multiple of l2.line_bytes; which channel, a hash), for the write drains, bytes")
    staggered_drains: bool = Field(
        False, strict=True, description="timing model: the channels' write drains start out of step (channel c "
        "has gathered c / channels of write_drain_bytes at the launch's start); false: in step")
    write_drain_bytes: int = Field(
        0, strict=True, ge=0, description="timing model: write-back bytes a channel gathers before it writes them "
        "all at once; a read of that channel waits for such a drain to end, bytes; 0 = not modelled (the default)")
    access_granularity_bytes: int = _int("smallest DRAM transfer seen from L2, bytes", ge=1)
    bus_width_bits: int = _int("memory interface width, bits", ge=1)
    capacity_bytes: int | None = Field(
        None, strict=True, ge=1, description="device memory capacity (cudaDeviceProp::totalGlobalMem), bytes: "
        "gpusim.ndarray allocations beyond it fail with cudaErrorMemoryAllocation; None = no limit but the host's memory")

    @model_validator(mode="after")
    def _writes_positive(self) -> "DRAMSpec":
        if self.read_efficiency is not None and self.read_efficiency <= self.efficiency / 2:
            raise ValueError(f"dram.read_efficiency {self.read_efficiency} must exceed half of dram.efficiency "
                             f"({self.efficiency}): writes take 1 / (2 / efficiency - 1 / read_efficiency) of the peak")
        return self


class GPUConfig(BaseModel):
    """A whole GPU: the attributes the functional engine, the timing model and the
    occupancy calculator read. Build one with :func:`gpusim.config.load`."""

    model_config = _FROZEN

    #: Every NVIDIA GPU gpusim models has 32-lane warps (the PTX subset assumes it).
    WARP_SIZE: ClassVar[int] = 32

    name: str = Field(..., min_length=1, description="short configuration name, e.g. 'h100'")
    description: str = Field(..., description="the product this configuration describes")
    arch: str = Field(..., pattern=r"^sm_\d+$", description="ptxas target architecture, e.g. 'sm_90'")
    compute_capability: tuple[int, int] = Field(..., description="(major, minor) compute capability")
    sm_count: int = _int("streaming multiprocessors (multiProcessorCount), SMs; at most 1024 (ASSUMED bound: "
                         "about 8 times the H100's 132 SMs; the timing model simulates each one)", ge=1, le=1024)
    warp_size: Literal[32] = Field(..., description="threads per warp (always 32), threads")
    clock_hz: float = Field(..., gt=0, description="SM clock (boost), Hz")
    launch_overhead_cycles: int = _int(
        "SM cycles a kernel takes beyond its CTAs' work (launch, CTA rasterisation, completion), "
        "added to sm__cycles_elapsed.avg by the timing model", ge=0)
    cta_dispatch_cycles: float = Field(
        ..., ge=0, description="SM cycles between two CTAs the GPU-wide block scheduler dispatches (its "
        "rate limits grids of many short CTAs), cycles per CTA")
    max_threads_per_block: int = _int("threads per block (maxThreadsPerBlock), threads; at most 1024, the limit "
                                      "of every compute capability since 2.0 (PG13)", ge=1, le=1024)
    max_block_dims: tuple[int, int, int] = Field(..., description="maximum block dimensions (x, y, z), threads; each "
                                                 "1 to (1024, 1024, 64), the limits of every compute capability (PG13)")
    max_grid_dims: tuple[int, int, int] = Field(..., description="maximum grid dimensions (x, y, z), blocks; each 1 "
                                                "to (2**31 - 1, 65535, 65535), the limits of every compute capability "
                                                "since 3.0 (PG13)")
    max_local_bytes_per_thread: int = _int(
        "local memory one thread may use (.local variables), bytes; a kernel declaring more cannot launch "
        "(CUDA error: too many resources requested for launch); at most 512 KiB (PG13)", ge=1, le=512 * 1024)
    sm: SMSpec = Field(..., description="per-SM limits, schedulers and functional units")
    shared: SharedMemSpec = Field(..., description="shared-memory banking and timing")
    l1: L1Spec = Field(..., description="per-SM L1 data cache")
    l2: L2Spec = Field(..., description="the device-wide L2 cache")
    dram: DRAMSpec = Field(..., description="device memory (DRAM)")

    @model_validator(mode="after")
    def _consistent(self) -> "GPUConfig":
        major, minor = self.compute_capability
        if self.arch != f"sm_{major}{minor}":
            raise ValueError(
                f"arch ({self.arch!r}) does not match compute_capability {self.compute_capability} "
                f"(expected 'sm_{major}{minor}')"
            )
        sides = self.l2.sm_partitions
        if sides is not None and self.l2.partitions > 1 and (
                len(sides) < self.sm_count or not all(0 <= x < self.l2.partitions for x in sides)):
            raise ValueError(f"l2.sm_partitions must give each of the sm_count ({self.sm_count}) SMs a partition "
                             f"0 to l2.partitions - 1 ({self.l2.partitions - 1}); got {len(sides)} entries, "
                             f"values {sorted(set(sides))}")
        if self.dram.row_bytes is not None and self.dram.row_bytes % self.l2.line_bytes:
            raise ValueError(f"dram.row_bytes ({self.dram.row_bytes}) must be a multiple of l2.line_bytes "
                             f"({self.l2.line_bytes}): a row holds whole lines")
        g = self.l2.partition_granule_bytes
        if g % self.l2.line_bytes or g & (g - 1):
            raise ValueError(f"l2.partition_granule_bytes ({g}) must be a power of two and a multiple of "
                             f"l2.line_bytes ({self.l2.line_bytes}): a granule holds whole lines")
        if self.dram.read_channel_bytes is not None and self.dram.read_channel_bytes % self.l2.line_bytes:
            raise ValueError(f"dram.read_channel_bytes ({self.dram.read_channel_bytes}) must be a multiple of "
                             f"l2.line_bytes ({self.l2.line_bytes}): a channel serves whole lines")
        if self.dram.channel_bytes % self.l2.line_bytes:
            raise ValueError(f"dram.channel_bytes ({self.dram.channel_bytes}) must be a multiple of "
                             f"l2.line_bytes ({self.l2.line_bytes}): a channel takes whole lines")
        if self.dram.translation_page_bytes % self.l2.line_bytes:
            raise ValueError(f"dram.translation_page_bytes ({self.dram.translation_page_bytes}) must be a multiple of "
                             f"l2.line_bytes ({self.l2.line_bytes}): a page holds whole lines")
        sm = self.sm
        if sm.max_warps % sm.scheduler.count:
            raise ValueError(
                f"sm.max_warps ({sm.max_warps}) must be a multiple of sm.scheduler.count ({sm.scheduler.count})"
            )
        if self.max_threads_per_block > sm.max_threads:
            raise ValueError(
                f"max_threads_per_block ({self.max_threads_per_block}) exceeds sm.max_warps * warp_size "
                f"({sm.max_threads}): no block could ever be resident"
            )
        for field, dims, top in (("max_block_dims", self.max_block_dims, (1024, 1024, 64)),
                                 ("max_grid_dims", self.max_grid_dims, (2**31 - 1, 65535, 65535))):
            for axis, v, hi in zip("xyz", dims, top):
                if not 1 <= v <= hi:
                    raise ValueError(f"{field} {axis}={v} is outside 1..{hi} (PG13: the limit of every compute "
                                     f"capability)")
        if max(self.max_block_dims) > self.max_threads_per_block:
            raise ValueError(
                f"max_block_dims {self.max_block_dims} exceed max_threads_per_block ({self.max_threads_per_block})"
            )
        if sm.max_registers_per_block > sm.registers:
            raise ValueError(
                f"sm.max_registers_per_block ({sm.max_registers_per_block}) exceeds sm.registers ({sm.registers})"
            )
        if sm.registers % sm.register_sub_partitions:
            raise ValueError(
                f"sm.registers ({sm.registers}) must divide evenly into sm.register_sub_partitions "
                f"({sm.register_sub_partitions})"
            )
        if sm.shared_per_block_bytes > sm.shared_per_block_optin_bytes:
            raise ValueError(
                f"sm.shared_per_block_bytes ({sm.shared_per_block_bytes}) exceeds "
                f"sm.shared_per_block_optin_bytes ({sm.shared_per_block_optin_bytes})"
            )
        if sm.shared_per_block_optin_bytes + sm.reserved_shared_per_block_bytes > sm.shared_per_sm_bytes:
            raise ValueError(
                f"sm.shared_per_block_optin_bytes + sm.reserved_shared_per_block_bytes "
                f"({sm.shared_per_block_optin_bytes} + {sm.reserved_shared_per_block_bytes}) exceeds "
                f"sm.shared_per_sm_bytes ({sm.shared_per_sm_bytes})"
            )
        largest = sm.shared_carveouts_bytes[-1]
        if sm.shared_per_sm_bytes > largest:
            raise ValueError(
                f"sm.shared_per_sm_bytes ({sm.shared_per_sm_bytes}) exceeds the largest legal carveout "
                f"in sm.shared_carveouts_kib ({largest} bytes)"
            )
        if largest > self.l1.unified_bytes:
            raise ValueError(
                f"the largest carveout in sm.shared_carveouts_kib ({largest} bytes) exceeds "
                f"l1.unified_bytes ({self.l1.unified_bytes})"
            )
        if self.l1.carveout_kib not in sm.shared_carveouts_kib:
            raise ValueError(
                f"l1.carveout_kib ({self.l1.carveout_kib}) is not a legal carveout "
                f"(sm.shared_carveouts_kib = {list(sm.shared_carveouts_kib)})"
            )
        for cache, spec in (("l1", self.l1), ("l2", self.l2)):
            if spec.line_bytes % spec.sector_bytes:
                raise ValueError(
                    f"{cache}.line_bytes ({spec.line_bytes}) must be a multiple of "
                    f"{cache}.sector_bytes ({spec.sector_bytes})"
                )
        return self

    def with_overrides(self, overrides: Mapping[str, Any]) -> "GPUConfig":
        """Return a validated copy with dotted-path fields replaced.

        ``cfg.with_overrides({"sm.max_warps": 48, "l2.size_bytes": 25_000_000})``.
        An unknown path or an invalid value raises :class:`gpusim.errors.ConfigError`
        naming the dotted field path and the reason; ``self`` is never changed.
        """
        return apply_overrides(self, overrides)

    def summary(self) -> str:
        """One line naming the GPU, e.g. ``h100 (NVIDIA H100 SXM5 80GB HBM3, sm_90, 132 SMs)``."""
        return f"{self.name} ({self.description}, {self.arch}, {self.sm_count} SMs)"
