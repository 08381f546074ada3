"""Functional-mode memory counters equal the H100's Nsight Compute numbers
for the teaching micro-kernels (hardware-facts.md §5 table, §6 rows)."""

from __future__ import annotations

from math import gcd

import numpy as np
import pytest

import gpusim
from gpusim.suite import PTX_DIR

LD_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
ST_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
LD_BC = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
SECT = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
REQ = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"


def _launch(kernel: str, grid, block, *args):
    k = gpusim.RawModule(path=PTX_DIR / ("micro_shared.ptx" if kernel.startswith("smem") else "micro_global.ptx"))
    return k.get_function(kernel)(grid, block, args)


@pytest.mark.parametrize("stride", [1, 2, 4, 8, 16, 32, 33, 64])
def test_u32_shared_stride_wavefronts_are_gcd_of_stride_and_32(dev, stride):
    # §5: stride 1/2/4/8/16/32 words -> 1/2/4/8/16/32 wavefronts; stride 33 -> 1.
    words = 64
    res = _launch("smem_stride_u32", (1,), (32,), gpusim.zeros(32 * words, np.uint32),
                  gpusim.zeros(32 * words, np.uint32), np.uint32(stride))
    want = gcd(stride, 32)
    assert res.metrics[LD_WF] == want and res.metrics[ST_WF] == want
    assert res.metrics[LD_BC] == want - 1
    assert res.metrics["smsp__inst_executed_op_shared_ld.sum"] == 1


@pytest.mark.parametrize("kernel, stride, wavefronts, conflicts", [
    # §5 rows: 8-byte t*8, t*16, t*32, t*128 and 16-byte t*16, t*32, t*128 (load side)
    ("smem_stride_v2_u32", 1, 2, 0), ("smem_stride_v2_u32", 2, 4, 2), ("smem_stride_v2_u32", 4, 8, 6),
    ("smem_stride_v2_u32", 16, 32, 30),
    ("smem_stride_v4_u32", 1, 4, 0), ("smem_stride_v4_u32", 2, 8, 4), ("smem_stride_v4_u32", 8, 32, 28),
])
def test_vector_shared_accesses_match_the_h100_table(dev, kernel, stride, wavefronts, conflicts):
    words = 4 * 64
    res = _launch(kernel, (1,), (32,), gpusim.zeros(32 * words, np.uint32), gpusim.zeros(32 * words, np.uint32),
                  np.uint32(stride))
    assert (res.metrics[LD_WF], res.metrics[LD_BC]) == (wavefronts, conflicts)


@pytest.mark.parametrize("stride, sectors_per_request", [(1, 4), (2, 8), (4, 16), (8, 32), (32, 32)])
def test_global_stride_sectors_per_request(dev, stride, sectors_per_request):
    n = 1024  # 32 full warps
    res = _launch("gmem_stride_u32", (4,), (256,), gpusim.zeros(n * stride, np.uint32), gpusim.zeros(n, np.uint32),
                  np.uint32(n), np.uint32(stride))
    assert res.metrics[REQ] == 32
    assert res.metrics[SECT] == 32 * sectors_per_request


@pytest.mark.parametrize("offset, sectors_per_request", [(0, 4), (1, 5), (8, 4), (31, 5)])
def test_global_offset_sectors_per_request(dev, offset, sectors_per_request):
    n = 1024
    res = _launch("gmem_offset_u32", (4,), (256,), gpusim.zeros(n + 32, np.uint32), gpusim.zeros(n, np.uint32),
                  np.uint32(n), np.uint32(offset))
    assert res.metrics[SECT] == 32 * sectors_per_request


def test_warp_uniform_load_is_one_sector(dev):
    n = 1024
    res = _launch("gmem_uniform_u32", (4,), (256,), gpusim.zeros(n // 32, np.uint32), gpusim.zeros(n, np.uint32),
                  np.uint32(n))
    assert (res.metrics[REQ], res.metrics[SECT]) == (32, 32)


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_memory_counters_per_ptx_line_sum_to_the_launch_totals(mode):
    # The conflicted transpose at 64 x 64: every counter sits on its ld/st lines and the
    # per-line arrays add up to the launch's totals, in both engines.
    from gpusim.suite import CASES, run_case
    with gpusim.Device("h100", mode):
        (res,) = run_case(CASES["transpose_conflict"], gpusim, 64).launches
    k = gpusim.RawModule(path=PTX_DIR / "shared.ptx").get_function("transpose_conflict")
    kinds = [ins.mnemonic.split(".")[0] for ins in k.kernel.instrs]
    assert set(res.pc_metrics) == {n for n in res.metrics if n.startswith((
        "l1tex__t_requests", "l1tex__t_sectors", "l1tex__data", "smsp__inst_executed_op"))}
    for name, per_pc in res.pc_metrics.items():
        assert per_pc.shape == (len(kinds),) and int(per_pc.sum()) == res.metrics[name]
        assert all(kinds[pc] in ("ld", "st") for pc in np.flatnonzero(per_pc))
    (shared_ld,) = np.flatnonzero(res.pc_metrics[LD_WF])
    assert res.pc_metrics[LD_BC][shared_ld] == res.metrics[LD_BC] > 0


def test_pattern_memo_agrees_with_the_models_under_a_uniform_active_mask():
    """memops costs one warp per (pattern, active lanes, phase) and reuses it for every warp that
    repeats them (divergent code where all warps take the branch alike); per warp it must give
    exactly what the bank and sector models give for each warp on its own."""
    from gpusim.functional import memops
    from gpusim.memmodel import global_sectors, shared_wavefronts

    rng = np.random.default_rng(7)
    memops._PATTERNS.clear()   # patterns repeat between trials with other masks: the memo must tell them apart
    for trial in range(40):
        width = int(rng.choice([4, 8, 16]))
        mask = rng.random(32) < rng.uniform(0.2, 1.0)
        mask[rng.integers(32)] = True
        pattern = rng.integers(0, 64, 32) * width if trial % 2 else np.arange(32) * width * int(rng.integers(1, 5))
        bases = rng.integers(0, 1 << 12, 12) * width        # several phases modulo 128 and 32
        rows = (bases[:, None] + pattern[None, :]).astype(np.int64)
        rows[:, ~mask] = 0                                  # what _by_warp leaves on inactive lanes
        act = np.broadcast_to(mask, rows.shape).copy()
        for is_load in (True, False):
            per_warp, conflicts = memops._shared_cost(rows, width, is_load, act)
            direct = shared_wavefronts(rows, width, is_load, act)
            assert per_warp.tolist() == direct.wavefronts.tolist()
            assert conflicts == int(direct.conflicts.sum())
        g = rows.astype(np.uint64) + np.uint64(1 << 20)
        req, sec = memops._global_cost(g, width, act)
        direct = global_sectors(g, width, act)
        assert (req, sec) == (int(direct.requests.sum()), int(direct.sectors.sum()))
    assert memops._by_phase(rows, 128, act)[4] is not None   # the masked memo path was taken
    # the same addresses under two masks: 8-byte stores of every lane to one word are one unit
    # (half-warp) with lane 0 alone and two with lanes 0 and 16: 1 and 2 wavefronts a warp
    rows = np.zeros((4, 32), np.int64) + np.arange(4)[:, None] * 256
    for lanes, expect in (((0,), 1), ((0, 16), 2)):
        act = np.zeros((4, 32), bool)
        act[:, list(lanes)] = True
        assert memops._shared_cost(rows, 8, False, act)[0].tolist() == [expect] * 4
