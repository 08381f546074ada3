"""The suite's committed snapshot: what every case launches, uploads, expects and produces.

``snapshot.json`` holds, for every case of ``CASES`` and ``SEED_CASES`` at its test size
(seed 0): the case's fields, the launches DryRun checked (kernel, grid, block, shared
memory), the sha256 of every input and oracle array, and the sha256 of every output the
functional simulator produced. It was written from the single-module suite before the split
into one module per family (issue #15); ``test_suite_snapshot.py`` requires the same today,
so moving code between the suite's modules cannot change a case unnoticed. (Cycles: the
timing goldens, ``tests/timing/golden_cycles.json``.) A deliberate change to a case
regenerates the file (``python -m tests.suite.snapshot``) and says so in its commit.
"""

from __future__ import annotations

import hashlib
import json
import pathlib

SNAPSHOT = pathlib.Path(__file__).with_name("snapshot.json")


def _sha(a) -> str:
    import numpy as np

    a = np.ascontiguousarray(a)
    return f"{a.dtype}{list(a.shape)}:" + hashlib.sha256(a.tobytes()).hexdigest()[:20]


def entry(case, functional: bool = True) -> dict:
    """The snapshot of one case at its test_n, seed 0 (``functional``: also run it in gpusim)."""
    import gpusim
    from gpusim.suite import DryRun, run_case

    dry = DryRun()
    r = run_case(case, dry, case.test_n, seed=0)
    out = {
        "case": [case.group, case.ptx, case.kernel, case.default_n, case.test_n, case.n_means, case.doc],
        "launches": [[k, list(g), list(b), s] for k, g, b, s in dry.log],
        "main": [r.kernel, list(r.grid), list(r.block), r.shared_mem],
        "exact": r.exact, "rtol": r.rtol, "tolerance_note": r.tolerance_note,
        "inputs": {k: _sha(v) for k, v in r.inputs.items()},
        "expected": {k: _sha(v) for k, v in r.expected.items()},
    }
    if functional:
        with gpusim.Device("h100"):
            sim = run_case(case, gpusim, case.test_n, seed=0)
        out["outputs"] = {k: _sha(v) for k, v in sim.outputs.items()}
    return out


def all_cases() -> dict:
    """The suite's cases then the seeds' (``gpusim.suite.seeds``), in order."""
    from gpusim.suite import CASES
    from gpusim.suite.seeds import SEED_CASES

    return {**CASES, **SEED_CASES}


def snapshot() -> dict:
    """The whole snapshot: case order, groups, timing/scale sizes, and one entry per case."""
    from gpusim import suite
    from gpusim.suite.seeds import SEED_CASES

    return {
        "order": list(suite.CASES), "seed_order": list(SEED_CASES), "groups": suite.GROUPS,
        "timing_sizes": {k: list(v) for k, v in suite.TIMING_SIZES.items()},
        "scale_sizes": suite.SCALE_SIZES,
        "copy_occupancy_smem": {str(k): v for k, v in suite.COPY_OCCUPANCY_SMEM.items()},
        "cases": {name: entry(case) for name, case in all_cases().items()},
    }


if __name__ == "__main__":
    data = snapshot()
    SNAPSHOT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {SNAPSHOT} ({len(data['cases'])} cases)")
