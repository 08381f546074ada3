"""The lessons of the course notes, as data: which suite variants each runs, at which sizes,
which counter explains the difference, which pictures it draws and which section of the
notes it illustrates.

Owns: :class:`Variant`, :class:`Picture`, :class:`Lesson`, :data:`LESSONS` and
:func:`get` (an unknown name raises :class:`gpusim.errors.GpusimError` listing the lessons).

Sizes: ``Variant.n`` is the size the H100 was measured at in the validation's scale tier
(``gpusim.suite.SCALE_SIZES``; ``validation/reports/h100/scale_tier/``), GPU-filling grids of
many waves, where the effects are as large as on hardware (the matmuls: N = 256, measured in
``validation/reports/h100/matmul256/``); ``Lesson.quick`` maps each case to a
smaller size, for tests and notebooks (the same effect, fewer waves, a few seconds).

Seed sections are the notes' own headings (``/work/shared/seeds/``, Chinese course notes):
001 is the notes on CUDA performance ("S - ..." / "T - ..." headings), 000 the CMU 15-779
notes, 004 the PMPP chapters 4-5 notes.

Must not import: simpy, cupy, matplotlib, gpusim's engines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusim.errors import GpusimError

__all__ = ["Variant", "Picture", "Lesson", "LESSONS", "get"]


@dataclass(frozen=True)
class Variant:
    """One row of a lesson: ``label``, the suite ``case`` at size ``n`` and its ``launch``
    (index into the case's launches; ``None``: the sum of all of them, e.g. reduce_v6's two);
    ``slow``: see below."""

    label: str
    case: str
    n: int
    launch: int | None = 0
    #: too slow to simulate at ``n`` within the lesson's 2-minute budget (e.g. a grid of too few
    #: CTAs to sample, timed in detail): run at the full size only with ``all_variants``
    slow: bool = False


@dataclass(frozen=True)
class Picture:
    """A picture of the lesson page, drawn from timing-mode recordings at the cases' ``test_n``.

    ``kind``: ``banks`` (bank diagram of each case's costliest shared access, side by side),
    ``coalescing`` (coalescing diagram of each case's costliest global access), ``warps``
    (warp states of SM 0), ``stalls`` (stall breakdown of all cases), ``occupancy`` (the
    occupancy calculator's block-size chart of the first case's launch ``launch``).
    """

    kind: str
    cases: tuple[str, ...]
    caption: str
    launch: int = 0


@dataclass(frozen=True)
class Lesson:
    """One lesson: its variants (rows, in the order shown), the explaining counter and pictures.

    Attributes:
        name: CLI name (``gpusim lesson NAME``).
        title: one line.
        idea: what the student should see, two or three sentences.
        seed: the section of the course notes it illustrates (the notes' own heading).
        variants: the rows.
        counter: key of :data:`gpusim.lessons.counters.COUNTERS`, shown for the simulator and
            the H100.
        pictures: the page's pictures.
        quick: case -> the smaller size of the quick mode (tests, notebooks).
        note: what the model does not get right here (shown on the page), or "".
        flat: the H100 shows no order (all variants within 5 %); the check is then that the
            simulator's variants are alike too.
    """

    name: str
    title: str
    idea: str
    seed: str
    variants: tuple[Variant, ...]
    counter: str
    pictures: tuple[Picture, ...]
    quick: dict = field(default_factory=dict)
    note: str = ""
    #: the H100 measured no difference (every pair within 5 %): the lesson is that they are alike
    flat: bool = False

    @property
    def cases(self) -> list[str]:
        """The suite cases of the variants, in first-use order."""
        return list(dict.fromkeys(v.case for v in self.variants))


_M = 2 ** 24
_COPY_SMEM_BLOCKS = (1, 2, 3, 4, 6, 8)   # blocks of 256 threads per SM of copy_occupancy's launches

LESSONS: dict[str, Lesson] = {x.name: x for x in (
    Lesson(
        "divergence", "Warp divergence: a warp runs both sides of a branch",
        "When the lanes of one warp take different sides of an if, the warp issues both sides, each with "
        "part of its lanes masked off, and reconverges after it. The divergent kernels issue more warp "
        "instructions for the same work and fewer threads do useful work per instruction.",
        "004 (PMPP 第4-5章 计算和内存基础) › ### 线程束分歧（Warp Divergence）现",
        (Variant("uniform branch", "uniform_branch", _M), Variant("divergent branch", "divergent_branch", _M),
         Variant("divergent loop", "divergent_loop", _M)),
        "thread_efficiency",
        (Picture("stalls", ("uniform_branch", "divergent_branch", "divergent_loop"), "Where the warps' cycles go"),
         Picture("warps", ("divergent_branch",), "Warp states of SM 0 running the divergent branch")),
        quick={c: 2 ** 20 for c in ("uniform_branch", "divergent_branch", "divergent_loop")}),
    Lesson(
        "banks", "Shared-memory bank conflicts, padding and swizzling",
        "A transpose reads a 32x32 tile of shared memory by column: all 32 lanes hit the same bank and "
        "the access is served in 32 wavefronts. Padding each row by one word, or XOR-swizzling the "
        "column index, spreads the lanes over the 32 banks: one wavefront again.",
        "001 › S - Shared memory bank; T - Padding & Swizzling",
        (Variant("naive (no shared memory)", "transpose_naive", 4096),
         Variant("shared, 32-way conflict", "transpose_conflict", 4096),
         Variant("shared, padded", "transpose_padded", 4096),
         Variant("shared, swizzled", "transpose_swizzled", 4096)),
        "shared_ld_wavefronts_per_request",
        (Picture("banks", ("transpose_conflict", "transpose_padded", "transpose_swizzled"),
                 "Bank diagrams of the tile's column read: conflicted, padded, swizzled"),
         Picture("coalescing", ("transpose_naive",), "The naive transpose's strided global access")),
        quick={c: 1024 for c in ("transpose_naive", "transpose_conflict", "transpose_padded", "transpose_swizzled")},
        note="The naive transpose's time is its scattered stores (one L2 write request per lane, about 30 a "
             "cycle GPU-wide), within 2 % of the H100 at 4,096; the shared-memory transposes are 17-34 % under "
             "the H100; the order is the H100's."),
    Lesson(
        "coalescing", "Coalescing, sectors and AoS vs SoA",
        "A warp's 32 loads are served in 32-byte sectors. Consecutive 4-byte words need 4 sectors per "
        "request; a stride of 2 needs 8, a stride of 8 or more needs 32, so the same number of useful "
        "bytes costs up to 8x the traffic. An array of structures is a strided access; a structure of "
        "arrays is a coalesced one.",
        "001 › S - Coalesced global memory access; S - Data Structure/Layout数据布局, Structure-of-Arrays "
        "to support coalesced access",
        (Variant("stride 1", "gmem_stride_u32", _M, 0), Variant("stride 2", "gmem_stride_u32", _M, 1),
         Variant("stride 8", "gmem_stride_u32", _M, 2), Variant("stride 32", "gmem_stride_u32", _M, 3),
         Variant("AoS update", "aos_update", 2 ** 21), Variant("SoA update", "soa_update", 2 ** 21)),
        "sectors_per_request",
        (Picture("coalescing", ("aos_update", "soa_update"), "Coalescing diagrams: AoS against SoA"),),
        quick={"gmem_stride_u32": 2 ** 20, "aos_update": 2 ** 17, "soa_update": 2 ** 17}),
    Lesson(
        "occupancy", "Occupancy and Little's law",
        "A float4 copy's loads take hundreds of cycles; to keep DRAM busy an SM needs enough of them in "
        "flight (Little's law: concurrency = bandwidth x latency). Dynamic shared memory caps the "
        "resident blocks per SM at 1, 2, 3, 4, 6 or 8: the copy gets faster as warps are added, then "
        "flat once the bandwidth is saturated.",
        "001 › S - Improving TLP by increasing active warps num(occupancy) by relieving limiter; "
        "T - Little’s Law",
        tuple(Variant(f"{b} block(s)/SM", "copy_occupancy", _M, i) for i, b in enumerate(_COPY_SMEM_BLOCKS)),
        "achieved_occupancy",
        (Picture("occupancy", ("copy_occupancy",), "The occupancy calculator: blocks per SM against block size "
                 "(1 block/SM launch)", 0),
         Picture("stalls", ("copy_occupancy",), "Where the copy's warps wait (all six launches)")),
        quick={"copy_occupancy": 2 ** 20},
        note="DRAM's latency grows with its load (the loaded-latency curve), so more resident warps keep "
             "paying off up to 6 blocks/SM, as on the H100; at the quick size (2^20, about one wave) neither "
             "the model nor the H100 keeps that order."),
    Lesson(
        "ilp", "Instruction-level parallelism: independent FMAs per thread",
        "Two or four independent FMA chains per thread give the scheduler instructions to issue while "
        "one chain waits, so half or a quarter of the warps can do the same work. At 2^24 elements on "
        "the H100 all four variants are within 3 % of each other: the kernel is memory-bound and "
        "enough warps are resident to hide the FMA latency either way. That is the lesson: ILP "
        "substitutes for TLP.",
        "001 › S - Improving ILP by computing more elements per thread to merge instruction issue",
        (Variant("1 chain", "ilp_fma_1", _M), Variant("2 chains (grid)", "ilp_fma_unroll2_grid", _M),
         Variant("2 chains (block)", "ilp_fma_unroll2_block", _M),
         Variant("4 chains (block)", "ilp_fma_unroll4_block", _M)),
        "warp_instructions",
        (Picture("stalls", ("ilp_fma_1", "ilp_fma_unroll2_grid", "ilp_fma_unroll4_block"), "Stall breakdown"),
         Picture("warps", ("ilp_fma_unroll4_block",), "Warp states with four independent chains")),
        quick={c: 2 ** 19 for c in ("ilp_fma_1", "ilp_fma_unroll2_grid", "ilp_fma_unroll2_block",
                                    "ilp_fma_unroll4_block")}, flat=True),
    Lesson(
        "reduction", "The reduction sequence v0 to v7",
        "Each version of the notes' sum removes one cost: v0's divergent modulo, v1's bank conflicts, "
        "v2's idle half of the threads, v3/v4 the synchronisations of the last warp, v5 unrolls, v7 "
        "uses warp shuffles. v6 (few CTAs, each thread looping over the array) is the slowest on the "
        "H100 at this size.",
        "000 ([CMU15-779]) › Cast Study 2: Parallel Reduction in CUDA",
        tuple(Variant(f"v{i}", f"reduce_v{i}", _M, None if i == 6 else 0, slow=i == 6) for i in range(8)),
        "warp_instructions",
        (Picture("stalls", tuple(f"reduce_v{i}" for i in range(8)), "Stall breakdown of v0-v7"),
         Picture("banks", ("reduce_v1", "reduce_v2"), "v1's strided shared access against v2's sequential one"),
         Picture("warps", ("reduce_v0",), "Warp states of v0 (divergent modulo)")),
        quick={f"reduce_v{i}": 2 ** 19 for i in range(8)},
        note="v6 (64 CTAs: too few to sample) is simulated in detail, about 2 to 4 minutes at 2^24 on one core, "
             "so the full-size lesson runs it only with --all-variants (the quick size always runs it). The model "
             "puts v0 at 0.85x the H100's cycles and v4-v7 at 0.8x."),
    Lesson(
        "matmul", "Tiled matrix multiplication",
        "The naive matmul reads every element of A and B from global memory N times. Tiling stages "
        "16x16 tiles in shared memory, so each element is read from global memory N/16 times; "
        "register tiling keeps a small block of C per thread in registers, but reads A and B from "
        "global memory without shared tiles, and with 16 CTAs at N = 256 it leaves most SMs idle.",
        "004 (PMPP 第4-5章 计算和内存基础) › ### 分块（Tiling）技术",
        (Variant("naive", "matmul_naive", 256), Variant("tiled (shared)", "matmul_tiled", 256),
         Variant("register-tiled", "matmul_regtile", 256)),
        "global_sectors",
        (Picture("coalescing", ("matmul_naive",), "The naive matmul's global loads"),
         Picture("banks", ("matmul_tiled",), "The tiled matmul's shared-memory reads"),
         Picture("stalls", ("matmul_naive", "matmul_tiled", "matmul_regtile"), "Stall breakdown")),
        quick={"matmul_naive": 64, "matmul_tiled": 64, "matmul_regtile": 64},
        note="Full size is N = 256 (the H100's matmul256 measurements), not the scale tier's 512: at 512 the "
             "register-tiled kernels have 64 CTAs, too few to sample, and their detailed simulation alone "
             "takes several minutes. (The shared + register-tiled kernel was measured at 512 only.)"),
)}


def get(name: str) -> Lesson:
    """The lesson called ``name``.

    Raises:
        gpusim.errors.GpusimError: unknown name (the message lists the lessons).
    """
    try:
        return LESSONS[name]
    except KeyError:
        raise GpusimError(f"unknown lesson {name!r}: NAME must be one of {', '.join(LESSONS)} "
                          "(gpusim lesson --list)") from None
