"""GPU probe: what contended global atomics cost, by how the lanes' addresses are shared.

The corpus's contended atomics and global-atomic histograms (``validation/corpus``) take 2.4-20.4 M
cycles on the H100 where gpusim gives 32-112 K: the L2 applies atomics to one address, one line or
one slice in turn, and gpusim serialises only the lanes of one warp. This probe separates the
cases. Every thread of a GPU-filling grid (8 CTAs of 256 threads per SM, ``ITERS`` atomics each)
adds 1 to the word ``(t % A) * S`` of one buffer:

* ``A`` = 1: every lane of every warp on one address;
* ``A`` = 32, ``S`` = 1: each warp's 32 lanes on 32 different words of one 128 B line;
* ``A`` = 32, ``S`` = 32: one word in each of 32 lines (4 KB);
* ``A`` = 32, ``S`` = 1024: 32 lines 4 KB apart (128 KB);
* ``A`` = 256, ``S`` = 1 / 32: 256 words in 8 lines / 256 lines;
* ``A`` = 4096, ``S`` = 32: 4,096 lines (512 KB, every slice many times).

each as ``red`` (``atomicAdd`` with the result unused) and, for some, ``atom`` (the old value
stored) and ``red.f32``. The atomics per launch are fixed (``CTAS x 256 x ITERS``), so cycles
measure the rate.

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,gpu__time_duration.sum,\\
        lts__t_requests_srcunit_tex_op_atom.sum,lts__t_requests_srcunit_tex_op_red.sum,\\
        lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum \\
        --csv --page raw --print-units base --log-file $OUT/atomic_contention.csv \\
        python3 validation/probes/atomic_contention.py | tee $OUT/atomic_contention_log.txt

The launches are listed in order on stdout (``launch LABEL``); ncu's rows follow that order.
Needs CuPy only (``CODE`` and :func:`launches` import anywhere).

The same launches on gpusim (timing mode, same launch shapes), against the H100's CSV::

    python3 validation/probes/atomic_contention.py sim atomic_contention.csv OUT.json [--labels ...] [--jobs N]
"""

from __future__ import annotations

import sys

CODE = r"""
// Thread t adds 1 to base[(t % A) * S], ITERS times (the result unused: red.global.add.u32).
extern "C" __global__ void red_u32(unsigned* base, unsigned A, unsigned S, unsigned iters)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned* p = base + (t % A) * S;
    for (unsigned i = 0; i < iters; ++i)
        atomicAdd(p, 1u);
}

// The same with the old value kept (atom.global.add.u32).
extern "C" __global__ void atom_u32(unsigned* base, unsigned* old, unsigned A, unsigned S, unsigned iters)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned* p = base + (t % A) * S;
    unsigned acc = 0;
    for (unsigned i = 0; i < iters; ++i)
        acc += atomicAdd(p, 1u);
    old[t] = acc;
}

// Float adds, the result unused (red.global.add.f32).
extern "C" __global__ void red_f32(float* base, unsigned A, unsigned S, unsigned iters)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    float* p = base + (t % A) * S;
    for (unsigned i = 0; i < iters; ++i)
        atomicAdd(p, 1.0f);
}
"""

BLOCK = 256
CTAS_PER_SM = 8
ITERS = 4
#: (kernel, A addresses, S words apart)
PATTERNS = (
    ("red_u32", 1, 1), ("red_u32", 32, 1), ("red_u32", 32, 32), ("red_u32", 32, 1024),
    ("red_u32", 256, 1), ("red_u32", 256, 32), ("red_u32", 4096, 32),
    ("atom_u32", 1, 1), ("atom_u32", 32, 1), ("atom_u32", 32, 32), ("atom_u32", 4096, 32),
    ("red_f32", 1, 1), ("red_f32", 32, 1), ("red_f32", 32, 32), ("red_f32", 4096, 32),
)


def launches(sm_count: int = 132) -> list[tuple[str, str, int, int, int]]:
    """``(label, kernel, A, S, CTAs)`` in launch order."""
    return [(f"{k} A{a} S{s}", k, a, s, sm_count * CTAS_PER_SM) for k, a, s in PATTERNS]


def main() -> None:
    import cupy
    import numpy as np

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    mod = cupy.RawModule(code=CODE)
    base = cupy.zeros(4096 * 1024, cupy.uint32)
    old = cupy.zeros(sms * CTAS_PER_SM * BLOCK, cupy.uint32)
    for warm in (True, False):
        for label, k, a, s, n in launches(sms):
            f = mod.get_function(k)
            args = (base, old) if k == "atom_u32" else (base,)
            f((n,), (BLOCK,), args + (np.uint32(a), np.uint32(s), np.uint32(ITERS)))
            cupy.cuda.runtime.deviceSynchronize()
            print(f"{'warmup' if warm else 'launch'} {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """The ncu CSV's measured launches (the last ``len(launches())`` rows: the warm-up
    launches come first), by label: cycles and L2 atomic requests."""
    import csv

    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if line.startswith('"')))
    labels = [r[0] for r in launches()]
    rows = rows[-len(labels):]

    def num(v: str) -> float:
        return float(v.replace(",", "")) if v else 0.0
    return {lab: {"cycles": num(r["sm__cycles_elapsed.avg"]),
                  "l2_requests": num(r["lts__t_requests_srcunit_tex_op_atom.sum"])
                  + num(r["lts__t_requests_srcunit_tex_op_red.sum"])} for lab, r in zip(labels, rows)}


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1,
             sampling: bool = True, ctas: int | None = None) -> dict:
    """One launch of :func:`launches` on gpusim in timing mode (the same launch shape unless
    ``ctas`` is given; ``sampling`` False: the detailed engine)."""
    import time

    import numpy as np

    import gpusim

    t0 = time.perf_counter()
    _, k, a, s, n = next(r for r in launches() if r[0] == label)
    n = ctas or n
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs, sampling=sampling):
        f = gpusim.RawModule(code=CODE).get_function(k)
        base = gpusim.zeros(4096 * 1024, np.uint32)
        old = gpusim.zeros(n * BLOCK, np.uint32)
        args = (base, old) if k == "atom_u32" else (base,)
        res = f((n,), (BLOCK,), args + (np.uint32(a), np.uint32(s), np.uint32(ITERS)))
    m = res.metrics
    return {"cycles": float(m["sm__cycles_elapsed.avg"]),
            "l2_requests": float(m["lts__t_requests_srcunit_tex_op_atom.sum"] + m["lts__t_requests_srcunit_tex_op_red.sum"]),
            "timed": str(res.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}


def sim(argv: list[str]) -> None:
    """``sim CSV OUT.json``: every launch on gpusim against the H100's rows (:func:`validation.probekit.sim_against_gpu`)."""
    from validation.probekit import sim_against_gpu

    sim_against_gpu("atomic_contention.py", argv, gpu_rows, simulate, ("l2_requests", "L2 atomic requests"))


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    if sys.argv[1:2] == ["sim"]:
        sim(sys.argv[2:])
    else:
        main()
