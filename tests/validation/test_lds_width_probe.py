"""validation/probes/lds_width.py on its committed runs (validation/reports/h100/lds_width/): on the H100 a
shared load costs the SM its §5 wavefronts, one a cycle, whatever its width and broadcast; gpusim times
the launches within a few per cent once each sub-partition has its own MIO queue, and did not before."""

from __future__ import annotations

import json
import pathlib

from validation.probes import lds_width

DATA = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100" / "lds_width"
WARPS = lds_width.CTAS_PER_SM * lds_width.BLOCK // 32


def _gpu(name: str = "lds_width_stalls.csv"):
    return lds_width.gpu_rows(str(DATA / name))


def test_the_runs_are_read_in_pattern_order_and_agree():
    runs = [_gpu(f) for f in ("lds_width_run1.csv", "lds_width_run2.csv", "lds_width_stalls.csv")]
    assert all(list(r) == [p[0] for p in lds_width.PATTERNS] for r in runs)
    assert all(abs(r[lab]["cycles"] / runs[0][lab]["cycles"] - 1) < 0.01 for r in runs[1:] for lab in r)


def test_a_shared_load_costs_its_wavefronts_one_a_cycle():
    gpu = _gpu()
    lo, hi = lds_width.ITERS
    for kernel, (n, wavefronts) in lds_width.LOADS.items():
        a, b = gpu[f"{kernel} i{lo}"], gpu[f"{kernel} i{hi}"]
        loads = (hi - lo) * n * WARPS
        # ncu's wavefronts are hardware-facts §5's count, and the SM's cycles a load that count
        assert abs((b["shared_wavefronts"] - a["shared_wavefronts"]) / (loads * 132) - wavefronts) < 0.005
        assert 0.99 < (b["cycles"] - a["cycles"]) / loads / wavefronts < 1.05, kernel


def test_gpusim_times_every_launch_with_each_sub_partitions_queue_and_did_not_before():
    def errors(name):
        return {r["launch"]: r["error_pct"] for r in json.loads((DATA / name).read_text())["rows"]}
    after, before = errors("sim.json"), errors("sim_before.json")
    assert set(after) == set(before) == {p[0] for p in lds_width.PATTERNS}
    assert all(abs(e) < 4 for e in after.values())
    # one sub-partition's warps starved until the others finished: the short launches ran long
    assert sum(before[f"{k} i64"] > 10 for k in ("lds32", "lds32_b", "lds32_h", "lds64_b")) == 4


def test_the_h100_serves_an_sms_oldest_cta_first_at_a_full_data_stage():
    import numpy as np

    s = np.load(DATA / "lds32_stamps_h100.npy")     # (SM, warp slot, loop start, loop end) per warp
    for sm in np.unique(s[:, 0])[:8]:
        x = s[s[:, 0] == sm]
        ends = x[:, 3] - x[:, 2].min()
        cta_end = [ends[x[:, 1] // 8 == c].max() for c in range(8)]   # warp slots 8c..8c+7: one CTA
        assert cta_end == sorted(cta_end)              # CTAs end in the order they started
        assert cta_end[0] < 0.4 * cta_end[-1]          # the first long before the last
    sim = np.load(DATA / "lds32_stamps_sim_1sm.npy")  # gpusim (one SM, detailed): all end together
    assert np.ptp(sim[:, 3]) < 0.01 * (sim[:, 3].max() - sim[:, 2].min())
