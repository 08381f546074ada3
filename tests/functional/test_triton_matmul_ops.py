"""The PTX instructions of Triton's fp16 matmul, end to end: cp.async (+ commit/wait groups),
stmatrix and wgmma.mma_async on hand-written PTX against numpy oracles, and Triton 3.6's own
matmul PTX for sm_80 (cp.async + ldmatrix + mma.sync) and sm_90a (cp.async + wgmma) bit-exact
against the tensor cores' modelled rounding (:mod:`isa.mma`), in the functional and timing engines."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import gpusim
from gpusim.errors import KernelFault
from isa import mma

PTX = Path(__file__).parent / "ptx"
FILES = {"cp_async_ops.ptx": "sm_90", "wgmma_ops.ptx": "sm_90a", "triton_matmul_sm80.ptx": "sm_80",
         "triton_matmul_sm90a.ptx": "sm_90a", "triton_matmul_sm90a_bf16.ptx": "sm_90a"}


@pytest.mark.ptxas
@pytest.mark.parametrize("name", sorted(FILES))
def test_ptxas_assembles(name, tmp_path):
    from gpusim.ptxas import find_ptxas, run_tool
    run_tool([find_ptxas(), "--gpu-name", FILES[name], str(PTX / name), "-o", str(tmp_path / "out.cubin")], "ptxas")


# ---------------------------------------------------------------------------- cp.async
def _cp_async_expected(src: np.ndarray) -> np.ndarray:
    """The 1,408 bytes of shared memory after cp_async_ops (see the PTX file's header)."""
    buf = np.full(1408, 0xAA, np.uint8)
    s = src.reshape(32, 16)
    for t in range(32):
        buf[16 * t:16 * t + 16] = s[t]
        n = t & 15
        buf[512 + 16 * t:512 + 16 * t + 16] = np.r_[s[t, :n], np.zeros(16 - n, np.uint8)]
        n = t & 7
        buf[1024 + 8 * t:1024 + 8 * t + 8] = np.r_[s[t, :n], np.zeros(8 - n, np.uint8)]
        buf[1280 + 4 * t:1280 + 4 * t + 4] = 0 if t & 1 else s[t, :4]
    return buf


def _run_cp_async(mode: str, code: str | None = None):
    src = (np.arange(512) * 7 + 3).astype(np.uint8)
    with gpusim.Device("h100", mode=mode):
        mod = gpusim.RawModule(code=code) if code else gpusim.RawModule(path=PTX / "cp_async_ops.ptx")
        d = gpusim.zeros(1408, np.uint8)
        r = mod.get_function("cp_async_ops")((1,), (32,), (gpusim.asarray(src), d))
        return src, d.get(), r


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_cp_async_sizes_src_size_and_ignore_src(mode):
    src, got, _ = _run_cp_async(mode)
    assert np.array_equal(got, _cp_async_expected(src))


def test_cp_async_wait_group_waits_in_the_timing_model():
    """Removing the waits (a racy kernel, but it runs) must save about a memory latency: the waits
    hold the warp until its copies' global loads are back."""
    text = (PTX / "cp_async_ops.ptx").read_text()
    racy = text.replace("\tcp.async.wait_group 1;\n\tcp.async.wait_all;\n", "")
    assert racy != text
    *_, r_wait = _run_cp_async("timing")
    *_, r_racy = _run_cp_async("timing", racy)
    assert r_wait.cycles - r_racy.cycles > 200


def test_wait_group_keeps_the_newest_groups_pending():
    from gpusim.timing.sm import AsyncGroups
    w = AsyncGroups()
    ins = {op: SimpleNamespace(op=op, operands=(SimpleNamespace(value=n),)) for op, n in
           (("cp.async", 0), ("cp.async.commit_group", 0), ("cp.async.wait_all", 0))}
    wait = lambda n: SimpleNamespace(op="cp.async.wait_group", operands=(SimpleNamespace(value=n),))  # noqa: E731
    for done in (100.0, 300.0, 200.0):              # three groups of one copy each
        w.book(ins["cp.async"], done)
        w.book(ins["cp.async.commit_group"], 0)
    assert w.book(wait(2), 0) == 100.0              # only the oldest must be complete
    assert w.groups == [300.0, 200.0]
    assert w.book(wait(1), 0) == 300.0
    w.book(ins["cp.async"], 500.0)                  # not committed: wait_group ignores it, wait_all not
    assert w.book(wait(0), 0) == 200.0
    assert w.book(ins["cp.async.wait_all"], 0) == 500.0


# ---------------------------------------------------------------------------- stmatrix
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix(trans):
    with gpusim.Device("h100"):
        mod = gpusim.RawModule(path=PTX / "cp_async_ops.ptx")
        d = gpusim.zeros(512, np.uint16)
        mod.get_function("stmatrix_ops")((1,), (32,), (d, np.uint32(trans)))
        got = d.get()
    want = np.zeros(512, np.uint16)
    for j in range(4):                    # matrix j: rows at 128 j + 8 r (in b16 units)
        for r in range(8):
            for c in range(8):
                # the fragment element (row, col) = (r, c) (.trans: (c, r)) is held by lane 4 row + col // 2,
                # register j, half col % 2; the kernel's register j of lane l holds (4 l + j) * 0x10001 + 0x80000000
                row, col = (c, r) if trans else (r, c)
                v = ((4 * (4 * row + col // 2) + j) * 0x10001 + 0x80000000) & 0xFFFFFFFF
                want[128 * j + 8 * r + c] = (v >> (16 * (col % 2))) & 0xFFFF
    assert np.array_equal(got, want)


# ---------------------------------------------------------------------------- wgmma
SW = {0: 0, 128: 1, 64: 2, 32: 3}


def _place(img: np.ndarray, base: int, tile: np.ndarray, mn_major: bool, sw: int) -> int:
    """Write the (mn, 16) f16 ``tile`` (M or N rows, K columns) into the byte image at ``base`` in the
    canonical layout, written out independently of isa.mma; returns the descriptor."""
    mn = tile.shape[0]
    W = sw // 16 if sw else 1
    u = tile.view(np.uint16)
    if not mn_major:     # K-major: core matrices of 8 rows x 16 bytes
        sbo, lbo = 8 * 16 * W, 64 * 16 * W
        for i in range(mn):
            for k in range(16):
                lin = base + (i // 8) * sbo + (i % 8) * 16 * W + (k % 8) * 2 + ((k // 8) * 16 if sw else (k // 8) * lbo)
                img.view(np.uint16)[_xor(lin, sw) // 2] = u[i, k]
    else:                # MN-major: 8 MN-consecutive elements per 16-byte chunk, W chunks per swizzle row
        sbo, lbo = (8 * 16 * W, 8 * 16 * W * 2) if sw else (8 * 16 * 2, 16 * 8)
        for i in range(mn):
            for k in range(16):
                e, j, m = i % 8, (i // 8) % W, i // (8 * W)
                lin = base + e * 2 + j * 16 + (k % 8) * 16 * W + (m * lbo + (k // 8) * sbo if sw else
                                                                 m * sbo + (k // 8) * lbo)
                img.view(np.uint16)[_xor(lin, sw) // 2] = u[i, k]
    return (base >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (SW[sw] << 62)


def _xor(lin: int, sw: int) -> int:
    if not sw:
        return lin
    b = {32: 1, 64: 2, 128: 3}[sw]
    return lin ^ (((lin >> 7) & ((1 << b) - 1)) << 4)


def _frag_rows_cols():
    """(128 threads, 8 registers) -> (row, col) of wgmma m64n16's f32 D, from PTX's picture."""
    t = np.arange(128)[:, None]
    i = np.arange(8)[None, :]
    w, lane = t // 32, t % 32
    return 16 * w + lane // 4 + 8 * ((i % 4) // 2), 8 * (i // 4) + 2 * (lane % 4) + i % 2


def _run_wgmma(kern: str, a, b, a_sw: int, b_sw: int, ta: bool, tb: bool, scale_d: bool, areg=None):
    img = np.zeros(16384, np.uint8)
    da = _place(img, 0, a, ta, a_sw) if a is not None else 0
    db = _place(img, 8192, b.T.copy(), tb, b_sw)          # B given as (16 K, 16 N): rows of the tile are N
    with gpusim.Device("h100"):
        mod = gpusim.RawModule(path=PTX / "wgmma_ops.ptx")
        out = gpusim.zeros(128 * 8, np.float32)
        ar = gpusim.asarray(np.zeros(512, np.uint32) if areg is None else areg)
        mod.get_function(kern)((1,), (128,), (gpusim.asarray(img), out, np.uint64(da), np.uint64(db),
                                              np.uint32(scale_d), ar))
        return out.get().reshape(128, 8)


def _c0():
    return (np.arange(128)[:, None] * 8 + np.arange(8)[None, :]).astype(np.float32)


def _ints(shape, seed):
    return np.random.default_rng(seed).integers(-6, 7, shape).astype(np.float16)


@pytest.mark.parametrize("kern, ta, tb, sa, sb", [("wgmma_k_k", 0, 0, 1, 1), ("wgmma_k_mn", 0, 1, 1, 1),
                                                   ("wgmma_mn_k_neg", 1, 0, -1, 1), ("wgmma_mn_mn_negb", 1, 1, 1, -1)])
@pytest.mark.parametrize("a_sw, b_sw", [(0, 128), (32, 64), (64, 32), (128, 0)])
def test_wgmma_layouts_and_scales(kern, ta, tb, sa, sb, a_sw, b_sw):
    a, b = _ints((64, 16), 1), _ints((16, 16), 2)
    got = _run_wgmma(kern, a, b, a_sw, b_sw, ta, tb, True)
    rows, cols = _frag_rows_cols()
    ref = (sa * a.astype(np.float32)) @ (sb * b.astype(np.float32))
    assert np.array_equal(got, ref[rows, cols] + _c0())


def test_wgmma_scale_d_false_ignores_the_accumulators():
    a, b = _ints((64, 16), 3), _ints((16, 16), 4)
    got = _run_wgmma("wgmma_k_mn", a, b, 128, 32, False, True, False)
    rows, cols = _frag_rows_cols()
    assert np.array_equal(got, (a.astype(np.float32) @ b.astype(np.float32))[rows, cols])


def test_wgmma_bf16_and_register_a():
    a, b = _ints((64, 16), 5), _ints((16, 16), 6)
    rows, cols = _frag_rows_cols()
    ref = a.astype(np.float32) @ b.astype(np.float32)
    # bf16: the same small integers as bf16 bits
    ab = (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    bb = (b.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    got = _run_wgmma("wgmma_bf16", ab.view(np.float16), bb.view(np.float16), 64, 32, False, True, True)
    assert np.array_equal(got, ref[rows, cols] + _c0())
    # A from registers: lane l of warp w, register r, half h holds A[16 w + g + 8 ((2r + h) >> 1 & 1), ...]
    regs = np.zeros((128, 4), np.uint32)
    u = a.view(np.uint16).astype(np.uint32)
    for t in range(128):
        w, lane = divmod(t, 32)
        g, q = divmod(lane, 4)
        for v in range(8):
            rr, cc = 16 * w + g + 8 * ((v >> 1) & 1), 2 * q + (v & 1) + 8 * (v >> 2)
            regs[t, v // 2] |= u[rr, cc] << (16 * (v % 2))
    got = _run_wgmma("wgmma_rega", None, b, 0, 32, False, True, True, areg=regs.ravel())
    assert np.array_equal(got, ref[rows, cols] + _c0())


def test_wgmma_f16_accumulators():
    a, b = _ints((64, 16), 7), _ints((16, 16), 8)
    img = np.zeros(16384, np.uint8)
    da, db = _place(img, 0, a, False, 64), _place(img, 8192, b.T.copy(), True, 32)
    with gpusim.Device("h100"):
        mod = gpusim.RawModule(path=PTX / "wgmma_ops.ptx")
        out = gpusim.zeros(128 * 16, np.float16)           # four .b32 registers of f16 pairs per thread, 32 B apart
        mod.get_function("wgmma_f16acc")((1,), (128,), (gpusim.asarray(img), out, np.uint64(da), np.uint64(db),
                                                        np.uint32(1), gpusim.zeros(512, np.uint32)))
        got = out.get().reshape(128, 16)[:, :8].astype(np.float32)
    rows, cols = _frag_rows_cols()
    assert np.array_equal(got, (a.astype(np.float32) @ b.astype(np.float32))[rows, cols] + _c0())


def test_wgmma_needs_its_whole_warpgroup():
    with pytest.raises(KernelFault, match=r"warps 1, 2, 3 of block \(0, 0, 0\) belong to the warpgroup of warp 0"):
        _run_wgmma("wgmma_split", _ints((64, 16), 1), _ints((16, 16), 2), 0, 0, False, False, True)


# ---------------------------------------------------------------------------- Triton's matmul
def _oracle(a: np.ndarray, b: np.ndarray, kind: str = "f16") -> np.ndarray:
    """Triton's tl.dot over K in order, one 16-deep tensor-core step at a time (isa.mma.dot_f32)."""
    au, bu = a.view(np.uint16), b.view(np.uint16)
    c = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(0, a.shape[1], 16):
        A = np.broadcast_to(au[:, None, k:k + 16], c.shape + (16,))
        B = np.broadcast_to(bu[k:k + 16].T[None], c.shape + (16,))
        c = mma.dot_f32(A, B, c, kind)
    return c


def _triton_matmul(name: str, dev: str, mode: str, a, b, out_dtype, shared: int):
    M, K = a.shape
    N = b.shape[1]
    with gpusim.Device(dev, mode=mode):
        k = gpusim.RawModule(path=PTX / name).get_function("matmul_kernel")
        c = gpusim.zeros((M, N), out_dtype)
        k(((M // 64) * (N // 64),), (128,), (gpusim.asarray(a), gpusim.asarray(b), c, np.int32(M), np.int32(N),
                                             np.int32(K), np.int32(K), np.int32(N), np.int32(N), np.uint64(0),
                                             np.uint64(0)), shared_mem=shared)
        return c.get()


CASES = [("triton_matmul_sm80.ptx", "a100", np.float32, 16384, "f16"),
         ("triton_matmul_sm90a.ptx", "h100", np.float16, 24576, "f16"),
         ("triton_matmul_sm90a_bf16.ptx", "h100", np.float32, 24576, "bf16")]


def _inputs(kind, M, N, K, integers: bool, seed: int = 0):
    """(a, b) as f16 (or bf16 bits in float16 arrays) and their exact float64 values."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, (M, K)) if integers else rng.standard_normal((M, K))
    b = rng.integers(-4, 5, (K, N)) if integers else rng.standard_normal((K, N))
    if kind == "f16":
        a16, b16 = a.astype(np.float16), b.astype(np.float16)
        return a16, b16, a16.astype(np.float64), b16.astype(np.float64)
    cut = lambda x: (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # noqa: E731
    wide = lambda u: (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)  # noqa: E731
    return cut(a).view(np.float16), cut(b).view(np.float16), wide(cut(a)), wide(cut(b))


@pytest.mark.parametrize("name, dev, out, shared, kind", CASES)
def test_triton_matmul_integers_exact(name, dev, out, shared, kind):
    a, b, a64, b64 = _inputs(kind, 64, 128, 96, True)           # K = 96: three k-tiles, a ragged pipeline
    got = _triton_matmul(name, dev, "functional", a, b, out, shared)
    assert np.array_equal(got, (a64 @ b64).astype(out))


@pytest.mark.parametrize("mode", ["functional", "timing"])
@pytest.mark.parametrize("name, dev, out, shared, kind", CASES)
def test_triton_matmul_random_bit_exact(name, dev, out, shared, kind, mode):
    a, b, a64, b64 = _inputs(kind, 128, 64, 64, False, seed=3)
    got = _triton_matmul(name, dev, mode, a, b, out, shared)
    want = _oracle(a, b, kind).astype(out)
    assert got.view(np.uint8).tobytes() == want.view(np.uint8).tobytes()
    assert np.abs(got - a64 @ b64).max() < (2e-2 if out == np.float16 else 1e-4)   # and it is a matmul


@pytest.fixture(scope="module")
def triton_matmul():
    """The tutorial-shaped kernel of the committed PTX, through gpusim.frontends.triton (needs Triton)."""
    pytest.importorskip("triton")
    import triton.language as tl

    from gpusim.frontends import triton as gt

    @gt.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, OUT_F16: tl.constexpr):
        pid = tl.program_id(0)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c = acc.to(tl.float16) if OUT_F16 else acc
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))

    return matmul_kernel


@pytest.mark.parametrize("dev", ["a100", "h100"])
def test_triton_jit_matmul_through_the_frontend(triton_matmul, dev):
    """Triton compiles for the device's capability (cc 8.0: mma.sync; sm_90a: wgmma) and gpusim's Triton
    launcher runs it: bit for bit the tensor-core oracle."""
    M, N, K = 128, 64, 96
    a, b, *_ = _inputs("f16", M, N, K, False, seed=4)
    with gpusim.Device(dev):
        c = gpusim.zeros((M, N), np.float32)
        triton_matmul[((M // 64) * (N // 64),)](gpusim.asarray(a), gpusim.asarray(b), c, M, N, K, K, 1, N, 1, N, 1,
                                                BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, OUT_F16=0)
        got = c.get()
    assert got.view(np.uint32).tobytes() == _oracle(a, b).view(np.uint32).tobytes()
