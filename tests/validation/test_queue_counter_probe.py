"""validation/probes/queue_counter.py on its committed run (validation/reports/h100/queue_counter/): a
warp-aggregated queue counter whose old value places a store costs the H100 what lane 0's ``atom``
does, so bfs_topdown's slow counter is not its use."""

from __future__ import annotations

import pathlib

from validation.probes import queue_counter

DATA = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100" / "queue_counter"


def test_an_aggregated_counter_used_as_a_queue_index_costs_what_one_lane_does():
    gpu = queue_counter.gpu_rows(str(DATA / "queue_counter.csv"))
    assert list(gpu) == [p[0] for p in queue_counter.PATTERNS]
    per = {lab: r["cycles"] / r["atomic_requests"] for lab, r in gpu.items()}
    assert all(r["atomic_requests"] == 135_168 for r in gpu.values())
    for label in ("atom lane 0", "atom aggregated", "atom aggregated + store"):
        assert 1.4 < per[label] < 1.6, label
    # the queue's stores are consecutive words: about one write request a sector's 8 of them
    assert gpu["atom aggregated + store"]["write_requests"] < gpu["red aggregated + store spread"]["write_requests"] / 4
