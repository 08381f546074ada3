"""isa-level tests of the instructions Triton's fp16 matmul needs beyond mma.sync/ldmatrix: the
opcode rows and parser rules of cp.async (+ commit/wait groups), wgmma.* , fence.proxy.async and
stmatrix, and :mod:`isa.mma`'s wgmma descriptors, swizzled shared-memory layouts, accumulator
fragments and arithmetic, each against an independent construction."""

from __future__ import annotations

import numpy as np
import pytest

from isa import PTXError, parse
from isa import mma as M

HEAD = ".version 8.7\n.target sm_90a\n.address_size 64\n"


def _kernel(body: str, regs: str = "") -> str:
    return (HEAD + ".visible .entry k(.param .u64 p)\n{\n.reg .pred %p<4>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<8>;\n"
            + regs + body + "\nret;\n}\n")


def _ops(ptx: str) -> list[str]:
    return [i.op for i in parse(ptx).kernels["k"].instrs][:-1]   # without the final ret


def test_cp_async_forms_parse_to_their_rows():
    ops = _ops(_kernel("cp.async.ca.shared.global [%r1], [%rd1], 4;\n"
                       "cp.async.ca.shared::cta.global.L2::128B [%r1], [%rd1], 8, %r2;\n"
                       "cp.async.cg.shared.global [%r1], [%rd1], 16, %p1;\n"
                       "cp.async.cg.shared.global.L2::cache_hint [%r1], [%rd1], 16, %r2, %rd2;\n"
                       "cp.async.commit_group;\ncp.async.wait_group 2;\ncp.async.wait_all;\n"
                       "fence.proxy.async.shared::cta;\nfence.proxy.async;\n"
                       "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r1], {%r2, %r3};\n"))
    assert ops == ["cp.async"] * 4 + ["cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all",
                                      "fence.proxy.async", "fence.proxy.async", "stmatrix"]


def test_wgmma_forms_parse():
    d = "{" + ", ".join(f"%r{i}" for i in range(8)) + "}"
    ops = _ops(_kernel(f"wgmma.fence.sync.aligned;\n"
                       f"wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {d}, %rd1, %rd2, %p1, 1, 1, 0, 1;\n"
                       f"wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {d}, {{%r8, %r9, %r10, %r11}}, %rd2, %p2, 1, -1, 0;\n"
                       "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n"))
    assert ops == ["wgmma.fence", "wgmma.mma_async", "wgmma.mma_async", "wgmma.commit_group", "wgmma.wait_group"]


@pytest.mark.parametrize("line, message", [
    ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 16, [%r2];",
     "unsupported instruction 'cp'"),
    ("cp.async.shared.global [%r1], [%rd1], 16;", r"needs exactly one of \.ca/\.cg"),
    ("cp.async.ca.shared.global [%r1], [%rd1], 4, %r2, %rd2;", "five operands needs .L2::cache_hint"),
    ("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.bf16 {%r1, %r2}, %rd1, %rd2, 1, 1, 1, 0, 0;",
     "type combination .f32.f16.bf16 is not supported"),
    ("wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16 {%r1, %r2}, %rd1, %rd2, 1, 1, 1, 0, 0;",
     r"unsupported modifier \.m64n12k16"),
    ("mbarrier.init.shared.b64 [%r1], 1;", "unsupported instruction 'mbarrier'"),
])
def test_unsupported_forms_are_ptx_errors_naming_themselves(line, message):
    with pytest.raises(PTXError, match=message):
        parse(_kernel(line))


def test_descriptor_fields():
    # Triton 3.6's sm_90a matmul (tests/functional/ptx/triton_matmul_sm90a.ptx): A = 0x8000002000000000 | addr >> 4
    f = M.wgmma_descriptor(0x8000002000000002)
    assert f == {"start": 32, "lbo": 0, "sbo": 512, "base_offset": 0, "swizzle": 64}
    f = M.wgmma_descriptor((1 << 62) | (64 << 32) | (3 << 16) | 0x80)
    assert f == {"start": 2048, "lbo": 48, "sbo": 1024, "base_offset": 0, "swizzle": 128}
    with pytest.raises(ValueError, match="base offset 1"):
        M.wgmma_smem_offsets((1 << 49) | (1 << 62), 64, False)


@pytest.mark.parametrize("sw", [0, 32, 64, 128])
def test_k_major_offsets_match_a_written_out_layout(sw):
    """K-major, as PTX's pictures draw it: 8-row core matrices of 16-byte rows (no swizzle: the two
    k-halves LBO apart, core matrices down M SBO apart); with a swizzle, rows of ``sw`` bytes whose
    16-byte chunk index is XORed with the row's 128-byte line index (mod sw / 16)."""
    sbo, lbo = 8 * max(sw, 16), 2048
    desc = (4096 >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | ({0: 0, 128: 1, 64: 2, 32: 3}[sw] << 62)
    got = M.wgmma_smem_offsets(desc, 64, False)
    want = np.zeros((64, 16), np.int64)
    for i in range(64):
        for k in range(16):
            if sw == 0:
                want[i, k] = 4096 + (i // 8) * sbo + (i % 8) * 16 + (k // 8) * lbo + (k % 8) * 2
            else:
                row = 4096 + (i // 8) * sbo + (i % 8) * sw               # this row's first byte
                line = (row >> 7) % (sw // 16)                           # the XOR pattern's row
                chunk_in_row = (row % 128) // 16 + k // 8                # chunk index within its 128-byte line
                want[i, k] = (row & ~127) + ((chunk_in_row ^ line) * 16) + (k % 8) * 2
    assert np.array_equal(got, want)
    assert np.unique(got).size == got.size


@pytest.mark.parametrize("sw", [0, 32, 64, 128])
def test_mn_major_offsets_cover_the_tile_once_and_keep_8_elements_contiguous(sw):
    W = max(sw // 16, 1)
    n = 64
    lbo, sbo = (W * 8 * 16 * 2, 128 * W) if sw else (2048, 256)
    desc = (0 | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | ({0: 0, 128: 1, 64: 2, 32: 3}[sw] << 62))
    got = M.wgmma_smem_offsets(desc, n, True)
    assert np.unique(got).size == got.size
    # 8 consecutive MN elements of one k are one 16-byte chunk, in order
    chunks = got.T.reshape(16, n // 8, 8)
    assert (np.diff(chunks, axis=-1) == 2).all() and (chunks[..., 0] % 16 == 0).all()
    if sw:   # k-row r of the first W chunks is the r-th sw-byte row of the swizzle atom, chunk XOR row
        b = {32: 1, 64: 2, 128: 3}[sw]
        for k in range(8):
            for j in range(W):
                lin = k * sw + j * 16
                assert got[8 * j, k] == lin ^ (((lin >> 7) & ((1 << b) - 1)) << 4)


def test_d_layout_is_a_permutation_in_mma_sync_fragments():
    lay = M.wgmma_d_layout(32)                                   # (128, 16, 2)
    flat = lay[..., 0] * 32 + lay[..., 1]
    assert np.array_equal(np.sort(flat.ravel()), np.arange(64 * 32))
    # warp w, slice s: the m16n8 C fragment of mma.sync, shifted by 16 w rows and 8 s columns
    for w in range(4):
        for s in range(4):
            part = lay[32 * w:32 * w + 32, 4 * s:4 * s + 4]
            assert np.array_equal(part[..., 0] - 16 * w, M.C_LAYOUT[..., 0])
            assert np.array_equal(part[..., 1] - 8 * s, M.C_LAYOUT[..., 1])


def _bits(x, kind="f16"):
    if kind == "f16":
        return np.asarray(x, np.float16).view(np.uint16)
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_wgmma_arithmetic_is_exact_for_small_integers(kind):
    rng = np.random.default_rng(1)
    a = rng.integers(-8, 9, (2, 64, 16)).astype(np.float32)
    b = rng.integers(-8, 9, (2, 16, 24)).astype(np.float32)
    c = rng.integers(-100, 100, (2, 64, 24)).astype(np.float32)
    d = M.wgmma_m64k16(_bits(a, kind), _bits(b, kind), c, kind, "f32", np.array([True, False]))
    want = a @ b + c * np.array([1, 0], np.float32)[:, None, None]
    assert np.array_equal(d, want.astype(np.float32))


def test_wgmma_rounding_is_mma_syncs_fused_dot():
    """Random data: each element equals mma.sync's measured 16-term fused dot (dot_f32), which is
    not the float64 sum rounded (the test would fail if wgmma summed in another order or width)."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((1, 64, 16)).astype(np.float16)
    b = rng.standard_normal((1, 16, 8)).astype(np.float16)
    c = rng.standard_normal((1, 64, 8)).astype(np.float32) * 1000
    d = M.wgmma_m64k16(a.view(np.uint16), b.view(np.uint16), c, "f16", "f32", np.array([True]))
    want = M.dot_f32(np.broadcast_to(a.view(np.uint16)[0][:, None, :], (64, 8, 16)),
                     np.broadcast_to(b.view(np.uint16)[0].T[None], (64, 8, 16)), c[0])
    assert np.array_equal(d[0].view(np.uint32), want.view(np.uint32))
    exact = (a[0].astype(np.float64) @ b[0].astype(np.float64) + c[0]).astype(np.float32)
    assert not np.array_equal(d[0], exact)       # truncating alignment: some elements differ from RN
    assert np.abs(d[0] - exact).max() < 1e-3


def test_f16_accumulators():
    a = np.arange(64 * 16).reshape(1, 64, 16) % 5 - 2
    b = np.arange(16 * 8).reshape(1, 16, 8) % 3 - 1
    c = (np.arange(64 * 8).reshape(1, 64, 8) % 7).astype(np.float16)
    d = M.wgmma_m64k16(_bits(a), _bits(b), c.view(np.uint16), "f16", "f16", np.array([True]))
    assert np.array_equal(d.view(np.float16), (a @ b + c.astype(np.float32)).astype(np.float16))
    with pytest.raises(ValueError):
        M.wgmma_m64k16(_bits(a), _bits(b), c.view(np.uint16), "bf16", "f16", np.array([True]))
