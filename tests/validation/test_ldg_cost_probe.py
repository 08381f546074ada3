"""validation/probes/ldg_cost.py on its committed run (validation/reports/h100/ldg_cost/): on the H100 an
IMAD.WIDE (what x[i]'s address becomes) costs its sub-partition far more than its issue slot, a load at
an immediate offset little, and gpusim's sm.sass_pipes rule brings the IMAD.WIDE launches in."""

from __future__ import annotations

import json
import pathlib

from validation.probes import ldg_cost

DATA = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100" / "ldg_cost"
SMSPS = 132 * 4


def _gpu(run: int = 2):
    return ldg_cost.gpu_rows(str(DATA / f"ldg_cost_run{run}.csv"))


def test_the_runs_are_read_in_pattern_order_and_agree():
    one, two = _gpu(1), _gpu(2)
    assert list(two) == [p[0] for p in ldg_cost.PATTERNS]
    for k in ldg_cost.KERNELS:  # every warp does the same work at 4 and 8 CTAs an SM
        assert two[f"{k} k8"]["instructions"] == 2 * two[f"{k} k4"]["instructions"]
    assert all(abs(one[lab]["cycles"] / two[lab]["cycles"] - 1) < 0.02 for lab in two)


def test_an_imad_wide_costs_far_more_than_its_issue_slot():
    gpu = _gpu()
    steps = 16 * 16 * 16  # warps a sub-partition at 8 CTAs an SM x iterations x steps

    def cycles_beyond_issue(kernel, base="fma_only"):
        # cycles a step the kernel adds over base, less one issue cycle for each instruction it adds
        cycles = (gpu[f"{kernel} k8"]["cycles"] - gpu[f"{base} k8"]["cycles"]) / steps
        return cycles - (gpu[f"{kernel} k8"]["instructions"] - gpu[f"{base} k8"]["instructions"]) / SMSPS / steps

    # an IMAD.WIDE (with an IADD3 and a LOP3) a step among 8 FFMA: over 3.5 cycles beyond their issue
    assert cycles_beyond_issue("fma_wide") > 3.5
    # 16 loads at immediate offsets of one base, or 16 LDS: under 2 cycles a load beyond their issue
    assert cycles_beyond_issue("fma_ldg_imm") < 2 and cycles_beyond_issue("fma_lds") < 2
    # the IMAD.WIDE, not the load: the address alone takes longer than those loads
    assert gpu["fma_wide k8"]["cycles"] > 1.3 * gpu["fma_ldg_imm k8"]["cycles"]
    assert gpu["hash_wide k8"]["cycles"] > 1.1 * gpu["hash_ldg_imm k8"]["cycles"]


def test_gpusim_times_the_imad_wide_launches_with_the_rule_and_not_without():
    after = {r["launch"]: r["error_pct"] for r in json.loads((DATA / "sim.json").read_text())["rows"]}
    before = {r["launch"]: r["error_pct"] for r in json.loads((DATA / "sim_before.json").read_text())["rows"]}
    assert set(after) == {p[0] for p in ldg_cost.PATTERNS}
    for lab in ("hash_ldg k4", "hash_ldg k8", "fma_ldg k4", "fma_ldg k8", "fma_wide k8", "hash_wide k8"):
        assert abs(after[lab]) < 12  # (fma_ldg: +8..+11 %)
        assert before[lab] < -14  # session 47's model
