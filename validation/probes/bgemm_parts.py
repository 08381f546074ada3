"""GPU probe: which phase of the corpus's ``bgemm16`` gpusim times too fast.

``bgemm16`` (fit half: a CTA of 16 x 16 threads per 16 x 16 x 16 product, both operands staged in
shared memory) is -23 % in gpusim. Session 39's warp states (``validation/reports/h100/corpus_stalls``)
show the H100 with 87.7 % of its warps active against gpusim's 70 %, and more ``mio_throttle``
(9.6 against 2.5 warps per issue), ``barrier`` (3.5 / 0.6) and ``not_selected`` (3.6 / 0.6): a
warp lives longer on the H100. This probe takes the kernel apart at the corpus's launch (8,192 CTAs
of 256 threads, 7.8 waves on 132 SMs), into kernels that differ in one part each:

* ``full``: the corpus kernel (two global loads, two shared stores, a barrier, 20 shared loads
  (16 ``LDS`` and 4 ``LDS.128``) and 16 FMAs, one global store);
* ``burst4``: the shared loads and FMAs four times over (a compiler barrier between the rounds
  makes each reload);
* ``noburst``: one shared load of each operand instead of the 16-step dot product;
* ``noglobal``: the operands computed from the indices (no global load);
* ``nostore``: the store only where the result is a sentinel no input makes;
* ``full k2``: the corpus kernel with dynamic shared memory that leaves 2 CTAs per SM.

Each also runs, on 2,112 CTAs (two waves), with per-warp clock stamps (lane 0 of each warp: ``%smid``, CTA, warp, ``clock64``
at entry, after the barrier (the global loads have returned), after the dot product (a branch on
its value), at the end (the store issued)), ``--stamps`` (each launch after a 256 MiB fill that evicts
the inputs from the L2, so that it starts cold as gpusim's and ncu's launches do). Nsight Compute's second row of each
unstamped kernel is the measurement. On the GPU machine (repository root; clocks untouched)::

    ncu --clock-control none --metrics $(python3 validation/probes/bgemm_parts.py --metrics) \\
        --csv --page raw --print-units base --log-file $OUT/bgemm_parts.csv \\
        python3 validation/probes/bgemm_parts.py --gpu
    python3 validation/probes/bgemm_parts.py --stamps $OUT/bgemm_stamps_h100.npz

gpusim's side: ``--sim OUT.json`` (unstamped, sampled as the corpus is; ``--set`` for config
overrides) and ``--sim-stamps OUT.npz`` (stamped, every warp timed in detail). ``--table CSV JSON
[H100_NPZ SIM_NPZ]`` prints both side by side. Needs CuPy (``--gpu``, ``--stamps``) or gpusim.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

CODE = r"""
#define SENTINEL 123456.0f
__device__ __forceinline__ long long clk() { long long t; asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) :: "memory"); return t; }
__device__ __forceinline__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }

// MODE 0 full, 1 burst4, 2 noburst, 3 noglobal, 4 nostore
template <int MODE, bool STAMP>
__device__ void body(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, long long* ts)
{
    __shared__ float as[16][16];
    __shared__ float bs[16][17];
    long long t0 = 0, t1 = 0, t2 = 0;
    if (STAMP) t0 = clk();
    size_t off = (size_t)blockIdx.x * 256;
    int tx = threadIdx.x, ty = threadIdx.y;
    if (MODE == 3) {
        as[ty][tx] = (float)((blockIdx.x + ty * 16 + tx) & 7);
        bs[ty][tx] = (float)((blockIdx.x + ty + tx * 16) & 7);
    } else {
        as[ty][tx] = A[off + ty * 16 + tx];
        bs[ty][tx] = B[off + ty * 16 + tx];
    }
    __syncthreads();
    if (STAMP) t1 = clk();
    float s = 0.0f;
    if (MODE == 2) {
        s = as[ty][tx] * bs[tx][ty];
    } else {
        for (int r = 0; r < (MODE == 1 ? 4 : 1); ++r) {
            asm volatile("" ::: "memory");
            for (int k = 0; k < 16; ++k)
                s += as[ty][k] * bs[k][tx];
        }
    }
    if (STAMP) {
        if (s == SENTINEL) C[0] = -1.0f;
        t2 = clk();
    }
    if (MODE != 4 || s == SENTINEL)
        C[off + ty * 16 + tx] = s;
    if (STAMP) {
        long long t3 = clk();
        int lin = ty * 16 + tx;
        if ((lin & 31) == 0) {
            long long* r = ts + 7 * ((long long)blockIdx.x * 8 + (lin >> 5));
            r[0] = smid(); r[1] = blockIdx.x; r[2] = lin >> 5; r[3] = t0; r[4] = t1; r[5] = t2; r[6] = t3;
        }
    }
}
#define K(name, mode) \
    extern "C" __global__ void name(const float* A, const float* B, float* C, long long* ts) { body<mode, false>(A, B, C, ts); } \
    extern "C" __global__ void name##_ts(const float* A, const float* B, float* C, long long* ts) { body<mode, true>(A, B, C, ts); }
K(full, 0) K(burst4, 1) K(noburst, 2) K(noglobal, 3) K(nostore, 4)
"""
CTAS = 8192
#: CTAs of the stamped launches: 2 waves of 8 CTAs on 132 SMs (gpusim times every warp of them in detail)
STAMP_CTAS = 2112
#: (label, kernel, dynamic shared bytes) in launch order
LAUNCHES = [("full", "full", 0), ("burst4", "burst4", 0), ("noburst", "noburst", 0), ("noglobal", "noglobal", 0),
            ("nostore", "nostore", 0), ("full k2", "full", 100 * 1024)]
STALLS = ("long_scoreboard", "mio_throttle", "barrier", "not_selected", "short_scoreboard", "wait", "drain",
          "math_pipe_throttle", "lg_throttle", "dispatch_stall", "no_instruction")
METRICS = ("sm__cycles_elapsed.avg", "sm__warps_active.avg.pct_of_peak_sustained_active", "smsp__inst_executed.sum",
           "dram__bytes_read.sum", "dram__bytes_write.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
           "smsp__inst_executed_pipe_lsu.sum") + tuple(
    f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALLS)


def _buffers(xp) -> tuple:
    """A, B (random small integers, so every sum is exact), C and the stamps' array."""
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.integers(-4, 5, CTAS * 256).astype(np.float32)
    b = rng.integers(-4, 5, CTAS * 256).astype(np.float32)
    return xp.asarray(a), xp.asarray(b), xp.zeros(CTAS * 256, np.float32), xp.zeros(7 * CTAS * 8, np.int64)


def _launch(xp, mod, label: str, bufs: tuple, stamp: bool):
    _, kernel, smem = next(x for x in LAUNCHES if x[0] == label)
    f = mod.get_function(kernel + ("_ts" if stamp else ""))
    if smem > 48 * 1024:
        f.max_dynamic_shared_size_bytes = smem
    return f((STAMP_CTAS if stamp else CTAS,), (16, 16), bufs, shared_mem=smem)


def compact(rows):
    """Stamps as int32 (rows of a launch never stamped dropped; clocks relative to the launch's
    first entry, which the phases do not depend on): a quarter of the int64 file."""
    import numpy as np

    r = np.asarray(rows, np.int64)
    r = r[r[:, 6] > 0].copy()
    if len(r):
        r[:, 3:] -= r[:, 3].min()
    return r.astype(np.int32)


def stamp_phases(rows) -> dict[str, float]:
    """Medians over warps of the phases (cycles) and the warps resident on an SM on average.

    ``rows``: int64 array (warps, 7) of smid, CTA, warp, entry, after the barrier, after the dot
    product, end. Resident warps: the sum over warps of (end - entry) over the SM's span (first
    entry to last end), averaged over SMs."""
    import numpy as np

    r = np.asarray(rows, np.int64)
    r = r[r[:, 6] > 0]
    out = {"load+barrier": float(np.median(r[:, 4] - r[:, 3])), "dot": float(np.median(r[:, 5] - r[:, 4])),
           "store": float(np.median(r[:, 6] - r[:, 5])), "warp life": float(np.median(r[:, 6] - r[:, 3]))}
    res = []
    for sm in np.unique(r[:, 0]):
        q = r[r[:, 0] == sm]
        span = q[:, 6].max() - q[:, 3].min()
        res.append((q[:, 6] - q[:, 3]).sum() / span if span > 0 else 0.0)
    out["resident warps"] = float(np.mean(res))
    return out


def _sim_one(item) -> dict:
    import time

    import numpy as np

    import gpusim

    label, sets, stamp = item
    overrides = dict(gpusim.config.parse_override(s) for s in sets) if sets else None
    t0 = time.perf_counter()
    with gpusim.Device("h100", mode="timing", overrides=overrides):
        bufs = _buffers(gpusim)
        r = _launch(gpusim, gpusim.RawModule(code=CODE, options=("-std=c++17",)), label, bufs, stamp)
        rows = np.asarray(bufs[3].get()).reshape(-1, 7) if stamp else None
    from validation import probekit

    m = r.metrics
    out = {k: float(m[k]) for k in METRICS if k in m} | probekit.stall_ratios(m, m.get("smsp__inst_executed.sum", 0.0),
                                                                             STALLS)
    out |= {"sampling": str(r.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}
    return (out, rows) if stamp else out


def gpu_rows(path: pathlib.Path) -> dict[str, dict[str, float]]:
    """The ncu CSV's measured rows (the second launch of each unstamped kernel) by label."""
    from validation import probekit

    return probekit.second_launches(path, {k for _, k, _ in LAUNCHES}, [lab for lab, *_ in LAUNCHES], METRICS)


def table(csv_path: pathlib.Path, sim_json: pathlib.Path, stamps: list[pathlib.Path]) -> str:
    """Cycles, warps active and the larger warp states, the H100 beside gpusim; then the stamps."""
    import numpy as np

    hw, sim = gpu_rows(csv_path), json.loads(sim_json.read_text())
    c = "sm__cycles_elapsed.avg"
    short = ("long_scoreboard", "mio_throttle", "barrier", "not_selected", "short_scoreboard")
    rows = ["| launch | H100 cycles | gpusim | error % | warps active % | " + " | ".join(short) + " |",
            "|---|---:|---:|---:|---|" + "---|" * len(short)]
    for label, *_ in LAUNCHES:
        h, s = hw.get(label), sim.get(label)
        if h is None or s is None:
            continue
        st = " | ".join(f"{h[f'smsp__average_warps_issue_stalled_{x}_per_issue_active.ratio']:.1f} / "
                        f"{s.get(f'smsp__average_warps_issue_stalled_{x}_per_issue_active.ratio', 0):.1f}" for x in short)
        w = "sm__warps_active.avg.pct_of_peak_sustained_active"
        rows.append(f"| {label} | {h[c]:,.0f} | {s[c]:,.0f} | {100 * (s[c] / h[c] - 1):+.1f} | "
                    f"{h[w]:.1f} / {s.get(w, 0):.1f} | {st} |")
    if stamps:
        hs, ss = (np.load(p) for p in stamps)
        rows += ["", "| stamped launch | load+barrier | dot | store | warp life | resident warps |",
                 "|---|---|---|---|---|---|"]
        for label in hs.files:
            if label not in ss.files:
                continue
            a, b = stamp_phases(hs[label]), stamp_phases(ss[label])
            rows.append(f"| {label} | " + " | ".join(f"{a[k]:.0f} / {b[k]:.0f}" for k in a) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="validation/probes/bgemm_parts.py")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--gpu", action="store_true", help="launch every unstamped kernel twice on the GPU, under ncu")
    g.add_argument("--stamps", type=pathlib.Path, help="launch the stamped kernels on the GPU; write their stamps")
    g.add_argument("--sim", type=pathlib.Path, help="run the unstamped kernels on gpusim; write the metrics (JSON)")
    g.add_argument("--sim-stamps", type=pathlib.Path, help="run the stamped kernels on gpusim; write their stamps")
    g.add_argument("--table", nargs="+", type=pathlib.Path, metavar="FILE",
                   help="NCU_CSV SIM_JSON [H100_STAMPS SIM_STAMPS]")
    g.add_argument("--metrics", action="store_true", help="print ncu's --metrics argument")
    p.add_argument("--jobs", type=int, default=1, help="launches simulated at once (--sim, --sim-stamps)")
    p.add_argument("--set", nargs="+", default=[], metavar="FIELD=VALUE", help="gpusim config overrides")
    p.add_argument("--labels", nargs="+", default=None, help="the launches to run (default: all)")
    a = p.parse_args(argv)
    labels = [lab for lab, *_ in LAUNCHES if a.labels is None or lab in a.labels]
    if a.metrics:
        print(",".join(METRICS))
    elif a.table:
        print(table(a.table[0], a.table[1], a.table[2:4]))
    elif a.sim or a.sim_stamps:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        import numpy as np

        stamp = a.sim_stamps is not None
        done: dict = {}
        with ProcessPoolExecutor(max(1, a.jobs), max_tasks_per_child=1) as pool:
            futures = {pool.submit(_sim_one, (lab, a.set, stamp)): lab for lab in labels}
            for f in as_completed(futures):  # written as each finishes: a run cut short keeps what it has
                done[futures[f]] = f.result()
                if stamp:
                    np.savez_compressed(a.sim_stamps, **{lab: compact(r[1]) for lab, r in done.items()})
                    a.sim_stamps.with_suffix(".json").write_text(json.dumps({k: r[0] for k, r in done.items()}, indent=1))
                else:
                    a.sim.write_text(json.dumps(done, indent=1))
                print(futures[f], flush=True)
    else:
        import cupy
        import numpy as np

        mod = cupy.RawModule(code=CODE, options=("-std=c++17",))
        bufs = _buffers(cupy)
        scratch = cupy.zeros(1 << 26, np.float32) if a.stamps is not None else None  # 256 MiB
        arrays = {}
        for label in labels:
            for _ in range(2):
                if scratch is not None:  # evict the inputs from the L2: stamped launches start cold, as ncu's do
                    scratch.fill(1.0)
                _launch(cupy, mod, label, bufs, a.stamps is not None)
            cupy.cuda.runtime.deviceSynchronize()
            if a.stamps is not None:
                arrays[label] = compact(bufs[3].get().reshape(-1, 7))
            print(label, flush=True)
        if a.stamps is not None:
            np.savez_compressed(a.stamps, **arrays)


if __name__ == "__main__":
    main()
