"""Driver ground truth for ``gpusim.occupancy``: ``cuOccupancyMaxActiveBlocksPerMultiprocessor``.

Covers: compiles (NVRTC, through ``cupy.RawKernel``) kernels whose register count is pinned
with ``--maxrregcount`` and whose static shared memory is a ``__shared__`` array, reads their
real ``num_regs`` / ``shared_size_bytes`` from the driver, and records the driver's answer
for thousands of (block size, dynamic shared memory, ``max_dynamic_shared_size_bytes``
attribute, preferred carveout) cases, including invalid ones (block size 0, 1025, 2048;
dynamic shared memory above the attribute). Also ``cuOccupancyMaxPotentialBlockSize`` and
kernels that use named barriers 1..15.

Imports only numpy and cupy (the GPU machine has none of gpusim's dependencies); never
changes clocks or any device setting (only per-function attributes of its own kernels).

Usage::

    python3 validation/probes/occupancy_table.py [--out DIR] [--tag h100] [--budget-s 300]

Writes into DIR (default ``$OUT`` or ``.``):

* ``occupancy_<tag>.csv``  one row per query: kernel, regs, static_smem, block_size,
  dynamic_smem, attr_set, max_dynamic_smem (read back), carveout_set, carveout (read back),
  blocks (driver answer, empty on error), error (CUDA error name, empty if none)
* ``kernels_<tag>.csv``    one row per kernel: compile options and function attributes,
  and what the driver said when the attributes were set out of range
* ``max_potential_<tag>.csv``  ``occupancyMaxPotentialBlockSize`` answers
* ``barriers_<tag>.csv``   kernels with ``bar.sync N`` (N = 1, 3, 7, 15)
* ``device_<tag>.json``    device properties and software versions

The committed copy lives in ``validation/reports/h100/``; ``tests/test_occupancy.py``
requires ``gpusim.occupancy`` to agree with every row.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import sys
import time

import cupy
import numpy as np
from cupy.cuda import driver, runtime

KERNEL_NAME = "occ_probe"

SOURCE = r"""
#define STR2(x) #x
#define STR(x) STR2(x)
extern "C" __global__ void occ_probe(const float* __restrict__ in, float* __restrict__ out, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
#if NV > 0
    float v[NV];
#pragma unroll
    for (int i = 0; i < NV; ++i) v[i] = in[(tid + i * 977) & (n - 1)];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int i = 0; i < NV; ++i) v[i] = fmaf(v[i], v[(i + 1) % NV], v[(i + 5) % NV]);
    }
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < NV; ++i) acc += v[i] * (float)(i + 1);
#else
    float acc = in[tid & (n - 1)];
#endif
#if SMEM > 0
    __shared__ unsigned char sbuf[SMEM];
    sbuf[threadIdx.x % SMEM] = (unsigned char)acc;
    __syncthreads();
    acc += (float)sbuf[(threadIdx.x * 7u + 3u) % SMEM];
#endif
#if BAR > 0
    asm volatile("bar.sync " STR(BAR) ";");
#endif
    out[tid] = acc;
}
"""

ATTR = {
    "max_threads_per_block": getattr(driver, "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK", 0),
    "shared_size_bytes": getattr(driver, "CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES", 1),
    "const_size_bytes": getattr(driver, "CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES", 2),
    "local_size_bytes": getattr(driver, "CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES", 3),
    "num_regs": getattr(driver, "CU_FUNC_ATTRIBUTE_NUM_REGS", 4),
    "binary_version": getattr(driver, "CU_FUNC_ATTRIBUTE_BINARY_VERSION", 6),
    "max_dynamic_shared_size_bytes": getattr(driver, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", 8),
    "preferred_shared_memory_carveout": getattr(driver, "CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT", 9),
}

#: --maxrregcount targets (None = uncapped, tiny kernel).
REG_CAPS = [None, 16, 20, 24, 28, 32, 37, 40, 48, 56, 63, 64, 72, 80, 90, 96, 104, 110,
            128, 136, 152, 168, 184, 200, 216, 232, 248, 255]
STATIC_SIZES = [1, 100, 1000, 4096, 12000, 20000, 32768, 40000, 46000, 48000, 49152]
BLOCKS = [1, 31, 32, 33, 64, 96, 100, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448,
          480, 512, 544, 576, 640, 672, 704, 768, 800, 864, 896, 960, 992, 1024]
INVALID_BLOCKS = [0, 1025, 2048]
DYN_LIST = [0, 1, 100, 127, 128, 129, 1000, 1024, 2048, 4096, 8192, 10000, 16384, 20000,
            24576, 30000, 32768, 40000, 45056, 47104, 48128, 48129, 49152, 49153, 50000, 65536,
            80000, 98304, 100000, 116736, 131072, 150000, 163840, 180000, 200000, 220000,
            230000, 231424, 232448, 232449, 240000]
CARVEOUTS = [0, 5, 10, 25, 33, 50, 66, 75, 90, 100]
POTENTIAL_DYN = [0, 4096, 20000, 49152, 100000]
POTENTIAL_LIMITS = [0, 96, 200, 1000]

OCC_FIELDS = ["kernel", "regs", "static_smem", "block_size", "dynamic_smem", "attr_set",
              "max_dynamic_smem", "carveout_set", "carveout", "blocks", "error"]
KERNEL_FIELDS = ["kernel", "maxrregcount", "nv", "smem_decl", "bar", "num_regs", "shared_size_bytes",
                 "local_size_bytes", "const_size_bytes", "max_threads_per_block", "binary_version",
                 "default_max_dynamic_smem", "default_carveout", "set_attr_over_max_error",
                 "set_attr_max_ok", "set_carveout_101_error", "set_carveout_minus2_error", "compile_s"]
POT_FIELDS = ["kernel", "regs", "static_smem", "attr_set", "max_dynamic_smem", "dynamic_smem",
              "block_size_limit", "min_grid_size", "block_size", "error"]
BAR_FIELDS = ["kernel", "bar", "regs", "static_smem", "block_size", "dynamic_smem", "blocks", "error"]


def err_name(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.split(":")[0].split()[0]


def get_attr(ptr: int, name: str) -> int:
    return int(driver.funcGetAttribute(ATTR[name], ptr))


def set_attr(ptr: int, name: str, value: int) -> str:
    """Set a function attribute; return '' or the CUDA error name."""
    try:
        driver.funcSetAttribute(ptr, ATTR[name], int(value))
        return ""
    except Exception as exc:  # CUDADriverError
        return err_name(exc)


def occupancy(ptr: int, block: int, dyn: int) -> tuple[str, str]:
    try:
        return str(int(driver.occupancyMaxActiveBlocksPerMultiprocessor(ptr, block, dyn))), ""
    except Exception as exc:
        return "", err_name(exc)


def kernel_specs() -> list[dict]:
    specs = []
    for cap in REG_CAPS:
        specs.append({"maxrregcount": cap, "smem": 0, "bar": 0})
    for cap in (None, 32, 128):
        for size in STATIC_SIZES:
            specs.append({"maxrregcount": cap, "smem": size, "bar": 0})
    for i, spec in enumerate(specs):
        spec["kernel"] = f"k{i:03d}"
    return specs


def compile_kernel(spec: dict):
    cap = spec["maxrregcount"]
    nv = 0 if cap is None else cap + 8
    spec["nv"] = nv
    options = [f"-DNV={nv}", f"-DSMEM={spec['smem']}", f"-DBAR={spec['bar']}"]
    if cap is not None:
        options.append(f"--maxrregcount={cap}")
    kern = cupy.RawKernel(SOURCE, KERNEL_NAME, options=tuple(options))
    return kern.kernel  # compiles and loads now


def pick_dyn(rng: random.Random, hi: int) -> int:
    """A dynamic shared-memory size: a notable value, or uniform below ``hi`` or 240000."""
    draw = rng.random()
    if draw < 0.35:
        return rng.choice(DYN_LIST)
    if draw < 0.75:
        return rng.randint(0, max(hi, 0))
    return rng.randint(0, 240000)


def pick_block(rng: random.Random, max_threads: int) -> int:
    """A block size, mostly one the kernel's register count admits."""
    fitting = [b for b in BLOCKS if b <= max_threads + 64]
    if fitting and rng.random() < 0.85:
        return rng.choice(fitting)
    return rng.choice(BLOCKS)


def probe_kernel(spec, func, rng, occ_w, pot_w, device) -> int:
    ptr = func.ptr
    regs = get_attr(ptr, "num_regs")
    static = get_attr(ptr, "shared_size_bytes")
    spec.update(
        num_regs=regs,
        shared_size_bytes=static,
        local_size_bytes=get_attr(ptr, "local_size_bytes"),
        const_size_bytes=get_attr(ptr, "const_size_bytes"),
        max_threads_per_block=get_attr(ptr, "max_threads_per_block"),
        binary_version=get_attr(ptr, "binary_version"),
        default_max_dynamic_smem=get_attr(ptr, "max_dynamic_shared_size_bytes"),
        default_carveout=get_attr(ptr, "preferred_shared_memory_carveout"),
    )
    optin_dyn = int(device["sharedMemPerBlockOptin"]) - static
    default_attr = spec["default_max_dynamic_smem"]
    max_threads = spec["max_threads_per_block"]
    rows = 0
    state = {"attr_set": 0, "carveout_set": -1}

    def query(block: int, dyn: int) -> None:
        nonlocal rows
        blocks, error = occupancy(ptr, block, dyn)
        occ_w.writerow({
            "kernel": spec["kernel"], "regs": regs, "static_smem": static, "block_size": block,
            "dynamic_smem": dyn, "attr_set": state["attr_set"],
            "max_dynamic_smem": get_attr(ptr, "max_dynamic_shared_size_bytes"),
            "carveout_set": state["carveout_set"],
            "carveout": get_attr(ptr, "preferred_shared_memory_carveout"),
            "blocks": blocks, "error": error,
        })
        rows += 1

    def potential() -> None:
        attr = get_attr(ptr, "max_dynamic_shared_size_bytes")
        for dyn in POTENTIAL_DYN:
            for limit in POTENTIAL_LIMITS:
                try:
                    grid, block = driver.occupancyMaxPotentialBlockSize(ptr, dyn, limit)
                    grid, block, error = int(grid), int(block), ""
                except Exception as exc:
                    grid, block, error = "", "", err_name(exc)
                pot_w.writerow({
                    "kernel": spec["kernel"], "regs": regs, "static_smem": static,
                    "attr_set": state["attr_set"], "max_dynamic_smem": attr, "dynamic_smem": dyn,
                    "block_size_limit": limit, "min_grid_size": grid, "block_size": block,
                    "error": error,
                })

    # A. Attributes untouched: every block size at 0 dynamic bytes, invalid block sizes, random.
    for block in BLOCKS:
        query(block, 0)
    for block in INVALID_BLOCKS:
        query(block, 0)
    for _ in range(30):
        query(pick_block(rng, max_threads), pick_dyn(rng, default_attr + 256))
    potential()

    # Out-of-range attribute values: what does the driver say? (nothing is changed on error)
    spec["set_attr_over_max_error"] = set_attr(ptr, "max_dynamic_shared_size_bytes", optin_dyn + 1)
    spec["set_carveout_101_error"] = set_attr(ptr, "preferred_shared_memory_carveout", 101)
    spec["set_carveout_minus2_error"] = set_attr(ptr, "preferred_shared_memory_carveout", -2)
    spec["set_attr_max_ok"] = set_attr(ptr, "max_dynamic_shared_size_bytes", optin_dyn) or "ok"
    # Whatever happened above, put the attributes in a known state before going on.
    set_attr(ptr, "preferred_shared_memory_carveout", -1)

    # B. Attribute raised to the opt-in maximum.
    state["attr_set"] = 1
    set_attr(ptr, "max_dynamic_shared_size_bytes", optin_dyn)
    for _ in range(30):
        query(pick_block(rng, max_threads), pick_dyn(rng, optin_dyn + 256))
    query(pick_block(rng, max_threads), optin_dyn)
    query(pick_block(rng, max_threads), optin_dyn + 1)
    potential()

    # C. A random attribute value in between.
    middle = rng.randint(0, max(optin_dyn, 0))
    set_attr(ptr, "max_dynamic_shared_size_bytes", middle)
    for _ in range(12):
        query(pick_block(rng, max_threads), pick_dyn(rng, middle + 256))
    query(pick_block(rng, max_threads), middle)
    query(pick_block(rng, max_threads), middle + 1)

    # D. Carveout preferences (attribute at the maximum).
    set_attr(ptr, "max_dynamic_shared_size_bytes", optin_dyn)
    for carveout in CARVEOUTS:
        state["carveout_set"] = carveout
        set_attr(ptr, "preferred_shared_memory_carveout", carveout)
        for _ in range(5):
            query(pick_block(rng, max_threads), pick_dyn(rng, optin_dyn // 2))
    state["carveout_set"] = -1
    set_attr(ptr, "preferred_shared_memory_carveout", -1)
    for _ in range(4):
        query(pick_block(rng, max_threads), pick_dyn(rng, optin_dyn // 2))
    return rows


def device_info() -> dict:
    props = runtime.getDeviceProperties(0)
    info = {}
    for key, value in props.items():
        if isinstance(value, bytes):
            value = value.decode(errors="replace").rstrip("\x00")
        if isinstance(value, (int, float, str)):
            info[key] = value
        elif isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) for v in value):
            info[key] = list(value)
    versions = {"cupy": cupy.__version__, "numpy": np.__version__, "python": sys.version.split()[0]}
    for label, fn in (("driver", runtime.driverGetVersion), ("runtime", runtime.runtimeGetVersion)):
        try:
            versions[label] = int(fn())
        except Exception as exc:  # pragma: no cover - informational only
            versions[label] = f"unavailable: {exc}"
    try:
        versions["nvrtc"] = list(cupy.cuda.nvrtc.getVersion())
    except Exception as exc:  # pragma: no cover
        versions["nvrtc"] = f"unavailable: {exc}"
    info["_versions"] = versions
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "."), help="output folder")
    parser.add_argument("--tag", default="h100", help="file-name suffix (default h100)")
    parser.add_argument("--budget-s", type=float, default=300.0, help="stop compiling new kernels after this")
    parser.add_argument("--seed", type=int, default=20250101)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    start = time.time()
    device = device_info()
    print(f"device: {device.get('name')} cc {device.get('major')}.{device.get('minor')}, "
          f"{device.get('multiProcessorCount')} SMs, versions {device['_versions']}", flush=True)
    with open(os.path.join(args.out, f"device_{args.tag}.json"), "w") as fh:
        json.dump(device, fh, indent=1, sort_keys=True)

    def path(stem: str) -> str:
        return os.path.join(args.out, f"{stem}_{args.tag}.csv")

    specs = kernel_specs()
    bar_specs = [{"kernel": f"b{b:02d}", "maxrregcount": None, "smem": 0, "bar": b} for b in (1, 3, 7, 15)]
    total_rows = 0
    kernels_done = 0
    with open(path("occupancy"), "w", newline="") as occ_fh, \
            open(path("kernels"), "w", newline="") as ker_fh, \
            open(path("max_potential"), "w", newline="") as pot_fh, \
            open(path("barriers"), "w", newline="") as bar_fh:
        occ_w = csv.DictWriter(occ_fh, OCC_FIELDS, lineterminator="\n")
        ker_w = csv.DictWriter(ker_fh, KERNEL_FIELDS, lineterminator="\n", extrasaction="ignore")
        pot_w = csv.DictWriter(pot_fh, POT_FIELDS, lineterminator="\n")
        bar_w = csv.DictWriter(bar_fh, BAR_FIELDS, lineterminator="\n")
        for writer in (occ_w, ker_w, pot_w, bar_w):
            writer.writeheader()
        for index, spec in enumerate(specs + bar_specs):
            if time.time() - start > args.budget_s:
                print(f"time budget reached after {kernels_done} kernels; stopping", flush=True)
                break
            t0 = time.time()
            try:
                func = compile_kernel(spec)
            except Exception as exc:
                print(f"{spec['kernel']}: compile failed: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
                continue
            spec["compile_s"] = round(time.time() - t0, 3)
            rng = random.Random(args.seed * 1000 + index)
            try:
                if spec["bar"]:
                    ptr = func.ptr
                    regs = get_attr(ptr, "num_regs")
                    static = get_attr(ptr, "shared_size_bytes")
                    spec.update(num_regs=regs, shared_size_bytes=static,
                                max_threads_per_block=get_attr(ptr, "max_threads_per_block"))
                    for block in (32, 64, 128, 256, 1024):
                        blocks, error = occupancy(ptr, block, 0)
                        bar_w.writerow({"kernel": spec["kernel"], "bar": spec["bar"], "regs": regs,
                                        "static_smem": static, "block_size": block, "dynamic_smem": 0,
                                        "blocks": blocks, "error": error})
                    rows = 5
                else:
                    rows = probe_kernel(spec, func, rng, occ_w, pot_w, device)
            except Exception as exc:
                print(f"{spec['kernel']}: probe failed: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
                continue
            spec["smem_decl"] = spec["smem"]
            spec["maxrregcount"] = "" if spec["maxrregcount"] is None else spec["maxrregcount"]
            ker_w.writerow(spec)
            for fh in (occ_fh, ker_fh, pot_fh, bar_fh):
                fh.flush()
            total_rows += rows
            kernels_done += 1
            print(f"{spec['kernel']}: maxrreg={spec['maxrregcount'] or '-':>3} smem={spec['smem']:>5} "
                  f"bar={spec['bar']} -> num_regs={spec.get('num_regs')} static={spec.get('shared_size_bytes')} "
                  f"local={spec.get('local_size_bytes', '')} maxthr={spec.get('max_threads_per_block')} "
                  f"compile {spec['compile_s']:.2f}s, {rows} rows", flush=True)

    # Summary.
    with open(path("occupancy")) as fh:
        rows = list(csv.DictReader(fh))
    errors: dict[str, int] = {}
    blocks_hist: dict[str, int] = {}
    for row in rows:
        if row["error"]:
            errors[row["error"]] = errors.get(row["error"], 0) + 1
        else:
            blocks_hist[row["blocks"]] = blocks_hist.get(row["blocks"], 0) + 1
    regs = sorted({int(r["regs"]) for r in rows})
    statics = sorted({int(r["static_smem"]) for r in rows})
    print(f"\nSUMMARY: {kernels_done} kernels, {len(rows)} occupancy rows in {time.time() - start:.1f} s")
    print(f"  num_regs seen: {regs}")
    print(f"  static smem seen: {statics}")
    print(f"  errors: {errors}")
    print(f"  blocks/SM histogram: {dict(sorted(blocks_hist.items(), key=lambda kv: int(kv[0])))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
