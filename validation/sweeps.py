"""The what-if sweeps of the validation report, as points of the kernel suite.

Owns: :data:`SWEEPS` -- each sweep is a named list of :class:`Point`, every point one
(suite case, size n, launch index) whose cycles (and counters) both sides measured --
and the selection helpers :func:`select` and :func:`cases_for`. A point with
``launch=None`` stands for the sum over all launches of the run (reduce_v6 has two).

Every sweep reuses suite cases; the one the suite lacked, block size, is the
``copy_block_size`` case (the float4 copy at 32..1024 threads per block, same PTX). Each
sweep drawn at one size has a ``<name>_scale`` twin at the cases' scale-tier sizes
(``gpusim.suite.SCALE_SIZES``), and the matmuls one at N = 512.

Must not import: cupy, simpy, gpusim's engines (only :mod:`gpusim.suite` for names).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.errors import GpusimError

__all__ = ["Point", "Sweep", "SWEEPS", "select", "cases_for"]


@dataclass(frozen=True)
class Point:
    """One point of a sweep: ``label`` on the x axis, ``series`` (curve name) and the launch."""

    label: str
    case: str
    n: int
    launch: int | None = 0
    series: str = ""


@dataclass(frozen=True)
class Sweep:
    """A sweep: name (CLI), title, x-axis label, the lesson it shows, and its points in x order."""

    name: str
    title: str
    xlabel: str
    lesson: str
    points: tuple[Point, ...]
    counters: tuple[str, ...] = ()   #: Nsight metrics drawn next to cycles
    #: the metric whose ordering is scored: cycles, or (one-warp micro-kernels, whose cycles are
    #: the launch overhead plus noise) a counter of ``counters``
    score_metric: str = "sm__cycles_elapsed.avg"
    tier: str = "small"  #: the validation tier its points belong to (``small`` or ``scale``)

    @property
    def cases(self) -> list[str]:
        """Suite cases the sweep needs, in first-use order."""
        return list(dict.fromkeys(p.case for p in self.points))


_SH_CONF = ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
_GSECT = ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")

SWEEPS: dict[str, Sweep] = {s.name: s for s in (
    Sweep("occupancy_dynamic_smem", "Occupancy cut by dynamic shared memory (float4 copy, 2^18 floats)",
          "blocks of 256 threads per SM", "bandwidth rises with resident warps, then levels off",
          tuple(Point(str(k), "copy_occupancy", 1 << 18, i) for i, k in enumerate((1, 2, 3, 4, 6, 8))),
          ("sm__warps_active.avg.pct_of_peak_sustained_active",)),
    Sweep("block_size", "Block size (float4 copy, 2^19 floats)", "threads per block",
          "32-thread blocks hit the 32 blocks/SM limit; the rest differ by CTA launch cost",
          tuple(Point(str(b), "copy_block_size", 1 << 19, i) for i, b in enumerate((32, 64, 128, 256, 512, 1024))),
          ("sm__warps_active.avg.pct_of_peak_sustained_active",)),
    Sweep("global_stride", "Global load stride (4-byte words, 2^16 threads)", "stride (words)",
          "sectors per request grow with the stride up to 32", tuple(
              Point(str(s), "gmem_stride_u32", 1 << 16, i) for i, s in enumerate((1, 2, 8, 32))), _GSECT),
    Sweep("global_offset", "Global load offset (4-byte words, 2^16 threads)", "offset (words)",
          "a misaligned warp touches 5 sectors instead of 4", tuple(
              Point(str(o), "gmem_offset_u32", 1 << 16, i) for i, o in enumerate((0, 1, 8, 31))), _GSECT),
    Sweep("shared_stride", "Shared-memory stride (2^16 floats)", "stride (words)",
          "even strides conflict (32: 32-way); 33 is conflict-free", tuple(
              Point(str(s), "shared_stride", 1 << 16, i) for i, s in enumerate((1, 2, 4, 32, 33))), _SH_CONF),
    Sweep("smem_micro_stride", "Shared-memory stride, one warp (micro-kernel)", "stride (words)",
          "wavefronts = the largest number of distinct words a bank serves", tuple(
              Point(str(s), "smem_stride_u32", 32, i) for i, s in enumerate((1, 2, 4, 8, 16, 32, 33, 64))), _SH_CONF,
          score_metric="l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
    Sweep("transpose", "Transpose: padding and swizzle (256 x 256)", "kernel",
          "the column read of a 32x32 tile conflicts 32-way unless padded or swizzled", tuple(
              Point(k.removeprefix("transpose_"), k, 256, 0) for k in
              ("transpose_naive", "transpose_conflict", "transpose_padded", "transpose_swizzled")), _SH_CONF),
    Sweep("reduction", "Reduction v0-v6 (2^16 floats)", "version",
          "each step of the course notes removes a cost: divergence, conflicts, idle threads, syncs", tuple(
              Point(f"v{i}", f"reduce_v{i}", 1 << 16, None) for i in range(7)),
          ("smsp__inst_executed.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")),
    Sweep("matmul", "Matmul naive / tiled / register-tiled at several sizes", "matrix side N",
          "tiling cuts global traffic; register tiling cuts shared traffic", tuple(
              Point(str(n), k, n, 0, series=k.removeprefix("matmul_")) for k, sizes in
              (("matmul_naive", (40, 64, 128)), ("matmul_tiled", (40, 64, 128)), ("matmul_regtile", (40, 64, 128)),
               ("matmul_smem_regtile", (64, 128))) for n in sizes),   # smem_regtile needs N % 64 == 0
          ("smsp__inst_executed.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")),
    Sweep("ilp", "Instruction-level parallelism: 1 vs 2 (vs 4) independent FMAs (2^16 elements)", "kernel",
          "two independent chains hide FMA latency with half the warps", tuple(
              Point(k.removeprefix("ilp_fma_"), k, 1 << 16, 0) for k in
              ("ilp_fma_1", "ilp_fma_unroll2_grid", "ilp_fma_unroll2_block", "ilp_fma_unroll4_block")),
          ("smsp__inst_executed.sum",)),
    Sweep("divergence", "Divergence (2^16 elements)", "kernel",
          "a warp runs both sides of a divergent branch", tuple(
              Point(k.removesuffix("_branch").removesuffix("_loop"), k, 1 << 16, 0) for k in
              ("uniform_branch", "divergent_branch", "divergent_loop")),
          ("smsp__inst_executed.sum", "smsp__thread_inst_executed.sum")),
)}


def _at_scale(sw: Sweep) -> Sweep:
    """``sw`` with every point at its case's scale-tier size."""
    from gpusim.suite import SCALE_SIZES

    points = tuple(Point(p.label, p.case, SCALE_SIZES[p.case], p.launch, p.series) for p in sw.points)
    return Sweep(sw.name + "_scale", sw.title.split(" (")[0] + " at the scale tier's sizes", sw.xlabel, sw.lesson,
                 points, sw.counters, sw.score_metric, "scale")


SWEEPS.update({s.name: s for s in [
    *(_at_scale(sw) for sw in SWEEPS.values() if len({p.n for p in sw.points}) == 1 and sw.name != "smem_micro_stride"),
    Sweep("matmul_scale", "Matmul naive / tiled / register-tiled at N = 512", "kernel",
          "tiling cuts global traffic; register tiling cuts shared traffic", tuple(
              Point(k.removeprefix("matmul_"), k, 512, 0) for k in
              ("matmul_naive", "matmul_tiled", "matmul_regtile", "matmul_smem_regtile")),
          ("smsp__inst_executed.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), tier="scale"),
]})


def select(names) -> list[str]:
    """Validated sweep names (all when ``names`` is empty/None); unknown names raise GpusimError."""
    if not names:
        return list(SWEEPS)
    unknown = [n for n in names if n not in SWEEPS]
    if unknown:
        raise GpusimError(f"--sweeps: unknown sweep(s) {', '.join(unknown)} (known: {', '.join(SWEEPS)})")
    return list(names)


def cases_for(cases, sweep_names) -> list[str] | None:
    """Suite cases to run: ``cases`` plus those of the named sweeps; None = all cases.

    Raises GpusimError for an unknown case name."""
    from gpusim.suite import CASES

    if cases:
        unknown = [c for c in cases if c not in CASES]
        if unknown:
            raise GpusimError(f"--cases: unknown suite case(s) {', '.join(unknown)} (see 'gpusim run --list')")
    if not cases and not sweep_names:
        return None
    out = list(cases or [])
    for name in select(sweep_names) if sweep_names else []:
        out += [c for c in SWEEPS[name].cases if c not in out]
    return out
