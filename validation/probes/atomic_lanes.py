"""GPU probe: what a contended atomic request costs by its lanes, sectors and repeated addresses.

``atomic_contention.py`` measured requests whose lanes are all distinct (32 words of one line: 4.67
cycles a request at the line's slice) or all one address (1.45 an update). The corpus's contended
``atom``/``red`` (fit half: 64 counters in two lines, random keys) are 13 % slower on the H100 than
gpusim's rule (1.48 cycles a request + 1.05 a further sector) gives: their warps mix distinct words
and repeated ones (4.8 requests a warp, 2.7 sectors and 6.7 lanes a request). This probe holds the
line's slice busy with one pattern at a time: every warp of a GPU-filling grid (8 CTAs of 256
threads an SM, ``ITERS`` reductions a thread) adds 1 to words of a 512 B granule (one slice), lane l
to ``idx[l]`` (``atomicAdd``, the result unused: NVVM emits ``atom.add.u32``). A pattern ``(L, s, d, m)`` puts a warp's 32 lanes on L lines,
s sectors of each, d words of each sector, each word m lanes (L s d m = 32): gpusim's L1 splits it
into m L requests (the k-th lane on an address goes in the k-th request of its line) of s sectors and
s d lanes each. ``random64`` is the corpus's: lane keys uniform over 64 words (the table differs per
warp, ``WARPS_RANDOM`` tables). Each pattern runs with integer adds, then with float adds.

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,lts__t_requests_srcunit_tex_op_atom.sum,\\
        lts__t_requests_srcunit_tex_op_red.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum \\
        --csv --page raw --print-units base --log-file $OUT/atomic_lanes.csv \\
        python3 validation/probes/atomic_lanes.py [--max] | tee $OUT/atomic_lanes_log.txt

(``--max``: :data:`MAX_PATTERNS` with integer adds and with integer maxima, ``atomicMax``: does a
maximum cost its slice what an add does? The corpus's ``red_shared_max_s32`` ends in one.)

(each launch twice: the warm-up rows come first). gpusim's side, sampled as the corpus is::

    python3 validation/probes/atomic_lanes.py sim atomic_lanes.csv OUT.json [--jobs N] [--set FIELD=VALUE ...]

Needs CuPy (the GPU side) or gpusim (``sim``); ``CODE``, :func:`index_table` and :func:`launches`
import anywhere.
"""

from __future__ import annotations

import sys

CODE = r"""
// Thread t adds 1 to word idx[t % tab] of the first 512 B granule in buf, iters times (the result
// unused; NVVM emits atom.global.add.u32).
extern "C" __global__ void red_idx(unsigned* buf, const unsigned* __restrict__ idx, unsigned tab, unsigned iters)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned* base = (unsigned*)(((unsigned long long)buf + 511) & ~511ull);
    unsigned* p = base + idx[t % tab];
    for (unsigned i = 0; i < iters; ++i)
        atomicAdd(p, 1u);
}

// The same with float adds (NVVM emits red.global.add.f32).
extern "C" __global__ void red_idx_f32(float* buf, const unsigned* __restrict__ idx, unsigned tab, unsigned iters)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    float* base = (float*)(((unsigned long long)buf + 511) & ~511ull);
    float* p = base + idx[t % tab];
    for (unsigned i = 0; i < iters; ++i)
        atomicAdd(p, 1.0f);
}

// The same with integer maxima of rising values (the result unused: NVVM emits red.global.max.s32).
extern "C" __global__ void red_idx_max(int* buf, const unsigned* __restrict__ idx, unsigned tab, unsigned iters)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    int* base = (int*)(((unsigned long long)buf + 511) & ~511ull);
    int* p = base + idx[t % tab];
    for (unsigned i = 0; i < iters; ++i)
        atomicMax(p, (int)(t * iters + i));
}
"""

BLOCK = 256
CTAS_PER_SM = 8
ITERS = 4
WARPS_RANDOM = 2048       #: warps of distinct random tables for ``random64``
#: label -> (L lines, s sectors a line, d words a sector, m lanes a word), L s d m = 32; or "random64"
PATTERNS = {
    "L1 s4 d8 m1": (1, 4, 8, 1),    # atomic_contention's A32 S1: one request of 4 sectors
    "L1 s4 d4 m2": (1, 4, 4, 2),
    "L1 s4 d2 m4": (1, 4, 2, 4),
    "L1 s4 d1 m8": (1, 4, 1, 8),    # 8 requests of 4 sectors, 4 lanes each
    "L1 s1 d8 m4": (1, 1, 8, 4),    # 4 requests of 1 sector, 8 lanes each
    "L1 s2 d8 m2": (1, 2, 8, 2),
    "L1 s1 d1 m32": (1, 1, 1, 32),  # atomic_contention's A1: 32 requests of one lane
    "L2 s4 d4 m1": (2, 4, 4, 1),    # two lines of one granule: 2 requests of 4 sectors
    "L2 s2 d2 m4": (2, 2, 2, 4),
    "random64": "random64",
}


def index_table(label: str):
    """The word index of each lane (uint32): 32 for a fixed pattern (every warp the same), or
    ``32 x WARPS_RANDOM`` for ``random64`` (seed 0). Words are counted from a 512 B-aligned base:
    line j of a pattern is words 32 j..32 j + 31, all in the first granule."""
    import numpy as np

    p = PATTERNS[label]
    if p == "random64":
        return np.random.default_rng(0).integers(0, 64, 32 * WARPS_RANDOM).astype(np.uint32)
    n_lines, s, d, m = p
    assert n_lines * s * d * m == 32, label
    words = [32 * line + 8 * sec + w for line in range(n_lines) for sec in range(s) for w in range(d)]
    return np.repeat(np.asarray(words, np.uint32), m)


#: the run with maxima (``--max``, session 52): these patterns with integer adds, then with maxima
MAX_PATTERNS = ("L1 s1 d8 m4", "L1 s4 d8 m1", "L1 s1 d1 m32", "random64")


def launches(sm_count: int = 132, maxima: bool = False) -> list[tuple[str, int]]:
    """``(label, CTAs)`` in launch order: every pattern with integer adds, then with float adds
    (labels ending " f32"); ``maxima``: :data:`MAX_PATTERNS` with integer adds, then with integer
    maxima (labels ending " max")."""
    ops, pats = (("", " max"), MAX_PATTERNS) if maxima else (("", " f32"), tuple(PATTERNS))
    return [(lab + f, sm_count * CTAS_PER_SM) for f in ops for lab in pats]


def _launch(xp, label: str, ctas: int):
    import numpy as np

    fp, mx = label.endswith(" f32"), label.endswith(" max")
    f = xp.RawModule(code=CODE).get_function("red_idx_f32" if fp else "red_idx_max" if mx else "red_idx")
    base = xp.zeros(1024, np.float32 if fp else np.int32 if mx else np.uint32)   # its first 512 B-aligned granule
    idx = index_table(label.removesuffix(" f32").removesuffix(" max"))
    return f((ctas,), (BLOCK,), (base, xp.asarray(idx), np.uint32(len(idx)), np.uint32(ITERS)))


def main() -> None:
    import cupy

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    for warm in (True, False):
        for label, n in launches(sms, "--max" in sys.argv):
            _launch(cupy, label, n)
            cupy.cuda.runtime.deviceSynchronize()
            print(f"{'warmup' if warm else 'launch'} {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """The ncu CSV's measured launches (the last ``len(launches())`` rows), by label: cycles and L2
    atomic requests (``atom`` and ``red``; NVVM emits ``atom.add.u32`` with the result unused for the
    integer kernel and ``red.add.f32`` for the float one)."""
    import csv

    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if line.startswith('"')))
    labels = [lab for lab, _ in launches(maxima=any(r["Kernel Name"] == "red_idx_max" for r in rows))]
    rows = rows[-len(labels):]

    def num(v: str) -> float:
        return float(v.replace(",", "")) if v else 0.0
    return {lab: {"cycles": num(r["sm__cycles_elapsed.avg"]),
                  "l2_requests": sum(num(r.get(f"lts__t_requests_srcunit_tex_op_{op}.sum", "")) for op in ("atom", "red"))}
            for lab, r in zip(labels, rows)}


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch on gpusim in timing mode, the GPU's launch shape."""
    import time

    import gpusim

    t0 = time.perf_counter()
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs):
        res = _launch(gpusim, label, dict(launches() + launches(maxima=True))[label])
    m = res.metrics
    return {"cycles": float(m["sm__cycles_elapsed.avg"]),
            "l2_requests": float(m["lts__t_requests_srcunit_tex_op_atom.sum"] + m["lts__t_requests_srcunit_tex_op_red.sum"]),
            "timed": str(res.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    from validation.probekit import probe_main

    probe_main("atomic_lanes.py", sys.argv[1:], main, gpu_rows, simulate, ("l2_requests", "L2 red requests"))
