"""The occupancy calculator against NVIDIA's driver and the header's worked examples.

Covers: gpusim.occupancy.max_active_blocks / max_potential_block_size /
max_block_size_for_registers / sweep / curves. Golden rows of hardware-facts §4.2; 100 %
agreement with every row the H100 driver produced (validation/reports/h100, made by
validation/probes/occupancy_table.py); hypothesis properties over all five shipped
configurations; the errors and zero results the driver gives for invalid inputs.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusim import config
from gpusim.errors import LaunchError
from gpusim.occupancy import (
    LIMITER_NAMES,
    curves,
    launch_carveout,
    max_active_blocks,
    max_block_size_for_registers,
    max_potential_block_size,
    sweep,
)

REPORTS = Path(__file__).resolve().parents[1] / "validation" / "reports" / "h100"
NAMES = config.available()
CONFIGS = {name: config.load(name) for name in NAMES}
H100 = CONFIGS["h100"]


def _rows(name: str) -> list[dict[str, str]]:
    with open(REPORTS / name, newline="") as fh:
        return list(csv.DictReader(fh))


# --- hardware-facts §4.2 worked examples ------------------------------------------------------


def test_golden_h100_smem_limited():
    r = max_active_blocks(H100, 96, 40, dynamic_smem=20000)
    assert (r.warps_per_block, r.registers_per_warp_allocated) == (3, 1280)
    assert (r.limit_registers, r.limit_shared_mem, r.limit_warps) == (16, 11, 21)
    assert (r.limit_blocks, r.limit_barriers) == (32, 64)
    assert r.shared_mem_per_block_allocated == 21120
    assert (r.blocks_per_sm, r.active_warps) == (11, 33)
    assert r.occupancy_pct == pytest.approx(51.5625)
    assert r.limiters == ("shared_mem",)


@pytest.mark.parametrize(
    "gpu, smem_alloc, smem_limit, warps_limit, blocks",
    [("v100", 20224, 4, 21, 4), ("a100", 21120, 7, 21, 7), ("rtx3090", 21120, 4, 16, 4), ("a5000", 21120, 4, 16, 4)],
)
def test_golden_same_kernel_other_gpus(gpu, smem_alloc, smem_limit, warps_limit, blocks):
    r = max_active_blocks(gpu, 96, 40, dynamic_smem=20000)
    assert r.limit_registers == 16
    assert (r.shared_mem_per_block_allocated, r.limit_shared_mem, r.limit_warps, r.blocks_per_sm) == (
        smem_alloc, smem_limit, warps_limit, blocks,
    )
    assert r.limit_barriers is None  # the barrier limit applies from cc 9.0 on


def test_golden_register_limited_with_sub_partition_rounding():
    r = max_active_blocks(H100, 64, 200)
    assert r.registers_per_warp_allocated == 6400
    assert (r.limit_registers, r.limit_shared_mem, r.limit_warps, r.blocks_per_sm) == (4, 228, 32, 4)
    assert r.limiters == ("registers",)


def test_golden_launch_fails_hardware_register_check():
    r = max_active_blocks(H100, 416, 168)
    assert (r.blocks_per_sm, r.limit_registers, r.limit_warps) == (0, 0, 4)
    assert r.limiters == ("registers",)
    assert r.reason == (
        "13 warps x 5376 registers per warp (rounded up to 16 warps for the 4 sub-partitions) = "
        "86016 registers exceed the 65536 a block may use"
    )
    assert max_block_size_for_registers(H100, 168) == 384


def test_golden_opt_in_dynamic_smem():
    r = max_active_blocks(H100, 128, 32, dynamic_smem=100000, max_dynamic_smem=100000)
    assert (r.shared_mem_per_block_allocated, r.limit_shared_mem, r.limit_registers, r.blocks_per_sm) == (
        101120, 2, 16, 2,
    )
    # Without the opt-in the same launch does not fit.
    r = max_active_blocks(H100, 128, 32, dynamic_smem=100000)
    assert r.blocks_per_sm == 0 and r.limiters == ("shared_mem",)
    assert "exceed the per-block limit of 50176 bytes; raise max_dynamic_smem" in r.reason


def test_golden_carveout_hint():
    r = max_active_blocks(H100, 64, 32, dynamic_smem=20000, carveout=50)
    assert (r.shared_mem_config_bytes, r.blocks_per_sm) == (135168, 6)
    # hardware-facts §4.1 (MEAS): 64 threads, 20000 B dynamic.
    got = [max_active_blocks(H100, 64, 32, dynamic_smem=20000, carveout=c).blocks_per_sm for c in (0, 10, 25, 50, 75, 100, -1)]
    assert got == [1, 1, 3, 6, 9, 11, 11]


@pytest.mark.parametrize("block, static, dynamic, hw_config", [
    # launch__shared_mem_config_size of suite launches on the H100 (validation/reports/h100/hardware_h100.json)
    (256, 0, 0, 32768),          # local_hist8, copy_vec4: the 32 KB floor, not the 228 KB preference
    (256, 1024, 0, 32768),       # reduce_v0
    (32, 0, 0, 32768),           # copy_block_size 32
    (256, 0, 174080, 200704),    # copy_occupancy, 1 block per SM
    (256, 0, 96256, 200704),     # 2 blocks
    (256, 0, 67072, 233472),     # 3 blocks
])
def test_launch_carveout_is_what_the_h100_driver_configured(block, static, dynamic, hw_config):
    occ = max_active_blocks(H100, block, 32, static_smem=static, dynamic_smem=dynamic, max_dynamic_smem=max(dynamic, 1))
    assert launch_carveout(H100, occ) == hw_config
    assert occ.shared_mem_config_bytes == 233472 or dynamic  # the occupancy calculator's own preference


def test_launch_carveout_keeps_an_explicit_preference():
    occ = max_active_blocks(H100, 64, 32, dynamic_smem=20000, carveout=50)
    assert launch_carveout(H100, occ) == occ.shared_mem_config_bytes == 135168


def test_register_limited_max_block_sizes_measured_on_h100():
    got = {r: max_block_size_for_registers(H100, r) for r in (251, 168, 128, 96, 80, 72)}
    assert got == {251: 256, 168: 384, 128: 512, 96: 640, 80: 768, 72: 896}


# --- the H100 driver table (validation/reports/h100) ------------------------------------------


def test_driver_table_agrees_on_every_row():
    rows = _rows("occupancy_h100.csv")
    assert len(rows) >= 1000
    mismatches = []
    for row in rows:
        n = {k: int(v) for k, v in row.items() if k not in ("kernel", "blocks", "error")}
        attr = None if n["attr_set"] == 0 else n["max_dynamic_smem"]
        args = (H100, n["block_size"], n["regs"], n["static_smem"], n["dynamic_smem"], attr, n["carveout"], 1)
        if row["error"]:
            try:
                max_active_blocks(*args)
            except LaunchError:
                continue
            mismatches.append((row, "no error"))
            continue
        r = max_active_blocks(*args)
        if r.blocks_per_sm != int(row["blocks"]) or r.max_dynamic_smem != n["max_dynamic_smem"]:
            mismatches.append((row, r.blocks_per_sm, r.max_dynamic_smem))
    assert mismatches == [], f"{len(mismatches)} of {len(rows)} rows disagree, e.g. {mismatches[:3]}"


def test_driver_table_covers_the_interesting_cases():
    rows = _rows("occupancy_h100.csv")
    assert len({r["regs"] for r in rows}) >= 25
    assert len({r["static_smem"] for r in rows}) >= 10
    assert {r["carveout"] for r in rows} >= {"-1", "0", "50", "100"}
    assert {r["attr_set"] for r in rows} == {"0", "1"}
    assert {r["error"] for r in rows} == {"", "CUDA_ERROR_INVALID_VALUE"}
    assert sum(r["blocks"] == "0" for r in rows) > 100


def test_driver_max_potential_block_size_agrees():
    rows = _rows("max_potential_h100.csv")
    assert len(rows) >= 1000
    for row in rows:
        n = {k: int(v) for k, v in row.items() if k not in ("kernel", "error")}
        attr = None if n["attr_set"] == 0 else n["max_dynamic_smem"]
        got = max_potential_block_size(H100, n["regs"], n["static_smem"], n["dynamic_smem"], n["block_size_limit"], attr)
        assert (got.block_size, got.min_grid_size) == (n["block_size"], n["min_grid_size"]), row


def test_driver_register_limited_block_size_agrees():
    for row in _rows("kernels_h100.csv"):
        assert max_block_size_for_registers(H100, int(row["num_regs"])) == int(row["max_threads_per_block"]), row
        if row["bar"] != "0":
            continue  # the barrier kernels only record their register count
        assert int(row["default_max_dynamic_smem"]) == 49152 - int(row["shared_size_bytes"])
        assert row["set_attr_over_max_error"] == "CUDA_ERROR_INVALID_VALUE"
        assert row["set_carveout_101_error"] == row["set_carveout_minus2_error"] == "CUDA_ERROR_INVALID_VALUE"


def test_driver_barrier_limit_agrees():
    # Kernels using `bar.sync N` use N + 1 barriers (ptxas -v: "used N+1 barriers").
    for row in _rows("barriers_h100.csv"):
        r = max_active_blocks(H100, int(row["block_size"]), int(row["regs"]), barriers=int(row["bar"]) + 1)
        assert r.blocks_per_sm == int(row["blocks"]), row
    r = max_active_blocks(H100, 32, 10, barriers=16)
    assert (r.limit_barriers, r.blocks_per_sm, r.limiters) == (4, 4, ("barriers",))


# --- invalid inputs: errors exactly where the driver errors, 0 where it answers 0 --------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(block_size=0), "block_size must be at least 1 thread, got 0"),
        (dict(block_size=-32), "block_size must be at least 1 thread, got -32"),
        (dict(regs_per_thread=256), "regs_per_thread must be 0..255 on h100 (sm.max_registers_per_thread), got 256"),
        (dict(regs_per_thread=-1), "regs_per_thread must be 0..255 on h100 (sm.max_registers_per_thread), got -1"),
        (dict(static_smem=-4), "static_smem must be >= 0 bytes, got -4"),
        (dict(dynamic_smem=-1), "dynamic_smem must be >= 0 bytes, got -1"),
        (
            dict(static_smem=49153),
            "static_smem=49153 bytes exceeds the static shared-memory limit of 49152 bytes per block on h100 "
            "(sm.shared_per_block_bytes; ptxas rejects such a kernel: use dynamic shared memory)",
        ),
        (
            dict(max_dynamic_smem=232449),
            "max_dynamic_smem=232449 bytes is out of range: the driver accepts 0..232448 "
            "(sm.shared_per_block_optin_bytes 232448 - static_smem 0); cudaFuncSetAttribute fails with "
            "cudaErrorInvalidValue",
        ),
        (dict(carveout=101), "carveout must be -1 (default) or a percentage 0..100, got 101"),
        (dict(carveout=-2), "carveout must be -1 (default) or a percentage 0..100, got -2"),
        (dict(barriers=17), "barriers must be 0..16 per block, got 17"),
        (dict(block_size=128.0), "block_size must be an integer, got 128.0"),
        (dict(regs_per_thread=True), "regs_per_thread must be an integer, got True"),
    ],
)
def test_invalid_inputs_raise_launch_error(kwargs, message):
    args = dict(gpu=H100, block_size=128, regs_per_thread=32)
    args.update(kwargs)
    with pytest.raises(LaunchError) as err:
        max_active_blocks(**args)
    assert str(err.value) == message


def test_zero_results_where_the_driver_answers_zero():
    for block in (1025, 2048):
        r = max_active_blocks(H100, block, 32)
        assert (r.blocks_per_sm, r.limit_warps, r.limiters) == (0, 0, ("warps",))
        assert r.reason == f"block of {block} threads exceeds max_threads_per_block (1024)"
    r = max_active_blocks(H100, 128, 32, dynamic_smem=100001, max_dynamic_smem=100000)
    assert r.blocks_per_sm == 0
    assert r.reason == (
        "dynamic_smem=100001 bytes exceeds the kernel's max_dynamic_smem attribute (100000 bytes; "
        "the driver allows up to 232448)"
    )
    r = max_active_blocks(H100, 128, 32, dynamic_smem=232449, max_dynamic_smem=232448)
    assert r.blocks_per_sm == 0 and r.limiters == ("shared_mem",)


def test_lowered_attribute_is_not_checked_like_the_driver():
    # H100 driver: attribute lowered below its default, launch asks for more -> still counted.
    r = max_active_blocks(H100, 672, 37, dynamic_smem=31360, max_dynamic_smem=31359)
    assert r.blocks_per_sm == 2


def test_max_potential_block_size_examples():
    p = max_potential_block_size(H100, 32)
    assert (p.block_size, p.min_grid_size, p.blocks_per_sm, p.occupancy) == (1024, 264, 2, 1.0)
    p = max_potential_block_size(H100, 168)
    assert p.block_size == 384 and p.blocks_per_sm == 1
    p = max_potential_block_size(H100, 32, block_size_limit=100)
    assert p.block_size == 64  # 100 -> 3 blocks x 100 = 300 < 32 x 64 = 2048 threads
    p = max_potential_block_size(H100, 32, dynamic_smem=lambda b: 64 * b)
    assert p.result is not None and p.result.dynamic_smem == 64 * p.block_size
    p = max_potential_block_size(H100, 32, dynamic_smem=60000)
    assert (p.block_size, p.min_grid_size, p.result) == (0, 0, None)
    with pytest.raises(LaunchError, match="block_size_limit must be >= 0"):
        max_potential_block_size(H100, 32, block_size_limit=-1)


# --- hypothesis properties over every shipped configuration -----------------------------------

gpus = st.sampled_from(NAMES)
blocks = st.integers(1, 1024)
regs = st.integers(0, 255)
statics = st.integers(0, 48 * 1024)
carveouts = st.sampled_from([-1, 0, 10, 25, 50, 75, 100])


def _dyn_limit(cfg, static):
    return cfg.sm.shared_per_block_optin_bytes - static


@settings(max_examples=150, deadline=None)
@given(gpus, blocks, regs, regs, statics, st.integers(0, 240_000), carveouts, st.booleans())
def test_monotone_in_registers(name, block, r1, r2, static, dyn, carveout, opt_in):
    cfg = CONFIGS[name]
    static = min(static, cfg.sm.shared_per_block_bytes)
    attr = _dyn_limit(cfg, static) if opt_in else None
    lo, hi = sorted((r1, r2))
    a = max_active_blocks(cfg, block, lo, static, dyn, attr, carveout)
    b = max_active_blocks(cfg, block, hi, static, dyn, attr, carveout)
    assert b.blocks_per_sm <= a.blocks_per_sm


@settings(max_examples=150, deadline=None)
@given(gpus, blocks, regs, statics, st.integers(0, 240_000), st.integers(0, 240_000), carveouts, st.booleans())
def test_monotone_in_dynamic_shared_memory(name, block, r, static, d1, d2, carveout, opt_in):
    cfg = CONFIGS[name]
    static = min(static, cfg.sm.shared_per_block_bytes)
    attr = _dyn_limit(cfg, static) if opt_in else None
    lo, hi = sorted((d1, d2))
    a = max_active_blocks(cfg, block, r, static, lo, attr, carveout)
    b = max_active_blocks(cfg, block, r, static, hi, attr, carveout)
    assert b.blocks_per_sm <= a.blocks_per_sm


@settings(max_examples=150, deadline=None)
@given(gpus, blocks, regs, statics, statics, st.integers(0, 100_000), carveouts)
def test_monotone_in_static_shared_memory(name, block, r, s1, s2, dyn, carveout):
    cfg = CONFIGS[name]
    lo, hi = sorted((min(s1, cfg.sm.shared_per_block_bytes), min(s2, cfg.sm.shared_per_block_bytes)))
    a = max_active_blocks(cfg, block, r, lo, dyn, None, carveout)
    b = max_active_blocks(cfg, block, r, hi, dyn, None, carveout)
    assert b.blocks_per_sm <= a.blocks_per_sm


@settings(max_examples=300, deadline=None)
@given(gpus, st.integers(1, 1100), regs, statics, st.integers(0, 240_000), carveouts, st.booleans(), st.integers(0, 16))
def test_never_above_any_limit(name, block, r, static, dyn, carveout, opt_in, barriers):
    cfg = CONFIGS[name]
    sm = cfg.sm
    static = min(static, sm.shared_per_block_bytes)
    attr = _dyn_limit(cfg, static) if opt_in else None
    res = max_active_blocks(cfg, block, r, static, dyn, attr, carveout, barriers)
    assert 0 <= res.blocks_per_sm <= sm.max_blocks
    assert res.active_warps == res.blocks_per_sm * res.warps_per_block <= sm.max_warps
    assert 0.0 <= res.occupancy <= 1.0
    limits = {n: res.limit(n) for n in LIMITER_NAMES}
    assert all(v is None or res.blocks_per_sm <= v for v in limits.values())
    assert res.limiters and all(limits[n] == res.blocks_per_sm for n in res.limiters)
    assert (res.blocks_per_sm == 0) == bool(res.reason)
    if res.blocks_per_sm:
        assert res.active_warps * res.registers_per_warp_allocated <= sm.registers
        assert res.blocks_per_sm * res.shared_mem_per_block_allocated <= max(sm.shared_carveouts_bytes)
        assert res.blocks_per_sm * res.shared_mem_per_block_allocated <= res.shared_mem_config_bytes
        assert block <= max_block_size_for_registers(cfg, r) or block > cfg.max_threads_per_block


# --- sweeps and curves --------------------------------------------------------------------------


def test_sweep_is_the_cartesian_product_in_argument_order():
    res = sweep(H100, block_size=[128, 256], regs_per_thread=range(32, 65, 16), dynamic_smem=0)
    assert [(r.block_size, r.regs_per_thread) for r in res] == [
        (128, 32), (128, 48), (128, 64), (256, 32), (256, 48), (256, 64),
    ]
    with pytest.raises(LaunchError, match="regs_per_thread: empty sweep range"):
        sweep(H100, block_size=128, regs_per_thread=[])


def test_curves_cover_the_three_axes_and_contain_the_launch():
    data = curves(H100, 100, 40, dynamic_smem=20000)
    sizes = [x for x, _ in data["block_size"]]
    assert sizes[0] == 32 and sizes[-1] == 1024 and 100 in sizes and len(sizes) == 33
    assert [x for x, _ in data["registers"]] == list(range(1, 256))
    smem = [x for x, _ in data["shared_mem"]]
    assert smem[0] == 0 and smem[-1] == 232448 and 20000 in smem
    launch = max_active_blocks(H100, 100, 40, dynamic_smem=20000)
    assert dict(data["block_size"])[100] == launch
    assert dict(data["registers"])[40].blocks_per_sm == launch.blocks_per_sm
    assert dict(data["shared_mem"])[20000].blocks_per_sm == launch.blocks_per_sm


def test_result_helpers():
    r = max_active_blocks("h100", 256, 30)
    assert r.registers_per_thread_allocated == 32
    assert r.limited_by == "warps, registers"
    metrics = r.ncu_metrics()
    assert metrics["launch__occupancy_limit_registers"] == 8
    assert metrics["launch__registers_per_thread_allocated"] == 32
    assert metrics["sm__maximum_warps_per_active_cycle_pct"] == 100.0
    row = r.as_row()
    assert row["limiters"] == "warps+registers" and row["occupancy_pct"] == 100.0
    with pytest.raises(KeyError):
        r.limit("threads")
    v100 = max_active_blocks("v100", 256, 30)
    assert v100.limit_shared_mem is None and v100.shared_mem_per_block_allocated == 0


def test_overrides_change_the_answer_like_another_gpu():
    small = H100.with_overrides({"sm.max_warps": 48, "sm.max_blocks": 16})
    r = max_active_blocks(small, 256, 32)
    assert (r.limit_warps, r.limit_blocks, r.blocks_per_sm, r.max_warps) == (6, 16, 6, 48)


def test_pure_layers_do_not_import_simpy_or_cupy():
    import subprocess
    import sys

    code = (
        "import sys, gpusim.config, gpusim.occupancy, gpusim.ptxas, gpusim.cli.occupancy; "
        "print(sorted(m for m in ('simpy', 'cupy', 'matplotlib') if m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True)
    assert out.stdout.strip() == "[]"
