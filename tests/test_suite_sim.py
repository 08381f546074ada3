"""Every suite kernel runs in the simulator and matches its numpy oracle and the H100.

The H100 outputs were recorded by ``validation/probes/suite_on_gpu.py`` for the
same inputs (``test_n``, seed 0) and are committed under
``validation/reports/h100/``; they let CI, which has no GPU, check that the
simulator computes the same bits as the hardware.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.suite import CASES, check, run_case

GPU_OUTPUTS = Path(__file__).resolve().parents[1] / "validation" / "reports" / "h100" / "suite_outputs_h100.npz"
# test_n outputs recorded by validation/probes/timing_on_gpu.py --events (same seed and sizes): they
# cover cases added after suite_outputs_h100.npz was recorded (copy_occupancy)
TIMING_OUTPUTS = GPU_OUTPUTS.with_name("timing_outputs_h100.npz")
# test_n outputs recorded by gpusim validate (validation/hardware.py): cases added later (copy_block_size)
VALIDATE_OUTPUTS = GPU_OUTPUTS.with_name("outputs_h100.npz")
# test_n outputs of the cases added after those, recorded by validation/probes/suite_on_gpu.py --cases
# (hgemm_mma: validation/reports/h100/hgemm/, with its default_n check in suite_h100.json there)
LATER_OUTPUTS = (GPU_OUTPUTS.parent / "hgemm" / "suite_outputs_h100.npz",)


@pytest.fixture(scope="module")
def h100_outputs():
    if not GPU_OUTPUTS.exists():
        pytest.skip(f"no recorded H100 outputs at {GPU_OUTPUTS}")
    with np.load(GPU_OUTPUTS) as data:
        outputs = {k: data[k] for k in data.files}
    for later in (TIMING_OUTPUTS, VALIDATE_OUTPUTS, *LATER_OUTPUTS):
        if later.exists():
            with np.load(later) as data:
                recorded = {k.split("/", 1)[0] for k in outputs}
                outputs.update({k: data[k] for k in data.files if k.split("/", 1)[0] not in recorded})
    return outputs


@pytest.fixture(scope="module")
def sim_runs():
    runs = {}
    with gpusim.Device("h100"):
        for name, case in CASES.items():
            runs[name] = run_case(case, gpusim, case.test_n, seed=0)
    return runs


@pytest.mark.parametrize("name", list(CASES))
def test_case_matches_its_oracle(sim_runs, name):
    ok, msg = check(sim_runs[name])
    assert ok, f"{name}: {msg}"


@pytest.mark.parametrize("name", list(CASES))
def test_case_matches_the_h100_bit_for_bit(sim_runs, h100_outputs, name):
    run = sim_runs[name]
    keys = [k for k in h100_outputs if k.startswith(f"{name}/")]
    assert keys, f"no H100 outputs recorded for {name}"
    for key in keys:
        out = run.outputs[key.split("/", 1)[1]]
        hw = h100_outputs[key]
        if run.exact:
            assert out.dtype == hw.dtype and out.shape == hw.shape
            assert np.array_equal(out.view(np.uint8), hw.view(np.uint8)), f"{key} differs from the H100"
        else:
            np.testing.assert_allclose(out, hw, rtol=run.rtol)


def test_launches_report_instruction_counts(sim_runs):
    for name, run in sim_runs.items():
        for res in run.launches:
            assert res.metrics["smsp__thread_inst_executed.sum"] >= res.metrics["smsp__inst_executed.sum"] > 0, name
