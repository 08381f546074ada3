"""validation/probes/hot_atomic.py on its committed runs (validation/reports/h100/hot_atomic/): a hot
address costs 1.5 cycles a request however it is sent, dependent loads wait behind it, and gpusim no
longer holds a CTA's last store behind the whole GPU's reads."""

from __future__ import annotations

import json
import pathlib

import pytest

from validation.probes import hot_atomic

DATA = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100" / "hot_atomic"


def _rows(name: str) -> dict:
    return {r["launch"]: r for r in json.loads((DATA / name).read_text())["rows"]}


def test_a_hot_address_takes_one_and_a_half_cycles_a_request_on_the_h100_and_in_gpusim():
    gpu = hot_atomic.gpu_rows(str(DATA / "hot_atomic.csv"))
    assert list(gpu) == [p[0] for p in hot_atomic.PATTERNS]
    after = _rows("sim_after.json")
    for label in ("red A1", "atom A1", "red A1 once", "atom A1 once"):
        g = gpu[label]
        assert g["atomic_requests"] == 135_168 and 1.4 < g["cycles"] / g["atomic_requests"] < 1.6, label
        assert after[label]["gpusim"]["cycles"] == pytest.approx(g["cycles"], rel=0.04), label


def test_dependent_loads_wait_behind_a_hot_address_on_the_h100():
    gpu = hot_atomic.gpu_rows(str(DATA / "hot_atomic.csv"))
    hot = gpu["chain + red A1 once"]["cycles"] - gpu["chain"]["cycles"]
    spread = gpu["chain + red spread once"]["cycles"] - gpu["chain"]["cycles"]
    assert hot > 0.6 * gpu["red A1 once"]["cycles"] and spread < 0.03 * gpu["chain"]["cycles"]


def test_a_ctas_last_store_no_longer_waits_behind_the_gpus_reads():
    before, after = _rows("sim.json"), _rows("sim_after.json")
    chain = before["chain"]
    assert chain["error_pct"] > 50 and after["chain"]["error_pct"] < 10
    assert after["chain"]["gpu"]["cycles"] == chain["gpu"]["cycles"]


def test_gpusim_now_makes_dependent_loads_wait_behind_a_hot_address():
    # session 46: reads take turns with the hot address at its slice, and an SM's L1 holds only on its
    # own queued atomics; before, the burst of a wave's reds held every SM's loads (+24.8 %)
    before, now = _rows("sim_after.json"), _rows("sim_session46.json")
    for label in ("chain + red A1 once", "chain + atom A1 once", "red A1 + reads", "atom A1 + reads"):
        assert abs(now[label]["error_pct"]) < 5 < abs(before[label]["error_pct"]), label
    assert abs(now["chain + red spread once"]["error_pct"]) < 10 < before["chain + red spread once"]["error_pct"]
