"""validation/probes/random_access.py without a GPU: its chase visits every node, and its reading
of ncu's CSV pairs each committed row with the launch that made it (CuPy's set-up kernels left out)."""

from __future__ import annotations

import csv
import pathlib

import numpy as np
import pytest

from validation import probekit

CSV = pathlib.Path(__file__).resolve().parents[2] / "validation/reports/h100/random_access/random_access.csv"
probe = probekit.load_probe("random_access")


@pytest.mark.parametrize("footprint", [1 << 22, 1 << 30, 1 << 33])
def test_the_chase_is_one_cycle_through_every_node_inside_the_footprint(footprint):
    word, nxt = probe.chase_nodes(np, footprint)
    assert word[0] == 0 and len(np.unique(word)) == probe.CHASE_NODES
    assert word.max() * 4 < footprint and np.all(word % 32 == 0)   # a node per 128-byte line
    succ = dict(zip(word.tolist(), nxt.tolist()))
    seen, p = set(), 0
    for _ in range(probe.CHASE_NODES):
        seen.add(p)
        p = succ[p]
    assert p == 0 and len(seen) == probe.CHASE_NODES


def test_gpu_rows_pair_each_launch_with_its_kernel():
    launches = probe.launches()
    with open(CSV) as f:
        rows = [r for r in csv.DictReader(line for line in f if line.startswith('"')) if r["Kernel Name"]]
    kernels = {k for _, k, *_ in launches}
    assert any(r["Kernel Name"] not in kernels for r in rows)           # CuPy's chain set-up ran too
    ours = [r for r in rows if r["Kernel Name"] in kernels][-len(launches):]
    assert [r["Kernel Name"] for r in ours] == [k for _, k, *_ in launches]
    got = probe.gpu_rows(str(CSV))
    assert list(got) == [lab for lab, *_ in launches]
    grid = {lab: int(r["Grid Size"].strip("()").split(",")[0]) for (lab, *_), r in zip(launches, ours)}
    assert all(grid[lab] == ctas for lab, _, _, _, _, ctas in launches)
    # a random 4-byte load over 1 GiB misses to DRAM, which moves 64 B for it
    acc = probe.BLOCK * probe.CTAS_PER_SM * 132 * probe.ITERS
    assert got["rd_rand 1 GiB"]["dram_read_bytes"] / acc == pytest.approx(64, rel=0.05)
