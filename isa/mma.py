"""Tensor-core semantics: ``mma.sync.aligned.m16n8k16`` (f16/bf16 inputs, f32 or f16 accumulators)
and the register layouts of ``mma`` and ``ldmatrix``, bit-exact with an NVIDIA H100.

What this module owns
---------------------
* The fragment layouts of PTX ISA 9.0 §9.7.14.5.8 ("Matrix Fragments for mma.m16n8k16 with
  floating point type"), with ``g = lane >> 2`` and ``t = lane & 3``:

  - A (16 x 16, ``.row``): four ``.b32`` registers of two 16-bit values each; value ``i``
    (0..7, register ``i // 2``, lower half first) is element (row ``g + 8 * ((i >> 1) & 1)``,
    column ``2 * t + (i & 1) + 8 * (i >> 2)``).
  - B (16 x 8, ``.col``): two registers; value ``i`` (0..3) is element (row
    ``2 * t + (i & 1) + 8 * (i >> 1)``, column ``g``).
  - C and D (16 x 8): value ``i`` (0..3) is element (row ``g + 8 * (i >> 1)``, column
    ``2 * t + (i & 1)``); f32 accumulators take one register per value, f16 accumulators two
    values per register (lower half first).

* ``ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16`` (§9.7.14.5.15): lanes
  ``8j .. 8j+7`` give the addresses of rows 0..7 of matrix ``j``; register ``j`` of lane ``l``
  receives row ``l >> 2``, columns ``2 * (l & 3)`` and ``+1`` of matrix ``j`` (with ``.trans``:
  column ``l >> 2``, rows ``2 * (l & 3)`` and ``+1``), the lower-numbered element in the lower half.

* The arithmetic of the tensor core, measured on an H100 (``validation/probes/tensor_core.py``;
  raw inputs and outputs in ``validation/reports/h100/tensor_core/tensor_core_numerics.h100.npz``,
  1,179,648 dot products in six adversarial input sets: normal values, exponents spanning the
  whole range, nearly cancelling products, sparse rows, infinities/NaN/zeros/subnormals, and
  subnormal accumulators).  :func:`dot_f32` and :func:`dot_f16` reproduce every one of them bit
  for bit (``tests/isa/test_mma.py``).  Each output element ``d = c + sum_k a_k * b_k`` of the
  16-term dot product is computed in one step, not in a chain of ``fma``:

  1. every product ``a_k * b_k`` is exact (the hardware keeps all 22 bits of an f16 product);
  2. the alignment exponent ``E`` is the largest of ``ea_k + eb_k`` over the nonzero products
     (``ea``, ``eb``: the unbiased exponents of the factors, subnormals counted at the format's
     minimum exponent, so a product whose significand is in [2, 4) sits one bit *above* ``E``)
     and the exponent of ``c`` (subnormal accumulators counted at -126 for f32, -14 for f16);
  3. every term, ``c`` included, is truncated toward zero to a multiple of ``2**(E - 25)``;
  4. the truncated terms are added exactly, and the sum is rounded once: toward zero to f32
     (``.f32`` accumulators), to nearest even to f16 (``.f16`` accumulators);
  5. a zero result is +0.0 (also -0.0 + -0.0, and a negative sum that rounds to zero);
  6. a NaN operand, ``inf * 0`` or ``inf - inf`` gives the canonical NaN (f32 ``0x7fffffff``,
     f16 ``0x7fff``); infinite operands otherwise give the infinity.

  So the result is neither the exact sum correctly rounded nor a chain of fused multiply-adds:
  low bits of terms far below the largest one are lost (Fasi, Higham, Mikaitis and Pranesh,
  "Numerical behavior of NVIDIA tensor cores", PeerJ CS 2021, describe the same truncating
  alignment on V100/A100 with blocks of 4 and 8 terms; on the H100 one block holds all 16
  products and ``c``).  A finite sum of 2**128 or more is +-inf (measured: a bf16 product of
  2**200); sums between the largest f32 and 2**128 were not reached by the inputs and round
  toward zero here.

* ``wgmma.mma_async.m64nNk16`` (sm_90a): the 64-bit shared-memory matrix descriptors, the
  swizzled operand layouts and the accumulator fragments (:func:`wgmma_descriptor`,
  :func:`wgmma_smem_offsets`, :func:`wgmma_d_layout`), computed with the same per-element fused
  dot product (:func:`wgmma_m64k16`; ASSUMED: measured through mma.sync, not through wgmma), and
  ``stmatrix`` (the inverse of ``ldmatrix``).

Types: f16 and bf16 values are handled as raw ``uint16`` bits, f32 as ``float32``.  Imports
numpy only.
"""

from __future__ import annotations

import numpy as np

__all__ = ["A_LAYOUT", "B_LAYOUT", "C_LAYOUT", "dot_f32", "dot_f16", "mma_m16n8k16", "ldmatrix_layout",
           "FRACTION_BITS", "wgmma_descriptor", "swizzle", "wgmma_smem_offsets", "wgmma_d_layout", "wgmma_a_layout",
           "wgmma_m64k16", "stmatrix_layout"]

#: Bits kept below the alignment exponent E (measured: 25; see the module docstring).
FRACTION_BITS = 25

_NONE = -(1 << 20)          # the exponent of a zero term (below every real one)


def _layout(n_vals: int, row, col) -> np.ndarray:
    """(32 lanes, n_vals) -> (row, col) index pairs as an int array of shape (32, n_vals, 2)."""
    lane = np.arange(32)[:, None]
    i = np.arange(n_vals)[None, :]
    g, t = lane >> 2, lane & 3
    return np.stack(np.broadcast_arrays(row(g, t, i), col(g, t, i)), -1)


#: A fragment: per lane and value i (0..7), the (row, column) of the 16 x 16 A tile.
A_LAYOUT = _layout(8, lambda g, t, i: g + 8 * ((i >> 1) & 1), lambda g, t, i: 2 * t + (i & 1) + 8 * (i >> 2))
#: B fragment: per lane and value i (0..3), the (row k, column n) of the 16 x 8 B tile.
B_LAYOUT = _layout(4, lambda g, t, i: 2 * t + (i & 1) + 8 * (i >> 1), lambda g, t, i: g + 0 * i)
#: C and D fragments: per lane and value i (0..3), the (row, column) of the 16 x 8 tile.
C_LAYOUT = _layout(4, lambda g, t, i: g + 8 * (i >> 1), lambda g, t, i: 2 * t + (i & 1))


def _gather(vals: np.ndarray, layout: np.ndarray, shape) -> np.ndarray:
    """Per-warp fragments ``vals`` (W, 32, n) -> matrices (W, rows, cols)."""
    out = np.zeros((vals.shape[0],) + tuple(shape), vals.dtype)
    out[:, layout[..., 0], layout[..., 1]] = vals
    return out


def _halves(regs: np.ndarray) -> np.ndarray:
    """(W, 32, r) uint32 registers -> (W, 32, 2r) uint16 values, lower half first."""
    r = regs.astype(np.uint32)
    return np.stack([(r & np.uint32(0xFFFF)), r >> np.uint32(16)], -1).reshape(r.shape[0], 32, -1).astype(np.uint16)


def _values(bits: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Raw f16/bf16 bits -> (float64 values, unbiased exponents with subnormals at the minimum)."""
    bits = np.asarray(bits, np.uint16)
    if kind == "f16":
        v = bits.view(np.float16).astype(np.float64)
        field, bias = (bits >> np.uint16(10)) & np.uint16(0x1F), 15
    elif kind == "bf16":
        v = (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
        field, bias = (bits >> np.uint16(7)) & np.uint16(0xFF), 127
    else:
        raise ValueError(f"mma input type {kind!r}")
    e = np.maximum(field.astype(np.int64), 1) - bias
    return v, e


#: Exponent of a zero or non-finite factor in the int16 exponent sums of :func:`_fused_sum` (far
#: below any real sum: two of them, or one plus a real exponent, stay below ``_NONE16 // 2``).
_NONE16 = -16000


def _factors(bits, kind: str, dtype):
    """Per factor (shape (..., K), not broadcast): values as ``dtype`` (exact), int16 exponents
    with zero and non-finite factors at ``_NONE16``, and per row: is a factor non-finite."""
    v, e = _values(bits, kind)
    fin = np.isfinite(v)
    e16 = np.where(fin & (v != 0), e, _NONE16).astype(np.int16)
    with np.errstate(all="ignore"):                                # NaN -> float32 warns; stays NaN
        v = v.astype(dtype, copy=False)
    return v, e16, ~fin.all(-1)


def _fused_sum(a_bits, b_bits, c, kind: str, c_emin: int = -126):
    """The truncated exact sum of ``c + sum_k a_k b_k`` (float64, exact) and the masks of NaN and
    non-finite results.  ``a_bits``, ``b_bits``: (..., K) uint16, broadcastable against each other
    (their leading axes) and ``c``: (...) float64; pass them un-broadcast (e.g. A as (G, M, 1, K) and
    B as (G, 1, N, K)): the per-factor work is then done once per factor, not per product.

    Computed one k at a time over the output's elements: ``a_k * b_k`` exactly (float32 for f16
    factors: a product has at most 22 significant bits and lies in [2**-48, 2**32]; float64 for
    bf16), scaled by ``2**(FRACTION_BITS - E)`` (a power of two: exact; values below 1 may
    underflow, which their truncation to 0 does not see), truncated toward zero by the cast to int32
    (|scaled| < 2**27 because |a_k b_k| < 2**(ea_k + eb_k + 2) <= 2**(E + 2)) and summed in int32
    (16 terms: below 2**31); ``c``'s truncated term is added in float64 and the sum (< 2**32 units)
    scaled back by ``2**(E - FRACTION_BITS)``: the same integers and the same value as truncating
    every term of the module docstring's algorithm, up to the sign of a zero sum (+0.0 here, never
    -0.0), which no caller sees (zero results are +0.0). ``E`` and the powers of two come from
    exponent bit fields in int16/int32 arithmetic, not ``frexp``/``ldexp``."""
    a_bits = np.asarray(a_bits, np.uint16)
    b_bits = np.asarray(b_bits, np.uint16)
    pdt = np.float32 if kind == "f16" else np.float64
    a, ea, a_bad = _factors(a_bits, kind, pdt)
    b, eb, b_bad = _factors(b_bits, kind, pdt)
    K = a.shape[-1]
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1], np.shape(c))
    if not shape:                                                  # one dot product: as a 1-element batch
        s, special, special_val = _fused_sum(a_bits[None], b_bits[None], np.asarray(c)[None], kind, c_emin)
        return s[0], special[0], special_val[0]
    ak, bk = np.moveaxis(a, -1, 0), np.moveaxis(b, -1, 0)          # (K, ...): views
    eak, ebk = np.moveaxis(ea, -1, 0), np.moveaxis(eb, -1, 0)
    with np.errstate(all="ignore"):
        ep = np.broadcast_to(eak[0] + ebk[0], shape).copy()        # int16
        for k in range(1, K):
            np.maximum(ep, eak[k] + ebk[k], out=ep)                # no non-zero product: <= _NONE16 + 300
        ep = ep.astype(np.int32)
        # c's exponent: c holds an f32 / f16 value, a normal float64 (or 0, inf, NaN), so its biased
        # exponent field f gives floor(log2 |c|) = f - 1023; subnormal values count at c_emin
        f = ((np.ascontiguousarray(c, np.float64).view(np.int64) >> 52) & 0x7FF).astype(np.int32)
        ec = np.maximum(f - 1023, c_emin)
        ec[(f - 1).view(np.uint32) >= 2046] = _NONE                # zero, inf, NaN: no exponent
        E = np.maximum(ep, ec)
        E[E < _NONE16 // 2] = 0                                    # nothing non-zero
        # powers of two from their exponent fields (exact): q = 2**(E - FRACTION_BITS) and its inverse
        q = ((E + (1023 - FRACTION_BITS)).astype(np.int64) << 52).view(np.float64)
        inv_c = (((1023 + FRACTION_BITS) - E).astype(np.int64) << 52).view(np.float64)
        if pdt is np.float32:
            # with no non-zero product E may be far below any product's exponent: keep the float32
            # scale finite (the products are then zeros; a real one has an exponent >= -28 > -60)
            inv = (((127 + FRACTION_BITS) - np.maximum(E, -60)) << 23).view(np.float32)
        else:
            inv = inv_c
        # int32 sums: every truncated term is below 2**27 in magnitude, so K = 16 of them stay below 2**31
        acc = np.zeros(shape, np.int64 if K > 16 else np.int32)
        t = np.empty(shape, pdt)
        ti = np.empty(shape, np.int32)
        for k in range(K):
            np.multiply(ak[k], bk[k], out=t)
            t *= inv
            np.copyto(ti, t, casting="unsafe")                     # truncates toward zero
            acc += ti
        # c's term: truncated likewise (for inf / NaN c the result is special and s is not used)
        s = (acc + np.trunc(c * inv_c)) * q                        # exact: < 2**32 units of q
        special = np.broadcast_to(a_bad | b_bad | ~np.isfinite(c), shape)
        special_val = np.zeros(shape)
        if special.any():                                           # inf, or NaN for inf - inf / inf * 0 / NaN
            idx = np.nonzero(special)
            pa = np.broadcast_to(a, shape + (K,))[idx].astype(np.float64)
            pb = np.broadcast_to(b, shape + (K,))[idx].astype(np.float64)
            full = np.concatenate([np.broadcast_to(c, shape)[idx][:, None], pa * pb], -1)
            special_val[idx] = full.sum(-1)
    return s, special, special_val


def dot_f32(a_bits, b_bits, c, kind: str = "f16") -> np.ndarray:
    """``d = c + sum_k a_k * b_k`` as the H100's tensor core computes an element of
    ``mma.sync ... .f32.{f16,bf16}.{f16,bf16}.f32`` (algorithm in the module docstring).

    ``a_bits``, ``b_bits``: (..., K) uint16 raw bits of ``kind`` (``"f16"`` or ``"bf16"``)
    values, K = 16 for m16n8k16, whose leading axes broadcast against each other and ``c``
    (pass A rows as (..., M, 1, K) and B columns as (..., 1, N, K) rather than broadcast copies:
    faster); ``c``: (...) float32.  Returns (...) float32; NaN results are
    ``0x7fffffff``.  Raises ``ValueError`` for another ``kind``.
    """
    c64 = np.asarray(c, np.float32).astype(np.float64)
    s, special, sv = _fused_sum(a_bits, b_bits, c64, kind)
    if s.ndim == 0:
        return _round_f32(s[None], special[None], sv[None])[0]
    return _round_f32(s, special, sv)


def _round_f32(s, special, sv):
    """The f32 result of :func:`dot_f32` from :func:`_fused_sum`'s outputs (1-D or more):
    ``s`` rounded toward zero, a finite sum of 2**128 or more to +-inf, zeros +0.0, special
    elements their infinity or the canonical NaN ``0x7fffffff``.

    Toward zero is computed by clearing the 29 float64 significand bits below float32's (exact
    truncation) and casting (then exact) where ``s`` is in float32's normal range or above (at or
    above 2**128 the cast gives the infinity; between the largest float32 and 2**128 the cleared
    value is the largest float32); elements below it (subnormal results, zeros) and special ones
    are computed one by one as before: nearest, stepped toward zero where it rounded away."""
    with np.errstate(all="ignore"):
        i = s.view(np.int64)
        r = (i & ~np.int64(0x1FFFFFFF)).view(np.float64).astype(np.float32)
        low = np.flatnonzero((i & np.int64(0x7FF0000000000000)) < np.int64((1023 - 126) << 52))
        if low.size:                                        # |s| < 2**-126 (s is never -0.0 or NaN)
            sl = s.flat[low]
            rl = sl.astype(np.float32)                      # nearest; then toward zero:
            rl = np.where(np.abs(rl.astype(np.float64)) > np.abs(sl), np.nextafter(rl, np.float32(0)), rl)
            rl[rl == 0] = 0.0                               # zero results are +0.0
            r.flat[low] = rl
        if special.any():
            sp = np.flatnonzero(np.broadcast_to(special, s.shape))
            rs = sv.flat[sp].astype(np.float32)
            rs.view(np.uint32)[np.isnan(rs)] = 0x7FFFFFFF
            r.flat[sp] = rs
    return r


def dot_f16(a_bits, b_bits, c_bits) -> np.ndarray:
    """``d = c + sum_k a_k * b_k`` of ``mma.sync ... .f16.f16.f16.f16``: the truncated sum of
    the module docstring rounded to nearest even to f16 (zero results +0.0, NaN ``0x7fff``).

    ``a_bits``, ``b_bits``: (..., K) uint16 f16 bits (leading axes broadcast, as for
    :func:`dot_f32`); ``c_bits``: (...) uint16 f16 bits.
    Returns (...) uint16 f16 bits.
    """
    c64 = np.asarray(c_bits, np.uint16).view(np.float16).astype(np.float64)
    s, special, sv = _fused_sum(a_bits, b_bits, c64, "f16", -14)
    with np.errstate(all="ignore"):
        r = np.where(special, sv, s).astype(np.float16)     # numpy rounds float64 -> f16 once, to nearest
        r = np.where(r == 0, np.float16(0.0), r)
    u = r.view(np.uint16)
    return np.where(np.isnan(r), np.uint16(0x7FFF), u).astype(np.uint16)


def mma_m16n8k16(a_regs, b_regs, c_regs, ab: str, acc: str) -> np.ndarray:
    """One ``mma.sync.aligned.m16n8k16.row.col`` per warp, on registers.

    ``a_regs``: (W, 32, 4) uint32; ``b_regs``: (W, 32, 2) uint32; ``c_regs``: (W, 32, 4)
    float32 (``acc="f32"``) or (W, 32, 2) uint32 (``acc="f16"``); ``ab``: ``"f16"`` or
    ``"bf16"`` (``acc="f16"`` needs ``ab="f16"``).  Returns D in the layout of C: (W, 32, 4)
    float32 or (W, 32, 2) uint32.  Raises ``ValueError`` for other type combinations.
    """
    if acc not in ("f32", "f16") or ab not in ("f16", "bf16") or (acc == "f16" and ab != "f16"):
        raise ValueError(f"mma.m16n8k16 .{acc}.{ab}.{ab}.{acc} is not supported")
    A = _gather(_halves(np.asarray(a_regs)), A_LAYOUT, (16, 16))          # (W, 16, 16) bits
    B = _gather(_halves(np.asarray(b_regs)), B_LAYOUT, (16, 8))           # (W, 16 k, 8 n) bits
    Bt = np.swapaxes(B, 1, 2)                                             # (W, 8 n, 16 k)
    a = A[:, :, None, :]                                                  # (W, 16, 1, 16): broadcast
    b = Bt[:, None, :, :]                                                 # (W, 1, 8, 16)  by the dot
    rows, cols = C_LAYOUT[..., 0], C_LAYOUT[..., 1]
    if acc == "f32":
        C = _gather(np.asarray(c_regs, np.float32), C_LAYOUT, (16, 8))
        D = dot_f32(a, b, C, ab)
        return D[:, rows, cols]
    C = _gather(_halves(np.asarray(c_regs)), C_LAYOUT, (16, 8))
    D = dot_f16(a, b, C)
    d = D[:, rows, cols].astype(np.uint32)                                # (W, 32, 4)
    return d[..., 0::2] | (d[..., 1::2] << np.uint32(16))


def ldmatrix_layout(n_mat: int, trans: bool) -> np.ndarray:
    """Where each destination value of ``ldmatrix.m8n8.x{n_mat}{.trans}.b16`` comes from:
    int array (32 lanes, n_mat registers, 2 halves, 2) of (address lane, b16 column in that
    lane's 16-byte row).  The lane ``8j + r`` supplies the address of row ``r`` of matrix ``j``
    (PTX ISA 9.0 §9.7.14.5.15)."""
    if n_mat not in (1, 2, 4):
        raise ValueError(f"ldmatrix .x{n_mat}")
    lane = np.arange(32)[:, None, None]
    j = np.arange(n_mat)[None, :, None]
    h = np.arange(2)[None, None, :]
    r, c = lane >> 2, 2 * (lane & 3) + h
    if trans:
        r, c = c, r
    return np.stack(np.broadcast_arrays(8 * j + r, c + 0 * j), -1)


# ---------------------------------------------------------------------------- wgmma (sm_90a)
#: Swizzle modes of a wgmma matrix descriptor, bits 62-63 (PTX ISA 9.0, wgmma "Matrix
#: Descriptor Format"): 0 none (interleaved), 1 128-byte, 2 64-byte, 3 32-byte swizzle; value: the
#: swizzle's width in bytes (0 for none).
SWIZZLE_BYTES = {0: 0, 1: 128, 2: 64, 3: 32}


def wgmma_descriptor(desc: int) -> dict:
    """The fields of a 64-bit wgmma shared-memory matrix descriptor (PTX ISA 9.0, wgmma "Matrix Descriptor Format"):
    bits 0-13 start address >> 4, 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension
    byte offset >> 4, 49-51 matrix base offset, 62-63 swizzle mode.  Returns ``{"start", "lbo",
    "sbo"}`` in bytes, ``"base_offset"`` and ``"swizzle"`` (bytes: 0, 32, 64 or 128)."""
    d = int(desc) & 0xFFFF_FFFF_FFFF_FFFF
    return {"start": (d & 0x3FFF) << 4, "lbo": ((d >> 16) & 0x3FFF) << 4, "sbo": ((d >> 32) & 0x3FFF) << 4,
            "base_offset": (d >> 49) & 7, "swizzle": SWIZZLE_BYTES[d >> 62]}


def swizzle(addr, width: int):
    """A shared-memory byte address as the swizzled layouts place it: with a ``width``-byte swizzle
    (32, 64, 128) the 16-byte chunk index, address bits 4 .. 4+b-1 (b = 1, 2, 3), is XORed with bits
    7 .. 7+b-1 (CUTLASS's ``Swizzle<b,4,3>``, cute/atom/mma_traits_sm90_gmma.hpp, the layouts of PTX
    ISA 9.0's wgmma "Shared Memory Matrix Layout"); ``width`` 0 leaves it unchanged."""
    a = np.asarray(addr, np.int64)
    if not width:
        return a
    b = {32: 1, 64: 2, 128: 3}[width]
    return a ^ (((a >> 7) & ((1 << b) - 1)) << 4)


def wgmma_smem_offsets(desc: int, mn: int, mn_major: bool, elem_bytes: int = 2) -> np.ndarray:
    """Byte addresses in shared memory of the ``mn`` x 16 (K) operand a wgmma descriptor describes
    (16-bit elements): int64 array (mn, 16), element (i, k) = row/column i of M (A) or N (B), k of K.

    The canonical layouts (PTX ISA 9.0, wgmma "Shared Memory Matrix Layout"; as CUTLASS's ``make_gmma_desc`` writes them,
    in 16-byte units ``T`` = 8 elements, ``W`` = swizzle bytes / 16, or 1 without swizzle):

    * K-major (``mn_major=False``): ``i = r + 8 m``, ``k = e + 8 c``; address = start + r * 16 W +
      m * SBO + e * 2 + c * (LBO without swizzle, else 16).
    * MN-major: ``i = e + 8 j + 8 W m`` (j < W), ``k = r + 8 c``; address = start + e * 2 + j * 16 +
      m * (SBO without swizzle, else LBO) + r * 16 W + c * (LBO without swizzle, else SBO).

    then :func:`swizzle` of the whole address.  Raises ``ValueError`` for a non-zero base offset
    (a matrix not aligned to its swizzle pattern), which gpusim does not model."""
    f = wgmma_descriptor(desc)
    if f["base_offset"]:
        raise ValueError(f"wgmma descriptor {int(desc) & 0xFFFF_FFFF_FFFF_FFFF:#018x}: base offset "
                         f"{f['base_offset']} (a matrix not aligned to its swizzle pattern) is not supported")
    sw = f["swizzle"]
    W = sw // 16 if sw else 1
    i = np.arange(mn)[:, None]
    k = np.arange(16)[None, :]
    epc = 16 // elem_bytes                                       # elements per 16-byte chunk
    if not mn_major:
        r, m = i % 8, i // 8
        e, c = k % epc, k // epc
        addr = f["start"] + r * 16 * W + m * f["sbo"] + e * elem_bytes + c * (16 if sw else f["lbo"])
    else:
        e, j, m = i % epc, (i // epc) % W, i // (epc * W)
        r, c = k % 8, k // 8
        addr = (f["start"] + e * elem_bytes + j * 16 + m * (f["lbo"] if sw else f["sbo"]) + r * 16 * W
                + c * (f["sbo"] if sw else f["lbo"]))
    return swizzle(addr, sw)


def wgmma_d_layout(n: int) -> np.ndarray:
    """Where each accumulator register of ``wgmma.mma_async.m64nNk16`` with f32 accumulators lives:
    int array (128 threads of the warpgroup, N/2 registers, 2) of (row of the 64 x N tile, column).
    Warp ``w`` of the warpgroup holds rows ``16 w .. 16 w + 15``; in each 8-column slice ``s``,
    register ``4 s + i`` of lane (g = lane >> 2, t = lane & 3) is row ``16 w + g + 8 (i >> 1)``, column
    ``8 s + 2 t + (i & 1)`` (PTX ISA 9.0, wgmma "Register Fragments": the m16n8 D fragment of
    mma.sync repeated over N)."""
    th = np.arange(128)[:, None]
    reg = np.arange(n // 2)[None, :]
    w, lane = th >> 5, th & 31
    g, t = lane >> 2, lane & 3
    s, i = reg >> 2, reg & 3
    return np.stack(np.broadcast_arrays(16 * w + g + 8 * (i >> 1), 8 * s + 2 * t + (i & 1)), -1)


def wgmma_a_layout() -> np.ndarray:
    """Where each 16-bit value of a register A operand of ``wgmma.mma_async.m64nNk16`` (four
    ``.b32`` registers, lower half first) comes from: int array (128 threads, 8 values, 2) of (row of
    the 64 x 16 A tile, k).  Warp ``w`` holds rows ``16 w ..``: the mma.m16n8k16 A fragment
    (:data:`A_LAYOUT`) shifted down by 16 w (PTX ISA 9.0, wgmma "Register Fragments")."""
    w = (np.arange(128) >> 5)[:, None, None]
    lay = A_LAYOUT[np.arange(128) & 31]
    return np.stack([lay[..., 0] + 16 * w[..., 0], lay[..., 1]], -1)


def wgmma_m64k16(a_bits, b_bits, c, ab: str, acc: str, scale_d) -> np.ndarray:
    """One ``wgmma.mma_async.m64nNk16`` per warpgroup on whole tiles: ``D = A * B + (C if scale_d)``.

    ``a_bits``: (G, 64, 16) uint16 (``ab``: ``"f16"``/``"bf16"``, already negated for
    ``imm-scale-a = -1``); ``b_bits``: (G, 16, N) uint16; ``c``: (G, 64, N) float32 (``acc="f32"``)
    or uint16 f16 bits (``acc="f16"``); ``scale_d``: (G,) bool.  Returns D like ``c``.  Each element
    is one 16-term fused dot product as :func:`dot_f32` / :func:`dot_f16` compute it for
    ``mma.sync`` (ASSUMED for wgmma: the H100's tensor cores measured through mma.sync, not wgmma)."""
    a = np.asarray(a_bits, np.uint16)
    bt = np.swapaxes(np.asarray(b_bits, np.uint16), 1, 2)                 # (G, N, 16)
    A = a[:, :, None, :]                                                  # (G, 64, 1, 16): broadcast
    B = bt[:, None, :, :]                                                 # (G, 1, N, 16)  by the dot
    keep = np.asarray(scale_d, np.bool_)[:, None, None]
    if acc == "f32":
        return dot_f32(A, B, np.where(keep, np.asarray(c, np.float32), np.float32(0)), ab)
    if ab != "f16":
        raise ValueError(f"wgmma .{acc}.{ab}.{ab} is not supported")
    return dot_f16(A, B, np.where(keep, np.asarray(c, np.uint16), np.uint16(0)))


def stmatrix_layout(n_mat: int, trans: bool) -> np.ndarray:
    """Where each source value of ``stmatrix.m8n8.x{n_mat}{.trans}.b16`` goes: the same table as
    :func:`ldmatrix_layout` (stmatrix is its inverse, PTX ISA 9.0 "stmatrix"): register ``j`` half
    ``h`` of lane ``l`` is stored at (address lane, b16 column) ``layout[l, j, h]``."""
    return ldmatrix_layout(n_mat, trans)
