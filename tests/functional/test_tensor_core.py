"""mma.sync and ldmatrix end to end: the probe kernels of validation/probes/tensor_core.ptx (nvcc
-ptx, unmodified) run in gpusim on the inputs the H100 ran, and give the H100's outputs bit for bit
(validation/reports/h100/tensor_core/tensor_core_numerics.h100.npz)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import KernelFault

ROOT = Path(__file__).resolve().parents[2]
PTX = ROOT / "validation" / "probes" / "tensor_core.ptx"
NPZ = ROOT / "validation" / "reports" / "h100" / "tensor_core" / "tensor_core_numerics.h100.npz"


@pytest.fixture(scope="module")
def gpu():
    return np.load(NPZ)


@pytest.fixture(scope="module")
def mod():
    with gpusim.Device("h100"):
        yield gpusim.RawModule(path=str(PTX))


@pytest.mark.parametrize("kern", ["mma_f32_f16", "mma_f32_bf16", "mma_f16_f16"])
@pytest.mark.parametrize("name", ["wide", "special"])
def test_mma_kernels_reproduce_the_h100(gpu, mod, kern, name):
    A, Bt, C, D = (gpu[f"{kern}/{name}/{k}"] for k in ("A", "Bt", "C", "D"))
    T = 32                                   # the first 32 tiles: 32 warps, 8 CTAs of 128 threads
    with gpusim.Device("h100"):
        d = gpusim.zeros(C[:T].shape, C.dtype)
        mod.get_function(kern)((T // 4,), (128,), (gpusim.asarray(A[:T]), gpusim.asarray(Bt[:T]), gpusim.asarray(C[:T]), d))
        got = d.get()
    assert got.tobytes() == D[:T].tobytes()


def test_ldmatrix_layouts_reproduce_the_h100(gpu, mod):
    with gpusim.Device("h100"):
        out = gpusim.zeros(6 * 32 * 4, np.uint32)
        mod.get_function("ldmatrix_layout")((1,), (32,), (gpusim.asarray(gpu["ldmatrix/perm"]), out))
        got = out.get().reshape(6, 32, 4)
    want = gpu["ldmatrix/out"]
    for v, n in enumerate((1, 2, 4, 1, 2, 4)):   # registers past .xN are never written
        assert np.array_equal(got[v][:, :n], want[v][:, :n])


def test_mma_with_a_diverged_lane_faults(tmp_path):
    src = PTX.read_text()
    # guard the first mma with a predicate that is false in lane 5 only
    start = src.index(".visible .entry mma_f32_f16")
    i = src.index("mma.sync.aligned", start)
    patched = src[:i] + "@%p_odd " + src[i:]
    j = src.index("{", start)
    patched = patched[:j + 1] + "\n\t.reg .pred %p_odd;\n\t.reg .b32 %r_tid;\n\tmov.u32 %r_tid, %tid.x;\n" \
        "\tsetp.ne.u32 %p_odd, %r_tid, 5;\n" + patched[j + 1:]
    f = tmp_path / "diverged.ptx"
    f.write_text(patched)
    with gpusim.Device("h100"):
        m = gpusim.RawModule(path=str(f))
        z = gpusim.zeros(256 * 4, np.uint16)
        with pytest.raises(KernelFault, match="mma.sync"):
            m.get_function("mma_f32_f16")((1,), (32,), (z, z, gpusim.zeros(128, np.float32), gpusim.zeros(128, np.float32)))
