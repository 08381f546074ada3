"""GPU probe: what a shared-memory load costs the SM, by its width and by how many lanes share an address.

``bgemm_parts.py`` found the corpus's ``bgemm16`` (fit half, -24 % in gpusim) throttled on the H100's
MIO queue (9.6 warps per issue, gpusim 2.8) while ncu counted its data stage 54 % busy, and
``mio_pressure.py`` found 128-bit shared loads slowing the SM's other work more than gpusim charges;
``data_stage.py`` had measured only 32-bit shared loads (1.14 cycles a conflict-free wavefront).
gpusim charges a shared load its wavefronts (``docs/model/timing.md``; hardware-facts §5: 1 / 2 / 4
for a conflict-free 32 / 64 / 128-bit load, fewer where lanes share an address). This probe measures
the SM's cycles per warp-load of each kind, where nothing else binds:

* ``lds32`` / ``lds64`` / ``lds128``: lane ``l`` reads its own 4 / 8 / 16 bytes (1 / 2 / 4 wavefronts);
* ``lds32_b`` / ``lds64_b`` / ``lds128_b``: every lane the same word(s) (1 / 1 / 2 wavefronts);
* ``lds128_h``: each half-warp one 16-byte address, 64 bytes apart (``bgemm16``'s ``as[ty][k..k+3]``;
  2 wavefronts);
* ``lds32_h``: lanes ``l`` and ``l + 16`` the same word (``bgemm16``'s ``bs[k][tx]``; 1 wavefront);
* ``bgemm_dot``: ``bgemm16``'s mix, 2 ``lds128_h`` and 8 ``lds32_h`` an iteration.

Every kind runs ``ITERS`` iterations of 8 independent loads a warp (10 for ``bgemm_dot``), folded
into a sum by 3-input adds, at 8 CTAs of 256 threads an SM (64 warps); the slope between the two
iteration counts is the SM's cycles an iteration, which the table divides by the warp-loads an SM
issues an iteration. Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics $(python3 validation/probes/lds_width.py --metrics) \\
        --csv --page raw --print-units base --log-file $OUT/lds_width.csv python3 validation/probes/lds_width.py

Each launch runs twice (warm-up, then measured). :func:`stamps` runs ``lds32`` or an issue-bound
``FFMA`` loop once with per-warp clock stamps (the order in which an SM serves its CTAs). gpusim's side:
``python3 validation/probes/lds_width.py sim lds_width.csv OUT.json [--jobs N]``; the table:
``python3 validation/probes/lds_width.py --table lds_width.csv [OUT.json]``. Needs CuPy only on the GPU.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))

#: kind -> (PTX vector width in 32-bit words, lane's byte offset as a C expression of ``l``, loads an
#: iteration, wavefronts a warp-load by hardware-facts §5)
KINDS = {
    "lds32": (1, "4 * l", 8, 1), "lds32_b": (1, "0", 8, 1), "lds32_h": (1, "4 * (l % 16)", 8, 1),
    "lds64": (2, "8 * l", 8, 2), "lds64_b": (2, "0", 8, 1),
    "lds128": (4, "16 * l", 8, 4), "lds128_b": (4, "0", 8, 2), "lds128_h": (4, "64 * (l / 16)", 8, 2),
}
ITERS = (64, 256)
CTAS_PER_SM, BLOCK = 8, 256


def _load(width: int, base: str, offset: int) -> str:
    """One ``ld.shared`` of ``width`` words at ``base + offset`` (an immediate), added into ``acc``."""
    if width == 1:
        return f'{{ unsigned x; asm volatile("ld.shared.u32 %0, [%1+{offset}];" : "=r"(x) : "r"({base})); acc += x; }}'
    regs = ", ".join(f"%{i}" for i in range(width))
    outs = ", ".join(f'"=r"(v[{i}])' for i in range(width))
    return (f'{{ unsigned v[{width}]; asm volatile("ld.shared.v{width}.u32 {{{regs}}}, [%{width}+{offset}];" : '
            f'{outs} : "r"({base})); acc += {" + ".join(f"v[{i}]" for i in range(width))}; }}')


def _kernel(name: str, loads: list[tuple[int, str]]) -> str:
    """A kernel running ``iters`` iterations of ``loads`` ((width in words, the lane's byte offset as a
    C expression of ``l``) each), at rows 512 bytes apart; the rows' base moves between two 8 KiB
    halves each iteration. Each distinct lane offset gets one base register, so that every load is
    one ``LDS`` at an immediate offset."""
    lanes = list(dict.fromkeys(lane for _, lane in loads))
    bases = "\n".join(f"        unsigned a{j} = a + {lane};" for j, lane in enumerate(lanes))
    body = "\n".join(f"        {_load(w, f'a{lanes.index(lane)}', 512 * r)}" for r, (w, lane) in enumerate(loads))
    return f"""
extern "C" __global__ void __launch_bounds__({BLOCK}) {name}(unsigned iters, unsigned* out)
{{
    __shared__ __align__(16) unsigned s[4096];   // 16 KiB: two 8 KiB halves
    for (unsigned i = threadIdx.x; i < 4096; i += blockDim.x) s[i] = i;
    __syncthreads();
    unsigned l = threadIdx.x & 31, acc = 0;
    (void)l;
    unsigned base = (unsigned)__cvta_generic_to_shared(s);
#pragma unroll 1
    for (unsigned k = 0; k < iters; ++k) {{
        unsigned a = base + ((k & 1u) << 13);
{bases}
{body}
    }}
    if (acc == 0xdeadbeefu) out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}}
"""


#: bgemm16's dot product an iteration: 2 half-warp-broadcast LDS.128 and 8 half-warp LDS.32
BGEMM_DOT = ([(4, "64 * (l / 16)")] + [(1, "4 * (l % 16)")] * 4) * 2


def _source() -> str:
    return "".join(_kernel(name, [(width, lane)] * n) for name, (width, lane, n, _) in KINDS.items()) + _kernel(
        "bgemm_dot", BGEMM_DOT)


CODE = _source()
#: after a loop timed from ``t0``: lane 0 of each warp writes (SM, hardware warp slot, the loop's start
#: and end on its SM's clock64) to ``stamps[4 * global warp]`` (the stamped kernels' common end)
_STAMP = r"""    long long t1 = clock64();
    if (l == 0) {
        unsigned sm, slot;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        asm volatile("mov.u32 %0, %%warpid;" : "=r"(slot));
        long long* o = stamps + 4 * ((blockIdx.x * blockDim.x + threadIdx.x) / 32);
        o[0] = sm; o[1] = slot; o[2] = t0; o[3] = t1;
    }
"""
#: ``lds32`` with clock stamps (:data:`_STAMP`)
STAMPED = _kernel("lds32_stamped", [(1, "4 * l")] * 8).replace(
    "(unsigned iters, unsigned* out)", "(unsigned iters, unsigned* out, long long* stamps)").replace(
    "#pragma unroll 1", "long long t0 = clock64();\n#pragma unroll 1").replace(
    "    if (acc == 0xdeadbeefu)", _STAMP + "    if (acc == 0xdeadbeefu)")
#: (label, kernel, iterations) in launch order
PATTERNS = tuple((f"{k} i{i}", k, i) for k in (*KINDS, "bgemm_dot") for i in ITERS)
#: loads an iteration and wavefronts a warp-load (§5), per kernel
LOADS = {k: (v[2], v[3]) for k, v in KINDS.items()} | {"bgemm_dot": (10, 1.2)}
#: Nsight Compute's warp states, each reported per issue-active cycle
STATES = ("barrier", "branch_resolving", "dispatch_stall", "drain", "lg_throttle", "long_scoreboard",
          "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction", "not_selected", "selected",
          "short_scoreboard", "sleeping", "tex_throttle", "wait")
COUNTERS = {"cycles": ("sm__cycles_elapsed.avg",), "instructions": ("smsp__inst_executed.sum",),
            "shared_wavefronts": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",),
            "shared_loads": ("smsp__inst_executed_op_shared_ld.sum",),
            "warps_active_pct": ("sm__warps_active.avg.pct_of_peak_sustained_active",),
            "registers": ("launch__registers_per_thread",)} | {
    s: (f"smsp__average_warps_issue_stalled_{s}_per_issue_active.ratio",) for s in STATES}
METRICS = sorted({m for names in COUNTERS.values() for m in names})


def _args(xp, np, iters: int, ctas: int):
    return (np.uint32(iters), xp.zeros(ctas * BLOCK, np.uint32))


def main() -> None:
    import cupy
    import numpy as np

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    mod = cupy.RawModule(code=CODE)
    for label, kernel, iters in PATTERNS:
        f = mod.get_function(kernel)
        for _ in range(2):
            f((sms * CTAS_PER_SM,), (BLOCK,), _args(cupy, np, iters, sms * CTAS_PER_SM))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


#: the same stamps around an issue-bound loop without memory: 8 independent FFMA chains, 32 FFMA an iteration
#: (whether the order in which an SM serves its CTAs is the MIO queue's or the schedulers')
STAMPED_FMA = r"""
extern "C" __global__ void __launch_bounds__(256) fma_stamped(unsigned iters, unsigned* out, long long* stamps)
{
    unsigned l = threadIdx.x & 31;
    float a[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) a[j] = (float)(threadIdx.x + j) * 1e-3f;
    long long t0 = clock64();
#pragma unroll 1
    for (unsigned k = 0; k < iters; ++k) {
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
            for (int j = 0; j < 8; ++j) a[j] = fmaf(a[j], 0.999f, 0.5f);
    }
""" + _STAMP + r"""    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) s += a[j];
    if (s == -1.0f) out[blockIdx.x * blockDim.x + threadIdx.x] = 1u;
}
"""


def stamps(xp, sms: int, iters: int = 256, kernel: str = "lds32_stamped"):
    """Run ``kernel`` (:data:`STAMPED`'s ``lds32_stamped`` or :data:`STAMPED_FMA`'s ``fma_stamped``) once on
    ``xp`` (cupy, or gpusim timed in detail) at :data:`CTAS_PER_SM` CTAs
    on each of ``sms`` SMs; returns an int64 array of shape (warps, 4): SM, warp slot, loop start, loop
    end (clock64 of the warp's SM)."""
    import numpy as np

    ctas = sms * CTAS_PER_SM
    out = xp.zeros(ctas * BLOCK * 4 // 32, np.int64)
    code = STAMPED if kernel == "lds32_stamped" else STAMPED_FMA
    xp.RawModule(code=code).get_function(kernel)((ctas,), (BLOCK,), _args(xp, np, iters, ctas) + (out,))
    return np.asarray(out.get()).reshape(-1, 4)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """label -> :data:`COUNTERS` from ncu's CSV (the second row of each launch)."""
    from validation import probekit

    return probekit.counter_rows(path, set(LOADS), [p[0] for p in PATTERNS], COUNTERS)


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch of :data:`PATTERNS` on gpusim in timing mode (sampled as any launch is), the
    grid :data:`CTAS_PER_SM` CTAs on each of ``gpu``'s SMs."""
    import time

    import numpy as np

    import gpusim
    from validation.probekit import counter_values, stall_ratios

    t0 = time.perf_counter()
    kernel, iters = next(p[1:] for p in PATTERNS if p[0] == label)
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs) as dev:
        ctas = dev.config.sm_count * CTAS_PER_SM
        res = gpusim.RawModule(code=CODE).get_function(kernel)((ctas,), (BLOCK,), _args(gpusim, np, iters, ctas))
    m = dict(res.metrics)
    m |= stall_ratios(m, m["smsp__inst_executed.sum"], STATES)
    return counter_values(m, COUNTERS) | {"timed": str(res.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}


def table(csv_path: str, sim_json: str | None = None) -> str:
    """Per kind: the SM's cycles a warp-load (slope over :data:`ITERS`, 64 warps an SM) on the GPU and
    in gpusim, ncu's shared wavefronts a warp-load, and the MIO throttle of the longer launch."""
    import json

    hw = gpu_rows(csv_path)
    sim = {}
    if sim_json:
        sim = {r["launch"]: r["gpusim"] for r in json.loads(open(sim_json).read())["rows"]}
    lo, hi = ITERS
    warps = CTAS_PER_SM * BLOCK // 32
    out = ["| kind | wavefronts (§5) | H100 wavefronts a load | H100 cycles a load | gpusim cycles a load | "
           "H100 / gpusim mio_throttle |", "|---|---:|---:|---:|---:|---|"]
    for k, (n, wf) in LOADS.items():
        a, b = hw.get(f"{k} i{lo}"), hw.get(f"{k} i{hi}")
        if a is None or b is None:
            continue
        loads = (hi - lo) * n * warps
        cyc = (b["cycles"] - a["cycles"]) / loads
        hw_wf = (b["shared_wavefronts"] - a["shared_wavefronts"]) / (loads * 132)
        s_lo, s_hi = sim.get(f"{k} i{lo}"), sim.get(f"{k} i{hi}")
        s = f"{(s_hi['cycles'] - s_lo['cycles']) / loads:.2f}" if s_lo and s_hi else ""
        mio = f"{b['mio_throttle']:.1f} / {s_hi['mio_throttle']:.1f}" if s_hi else f"{b['mio_throttle']:.1f}"
        out.append(f"| {k} | {wf} | {hw_wf:.2f} | {cyc:.2f} | {s} | {mio} |")
    return "\n".join(out)


if __name__ == "__main__":
    from validation.probekit import probe_main
    if sys.argv[1:] == ["--metrics"]:
        print(",".join(METRICS))
    else:
        probe_main("lds_width.py", sys.argv[1:], main, gpu_rows, simulate, ("instructions", "instructions"), table)
