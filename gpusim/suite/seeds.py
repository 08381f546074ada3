"""The course notes' reduction tables: the A100 int32 kernels and both tables' figures.

Owns:

* ``SEED_CASES`` -- one :class:`~gpusim.suite.Case` per kernel of seed 003's A100 table
  (``cuda/reduce_int.cu`` -> ``ptx/reduce_int.ptx``: int32 ``reduce0`` .. ``reduce6`` and the
  elements-per-thread variants ``reduce7_1`` .. ``reduce7_1024``), each with a numpy oracle
  (integer sums wrap as ``add.s32`` does, so any order is exact: every case is bit-exact).
  They are kept out of :data:`gpusim.suite.CASES` so that ``gpusim validate`` and the committed
  H100 report do not change; ``gpusim run --case NAME`` / ``--group seeds_a100`` find them.
* ``TABLES`` -- the rows of the two tables, each row a case and the seeds' own figure:
  ``"a100"`` (seed 003, "[reduce0]GPU time: 0.015917 s" .. "[reduce7_1024]GPU time:
  0.001959 s", 2**29 ints on an A100 of 1555 GB/s) and ``"a5000"`` (seed 000, 32 M floats,
  ``reduce_v0`` .. ``reduce_v5`` of the text, which are the suite's float ``reduce_v0`` ..
  ``reduce_v4`` and ``reduce_v7``; the text gives v0 as 1.24 ms, v3/v4/v5 as 300/530/635 GB/s,
  and v1/v2 only as "带宽利用率" percentages, which are not times).

Like :mod:`gpusim.suite`, imports only numpy and the standard library (and the suite itself).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpusim.suite import CASES, Case, _cdiv, _Launcher
from gpusim.suite import _pad as _pad_copy

__all__ = ["SEED_CASES", "SEED_GROUPS", "TABLES", "TableRow", "REDUCE7_K", "all_cases"]

_BLOCK = 256
_PTX = "reduce_int.ptx"
#: the elements-per-thread variants of the A100 table: reduce7_K loads K pairs per thread
REDUCE7_K = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def _ints(rng: np.random.Generator, n: int) -> np.ndarray:
    """n int32 in [-1000, 1000] (drawn as int32: 2**29 of them take 2 GiB, no int64 copy)."""
    return rng.integers(-1000, 1001, size=n, dtype=np.int32)


def _pad(x: np.ndarray, length: int) -> np.ndarray:
    """x zero padded to ``length``; x itself (no 2 GiB copy) when it is that long already."""
    return x if x.size == length else _pad_copy(x, length)


def _wrap32(x: np.ndarray) -> np.ndarray:
    """int64 sums as the int32 that ``add.s32`` leaves (two's complement wrap)."""
    return x.astype(np.int64).astype(np.uint64).astype(np.uint32).view(np.int32)


def _block_sums(x: np.ndarray, blocks: int, per_block: int) -> np.ndarray:
    """Sum of each run of ``per_block`` consecutive elements (zero padded): reduce0..reduce5."""
    return _wrap32(_pad(x, blocks * per_block).reshape(blocks, per_block).sum(axis=1, dtype=np.int64))


def _strided_sums(x: np.ndarray, grid: int, iters: int) -> np.ndarray:
    """Per-block sums of a grid-stride loop over pairs: block b sums the 512-element runs
    b, b + grid, b + 2 grid, ... (``iters`` of them): reduce6 and reduce7_K."""
    y = _pad(x, iters * grid * 2 * _BLOCK).reshape(iters, grid, 2 * _BLOCK)
    return _wrap32(y.sum(axis=(0, 2), dtype=np.int64))


def _simple(kernel: str, per_block: int):
    """reduce0..reduce5: ``cdiv(n, per_block)`` blocks of 256 threads, one partial per block."""
    def run(xp, n, rng):
        x = _ints(rng, n)
        blocks = _cdiv(n, per_block)
        L = _Launcher(xp, _PTX)
        d_in = L.upload("g_idata", x)
        d_out = xp.zeros(blocks, np.int32)
        L(kernel, (blocks,), (_BLOCK,), (d_in, d_out, np.uint32(n)))
        return L.result({"partials": d_out.get()}, {"partials": _block_sums(x, blocks, per_block)})
    return run


def _cascaded(kernel: str, k: int | None):
    """reduce6 (k None: grid cdiv(n, 512), the loop runs while i < n) and reduce7_K
    (grid cdiv(n, 512 K), K trips)."""
    def run(xp, n, rng):
        x = _ints(rng, n)
        grid = _cdiv(n, 2 * _BLOCK * (k or 1))
        iters = k if k is not None else _cdiv(n, 2 * _BLOCK * grid)
        L = _Launcher(xp, _PTX)
        d_in = L.upload("g_idata", x)
        d_out = xp.zeros(grid, np.int32)
        L(kernel, (grid,), (_BLOCK,), (d_in, d_out, np.uint32(n)))
        return L.result({"partials": d_out.get()}, {"partials": _strided_sums(x, grid, iters)})
    return run


_N = 2**20
_G = "seeds_a100"
_SEED_CASE_LIST: list[Case] = [
    Case("reduce0", _G, _PTX, "reduce0", _N, 2000, _simple("reduce0", _BLOCK),
         "int32 interleaved addressing, divergent tid % (2*s) (seed 003's reduce0)"),
    Case("reduce1", _G, _PTX, "reduce1", _N, 2000, _simple("reduce1", _BLOCK),
         "int32 interleaved addressing, strided index: no divergence, bank conflicts"),
    Case("reduce2", _G, _PTX, "reduce2", _N, 2000, _simple("reduce2", _BLOCK),
         "int32 sequential addressing: no bank conflicts"),
    Case("reduce3", _G, _PTX, "reduce3", _N, 3000, _simple("reduce3", 2 * _BLOCK),
         "int32 first add during global load: half the blocks"),
    Case("reduce4", _G, _PTX, "reduce4", _N, 3000, _simple("reduce4", 2 * _BLOCK),
         "int32 unrolled last warp (volatile shared memory)"),
    Case("reduce5", _G, _PTX, "reduce5", _N, 3000, _simple("reduce5", 2 * _BLOCK),
         "int32 completely unrolled tree (block size a template parameter)"),
    Case("reduce6", _G, _PTX, "reduce6", _N, 3000, _cascaded("reduce6", None),
         "int32 multiple elements per thread: grid-stride loop into shared memory"),
    *[Case(f"reduce7_{k}", _G, _PTX, f"reduce7_{k}", _N, 3000, _cascaded(f"reduce7_{k}", k),
           f"int32 algorithm cascading: {k} pair{'s' if k > 1 else ''} of elements per thread")
      for k in REDUCE7_K],
]

#: name -> Case, in table order
SEED_CASES: dict[str, Case] = {c.name: c for c in _SEED_CASE_LIST}
if len(SEED_CASES) != len(_SEED_CASE_LIST) or set(SEED_CASES) & set(CASES):  # pragma: no cover
    raise ValueError("seed case names must be unique and distinct from the suite's")

#: group -> seed case names
SEED_GROUPS: dict[str, list[str]] = {_G: list(SEED_CASES)}


def all_cases() -> dict[str, Case]:
    """The suite's cases followed by the seed cases (what ``gpusim run --case`` looks in)."""
    return {**CASES, **SEED_CASES}


# --------------------------------------------------------------------------- the tables


@dataclass(frozen=True)
class TableRow:
    """One row of a seeds' table.

    ``seconds``: the seeds' time for the kernel (None where the notes give none); ``quote``: the
    notes' own words it comes from.  ``case`` names a case of :data:`SEED_CASES` or
    :data:`gpusim.suite.CASES`.
    """

    row: str
    case: str
    seconds: float | None
    quote: str


_A5000_BYTES = 32 * 1024 * 1024 * 4   #: seed 000: "#define N 32*1024*1024" floats


def _a100_rows() -> list[TableRow]:
    times = {"reduce0": 0.015917, "reduce1": 0.008949, "reduce2": 0.007367, "reduce3": 0.003993,
             "reduce4": 0.003992, "reduce5": 0.002918, "reduce6": 0.002688, "reduce7_1": 0.002664,
             "reduce7_2": 0.001888, "reduce7_4": 0.00158, "reduce7_8": 0.001482, "reduce7_16": 0.001477,
             "reduce7_32": 0.001491, "reduce7_64": 0.001507, "reduce7_128": 0.001498,
             "reduce7_256": 0.001515, "reduce7_512": 0.001637, "reduce7_1024": 0.001959}
    return [TableRow(name, name, t, f"[{name}]GPU time: {t} s") for name, t in times.items()]


#: table name -> (config, problem size, config overrides, rows, what the notes say of the set-up)
TABLES: dict[str, dict] = {
    "a100": {
        "gpu": "a100", "n": 2**29, "dtype": "int32",
        # seed 003: "测试环境是A100,理论带宽为1555GB/s": the 40 GB A100 (HBM2, 1,555 GB/s); the
        # shipped a100.toml is the 80 GB SXM4 part (2,039 GB/s) and names this override itself.
        "overrides": {"dram.bandwidth_bytes_per_s": 1.555e12},
        "setup": "seed 003: 512 M ints (2**29, 2 GB) on an A100 of 1555 GB/s theoretical bandwidth",
        "rows": _a100_rows(),
    },
    "a5000": {
        "gpu": "a5000", "n": 32 * 1024 * 1024, "dtype": "float32", "overrides": {},
        "setup": "seed 000: #define N 32*1024*1024 floats, BLOCK_SIZE 256, on an RTX A5000",
        "rows": [
            TableRow("reduce_v0", "reduce_v0", 1.24e-3, "从 1.24ms 降到了 212us"),
            TableRow("reduce_v1", "reduce_v1", None, "带宽利用率提到了 85.49% (no time)"),
            TableRow("reduce_v2", "reduce_v2", None, "带宽利用率为 89.03% (no time)"),
            TableRow("reduce_v3", "reduce_v3", _A5000_BYTES / 300e9, "访存带宽为 300GB/s"),
            TableRow("reduce_v4", "reduce_v4", _A5000_BYTES / 530e9, "访存带宽提升到了 530GB/s"),
            # the text's reduce_v5 (__shfl_xor_sync) is the suite's reduce_v7; 635 GB/s ~ 212 us
            TableRow("reduce_v5", "reduce_v7", 212e-6, "访存带宽达到了 635GB/s ... 降到了 212us"),
        ],
    },
}
