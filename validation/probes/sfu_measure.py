"""Hardware probe: the bits an NVIDIA GPU returns for the PTX ``.approx`` special functions.

Measures ``ex2 lg2 rcp rsqrt sqrt sin cos tanh`` (``.approx.f32``, with and without ``.ftz``),
``ex2.approx.f16``/``.f16x2``, ``ex2.approx.ftz.bf16`` and ``tanh.approx.f16``/``.bf16``:

* exhaustively over whole binades of inputs (``DATASETS``: e.g. every float32 in [1, 2) for
  ``rcp.approx.ftz.f32``, every float32 in [2**-4, 8) for ``sin``), the data
  ``validation/probes/sfu_fit.py`` derives the interpolation tables of ``isa/sfu.py`` from;
* on an edge set (zeros, subnormals, infinities, NaNs, the range limits, the thresholds of
  the wrappers ptxas puts around MUFU) plus every 16411th bit pattern of the whole 32-bit
  space, for every instruction variant (``OPS``), raw.

Each instruction is one inline-PTX ``asm volatile`` in a CUDA kernel (``nvcc -cubin
-arch=sm_90``; the SASS is written next to the data, ``sfu_sass.txt``), applied to inputs made
from the thread index (``start + i * stride``), so nothing is constant-folded.

Output (under ``$OUT`` or the directory given as argv[1]): ``sfu_part*.npz``, each holding
for a data set ``NAME`` the arrays ``NAME.z`` (zlib-compressed little-endian uint32 first
differences of the output bits, wrapping; ``np.cumsum(d, dtype=np.uint32)`` restores them)
and ``NAME.meta`` (JSON: op, start, stride, n); ``sfu_meta.json`` (device, toolchain, the data
sets written and any left out for size).  :func:`load` reads them back.

This script imports only numpy and cupy (it runs where gpusim is not installed).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: (kernel name, PTX instruction, kind) -- kind f32: .f32 in and out; h16: 16-bit in/out;
#: h32: 32-bit packed (f16x2) in/out.
OPS = [
    ("ex2f", "ex2.approx.ftz.f32", "f32"), ("ex2", "ex2.approx.f32", "f32"),
    ("lg2f", "lg2.approx.ftz.f32", "f32"), ("lg2", "lg2.approx.f32", "f32"),
    ("rcpf", "rcp.approx.ftz.f32", "f32"), ("rcp", "rcp.approx.f32", "f32"),
    ("rsqf", "rsqrt.approx.ftz.f32", "f32"), ("rsq", "rsqrt.approx.f32", "f32"),
    ("sqrtf", "sqrt.approx.ftz.f32", "f32"), ("sqrt", "sqrt.approx.f32", "f32"),
    ("sinf", "sin.approx.ftz.f32", "f32"), ("sin", "sin.approx.f32", "f32"),
    ("cosf", "cos.approx.ftz.f32", "f32"), ("cos", "cos.approx.f32", "f32"),
    ("tanh", "tanh.approx.f32", "f32"),
    ("ex2h", "ex2.approx.f16", "h16"), ("ex2h2", "ex2.approx.f16x2", "h32"),
    ("ex2bf", "ex2.approx.ftz.bf16", "h16"), ("tanhh", "tanh.approx.f16", "h16"),
    ("tanhbf", "tanh.approx.bf16", "h16"),
]


def _f(v):
    return int(np.float32(v).view(np.uint32))


def _binades(op, lo_exp, hi_exp, neg=False, stride=1):
    """Data set: every ``stride``-th float32 in [2**lo_exp, 2**hi_exp) (negated if neg)."""
    a, b = _f(2.0 ** lo_exp), _f(2.0 ** hi_exp)
    s = 0x80000000 if neg else 0
    return (op, a | s, stride, (b - a + stride - 1) // stride)


#: Data sets in priority order: (name, (op, first input bits, stride, count)).
DATASETS = [
    ("rcpf_1_2", _binades("rcpf", 0, 1)),
    ("rsqf_1_4", _binades("rsqf", 0, 2)),
    ("sqrtf_1_4", _binades("sqrtf", 0, 2)),
    ("lg2f_05_4", _binades("lg2f", -1, 2)),
    ("ex2f_05_2", _binades("ex2f", -1, 1)),
    ("ex2f_m05_2", _binades("ex2f", -1, 1, neg=True)),
    ("ex2h_all", ("ex2h", 0, 1, 1 << 16)),
    ("ex2bf_all", ("ex2bf", 0, 1, 1 << 16)),
    ("tanhh_all", ("tanhh", 0, 1, 1 << 16)),
    ("tanhbf_all", ("tanhbf", 0, 1, 1 << 16)),
    ("ex2h2_mix", ("ex2h2", 0x3C00_0000, 0x10001, 1 << 16)),
    ("lg2f_all_s4096", ("lg2f", 0, 4096, 1 << 20)),
    ("ex2f_all_s4096", ("ex2f", 0, 4096, 1 << 20)),
    ("rcpf_all_s4096", ("rcpf", 0, 4096, 1 << 20)),
    ("rsqf_all_s4096", ("rsqf", 0, 4096, 1 << 20)),
    ("sqrtf_all_s4096", ("sqrtf", 0, 4096, 1 << 20)),
    ("sinf_all_s4096", ("sinf", 0, 4096, 1 << 20)),
    ("cosf_all_s4096", ("cosf", 0, 4096, 1 << 20)),
    ("tanh_all_s4096", ("tanh", 0, 4096, 1 << 20)),
    ("sinf_m4_3", _binades("sinf", -4, 3)),
    ("cosf_m4_3", _binades("cosf", -4, 3)),
    ("tanh_m6_4", _binades("tanh", -6, 4)),
    ("ex2f_m8_m1", _binades("ex2f", -8, -1)),
    ("ex2f_nm8_m1_s3", _binades("ex2f", -8, -1, neg=True, stride=3)),
    ("sinf_m12_m4_s3", _binades("sinf", -12, -4, stride=3)),
    ("cosf_m12_m4_s3", _binades("cosf", -12, -4, stride=3)),
    ("tanh_m14_m6_s3", _binades("tanh", -14, -6, stride=3)),
    ("lg2f_4_64_s3", _binades("lg2f", 2, 6, stride=3)),
    ("sinf_m26_m12_s97", _binades("sinf", -26, -12, stride=97)),
    ("cosf_m26_m12_s97", _binades("cosf", -26, -12, stride=97)),
]

EDGE_STRIDE = 16411
MAX_FILE = 15 * 2 ** 20
MAX_FILES = 7


def edge_inputs():
    """Edge bit patterns for every f32 op: specials, subnormals, range limits, wrapper
    thresholds, integers, multiples of pi/2; then every EDGE_STRIDE-th pattern."""
    rng = np.random.default_rng(20261125)
    v = [0, 1, 2, 3, 0x7FFFFF, 0x7FFFFE, 0x400000, 0x400001, 0x800000, 0x800001, 0x7F800000,
         0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0x7F7FFFFF, 0x7F7FFFFE, 0x3F800000, 0x3F7FFFFF,
         0x3F800001]
    v += list(rng.integers(1, 0x800000, 400))
    for e in list(range(-150, -120)) + list(range(-30, 30)) + list(range(120, 129)):
        b = _f(2.0 ** e) if -149 <= e <= 127 else (0 if e < -149 else 0x7F800000)
        v += [b + d for d in (-2, -1, 0, 1, 2) if 0 <= b + d < 0x7F800000]
    for t in np.concatenate([np.arange(-160, 160, 0.25), np.arange(-300, 300) * 0.5 * np.pi,
                             np.arange(-40, 41) / 8.0]):
        b = _f(t) & 0x7FFFFFFF
        v += [b + d for d in (-1, 0, 1) if 0 <= b + d < 0x7F800000]
    v += list(rng.integers(0x3F000000, 0x40800000, 2000))        # [0.5, 4)
    v += list(rng.integers(0x4B000000, 0x7F7FFFFF, 1000))        # large
    v = np.array(v, dtype=np.uint64) & 0x7FFFFFFF
    v = np.concatenate([v, v | 0x80000000]).astype(np.uint32)
    v = np.unique(v)
    grid = (np.arange(0, 1 << 32, EDGE_STRIDE, dtype=np.uint64)).astype(np.uint32)
    return np.concatenate([v, grid])


def _source():
    out = ["typedef unsigned int u32; typedef unsigned short u16;"]
    for name, ins, kind in OPS:
        if kind == "f32":
            body = ('float r; asm volatile("%s %%0, %%1;" : "=f"(r) : "f"(__uint_as_float(b)));'
                    ' out[i] = __float_as_uint(r);' % ins)
        elif kind == "h16":
            body = ('u16 r, h = (u16)b; asm volatile("%s %%0, %%1;" : "=h"(r) : "h"(h));'
                    ' out[i] = r;' % ins)
        else:
            body = 'u32 r; asm volatile("%s %%0, %%1;" : "=r"(r) : "r"(b)); out[i] = r;' % ins
        out.append(
            'extern "C" __global__ void k_%s(u32 start, u32 stride, u32 n, u32* out)'
            '{u32 i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;'
            ' u32 b = start + i * stride; %s}' % (name, body))
        out.append(
            'extern "C" __global__ void a_%s(const u32* in, u32 n, u32* out)'
            '{u32 i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;'
            ' u32 b = in[i]; %s}' % (name, body))
    return "\n".join(out) + "\n"


def load(paths):
    """Read ``sfu_part*.npz`` files back: {name: (meta dict, uint32 output bits)}."""
    res = {}
    for p in paths:
        z = np.load(p)
        for k in z.files:
            if k.endswith(".meta"):
                name = k[:-5]
                meta = json.loads(bytes(z[k]).decode())
                d = np.frombuffer(zlib.decompress(bytes(z[name + ".z"])), dtype=np.uint32)
                res[name] = (meta, np.cumsum(d, dtype=np.uint32))
    return res


def main(out_dir):
    import cupy as cp

    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = pathlib.Path(tempfile.mkdtemp())
    (tmp / "sfu.cu").write_text(_source())
    subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-O3", "-o", str(tmp / "sfu.cubin"),
                    str(tmp / "sfu.cu")], check=True)
    sass = subprocess.run(["cuobjdump", "-sass", str(tmp / "sfu.cubin")], capture_output=True,
                          text=True).stdout
    (out_dir / "sfu_sass.txt").write_text(sass)
    mod = cp.RawModule(path=str(tmp / "sfu.cubin"))
    t0 = time.time()

    def run_range(op, start, stride, n):
        k = mod.get_function("k_" + op)
        out = cp.empty(n, dtype=cp.uint32)
        step = 1 << 27
        for s in range(0, n, step):
            m = min(step, n - s)
            k(((m + 255) // 256,), (256,), (np.uint32((start + s * stride) & 0xFFFFFFFF),
                                            np.uint32(stride), np.uint32(m), out[s:]))
        return out

    def pack(bits):
        d = cp.empty_like(bits)
        d[0] = bits[0]
        d[1:] = bits[1:] - bits[:-1]
        return d.get()

    results = []
    for name, (op, start, stride, n) in DATASETS:
        results.append((name, dict(op=op, start=start, stride=stride, n=n),
                        pack(run_range(op, start, stride, n))))
    edges = edge_inputs()
    ein = cp.asarray(edges)
    for name, _ins, _kind in OPS:
        k = mod.get_function("a_" + name)
        out = cp.empty(len(edges), dtype=cp.uint32)
        k(((len(edges) + 255) // 256,), (256,), (ein, np.uint32(len(edges)), out))
        results.insert(0, ("edge_" + name, dict(op=name, edges=True, n=len(edges)),
                           pack(out)))
    results.insert(0, ("edge_inputs", dict(op=None, n=len(edges)), pack(ein)))
    cp.cuda.Device().synchronize()
    t1 = time.time()
    with ThreadPoolExecutor(16) as ex:
        comp = list(ex.map(lambda r: zlib.compress(r[2].tobytes(), 6), results))
    files, cur, size, left_out = [], {}, 0, []
    for (name, meta, _), c in zip(results, comp):
        if size + len(c) > MAX_FILE and cur:
            files.append(cur)
            cur, size = {}, 0
        if len(files) >= MAX_FILES or len(c) > MAX_FILE:
            left_out.append(name)
            continue
        cur[name + ".z"] = np.frombuffer(c, dtype=np.uint8)
        cur[name + ".meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        size += len(c)
    if cur and len(files) < MAX_FILES:
        files.append(cur)
    for i, f in enumerate(files):
        np.savez(out_dir / f"sfu_part{i}.npz", **f)
    dev = cp.cuda.runtime.getDeviceProperties(0)
    meta = dict(device=dev["name"].decode(), driver=cp.cuda.runtime.driverGetVersion(),
                runtime=cp.cuda.runtime.runtimeGetVersion(), cupy=cp.__version__,
                nvcc=subprocess.run(["nvcc", "--version"], capture_output=True,
                                    text=True).stdout.strip().splitlines()[-1],
                gpu_s=round(t1 - t0, 2), compress_s=round(time.time() - t1, 2),
                sizes={name: len(c) for (name, _, _), c in zip(results, comp)},
                left_out=left_out, files=len(files))
    (out_dir / "sfu_meta.json").write_text(json.dumps(meta, indent=1))
    print(json.dumps({k: v for k, v in meta.items() if k != "sizes"}))
    print("total compressed MiB", sum(len(c) for c in comp) / 2 ** 20)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "."))
