"""``gpusim occupancy`` end to end: table, JSON, sweeps to CSV, charts, overrides and errors.

Covers: gpusim/cli/occupancy.py through gpusim.cli.main (exit status 2 and one
``gpusim occupancy: error: ...`` line for user mistakes), the start:stop:step syntax, the
CSV overwrite guard, the three PNG charts, a PTX kernel with ptxas (marked ``ptxas``) and
without it (``--regs`` plus the ``.shared`` declarations).
"""

from __future__ import annotations

import csv
import json

import pytest

from gpusim import ptxas
from gpusim.cli import main
from gpusim.cli.occupancy import parse_spec
from gpusim.errors import GpusimError

PTX = """\
.version 8.0
.target sm_80
.address_size 64
.visible .entry stage(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    .shared .align 4 .b8 tile[4096];
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    st.shared.u32 [tile], %r1;
    bar.sync 0;
    ld.shared.u32 %r3, [tile+4];
    st.global.u32 [%rd1], %r3;
    ret;
}
.visible .entry other() { ret; }
"""


def run(capsys, *argv):
    code = main(["occupancy", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_parse_spec():
    assert parse_spec("256", "--block-size") == [256]
    assert parse_spec("64:1024:32", "--block-size")[:3] == [64, 96, 128]
    assert parse_spec("64:1024:32", "--block-size")[-1] == 1024  # STOP is inclusive
    assert parse_spec("16:255:8", "--regs")[-1] == 248
    assert parse_spec("1:3,8,0x10", "--regs") == [1, 2, 3, 8, 16]
    with pytest.raises(GpusimError, match=r"--regs 'x': expected an integer, START:STOP\[:STEP\] or a comma list"):
        parse_spec("x", "--regs")
    with pytest.raises(GpusimError, match=r"STEP must be positive"):
        parse_spec("1:9:0", "--regs")
    with pytest.raises(GpusimError, match=r"STOP is below START"):
        parse_spec("9:1", "--regs")


def test_table_like_nsight(capsys):
    code, out, _ = run(capsys, "--gpu", "h100", "--block-size", 256, "--regs", 32, "--smem", 0, "--dynamic-smem", 0)
    assert code == 0
    assert out.splitlines()[0] == "GPU: h100 (NVIDIA H100 SXM5 80GB HBM3, sm_90, 132 SMs)"
    assert "  Section: Occupancy" in out
    lines = {line.split("  ")[1].strip(): line for line in out.splitlines() if line.startswith("  Block Limit")}
    assert lines["Block Limit Registers"].endswith("8  <- limiter")
    assert lines["Block Limit Warps"].endswith("8  <- limiter")
    assert lines["Block Limit Shared Mem"].endswith("228")
    assert lines["Block Limit SM"].endswith("32")
    assert lines["Block Limit Barriers"].endswith("64")
    assert "Theoretical Occupancy                                 %          100" in out
    assert out.rstrip().endswith(
        "Limited by warps, registers (launch__occupancy_limit_warps = launch__occupancy_limit_registers = 8 blocks)"
    )


def test_impossible_launch_explains_why(capsys):
    code, out, _ = run(capsys, "--block-size", 416, "--regs", 168)
    assert code == 0
    assert "Launch impossible: 13 warps x 5376 registers per warp" in out


def test_json_output(capsys):
    code, out, _ = run(capsys, "--gpu", "a100", "--block-size", 96, "--regs", 40, "--dynamic-smem", 20000, "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["blocks_per_sm"] == 7 and data["limiters"] == "shared_mem"
    assert data["ncu_metrics"]["launch__occupancy_limit_shared_mem"] == 7


def test_overrides(capsys):
    code, out, _ = run(capsys, "--block-size", 256, "--regs", 32, "--set", "sm.max_warps=48", "--set", "sm.max_blocks=16")
    assert code == 0
    assert "Overrides: sm.max_warps=48, sm.max_blocks=16" in out
    assert "Theoretical Active Warps per SM                    warp           48" in out


def test_sweep_csv_and_overwrite_guard(capsys, tmp_path):
    target = tmp_path / "sweep.csv"
    code, out, _ = run(capsys, "--block-size", "64:1024:32", "--regs", "16:255:8", "--csv", target)
    assert code == 0
    assert out.startswith(f"930 configurations on h100 (NVIDIA H100 SXM5 80GB HBM3, sm_90, 132 SMs) written to {target}")
    with open(target, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 31 * 30
    first = rows[0]
    assert (first["block_size"], first["regs_per_thread"], first["blocks_per_sm"], first["limiters"]) == (
        "64", "16", "32", "warps+blocks",
    )
    assert rows[-1]["block_size"] == "1024" and rows[-1]["regs_per_thread"] == "248"
    before = target.read_text()
    code, _, err = run(capsys, "--block-size", "64,128", "--regs", 32, "--csv", target)
    assert code == 2 and err == f"gpusim occupancy: error: {target} exists; pass --force to overwrite it\n"
    assert target.read_text() == before
    code, _, _ = run(capsys, "--block-size", "64,128", "--regs", 32, "--csv", target, "--force")
    assert code == 0 and len(target.read_text().splitlines()) == 3


def test_sweep_without_csv_prints_csv(capsys):
    code, out, _ = run(capsys, "--block-size", 128, "--regs", 32, "--smem", "0:2048:1024")
    rows = list(csv.DictReader(out.splitlines()))
    assert code == 0 and [r["static_smem"] for r in rows] == ["0", "1024", "2048"]
    assert rows[0]["limit_shared_mem"] == "228" and rows[0]["reason"] == ""


def test_plot_writes_three_pngs(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    code, out, _ = run(capsys, "--block-size", 96, "--regs", 40, "--dynamic-smem", 20000, "--plot", tmp_path / "charts")
    assert code == 0
    names = ["occupancy_block_size.png", "occupancy_registers.png", "occupancy_shared_mem.png"]
    for name in names:
        path = tmp_path / "charts" / name
        assert f"wrote {path}" in out
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--regs", 32], "--block-size is required (threads per block, e.g. --block-size 256)"),
        (["--block-size", 256], "--regs is required without a PTX file (registers per thread, e.g. --regs 32)"),
        (["--block-size", 0, "--regs", 32], "block_size must be at least 1 thread, got 0"),
        (["--block-size", 256, "--regs", 300], "regs_per_thread must be 0..255 on h100 (sm.max_registers_per_thread), got 300"),
        (["--block-size", 256, "--regs", 32, "--smem", -1], "static_smem must be >= 0 bytes, got -1"),
        (["--block-size", "64:128:32", "--regs", 32, "--plot", "x"],
         "--plot draws one launch; give single values, not ranges, with --plot"),
        (["--block-size", 256, "--regs", 32, "--kernel", "k"], "--kernel needs a PTX file"),
        (["--gpu", "h10", "--block-size", 256, "--regs", 32], "unknown GPU configuration 'h10'; did you mean 'h100'?"),
        (["--block-size", 256, "--regs", 32, "--set", "sm.max_warps=-4"],
         "override sm.max_warps=-4: sm.max_warps: Input should be greater than or equal to 1 (got -4)"),
    ],
)
def test_user_errors_exit_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith(f"gpusim occupancy: error: {message}")


def test_ptx_without_ptxas_uses_regs_and_shared_declarations(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(ptxas, "find_ptxas", lambda: None)
    path = tmp_path / "k.ptx"
    path.write_text(PTX)
    code, _, err = run(capsys, path, "--block-size", 256)
    assert code == 2 and "has 2 kernels; choose one with --kernel (stage, other)" in err
    code, _, err = run(capsys, path, "--kernel", "stage", "--block-size", 256)
    assert code == 2 and err == "gpusim occupancy: error: ptxas not found: give the registers per thread with --regs N\n"
    code, _, err = run(capsys, path, "--kernel", "nope", "--block-size", 256)
    assert code == 2 and "no kernel 'nope' (kernels: stage, other)" in err
    code, out, _ = run(capsys, path, "--kernel", "stage", "--block-size", 256, "--regs", 32, "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["static_smem"] == 4096 and data["regs_per_thread"] == 32
    assert "ptxas not found" in data["kernel"]


@pytest.mark.ptxas
@pytest.mark.skipif(ptxas.find_ptxas() is None, reason="no ptxas on this machine")
def test_ptx_with_ptxas(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "k.ptx"
    path.write_text(PTX)
    code, out, _ = run(capsys, path, "--kernel", "stage", "--gpu", "a100", "--block-size", 256, "--format", "json")
    data = json.loads(out)
    usage = ptxas.resource_usage(path, "sm_80")["stage"]
    assert code == 0
    assert (data["regs_per_thread"], data["static_smem"], data["barriers"]) == (usage.registers, 4096, 1)
    assert data["kernel"].startswith(f"stage in {path}: ptxas -arch=sm_80 reports {usage.registers} registers")
    code, out, _ = run(capsys, path, "--kernel", "stage", "--gpu", "a100", "--block-size", 256, "--regs", 64)
    assert code == 0 and "Registers Per Thread                    register/thread           64" in out
    # PTX for sm_80 cannot be assembled for sm_70 by CUDA 13's ptxas (or for a lower target):
    code, _, err = run(capsys, path, "--kernel", "stage", "--gpu", "v100", "--block-size", 256)
    assert code == 2 and err.startswith(f"gpusim occupancy: error: ptxas failed on {path} for sm_70")
