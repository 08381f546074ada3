"""Jupyter display: LaunchResult and OccupancyResult render as HTML tables with their numbers."""

from __future__ import annotations

import numpy as np

import gpusim
from gpusim.occupancy import max_active_blocks


def test_occupancy_result_html_names_the_limiter():
    occ = max_active_blocks("h100", 256, 128, 0, 0, 0)   # 128 regs x 256 threads: registers bind (2 blocks)
    html = occ._repr_html_()
    assert occ.blocks_per_sm == 2 and "registers" in occ.limiters
    assert "<table" in html and ">2<" in html and "block limit: registers</th><td class='n'>2 (binding)" in html


def test_launch_result_html_has_cycles_and_metrics():
    mod = gpusim.RawModule(path="gpusim/suite/ptx/reduce.ptx")
    n = 1 << 12
    with gpusim.Device("h100", mode="timing"):
        x, out = gpusim.asarray(np.ones(n, np.float32)), gpusim.zeros(n // 512, np.float32)
        res = mod.get_function("reduce_v3")((n // 512,), (256,), (x, out, np.uint32(n)))
    html = res._repr_html_()
    assert f"{res.cycles:,}" in html and "gpusim launch of reduce_v3" in html
    assert f"{int(res.metrics['smsp__inst_executed.sum']):,}" in html
    assert html.count("<tr>") > len(res.metrics)        # the summary rows plus every metric
