"""gpusim step: one warp walked issue by issue (masks, registers, banks/sectors, stalls)."""

from __future__ import annotations

import numpy as np
import pytest

from gpusim.errors import GpusimError
from gpusim.lessons.step import walk

ODD = np.arange(32) % 2 == 1


@pytest.fixture(scope="module")
def divergent():
    return walk("divergent_branch", 1)


def test_divergent_branch_runs_each_side_with_its_lanes_then_reconverges(divergent):
    masks = [i.mask for i in divergent.issues]
    odd = [k for k, m in enumerate(masks) if np.array_equal(m, ODD)]
    even = [k for k, m in enumerate(masks) if np.array_equal(m, ~ODD)]
    assert odd and even                                   # both sides issued, each with half the lanes
    first, last = min(odd + even), max(odd + even)
    assert masks[first - 1].all()                         # the branch itself: the whole warp
    assert any(m.all() for m in masks[last + 1:])         # min-PC reconvergence: the whole warp again
    assert all(not m.all() for m in masks[first:last + 1])
    # the side that ran first is the lower PC (min-PC): its PCs are below the other side's
    a, b = (odd, even) if odd[0] < even[0] else (even, odd)
    assert divergent.issues[a[0]].pc < divergent.issues[b[0]].pc


def test_registers_written_are_the_lanes_values(divergent):
    tid = next(i for i in divergent.issues if "%tid.x" in i.ptx)
    (reg, lanes, vals, ty), = tid.writes
    assert (reg, ty) == ("%r1", "u32")
    np.testing.assert_array_equal(lanes, np.arange(32))
    np.testing.assert_array_equal(vals, 32 + np.arange(32))   # warp 1: threads 32..63
    assert all(i.cycle is not None for i in divergent.issues)


def test_conflicted_column_read_hits_one_bank_in_32_wavefronts():
    w = walk("transpose_conflict", 1)
    sh = [i for i in w.issues if i.space == "shared"]
    st, ld = next(i for i in sh if i.op == "st"), next(i for i in sh if i.op == "ld")
    np.testing.assert_array_equal(np.sort(st.units), np.arange(32))    # row write: 32 banks, 1 wavefront
    assert st.cost == 1
    assert len(set(ld.units.tolist())) == 1 and ld.cost == 32           # column read: one bank, 32-way
    g = next(i for i in w.issues if i.space == "global" and i.op == "ld")
    assert g.cost == 4 and g.served                                     # 128 contiguous bytes: 4 sectors


def test_bad_arguments_are_named(capsys):
    from gpusim.cli import main

    with pytest.raises(GpusimError, match=r"--warp 8: a CTA of divergent_branch has 8 warp\(s\) \(0..7\)"):
        walk("divergent_branch", 8)
    with pytest.raises(GpusimError, match="--cta 99"):
        walk("divergent_branch", 0, cta=99)
    assert main(["step", "nope"]) == 2
    assert "unknown suite case 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:  # argparse's type check: usage and one error line
        main(["step", "divergent_branch", "--warp", "-1"])
    assert exit_.value.code == 2 and "--warp: must be an integer >= 0, got -1" in capsys.readouterr().err


def test_cli_prints_masks_registers_and_banks(capsys):
    from gpusim.cli import main

    assert main(["step", "transpose_conflict", "--warp", "1", "--only-memory", "--max", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n#") == 3 and "32 wavefront(s)" in out and "wrote %f2" in out and "bank" in out
