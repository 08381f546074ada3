"""Hardware probe: what a real NVIDIA GPU returns for PTX integer instructions on edge inputs.

The PTX ISA leaves some integer results machine-specific (``div``/``rem`` by zero; the
quotient of ``INT_MIN / -1`` is not representable).  ``isa/intops.py`` must return exactly
what NVIDIA hardware returns, so this script measures it: every instruction below is
compiled with ``cupy.RawKernel``-style NVRTC compilation from CUDA C++ holding one inline
PTX instruction (``asm volatile("div.s32 %0, %1, %2;" ...)``), run on a table of edge and
seeded-random inputs loaded from global memory (so nothing can be constant-folded), and
the results are written as a JSON table.

Besides the unspecified cases it also records shifts by 31/32/33/255/2**32-1, ``bfe``/
``bfi`` with positions and lengths past the msb and above 255, ``bfind``, ``prmt`` in all
modes, ``shf``, ``mul.hi`` (64-bit), ``mul24``/``mad24``, ``mad.hi.sat``, ``sad``,
``abs``/``neg`` of INT_MIN and ``min``/``max``, so that ``tests/isa/test_intops_hw.py``
can check every row against the simulator without a GPU.

Usage (on a machine with a CUDA GPU and CuPy)::

    python3 validation/probes/int_edge_cases.py     # JSON to stdout and $OUT/int_edge_cases.json

This script imports only numpy and cupy (it runs where gpusim is not installed).

Output format::

    {"meta": {...device and toolchain...},
     "types": {"div.s32": {"d": "s32", "srcs": ["s32", "s32"]}, ...},
     "errors": {"<ptx>": "<message>", ...},
     "rows": [{"ptx": "div.s32", "in": [-2147483648, -1], "out": -2147483648}, ...]}

Integers are written in the operand's PTX type: signed for ``.sN``, unsigned for
``.uN``/``.bN``.

What it found on an NVIDIA H100 80GB HBM3 (driver 580.159.04, CUDA 13.0, CuPy 14.2,
NVRTC 13.0; table in ``int_edge_cases.h100.json``):

* ``div`` and ``rem`` by zero: all bits set for every dividend and every type
  (s16/u16/s32/u32/s64/u64): -1 signed, 2**n - 1 unsigned.  The remainder is *not* the
  dividend.
* ``INT_MIN / -1 == INT_MIN`` and ``INT_MIN % -1 == 0`` (16, 32 and 64 bits).
* ``bfe.u64/.s64`` and ``bfi.b64`` do not restrict position and length to 0..255 as the
  ISA's pseudo-code does; they use the full 32-bit operands (``bfe.u64 a, 0, 256 == a``).
  The 32-bit forms follow the manual.
* Everything else probed (shl/shr with clamped amounts, shf clamp/wrap, prmt in every
  mode, bfind, popc/clz/brev, mul.hi 16/32/64, mul.wide, mad.hi.sat, mul24/mad24 incl.
  .hi.sat, sad, add/sub.sat, abs/neg of INT_MIN, min/max(.relu)) matches the ISA text.
"""

from __future__ import annotations

import itertools
import json
import os
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:          # run as a script: make the validation package importable
    sys.path.insert(0, str(ROOT))

from validation import probekit

SEED = 20251122
N_RANDOM = 16

_BITS = {"16": 16, "32": 32, "64": 64}


def bits_of(ty: str) -> int:
    return _BITS[ty[1:]]


def is_signed(ty: str) -> bool:
    return ty.startswith("s")


def to_bits(v: int, ty: str) -> int:
    return int(v) & ((1 << bits_of(ty)) - 1)


def from_bits(u: int, ty: str) -> int:
    n = bits_of(ty)
    u = int(u) & ((1 << n) - 1)
    if is_signed(ty) and u >> (n - 1):
        return u - (1 << n)
    return u


# ------------------------------------------------------------------------ input tables


def edges(ty: str) -> list[int]:
    """Edge values of a type, in the type's own interpretation."""
    n = bits_of(ty)
    if is_signed(ty):
        lo, hi = -(1 << (n - 1)), (1 << (n - 1)) - 1
        return [0, 1, -1, 2, 7, -7, lo, lo + 1, hi, hi - 1]
    m = (1 << n) - 1
    return [0, 1, 2, 7, m, m - 1, 1 << (n - 1), (1 << (n - 1)) - 1]


def div_dividends(ty: str) -> list[int]:
    n = bits_of(ty)
    if is_signed(ty):
        lo, hi = -(1 << (n - 1)), (1 << (n - 1)) - 1
        return [0, 1, -1, 7, -7, 100, lo, lo + 1, hi]
    m = (1 << n) - 1
    return [0, 1, 7, 100, m, m - 1, 1 << (n - 1), (1 << (n - 1)) - 1]


def div_divisors(ty: str) -> list[int]:
    n = bits_of(ty)
    if is_signed(ty):
        lo, hi = -(1 << (n - 1)), (1 << (n - 1)) - 1
        return [0, 1, -1, 2, -2, 7, -7, lo, hi]
    m = (1 << n) - 1
    return [0, 1, 2, 7, m, 1 << (n - 1)]


AMOUNTS = [0, 1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 255, 256, 257, 1 << 31, (1 << 32) - 1]
POSITIONS = [0, 1, 4, 15, 31, 32, 33, 63, 64, 65, 255, 256, 257, (1 << 32) - 1]
LENGTHS = [0, 1, 8, 16, 31, 32, 33, 63, 64, 65, 255, 256, 257, (1 << 32) - 1]


def patterns(ty: str) -> list[int]:
    n = bits_of(ty)
    m = (1 << n) - 1
    pat = 0x123456789ABCDEF0FEDCBA9876543210 & m
    vals = [pat, pat ^ m, m, 1 << (n - 1), 1]
    return [from_bits(v, ty) for v in vals]


def rand_vals(rng, ty: str, k: int) -> list[int]:
    """``k`` seeded random values of a type; every 4th is short so small values occur too."""
    n = bits_of(ty)
    hi = rng.integers(0, 1 << 32, size=k, dtype=np.uint64)
    lo = rng.integers(0, 1 << 32, size=k, dtype=np.uint64)
    out = []
    for i in range(k):
        v = ((int(hi[i]) << 32) | int(lo[i])) & ((1 << n) - 1)
        if i % 4 == 1:
            v &= 0xFFFF
        elif i % 4 == 2:
            v &= 0xFF
        out.append(from_bits(v, ty))
    return out


def rand_u32(rng, k: int, limit: int | None = None) -> list[int]:
    hi = (1 << 32) - 1 if limit is None else limit
    return [int(x) for x in rng.integers(0, hi, size=k, dtype=np.uint64, endpoint=True)]


def build_ops(rng) -> list[tuple[str, str, list[str], list[list[int]]]]:
    """Every probed instruction: (ptx, dest type, source types, input rows)."""
    ops: list[tuple[str, str, list[str], list[list[int]]]] = []

    def add(ptx, d, srcs, rows):
        ops.append((ptx, d, list(srcs), [list(r) for r in rows]))

    def binary_rows(t, a_vals, b_vals):
        rows = list(itertools.product(a_vals, b_vals))
        rows += zip(rand_vals(rng, t, N_RANDOM), rand_vals(rng, t, N_RANDOM))
        return rows

    # div / rem: every dividend against every divisor (incl. 0, -1 and INT_MIN/-1)
    for t in ("s16", "u16", "s32", "u32", "s64", "u64"):
        rows = binary_rows(t, div_dividends(t), div_divisors(t))
        add(f"div.{t}", t, [t, t], rows)
        add(f"rem.{t}", t, [t, t], rows)

    for t in ("s16", "u16", "s32", "u32", "s64", "u64"):
        add(f"mul.hi.{t}", t, [t, t], binary_rows(t, edges(t), edges(t)))
    add("mul.lo.s64", "s64", ["s64", "s64"], binary_rows("s64", edges("s64"), edges("s64")))
    for t, w in (("s16", "s32"), ("u16", "u32"), ("s32", "s64"), ("u32", "u64")):
        add(f"mul.wide.{t}", w, [t, t], binary_rows(t, edges(t), edges(t)))

    def ternary_rows(t, a_vals, b_vals, c_vals, tc=None):
        rows = list(itertools.product(a_vals, b_vals, c_vals))
        rows += zip(rand_vals(rng, t, N_RANDOM), rand_vals(rng, t, N_RANDOM),
                    rand_vals(rng, tc or t, N_RANDOM))
        return rows

    s32_abc = [0, 1, -1, -(1 << 31), (1 << 31) - 1, 0x10000, -0x10000]
    add("mad.hi.sat.s32", "s32", ["s32"] * 3, ternary_rows("s32", s32_abc, s32_abc, s32_abc))
    add("mad.hi.s32", "s32", ["s32"] * 3, ternary_rows("s32", s32_abc, s32_abc, [0, -1, (1 << 31) - 1]))
    add("mad.lo.s32", "s32", ["s32"] * 3, ternary_rows("s32", s32_abc, s32_abc, [0, -1, (1 << 31) - 1]))
    add("mad.hi.u64", "u64", ["u64"] * 3, ternary_rows("u64", edges("u64")[:6], edges("u64")[:6], [0, (1 << 64) - 1]))
    add("mad.hi.s64", "s64", ["s64"] * 3, ternary_rows("s64", edges("s64")[:8], edges("s64")[:8], [0, -1]))
    add("mad.wide.s32", "s64", ["s32", "s32", "s64"],
        ternary_rows("s32", s32_abc, s32_abc, [0, -1, (1 << 63) - 1], tc="s64"))
    add("mad.wide.u32", "u64", ["u32", "u32", "u64"],
        ternary_rows("u32", edges("u32"), edges("u32"), [0, (1 << 64) - 1], tc="u64"))

    m24 = [0, 1, 2, 0x7FFFFF, 0x800000, 0xFFFFFF, 0x1000000, 0x12345678, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF]
    for t in ("s32", "u32"):
        vals = [from_bits(v, t) for v in m24]
        for mode in ("hi", "lo"):
            add(f"mul24.{mode}.{t}", t, [t, t], binary_rows(t, vals, vals))
    s24 = [from_bits(v, "s32") for v in (0, 1, 0x7FFFFF, 0x800000, 0xFFFFFF, 0x80000000)]
    c24 = [0, -1, (1 << 31) - 1, -(1 << 31)]
    add("mad24.hi.sat.s32", "s32", ["s32"] * 3, ternary_rows("s32", s24, s24, c24))
    add("mad24.hi.s32", "s32", ["s32"] * 3, ternary_rows("s32", s24, s24, c24))
    add("mad24.lo.u32", "u32", ["u32"] * 3,
        ternary_rows("u32", [to_bits(v, "s32") for v in s24], [to_bits(v, "s32") for v in s24],
                     [0, 0xFFFFFFFF]))

    for t in ("s32", "u32", "s64", "u16"):
        e = edges(t)[:7]
        add(f"sad.{t}", t, [t] * 3, ternary_rows(t, e, e, [0, e[2], e[-1]]))
    add("add.sat.s32", "s32", ["s32"] * 2, binary_rows("s32", edges("s32"), edges("s32")))
    add("sub.sat.s32", "s32", ["s32"] * 2, binary_rows("s32", edges("s32"), edges("s32")))

    for t in ("s16", "s32", "s64"):
        vals = [[v] for v in edges(t) + rand_vals(rng, t, N_RANDOM)]
        add(f"abs.{t}", t, [t], vals)
        add(f"neg.{t}", t, [t], vals)
    for t in ("s16", "s32", "u32", "s64", "u64"):
        e = edges(t)[:7]
        add(f"min.{t}", t, [t, t], binary_rows(t, e, e))
        add(f"max.{t}", t, [t, t], binary_rows(t, e, e))
    add("min.relu.s32", "s32", ["s32"] * 2, binary_rows("s32", edges("s32"), edges("s32")))
    add("max.relu.s32", "s32", ["s32"] * 2, binary_rows("s32", edges("s32"), edges("s32")))

    for t in ("b32", "b64"):
        vals = [[v] for v in edges("u" + t[1:]) + patterns(t) + rand_vals(rng, t, N_RANDOM)]
        add(f"popc.{t}", "u32", [t], vals)
        add(f"clz.{t}", "u32", [t], vals)
        add(f"brev.{t}", t, [t], vals)
    for t in ("u32", "s32", "u64", "s64"):
        vals = [[v] for v in edges(t) + patterns(t) + rand_vals(rng, t, N_RANDOM)]
        add(f"bfind.{t}", "u32", [t], vals)
        add(f"bfind.shiftamt.{t}", "u32", [t], vals)

    for t in ("u32", "s32", "u64", "s64"):
        rows = [(a, p, ln) for a in patterns(t)[:2] for p in POSITIONS for ln in LENGTHS]
        rows += zip(rand_vals(rng, t, 4 * N_RANDOM), rand_u32(rng, 4 * N_RANDOM, 300),
                    rand_u32(rng, 4 * N_RANDOM, 300))
        add(f"bfe.{t}", t, [t, "u32", "u32"], rows)
    for t in ("b32", "b64"):
        pa, pb = patterns(t)[0], patterns(t)[1]
        rows = [(a, b, p, ln) for a, b in ((pa, pb), (-1 & ((1 << bits_of(t)) - 1), 0))
                for p in POSITIONS for ln in LENGTHS]
        rows += zip(rand_vals(rng, t, 4 * N_RANDOM), rand_vals(rng, t, 4 * N_RANDOM),
                    rand_u32(rng, 4 * N_RANDOM, 300), rand_u32(rng, 4 * N_RANDOM, 300))
        add(f"bfi.{t}", t, [t, t, "u32", "u32"], rows)

    for t in ("b16", "b32", "b64"):
        rows = [(a, s) for a in patterns(t)[:4] for s in AMOUNTS]
        add(f"shl.{t}", t, [t, "u32"], rows)
    for n in ("16", "32", "64"):
        for k in ("b", "u", "s"):
            t = k + n
            rows = [(a, s) for a in patterns(t)[:4] for s in AMOUNTS]
            add(f"shr.{t}", t, [t, "u32"], rows)
    shf_ab = [(0x89ABCDEF, 0x01234567), (0xFFFFFFFF, 0), (0, 0xFFFFFFFF), (0x80000001, 0x80000001)]
    for d in ("l", "r"):
        for mode in ("clamp", "wrap"):
            rows = [(a, b, s) for a, b in shf_ab for s in AMOUNTS]
            rows += zip(rand_u32(rng, N_RANDOM), rand_u32(rng, N_RANDOM), rand_u32(rng, N_RANDOM))
            add(f"shf.{d}.{mode}.b32", "b32", ["b32"] * 3, rows)

    prmt_ab = [(0x03020100, 0x07060504), (0x80FF017F, 0x7F0180FE)]
    sel = [0, 0x3210, 0x7654, 0x4321, 0x0123, 0x8888, 0xFFFF, 0xCDEF, 0x89AB, 0xFFFF3210, 0x12345678]
    rows = [(a, b, c) for a, b in prmt_ab for c in sel]
    rows += zip(rand_u32(rng, 2 * N_RANDOM), rand_u32(rng, 2 * N_RANDOM), rand_u32(rng, 2 * N_RANDOM))
    add("prmt.b32", "b32", ["b32"] * 3, rows)
    for mode in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16"):
        rows = [(a, b, c) for a, b in prmt_ab for c in (0, 1, 2, 3, 4, 7, 0xFFFFFFFC, 0xFFFFFFFF)]
        add(f"prmt.b32.{mode}", "b32", ["b32"] * 3, rows)
    return ops


# ---------------------------------------------------------------------- CUDA source

_CTYPE = {16: ("unsigned short", "h"), 32: ("unsigned int", "r"), 64: ("unsigned long long", "l")}


def kernel_source(name: str, ptx: str, d: str, srcs: list[str]) -> str:
    dct, dcon = _CTYPE[bits_of(d)]
    params = [f"const {_CTYPE[bits_of(s)][0]}* __restrict__ s{k}" for k, s in enumerate(srcs)]
    params += [f"{dct}* __restrict__ d", "int n"]
    regs = ", ".join(f"%{k}" for k in range(len(srcs) + 1))
    ins = ", ".join(f'"{_CTYPE[bits_of(s)][1]}"(s{k}[i])' for k, s in enumerate(srcs))
    return (
        f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
        f"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"  if (i < n) {{\n"
        f"    {dct} r;\n"
        f'    asm volatile("{ptx} {regs};" : "={dcon}"(r) : {ins});\n'
        f"    d[i] = r;\n"
        f"  }}\n"
        f"}}\n"
    )


def kernel_names(ops) -> list[str]:
    return [f"probe_{k}" for k in range(len(ops))]


def full_source(ops) -> str:
    return "\n".join(kernel_source(nm, ptx, d, srcs)
                     for nm, (ptx, d, srcs, _) in zip(kernel_names(ops), ops))


# ------------------------------------------------------------------------ execution


def cupy_executor():
    """Return execute(ops) -> (results by ptx, errors by ptx), running on the GPU."""
    import cupy as cp

    def execute(ops):
        names = kernel_names(ops)
        errors: dict[str, str] = {}
        functions = {}
        try:
            module = cp.RawModule(code=full_source(ops))
            for nm in names:
                functions[nm] = module.get_function(nm)
        except Exception as exc:  # one bad kernel: fall back to one module per kernel
            print(f"whole-module compile failed ({exc!r}); compiling kernels one by one",
                  file=sys.stderr)
            functions = {}
            for nm, (ptx, d, srcs, _) in zip(names, ops):
                try:
                    functions[nm] = cp.RawModule(
                        code=kernel_source(nm, ptx, d, srcs)).get_function(nm)
                except Exception as exc2:
                    errors[ptx] = f"compile: {exc2!r}"[:2000]
        results: dict[str, list[int]] = {}
        for nm, (ptx, d, srcs, rows) in zip(names, ops):
            if nm not in functions:
                continue
            try:
                n = len(rows)
                args = []
                for k, s in enumerate(srcs):
                    col = np.array([to_bits(r[k], s) for r in rows],
                                   dtype={16: np.uint16, 32: np.uint32, 64: np.uint64}[bits_of(s)])
                    args.append(cp.asarray(col))
                out = cp.zeros(n, dtype={16: np.uint16, 32: np.uint32, 64: np.uint64}[bits_of(d)])
                threads = 128
                functions[nm](((n + threads - 1) // threads,), (threads,), (*args, out, np.int32(n)))
                cp.cuda.runtime.deviceSynchronize()
                results[ptx] = [from_bits(int(x), d) for x in cp.asnumpy(out)]
            except Exception as exc:
                errors[ptx] = f"run: {exc!r}"[:2000]
        return results, errors

    return execute


def device_meta() -> dict:
    import cupy as cp

    meta = {"cupy": cp.__version__, "numpy": np.__version__}
    try:
        dev = probekit.device_info(cp)
        meta["device"] = dev["name"]
        meta["compute_capability"] = dev["compute_capability"]
        meta["driver_version"] = dev["driver_version"]
        meta["runtime_version"] = dev["cuda_runtime_version"]
        meta["nvrtc_version"] = list(cp.cuda.nvrtc.getVersion())
    except Exception as exc:  # informative only
        meta["meta_error"] = repr(exc)
    return meta


def measure(execute, meta: dict) -> dict:
    rng = np.random.default_rng(SEED)
    ops = build_ops(rng)
    results, errors = execute(ops)
    table = {"meta": dict(meta, seed=SEED,
                          method="one inline-PTX instruction per kernel, operands loaded "
                                 "from global memory, compiled by CuPy/NVRTC"),
             "types": {ptx: {"d": d, "srcs": srcs} for ptx, d, srcs, _ in ops},
             "errors": errors,
             "rows": []}
    for ptx, _d, _srcs, rows in ops:
        if ptx not in results:
            continue
        for r, out in zip(rows, results[ptx]):
            table["rows"].append({"ptx": ptx, "in": [int(v) for v in r], "out": int(out)})
    return table


def dumps(table: dict) -> str:
    """JSON with one row per line (readable, diff-friendly)."""
    head = {k: v for k, v in table.items() if k != "rows"}
    body = ",\n".join(json.dumps(r, separators=(", ", ": ")) for r in table["rows"])
    text = json.dumps(head, indent=1)
    return text[:-2] + ',\n "rows": [\n' + body + "\n ]\n}\n"


def summary(table: dict) -> str:
    """The machine-specific cases, one line each (printed last so they are easy to see)."""
    lines = []
    for r in table["rows"]:
        op = r["ptx"].split(".")[0]
        if op in ("div", "rem"):
            a, b = r["in"]
            t = table["types"][r["ptx"]]["d"]
            n = bits_of(t)
            if b == 0 or (is_signed(t) and a == -(1 << (n - 1)) and b == -1):
                lines.append(f"{r['ptx']:10s} {a} , {b} -> {r['out']}")
    return "\n".join(lines)


def main() -> int:
    table = measure(cupy_executor(), device_meta())
    text = dumps(table)
    json.loads(text)  # sanity: valid JSON
    sys.stdout.write(text)
    sys.stdout.flush()
    out_dir = os.environ.get("OUT") or "."
    path = os.path.join(out_dir, "int_edge_cases.json")
    with open(path, "w") as f:
        f.write(text)
    print(f"\n# {len(table['rows'])} rows, {len(table['errors'])} errors -> {path}", file=sys.stderr)
    for ptx, err in table["errors"].items():
        print(f"# ERROR {ptx}: {err[:300]}", file=sys.stderr)
    print(summary(table), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
