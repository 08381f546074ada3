"""GPU probe: the L2's read bandwidth to the SMs, with loads that bypass the L1 and with ``cp.async``.

gpusim's ``l2.bandwidth_bytes_per_s`` (5.5 TB/s) was taken from a measurement on an H100 PCIe;
Triton's fp16 matmul at 2048^3 moves 256 MiB from the L2 to the SMs in 54,479 cycles on the
H100 SXM (4.9 KB/cycle, ncu), more than that figure allows. This probe measures the L2's read
rate directly: every thread of a GPU-filling grid (8 CTAs of 256 threads per SM) reads 16 bytes
per step from a buffer of ``S`` bytes that the L2 holds (it is re-read many times), as

* ``ldcg``: ``__ldcg`` (``ld.global.cg.v4.f32``, cached in the L2 only), 4 steps unrolled;
* ``cpasync``: ``cp.async.cg.shared.global`` 16 bytes, 4 in flight per thread (one commit group),
  then ``cp.async.wait_group 0`` -- the copy Triton's pipelined loads make.

With ``--writes`` it also runs, over buffers of 2, 8 and 16 MiB, ``stcg`` (16-byte ``st.global.cg``
stores only) and ``copycg`` (an ``ld.global.cg`` and a ``st.global.cg`` of the same 16 bytes into a
second buffer): the L2's write rate alone and beside reads (add
``lts__t_sectors_srcunit_tex_op_write.sum`` to the metrics).

and the total traffic is fixed (``STEPS`` steps of the whole grid), so cycles measure the rate.
With ``--triton`` it then runs Triton's tutorial matmul (``validation/frontends/triton_kernels.py``,
128x128x32 tiles, 4 warps, 3 stages) at M = N = 512, 1024, 2048 and K = 2048, for the rate per CTA.

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,gpu__time_duration.sum,\\
        lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,\\
        dram__bytes_read.sum,lts__cycles_elapsed.avg,lts__t_sectors.sum.peak_sustained \\
        --csv --page raw --print-units base --log-file $OUT/l2_bandwidth.csv \\
        python3 validation/probes/l2_bandwidth.py [--triton] | tee $OUT/l2_bandwidth_log.txt

The launches are listed in order on stdout (``warmup LABEL`` then ``launch LABEL``); ncu's rows
follow that order (torch's own kernels are told apart by name). Needs CuPy (and torch + triton for
``--triton``); ``CODE`` and :func:`launches` import anywhere.

gpusim's side (no GPU; gpusim, and triton for the matmuls)::

    python3 validation/probes/l2_bandwidth.py sim l2_bandwidth.csv OUT.json [--labels ...] [--jobs N]
            [--launch-jobs N] [--set FIELD=VALUE ...]

simulates the same launches in timing mode and writes, per launch, the H100's and gpusim's
``sm__cycles_elapsed.avg`` and L2 read sectors (``lts__t_sectors_srcunit_tex_op_read.sum``; gpusim's
``lts__t_sectors_op_read.sum``).
"""

from __future__ import annotations

import sys

CODE = r"""
// Every thread reads 16 bytes a step from in[(tid + step * stride) & mask]: the whole grid sweeps
// the buffer of mask + 1 float4s again and again.
extern "C" __global__ void ldcg(const float4* __restrict__ in, float* __restrict__ out, unsigned mask,
                                unsigned steps)
{
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
    float acc = 0.f;
#pragma unroll 4
    for (unsigned i = 0; i < steps; ++i) {
        float4 v = __ldcg(&in[(tid + i * stride) & mask]);
        acc += v.x + v.y + v.z + v.w;
    }
    out[tid] = acc;
}

// The same reads as cp.async.cg of 16 bytes into shared memory, 4 in flight per thread.
extern "C" __global__ void cpasync(const float4* __restrict__ in, float* __restrict__ out, unsigned mask,
                                   unsigned steps)
{
    __shared__ float4 buf[4][256];
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
    float acc = 0.f;
    for (unsigned i = 0; i < steps; i += 4) {
        for (unsigned s = 0; s < 4; ++s) {
            unsigned dst = (unsigned)__cvta_generic_to_shared(&buf[s][threadIdx.x]);
            const float4* src = &in[(tid + (i + s) * stride) & mask];
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src) : "memory");
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        acc += buf[0][threadIdx.x].x + buf[1][threadIdx.x].y + buf[2][threadIdx.x].z + buf[3][threadIdx.x].w;
    }
    out[tid] = acc;
}

// Writes: every thread stores 16 bytes a step to out[(tid + step * stride) & mask] with
// st.global.cg (the L1 does not keep stores; the L2 takes them).
extern "C" __global__ void stcg(const float4* __restrict__ in, float4* __restrict__ out, unsigned mask,
                                unsigned steps)
{
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
    float4 v = make_float4((float)tid, 0.f, 1.f, 2.f);
#pragma unroll 4
    for (unsigned i = 0; i < steps; ++i) {
        __stcg(&out[(tid + i * stride) & mask], v);
        v.x += 1.f;
    }
}

// Reads and writes: the same 16 bytes read with ld.global.cg and stored to a second buffer.
extern "C" __global__ void copycg(const float4* __restrict__ in, float4* __restrict__ out, unsigned mask,
                                  unsigned steps)
{
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
#pragma unroll 4
    for (unsigned i = 0; i < steps; ++i) {
        unsigned j = (tid + i * stride) & mask;
        __stcg(&out[j], __ldcg(&in[j]));
    }
}
"""

BLOCK = 256
CTAS_PER_SM = 8
STEPS = 64
#: buffer sizes (bytes): all held by the L2 (50 MiB), and one that is not
SIZES = (2 << 20, 8 << 20, 16 << 20, 32 << 20, 256 << 20)
#: Triton matmul shapes (M = N, K)
MATMULS = ((512, 2048), (1024, 2048), (2048, 2048))
#: buffer sizes of the write launches (``--writes``; each buffer, all held by the L2)
WRITE_SIZES = (2 << 20, 8 << 20, 16 << 20)
#: the CUDA kernels of :data:`CODE`, the reading ones first
KERNELS = ("ldcg", "cpasync", "stcg", "copycg")


def launches(sm_count: int = 132, triton: bool = False, writes: bool = False) -> list[tuple[str, str, int, int]]:
    """``(label, kernel, buffer bytes, CTAs)`` in launch order (``kernel`` is ``"matmul"`` for the
    Triton launches, whose ``buffer bytes`` is M = N and ``CTAs`` is K)."""
    rows = [(f"{k} S{s >> 20}MiB", k, s, sm_count * CTAS_PER_SM) for k in ("ldcg", "cpasync") for s in SIZES
            if k == "ldcg" or s <= 16 << 20]
    if triton:
        rows += [(f"triton_matmul M{m} K{k}", "matmul", m, k) for m, k in MATMULS]
    if writes:
        rows += [(f"{k} S{s >> 20}MiB", k, s, sm_count * CTAS_PER_SM) for k in ("stcg", "copycg") for s in WRITE_SIZES]
    return rows


def main(argv: list[str]) -> None:
    import cupy
    import numpy as np

    triton, writes = "--triton" in argv, "--writes" in argv
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    mod = cupy.RawModule(code=CODE, options=("-std=c++17",))
    fns = {k: mod.get_function(k) for k in KERNELS}
    buf = cupy.asarray(np.random.default_rng(0).standard_normal(max(SIZES) // 4, dtype=np.float32))
    out = cupy.zeros(sms * CTAS_PER_SM * BLOCK, cupy.float32)
    dst = cupy.zeros(max(WRITE_SIZES) // 4, cupy.float32)
    rows = launches(sms, triton, writes)
    mm = None
    if triton:
        import torch

        from validation.frontends import triton_kernels as tk
        mm = {}
        for m, k in MATMULS:
            a = torch.randn((m, k), device="cuda", dtype=torch.float16)
            b = torch.randn((k, m), device="cuda", dtype=torch.float16)
            mm[m, k] = (a, b, torch.empty((m, m), device="cuda", dtype=torch.float16))
    for warm in (True, False):  # compile everything first; ncu's rows are the second pass... and the first
        for label, kern, size, n in rows:
            if kern == "matmul":
                a, b, c = mm[size, n]
                tk.launch_matmul(tk.matmul_kernel, a, b, c)
            else:
                fns[kern]((n,), (BLOCK,), (buf, out if kern in KERNELS[:2] else dst, np.uint32(size // 16 - 1),
                                          np.uint32(STEPS)))
            cupy.cuda.runtime.deviceSynchronize()
            print(f"{'warmup' if warm else 'launch'} {label}", flush=True)


def gpu_rows(csv_path: str) -> dict[str, dict]:
    """label -> the H100's metrics of its ``launch`` (second-pass) row in ncu's CSV."""
    import csv
    import io
    import pathlib

    text = pathlib.Path(csv_path).read_text()
    rows = [r for r in csv.DictReader(io.StringIO(text[text.index('"ID"'):]))
            if r["ID"] and r["Kernel Name"] in KERNELS + ("matmul_kernel",)]
    names = {r["Kernel Name"] for r in rows}
    labels = [lab for lab, *_ in launches(132, triton="matmul_kernel" in names, writes="stcg" in names)]
    rows = rows[len(rows) // 2:]
    num = lambda v: float(v.replace(",", ""))  # noqa: E731
    metrics = {"cycles": "sm__cycles_elapsed.avg", "l2_read_sectors": "lts__t_sectors_srcunit_tex_op_read.sum",
               "l2_write_sectors": "lts__t_sectors_srcunit_tex_op_write.sum",
               "xbar_read_bytes": "l1tex__m_xbar2l1tex_read_bytes.sum"}
    return {lab: {k: num(r[m]) for k, m in metrics.items() if m in r} for lab, r in zip(labels, rows)}


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch of :func:`launches` on gpusim in timing mode (same sizes, same launch shape;
    ``jobs``: worker processes for its functional run)."""
    import time

    import numpy as np

    import gpusim

    t0 = time.perf_counter()
    _, kern, size, n = next(r for r in launches(132, True, True) if r[0] == label)
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs):
        if kern == "matmul":
            from gpusim.frontends.triton import jit
            from validation.frontends import triton_kernels as tk

            rng = np.random.default_rng(0)
            a = gpusim.asarray(rng.standard_normal((size, n)).astype(np.float16))
            b = gpusim.asarray(rng.standard_normal((n, size)).astype(np.float16))
            res = tk.launch_matmul(jit(tk.matmul_kernel), a, b, gpusim.zeros((size, size), np.float16))
        else:
            f = gpusim.RawModule(code=CODE, options=("-std=c++17",)).get_function(kern)
            buf = gpusim.asarray(np.random.default_rng(0).standard_normal(size // 4, dtype=np.float32))
            out = gpusim.zeros(n * BLOCK if kern in KERNELS[:2] else size // 4, np.float32)
            res = f((n,), (BLOCK,), (buf, out, np.uint32(size // 16 - 1), np.uint32(STEPS)))
    m = res.metrics
    return {"cycles": float(m["sm__cycles_elapsed.avg"]), "l2_read_sectors": float(m["lts__t_sectors_op_read.sum"]),
            "l2_write_sectors": float(m["lts__t_sectors_op_write.sum"]),
            "timed": str(res.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}


def sim(argv: list[str]) -> None:
    """``sim CSV OUT.json``: every launch on gpusim against the H100's rows (:func:`validation.probekit.sim_against_gpu`)."""
    from validation.probekit import sim_against_gpu

    sim_against_gpu("l2_bandwidth.py", argv, gpu_rows, simulate, ("l2_read_sectors", "L2 read sectors"))


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    if sys.argv[1:2] == ["sim"]:
        sim(sys.argv[2:])
    else:
        main(sys.argv[1:])
