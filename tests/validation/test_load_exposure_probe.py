"""validation/probes/load_exposure.py on its committed run (validation/reports/h100/load_exposure/): the
H100 issues an unrolled sum's loads together, an L2 hit costs more at 8 CTAs an SM than at 4, and at 8
CTAs each load instruction costs the same whether it hits L1 on one line or on 256."""

from __future__ import annotations

import json
import pathlib

from validation.probes import load_exposure

DATA = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100" / "load_exposure"


def test_the_ladder_is_read_in_pattern_order():
    gpu = load_exposure.gpu_rows(str(DATA / "load_exposure.csv"))
    assert list(gpu) == [p[0] for p in load_exposure.PATTERNS]
    # every warp does the same work at every occupancy: instructions scale with the CTAs
    for kernel in load_exposure.KERNELS:
        assert gpu[f"{kernel} k8"]["instructions"] == 8 * gpu[f"{kernel} k1"]["instructions"]
    loads = 8 * 132 * 256 // 32 * load_exposure.ITERS * 16  # warp loads, one line each; the L1 keeps a few
    assert 0.9 * loads < gpu["late k8"]["read_requests"] < loads


def test_an_unrolled_sums_loads_overlap_and_a_chains_do_not():
    gpu = load_exposure.gpu_rows(str(DATA / "load_exposure.csv"))
    steps = load_exposure.ITERS * 16
    # one warp pair a scheduler: the chain waits a latency a load, the unrolled sum one an iteration
    assert gpu["chain k1"]["cycles"] / steps > 350
    assert gpu["late k1"]["cycles"] < gpu["chain k1"]["cycles"] / 3
    # a chain's step is longer at 8 CTAs an SM than at 4 (the loaded latency)
    assert gpu["chain k8"]["cycles"] > 1.2 * gpu["chain k4"]["cycles"]


def test_at_full_occupancy_a_load_costs_its_instruction_wherever_it_hits():
    gpu = load_exposure.gpu_rows(str(DATA / "load_exposure.csv"))
    for kernel in ("late", "chain"):
        l1, one = gpu[f"{kernel} k8 L1"]["cycles"], gpu[f"{kernel} k8 1 line"]["cycles"]
        assert abs(one / l1 - 1) < 0.02  # one line or 256, all L1 hits: the same time
        # far more than the extra instructions over the hash alone would take
        extra = gpu[f"{kernel} k8 L1"]["instructions"] / gpu["hash k8"]["instructions"]
        assert l1 / gpu["hash k8"]["cycles"] > extra + 0.2


def test_gpusims_committed_run_times_the_unrolled_sum_at_low_occupancy():
    rows = {r["launch"]: r for r in json.loads((DATA / "sim.json").read_text())["rows"]}
    assert set(rows) == {p[0] for p in load_exposure.PATTERNS}
    assert abs(rows["late k1"]["error_pct"]) < 5 and abs(rows["late k2"]["error_pct"]) < 5
