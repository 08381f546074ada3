"""Load footprints of CTAs (gpusim.functional.footprint), memory snapshots and the sampler's
slice of CTAs: the inputs of sampled timing, checked against what the kernels must touch."""

from __future__ import annotations

import numpy as np

import gpusim
from gpusim.functional.engine import Grid
from gpusim.functional.footprint import run_footprints
from gpusim.functional.launch import memory_counters, run_functional
from gpusim.suite import PTX_DIR
from gpusim.timing.sampling import slice_blocks


def _matmul_tiled(n: int):
    dev = gpusim.Device("h100")
    with dev:
        k = gpusim.RawModule(path=str(PTX_DIR / "matmul.ptx")).get_function("matmul_tiled")
        a = gpusim.asarray(np.arange(n * n, dtype=np.float32).reshape(n, n))
        b = gpusim.asarray(np.ones((n, n), np.float32))
        c = gpusim.zeros((n, n), np.float32)
        params = k._pack(dev, (c, a, b, np.int32(n), np.int32(n), np.int32(n)))  # out = M @ N
    return dev, k.kernel, params, a, b, c


def test_footprints_are_the_tiles_each_cta_loads_in_step_order_and_the_run_is_functional():
    n = 64
    dev, kernel, params, a, b, c = _matmul_tiled(n)
    grid = Grid((4, 4, 1), (16, 16, 1))
    counters = (np.zeros(len(kernel.instrs) + 1, np.int64), np.zeros(len(kernel.instrs) + 1, np.int64))
    fp = run_footprints(kernel, grid, params, dev.memory, 0, 132, 64, 10**6, 0, grid.n_blocks, counters,
                        memory_counters())
    assert sorted(fp) == list(range(16))
    for cta in (0, 6, 15):
        bx, by = cta % 4, cta // 4
        rows_a = {(a.data.ptr + 4 * (r * n + col)) // 32 for r in range(16 * by, 16 * by + 16) for col in range(n)}
        cols_b = {(b.data.ptr + 4 * (r * n + col)) // 32 for r in range(n) for col in range(16 * bx, 16 * bx + 16)}
        sectors, steps, stored, written = fp[cta]
        assert np.all(written == 0xFFFFFFFF)  # C's tile rows are 64 B: whole sectors; loads count as whole
        tile_c = {(c.data.ptr + 4 * (r * n + col)) // 32 for r in range(16 * by, 16 * by + 16)
                  for col in range(16 * bx, 16 * bx + 16)}
        assert set(sectors[~stored].tolist()) == rows_a | cols_b and (~stored).sum() == len(rows_a | cols_b)
        assert set(sectors[stored].tolist()) == tile_c and stored.sum() == len(tile_c)
        assert np.all(np.diff(steps) >= 0) and steps.max() == 8  # 4 tiles x (A, B), then C
        assert np.all(steps[stored] == 8) and np.all(steps[~stored] < 8)
        first_a = {(a.data.ptr + 4 * (r * n + col)) // 32 for r in range(16 * by, 16 * by + 16) for col in range(16)}
        assert set(sectors[steps == 0].tolist()) == first_a  # the first load step: A's first tile
    # The recording run is a functional run: same results and counters as run_functional.
    got = c.get().copy()
    c2 = dev.memory.snapshot()
    ref_counts = run_functional(kernel, grid, params, c2, 0, 132, 64, 10**6)
    assert np.array_equal(got, a.get() @ b.get())
    assert np.array_equal(counters[0][:-1], ref_counts.inst_executed)


def test_dropping_repeats_early_keeps_the_footprints(monkeypatch):
    from gpusim.functional import footprint
    dev, kernel, params, *_ = _matmul_tiled(64)
    grid = Grid((4, 4, 1), (16, 16, 1))

    def run():
        counters = (np.zeros(len(kernel.instrs) + 1, np.int64), np.zeros(len(kernel.instrs) + 1, np.int64))
        return run_footprints(kernel, grid, params, dev.memory.snapshot(), 0, 132, 64, 10**6, 0, 16, counters,
                              memory_counters())
    whole = run()
    monkeypatch.setattr(footprint._Recorder, "COMPACT", 100)  # compact after almost every step
    compacted = run()
    assert whole.keys() == compacted.keys()
    for c in whole:
        assert all(np.array_equal(x, y) for x, y in zip(whole[c], compacted[c]))


def test_a_snapshot_is_a_copy_at_the_same_addresses():
    dev, kernel, params, a, b, c = _matmul_tiled(32)
    snap = dev.memory.snapshot()
    assert [x.base for x in snap.allocations] == [x.base for x in dev.memory.allocations]
    x = snap.find(a.data.ptr)
    x.data[:] = 0
    assert a.get().any() and not x.data.any()


def test_the_slice_is_what_the_first_sms_get_round_robin():
    assert slice_blocks(10, 4, 2).tolist() == [0, 1, 4, 5, 8, 9]
    assert slice_blocks(300, 132, 8).tolist() == list(range(8)) + list(range(132, 140)) + list(range(264, 272))
