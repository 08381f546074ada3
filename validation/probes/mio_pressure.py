"""GPU probe: does a global load wait behind an SM's shared-memory traffic?

``bgemm_parts.py`` (the corpus's ``bgemm16`` taken apart) showed the H100's global loads taking
longer when other CTAs of the SM run their shared-load bursts (clock stamps: entry to the barrier
after the loads 1,634 cycles against 881 without the bursts), where gpusim's did not move. This
probe measures it directly. One CTA of 1,024 threads per SM, on 8 SMs: warp 0 chases a pointer
through 1 MiB (``ld.global.cg``, one lane), timing 64 steps with ``clock64`` after walking the same
steps once (so every timed step is an L2 hit); warps 1-31 meanwhile run a loop of shared accesses
of one kind:

* ``idle``: none (the background warps exit at once);
* ``lds32``: ``ld.shared.f32``, lane l reads word l (1 wavefront);
* ``lds128b``: ``ld.shared.v4.f32``, every lane the same 16 bytes (a broadcast);
* ``lds128``: ``ld.shared.v4.f32``, lane l reads bytes 16 l (4 wavefronts);
* ``sts32``: ``st.shared.f32``, lane l writes word l;
* ``lds32c4``: ``ld.shared.f32``, lane l reads word 4 l (a 4-way bank conflict: 4 wavefronts, as
  ``lds128``'s, from one 32-bit load; added in session 50);
* ``lds32c32``: ``ld.shared.f32``, lane l reads word 32 l (32-way: 32 wavefronts; an eighth of the
  trips).

The background warps also stamp their loops' first start and last end, so the SM's rate of shared
accesses is measured beside the chase's step latency. Run on the GPU (clocks untouched)::

    python3 validation/probes/mio_pressure.py --gpu OUT.json

and on gpusim (every warp timed in detail; a few minutes on one core)::

    python3 validation/probes/mio_pressure.py --sim OUT.json [--set FIELD=VALUE ...]

``--table H100.json SIM.json`` prints both. Needs CuPy (``--gpu``) or gpusim (``--sim``).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

CODE = r"""
__device__ __forceinline__ long long clk() { long long t; asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) :: "memory"); return t; }

// MODE 0 idle, 1 lds32, 2 lds128b, 3 lds128, 4 sts32, 5 lds32c4, 6 lds32c32. out: per CTA [chase cycles, the background loops'
// first start, their last end] (clock64 of the CTA's SM; the host sets the start to the largest value)
template <int MODE>
__device__ void body(const unsigned* __restrict__ chain, int steps, int loops, long long* out, float* sink)
{
    __shared__ float4 s[MODE == 6 ? 1024 : 512];   // two halves the trips alternate between (4 KiB; 8 KiB for 6)
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (int i = threadIdx.x; i < (MODE == 6 ? 1024 : 512); i += blockDim.x)
        s[i] = make_float4(i, i + 1, i + 2, i + 3);
    unsigned j0 = blockIdx.x * 4096u, j = j0;
    if (warp == 0 && lane == 0)
        for (int k = 0; k < steps; ++k)             // the same steps once, untimed: then the L2 holds them
            asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(j) : "l"(chain + j));
    __syncthreads();
    if (warp == 0) {
        if (lane == 0) {
            j = j0 + (j == 0xffffffffu);
            long long t0 = clk();
            for (int k = 0; k < steps; ++k)
                asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(j) : "l"(chain + j));
            long long t1 = clk();
            out[3 * blockIdx.x] = t1 - t0;
            if (j == 0xffffffffu) sink[0] = 1.0f;
        }
        return;
    }
    if (MODE == 0)
        return;
    // 8 independent accesses a trip, rows 512 B apart; the base row moves each trip. The loaded
    // words are folded by XOR (two LOP3 a 128-bit load), so the loop stays bound by shared memory.
    unsigned acc = 0;
    unsigned base = (unsigned)__cvta_generic_to_shared(s)
                    + (MODE == 2 ? 0u : MODE == 1 || MODE == 4 ? 4u : MODE == 6 ? 128u : 16u) * lane;
    long long t0 = clk();
    for (int k = 0; k < loops; ++k) {
        unsigned a = base + (((k + warp) & 1) << (MODE == 6 ? 13 : 12));
        if (MODE == 1 || MODE == 5 || MODE == 6) {
#define L32(o) { unsigned v; asm volatile("ld.shared.u32 %0, [%1+" #o "];" : "=r"(v) : "r"(a)); acc ^= v; }
            L32(0) L32(512) L32(1024) L32(1536) L32(2048) L32(2560) L32(3072) L32(3584)
        } else if (MODE == 2 || MODE == 3) {
#define L128(o) { unsigned x, y, z, w; asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4+" #o "];" \
                  : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(a)); acc ^= x ^ y ^ z ^ w; }
            L128(0) L128(512) L128(1024) L128(1536) L128(2048) L128(2560) L128(3072) L128(3584)
        } else {
#define S32(o) asm volatile("st.shared.u32 [%0+" #o "], %1;" :: "r"(a), "r"(acc));
            S32(0) S32(512) S32(1024) S32(1536) S32(2048) S32(2560) S32(3072) S32(3584)
            acc += 1;
        }
    }
    long long t1 = clk();
    if (lane == 0) {
        atomicMin((unsigned long long*)&out[3 * blockIdx.x + 1], (unsigned long long)t0);
        atomicMax((unsigned long long*)&out[3 * blockIdx.x + 2], (unsigned long long)t1);
    }
    if (acc == 0xdeadbeefu) sink[0] = 1.0f;
}
#define K(name, mode) extern "C" __global__ void __launch_bounds__(1024) \
    name(const unsigned* c, int st, int lo, long long* o, float* k) { body<mode>(c, st, lo, o, k); }
K(idle, 0) K(lds32, 1) K(lds128b, 2) K(lds128, 3) K(sts32, 4) K(lds32c4, 5) K(lds32c32, 6)
"""
KINDS = ("idle", "lds32", "lds128b", "lds128", "sts32", "lds32c4", "lds32c32")
CTAS = 8            #: one CTA of 1,024 threads on each of 8 SMs
STEPS = 64          #: timed chase steps (the same steps walked once before, untimed)
LOOPS = 96          #: trips of 8 shared accesses per background warp (outlasts the chase)
CHAIN_WORDS = 1 << 18   #: 1 MiB of u32: the L2 holds it, the L1 is bypassed (.cg)


def _chain():
    """A random cyclic permutation of ``CHAIN_WORDS`` words, each step to another 128 B line."""
    import numpy as np

    rng = np.random.default_rng(0)
    lines = rng.permutation(CHAIN_WORDS // 32)
    nxt = np.zeros(CHAIN_WORDS, np.uint32)
    order = lines * 32
    nxt[order] = np.roll(order, -1)
    nxt[np.setdiff1d(np.arange(CHAIN_WORDS), order)] = order[0]  # stray starts join the cycle
    return nxt


def run(xp, kind: str) -> dict:
    """One launch of ``kind`` on array module ``xp``: cycles a chase step (median over CTAs) and
    the SM's cycles per background warp-access (the background loops' span over their 31 x 8 x
    ``LOOPS`` accesses, median over CTAs)."""
    import numpy as np

    mod = xp.RawModule(code=CODE, options=("-std=c++17",))
    chain = xp.asarray(_chain())
    init = np.zeros((CTAS, 3), np.int64)
    init[:, 1] = np.iinfo(np.int64).max
    out = xp.asarray(init.ravel())
    sink = xp.zeros(1, np.float32)
    f = mod.get_function(kind)
    loops = LOOPS // 8 if kind == "lds32c32" else LOOPS
    f((CTAS,), (1024,), (chain, np.int32(STEPS), np.int32(loops), out, sink))
    o = np.asarray(out.get()).reshape(CTAS, 3)
    return {"chase_step": float(np.median(o[:, 0])) / STEPS,
            "access": float(np.median(o[:, 2] - o[:, 1])) / (31 * 8 * loops) if kind != "idle" else 0.0}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="validation/probes/mio_pressure.py")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--gpu", type=pathlib.Path, help="run on the GPU (CuPy); write JSON here")
    g.add_argument("--sim", type=pathlib.Path, help="run on gpusim (h100, timing); write JSON here")
    g.add_argument("--table", nargs=2, type=pathlib.Path, metavar=("H100_JSON", "SIM_JSON"))
    p.add_argument("--set", nargs="+", default=[], metavar="FIELD=VALUE", help="gpusim config overrides (--sim)")
    p.add_argument("--kinds", nargs="+", default=KINDS, choices=KINDS, help="backgrounds to run (default: all)")
    a = p.parse_args(argv)
    if a.table:
        h, s = (json.loads(x.read_text()) for x in a.table)
        print("| background | chase step H100 / gpusim (cycles) | SM cycles per background warp-access H100 / gpusim |")
        print("|---|---|---|")
        for k in (k for k in KINDS if k in h and k in s):
            print(f"| {k} | {h[k]['chase_step']:.0f} / {s[k]['chase_step']:.0f} | {h[k]['access']:.2f} / {s[k]['access']:.2f} |")
        return
    if a.gpu:
        import cupy as xp

        res = {}
        for k in a.kinds:
            run(xp, k)                       # a warm-up launch
            res[k] = run(xp, k)
            print(k, res[k], flush=True)
        a.gpu.write_text(json.dumps(res, indent=1))
    else:
        import gpusim

        overrides = dict(gpusim.config.parse_override(s) for s in a.set) if a.set else None
        res = {}
        for k in a.kinds:
            with gpusim.Device("h100", mode="timing", overrides=overrides):
                res[k] = run(gpusim, k)
            print(k, res[k], flush=True)
        a.sim.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
