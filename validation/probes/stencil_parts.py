"""GPU probe: which part of a stencil gpusim times too fast.

The corpus's stencils (fit half) are all under on the H100: ``stencil2d_5pt`` -11 %,
``stencil3d_7pt`` -15 %, ``stencil3d_coarse`` -28 % (session 40), with ``long_scoreboard`` 17.6
warp-cycles per issue on the H100 against 10.0 (session 39's ``corpus_stalls``) and fewer warps
active. This probe takes ``stencil2d_5pt`` and ``stencil3d_7pt`` apart, at the corpus's sizes and
launch shapes, into kernels that differ in one access each:

* 2-D (4,096 x 2,048 floats, CTAs of 32 x 8): ``copy`` (the centre only), ``row3`` (centre, -x,
  +x), ``col3`` (centre, -y, +y), ``full`` (the 5-point stencil), ``full_nostore`` /
  ``copy_nostore`` (the same loads, the store only where the value is a sentinel no input makes),
  ``copy l2out`` / ``full l2out`` (every store into the first 4 MiB of the output, which the L2
  keeps: the same stores, no DRAM writes), ``store_only`` (the stores alone) and ``copy store
  k/4`` (a copy storing k of every 4 lines: DRAM writes against time);
* 3-D (192^3 floats, CTAs of 32 x 4 x 2): ``xy5`` (centre and the four in-plane neighbours),
  ``z3`` (centre, -z, +z), ``full`` (the 7-point stencil);
* ``stencil3d_coarse`` (CTAs of 32 x 16 walking 8 planes), without its loop's global load
  (``no_global``), without its store (``nostore``) and storing into 4 MiB (``l2out``).

Each is launched twice; Nsight Compute's second row of each is the measurement. On the GPU
machine (repository root; clocks untouched)::

    ncu --clock-control none --metrics $(python3 validation/probes/stencil_parts.py --metrics) \\
        --csv --page raw --print-units base --log-file $OUT/stencil_parts.csv \\
        python3 validation/probes/stencil_parts.py --gpu

gpusim's side (sampled as the corpus is; ``--set`` for config overrides)::

    python3 validation/probes/stencil_parts.py --sim OUT.json [--jobs N] [--set FIELD=VALUE ...]

and the table: ``python3 validation/probes/stencil_parts.py --table stencil_parts.csv OUT.json``.
Needs CuPy (``--gpu``) or gpusim (``--sim``).
"""

from __future__ import annotations

import json
import pathlib
import sys

if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

CODE = r"""
#define C0 0.5f
#define C1 0.125f
#define SENTINEL 123456.0f
#define L2OUT (1 << 20)
extern "C" __global__ void s2(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int mode)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < nx - 1 && y >= 1 && y < ny - 1) {
        int i = y * nx + x;
        float v = mode == 8 ? C0 : in[i], r = v;
        if (mode == 1) r = C0 * v + C1 * (in[i - 1] + in[i + 1]);
        else if (mode == 2) r = C0 * v + C1 * (in[i - nx] + in[i + nx]);
        else if (mode == 3 || mode == 4 || mode == 7)
            r = C0 * v + C1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
        if (mode == 6 || mode == 7)      // the store into the first L2OUT floats only: it stays in L2
            out[i & (L2OUT - 1)] = r;
        else if (mode >= 9) {            // a copy storing (mode - 8) of every 4 lines of 32 floats
            if (((i >> 5) & 3) < mode - 8)
                out[i] = r;
        }
        else if ((mode != 4 && mode != 5) || r == SENTINEL)   // 4 and 5 (full, copy without the store) store nothing
            out[i] = r;
    }
}
extern "C" __global__ void s3(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz, int mode)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= 1 && x < nx - 1 && y >= 1 && y < ny - 1 && z >= 1 && z < nz - 1) {
        int plane = nx * ny, i = z * plane + y * nx + x;
        float v = in[i];
        if (mode == 0) out[i] = C0 * v + C1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
        else if (mode == 1) out[i] = C0 * v + C1 * (in[i - plane] + in[i + plane]);
        else out[i] = C0 * v + C1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - plane] + in[i + plane]);
    }
}
// stencil3d_coarse of the corpus (validation/corpus/kernels/stencil.cu), mode 0; mode 1: no global
// load in the loop (the plane above made from the current one); mode 2: the store only where the
// value is the sentinel; mode 3: every store into the first L2OUT floats (they stay in L2).
#define IN_X 32
#define IN_Y 16
#define Z_PER_CTA 8
extern "C" __global__ void s3c(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz, int mode)
{
    __shared__ float tile[IN_Y][IN_X];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * (IN_X - 2) + tx, y = blockIdx.y * (IN_Y - 2) + ty;
    int z0 = blockIdx.z * Z_PER_CTA + 1;
    int plane = nx * ny;
    bool inside = x < nx && y < ny;
    float below = 0.0f, cur = 0.0f, above = 0.0f;
    if (inside && z0 < nz) {
        below = in[(z0 - 1) * plane + y * nx + x];
        cur = in[z0 * plane + y * nx + x];
    }
    for (int z = z0; z < z0 + Z_PER_CTA && z < nz - 1; ++z) {
        if (inside)
            above = mode == 1 ? cur * 0.75f + below * 0.25f : in[(z + 1) * plane + y * nx + x];
        __syncthreads();
        tile[ty][tx] = cur;
        __syncthreads();
        if (tx >= 1 && tx < IN_X - 1 && ty >= 1 && ty < IN_Y - 1 && x < nx - 1 && y < ny - 1) {
            float r = C0 * cur + C1 * (tile[ty][tx - 1] + tile[ty][tx + 1] + tile[ty - 1][tx] + tile[ty + 1][tx]
                                       + below + above);
            if (mode == 3)
                out[(z * plane + y * nx + x) & (L2OUT - 1)] = r;
            else if (mode != 2 || r == SENTINEL)
                out[z * plane + y * nx + x] = r;
        }
        below = cur;
        cur = above;
    }
}
"""
NX, NY = 4096, 2048
N3 = 192
#: (label, kernel, mode) in launch order
LAUNCHES = [("2d copy", "s2", 0), ("2d row3", "s2", 1), ("2d col3", "s2", 2), ("2d full", "s2", 3),
            ("2d full_nostore", "s2", 4), ("2d copy_nostore", "s2", 5),
            ("2d copy l2out", "s2", 6), ("2d full l2out", "s2", 7), ("2d store_only", "s2", 8),
            ("2d copy store 1/4", "s2", 9), ("2d copy store 2/4", "s2", 10), ("2d copy store 3/4", "s2", 11),
            ("3d xy5", "s3", 0), ("3d z3", "s3", 1), ("3d full", "s3", 2),
            ("3d coarse", "s3c", 0), ("3d coarse no_global", "s3c", 1), ("3d coarse nostore", "s3c", 2),
            ("3d coarse l2out", "s3c", 3)]
METRICS = ("sm__cycles_elapsed.avg", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum",
           "lts__t_sectors_op_write.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
           "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
           "smsp__inst_executed.sum") + tuple(
    f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio"
    for r in ("drain", "lg_throttle", "barrier", "mio_throttle", "wait", "short_scoreboard", "not_selected"))
SIM_STALL = "smsp__pcsamp_warps_issue_stalled_long_scoreboard"


def _launch(xp, kernel: str, mode: int, bufs: dict):
    import numpy as np

    f = xp.RawModule(code=CODE).get_function(kernel)
    if kernel == "s2":
        a, b = bufs["2d"]
        return f((NX // 32, NY // 8), (32, 8), (a, b, np.int32(NX), np.int32(NY), np.int32(mode)))
    a, b = bufs["3d"]
    args = (a, b, np.int32(N3), np.int32(N3), np.int32(N3), np.int32(mode))
    if kernel == "s3c":
        return f((-(-(N3 - 2) // 30), -(-(N3 - 2) // 14), -(-(N3 - 2) // 8)), (32, 16), args)
    return f((N3 // 32, N3 // 4, N3 // 2), (32, 4, 2), args)


def _buffers(xp) -> dict:
    import numpy as np

    rng = np.random.default_rng(0)
    return {"2d": (xp.asarray(rng.random(NX * NY, np.float32)), xp.zeros(NX * NY, np.float32)),
            "3d": (xp.asarray(rng.random(N3 ** 3, np.float32)), xp.zeros(N3 ** 3, np.float32))}


def _sim_one(item) -> dict:
    import time

    import gpusim

    index, sets = item
    _, kernel, mode = LAUNCHES[index]
    overrides = dict(gpusim.config.parse_override(s) for s in sets) if sets else None
    t0 = time.perf_counter()
    with gpusim.Device("h100", mode="timing", overrides=overrides):
        r = _launch(gpusim, kernel, mode, _buffers(gpusim))
    m = r.metrics
    out = {k: float(m[k]) for k in METRICS if k in m}
    issued = m.get("smsp__inst_executed.sum", 0.0)
    out["long_scoreboard_per_issue"] = float(m.get(SIM_STALL, 0.0)) / issued if issued else 0.0
    return out | {"sampling": str(r.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}


def gpu_rows(path: pathlib.Path) -> dict[str, dict[str, float]]:
    """The ncu CSV's measured rows (the second launch of each) by label."""
    from validation import probekit

    return probekit.second_launches(path, ("s2", "s3", "s3c"), [lab for lab, *_ in LAUNCHES], METRICS)


def table(csv_path: pathlib.Path, sim_json: pathlib.Path) -> str:
    """Cycles, DRAM bytes, warps active and long_scoreboard, the H100 beside gpusim."""
    hw, sim = gpu_rows(csv_path), json.loads(sim_json.read_text())
    rows = ["| launch | H100 cycles | gpusim | error % | DRAM read MB H100 / gpusim | DRAM write MB | "
            "warps active % | long_scoreboard per issue |", "|---|---:|---:|---:|---|---|---|---|"]
    for label, *_ in LAUNCHES:
        h, s = hw.get(label), sim.get(label)
        if h is None or s is None:
            continue
        c = "sm__cycles_elapsed.avg"

        def pair(m, scale=1.0, h=h, s=s):
            return f"{h.get(m, 0) * scale:.1f} / {s.get(m, 0) * scale:.1f}"
        rows.append(f"| {label} | {h[c]:,.0f} | {s[c]:,.0f} | {100 * (s[c] / h[c] - 1):+.1f} | "
                    f"{pair('dram__bytes_read.sum', 1e-6)} | {pair('dram__bytes_write.sum', 1e-6)} | "
                    f"{pair('sm__warps_active.avg.pct_of_peak_sustained_active')} | "
                    f"{h['smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio']:.1f} / "
                    f"{s.get('long_scoreboard_per_issue', 0):.1f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    from validation import probekit

    a = probekit.parts_parser("validation/probes/stencil_parts.py")[0].parse_args(argv)
    if a.metrics:
        print(",".join(METRICS))
    elif a.table:
        print(table(*a.table))
    elif a.sim:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max(1, a.jobs), max_tasks_per_child=1) as pool:
            chosen = [i for i, (lab, *_) in enumerate(LAUNCHES) if a.labels is None or lab in a.labels]
            recs = list(pool.map(_sim_one, [(i, a.set) for i in chosen]))
        a.sim.write_text(json.dumps({LAUNCHES[i][0]: r for i, r in zip(chosen, recs)}, indent=1))
    else:
        import cupy

        bufs = _buffers(cupy)
        for label, kernel, mode in LAUNCHES:
            for _ in range(2):
                _launch(cupy, kernel, mode, bufs)
            cupy.cuda.runtime.deviceSynchronize()
            print(label, flush=True)


if __name__ == "__main__":
    main()
