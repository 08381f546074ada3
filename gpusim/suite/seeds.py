"""The course notes' reduction tables: the A100 int32 kernels and both tables' figures.

Owns:

* ``SEED_CASES`` -- one :class:`~gpusim.suite.Case` per kernel of seed 003's A100 table,
  collected from the family module :mod:`gpusim.suite.reduce_int` (``cuda/reduce_int.cu`` ->
  ``ptx/reduce_int.ptx``; see there for the kernels and oracles).  They are kept out of
  :data:`gpusim.suite.CASES` so that ``gpusim validate`` and the committed H100 report do not
  change; ``gpusim run --case NAME`` / ``--group seeds_a100`` find them.
* ``TABLES`` -- the rows of the two tables, each row a case and the seeds' own figure:
  ``"a100"`` (seed 003, "[reduce0]GPU time: 0.015917 s" .. "[reduce7_1024]GPU time:
  0.001959 s", 2**29 ints on an A100 of 1555 GB/s) and ``"a5000"`` (seed 000, 32 M floats,
  ``reduce_v0`` .. ``reduce_v5`` of the text, which are the suite's float ``reduce_v0`` ..
  ``reduce_v4`` and ``reduce_v7``; the text gives v0 as 1.24 ms, v3/v4/v5 as 300/530/635 GB/s,
  and v1/v2 only as "带宽利用率" percentages, which are not times); and ``"h100"``, the A100
  table's kernels at 2**26 ints measured on this project's H100 (ncu), where the set-up is known.

Like :mod:`gpusim.suite`, imports only the standard library and the suite itself (relative
imports, so it also loads with the suite by file path).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import CASES
from .case import Case
from .reduce_int import REDUCE7_K
from .registry import SEED_FAMILIES, collect, groups

__all__ = ["REDUCE7_K", "SEED_CASES", "SEED_GROUPS", "TABLES", "TableRow", "all_cases"]

#: name -> Case, in table order
SEED_CASES: dict[str, Case] = collect(SEED_FAMILIES)
if set(SEED_CASES) & set(CASES):  # pragma: no cover - guarded by tests
    raise ValueError("seed case names must be distinct from the suite's")

#: group -> seed case names
SEED_GROUPS: dict[str, list[str]] = groups(SEED_CASES)


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


#: seed 003's kernels at 2**26 ints on this project's H100 (ncu ``gpu__time_duration.sum``, clocks
#: untouched): validation/reports/h100/seeds_int/timing_h100.json, ns (``validation/probes/
#: timing_on_gpu.py --profile --events --tier scale --extra reduce0:67108864 ...``)
_H100_2_26_NS = {"reduce0": 641440, "reduce1": 396768, "reduce2": 305728, "reduce3": 166240, "reduce4": 127904,
                 "reduce5": 122912, "reduce6": 129632, "reduce7_1": 123328, "reduce7_2": 91680, "reduce7_4": 89056,
                 "reduce7_8": 89888, "reduce7_16": 90208, "reduce7_32": 91072, "reduce7_64": 90592,
                 "reduce7_128": 92672, "reduce7_256": 96864, "reduce7_512": 121184, "reduce7_1024": 197504}


def _h100_rows() -> list[TableRow]:
    return [TableRow(name, name, ns * 1e-9, f"H100 ncu gpu__time_duration.sum {ns:,} ns at 2**26 ints")
            for name, ns in _H100_2_26_NS.items()]


#: table name -> (config, problem size, config overrides, rows, what the notes say of the set-up)
TABLES: dict[str, dict] = {
    "a100": {
        "gpu": "a100", "n": 2**29, "dtype": "int32",
        # seed 003: "测试环境是A100,理论带宽为1555GB/s": the 40 GB A100 (HBM2, 1,555 GB/s); the
        # shipped a100.toml is the 80 GB SXM4 part (2,039 GB/s) and names this override itself.
        # The notes give no clock. 765 MHz (the A100 PCIe 40 GB's base clock) is inferred from
        # hardware: the same kernels measured on the H100 (the "h100" table, at 2**29 too), scaled
        # by SM count x clock to 108 SMs at 765 MHz, give the seeds' compute-bound rows within
        # 1-4 % (reduce0, reduce2, reduce3, reduce5); at the 1,410 MHz boost clock 0.54x.
        "overrides": {"dram.bandwidth_bytes_per_s": 1.555e12, "clock_hz": 765e6},
        "setup": "seed 003: 512 M ints (2**29, 2 GB) on an A100 of 1555 GB/s theoretical bandwidth; "
                 "SM clock 765 MHz (inferred: see gpusim.suite.seeds)",
        "rows": _a100_rows(),
    },
    # the A100 table's kernels measured on a GPU this project can reach: checks the model on the
    # same kernels against hardware whose set-up is known (the notes give neither clock nor timer)
    "h100": {
        "gpu": "h100", "n": 2**26, "dtype": "int32", "overrides": {}, "reference": "H100",
        "setup": "seed 003's int32 kernels at 2**26 ints on this project's H100 (measured, not the notes')",
        "rows": _h100_rows(),
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
