"""The tensor pipe of the timing model against the H100's mma.sync chains
(validation/reports/h100/tensor_core/tensor_core_clock.json, from validation/probes/tensor_core.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gpusim

ROOT = Path(__file__).resolve().parents[2]
PTX = ROOT / "validation" / "probes" / "tensor_core.ptx"
CLOCK = ROOT / "validation" / "reports" / "h100" / "tensor_core" / "tensor_core_clock.json"


def _slopes(chains):
    hw = {r["label"]: r["clock64"] for r in json.loads(CLOCK.read_text())}
    out = {}
    with gpusim.Device("h100", mode="timing"):
        mod = gpusim.RawModule(path=str(PTX))
        buf, cyc = gpusim.zeros(1024, np.float32), gpusim.zeros(1, np.int64)
        for kern, block in chains:
            sim = [mod.get_function(kern)((1,), (block,), (np.int32(k), buf, cyc)).cycles for k in (64, 256)]
            lab = f"{kern} b{block}"
            out[lab] = ((sim[1] - sim[0]) / 192, (hw[f"{lab} k256"] - hw[f"{lab} k64"]) / 192)
    return out


def test_dependent_mma_chain_costs_the_measured_latency():
    for lab, (sim, hw) in _slopes([("mma_bf16_chain", 32), ("mma_f16acc_chain", 32)]).items():
        assert hw == pytest.approx(24.0, abs=0.1), lab
        assert sim == pytest.approx(hw, abs=0.5), lab


def test_independent_mma_streams_issue_at_the_measured_interval():
    (sim, hw), = _slopes([("mma_ilp8", 256)]).values()     # 8 warps: 2 per sub-partition, 8 chains each
    assert hw / 16 == pytest.approx(6.1, abs=0.1)            # cycles per mma per sub-partition
    assert sim == pytest.approx(hw, rel=0.03)
