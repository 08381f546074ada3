"""The detailed timing engine's committed cycles: every suite case at its test size, plus
multi-wave launches on a few SMs and the other scheduler policies.

``golden_cycles.json`` holds, per run, every launch's cycles and Nsight-named metrics as
the detailed engine computed them when the file was written. ``test_golden.py`` replays
the runs and requires the same numbers, so a speed-up of the engine cannot move a cycle
unnoticed; a deliberate model change regenerates the file (``python tests/timing/golden.py``)
and says so in its commit.
"""

from __future__ import annotations

import json
import pathlib

GOLDEN = pathlib.Path(__file__).with_name("golden_cycles.json")

#: (case, n or None for the case's test size, config overrides) -- multi-wave runs use few SMs.
EXTRA = [
    ("reduce_v1", 1 << 14, {"sm_count": 1}),
    ("reduce_v5", 1 << 14, {"sm_count": 2}),
    ("matmul_tiled", 64, {"sm_count": 2}),
    ("transpose_conflict", 96, {"sm_count": 3}),
    ("reduce_v2", None, {"sm.scheduler.policy": "lrr"}),
    ("matmul_tiled", None, {"sm.scheduler.policy": "two_level"}),
    ("local_hist8", 4096, {"sm_count": 2, "sm.scheduler.policy": "lrr"}),
]


def runs() -> list[tuple[str, str, int, dict]]:
    """(key, case, n, overrides) of every golden run."""
    from gpusim.suite import CASES
    out = [(name, name, case.test_n, {}) for name, case in CASES.items()]
    for name, n, ov in EXTRA:
        n = n or CASES[name].test_n
        key = f"{name}:{n}:" + ",".join(f"{k}={v}" for k, v in ov.items())
        out.append((key, name, n, ov))
    return out


def simulate(case: str, n: int, overrides: dict, **device) -> list:
    """The launches of ``case`` at ``n`` on the H100 timing model with ``overrides``."""
    import gpusim
    from gpusim.suite import CASES, run_case
    with gpusim.Device("h100", mode="timing", overrides=overrides, **device):
        return run_case(CASES[case], gpusim, n, seed=0).launches


def record(launches: list) -> list[dict]:
    return [{"cycles": r.cycles, "metrics": r.metrics} for r in launches]


if __name__ == "__main__":
    data = {key: record(simulate(case, n, ov)) for key, case, n, ov in runs()}
    GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN} ({len(data)} runs)")
