"""GPU probe: what an L2 hit costs when its line is homed in the other L2 partition, and where
each SM sits.

gpusim's L2 (``l2.localizes_far_reads``, docs/model/memory.md) is two partitions; a line has one
home, and an SM's read of a line homed far is looked up in its own partition first, then at the
home, which leaves a copy near the SM. What that first far read costs was never measured alone:
``l2.far_latency_cycles`` (535) comes from a one-SM chase over 32-48 MiB, TLB misses included, and
session 42's what-if with it made the small matmuls slower still. Which SMs share a partition is
ASSUMED (``sm % 2``).

The probe, on each SM ``s`` in turn, one launch of ``chase_on``: one CTA on every SM (the
dynamic shared memory allows one an SM); the CTA on SM ``WRITER`` (SM 1 when ``s`` is ``WRITER``)
stores a ring of ``LINES`` 128-byte lines (256 KiB, whole lines), fences and raises a flag; then
thread 0 of the CTA on SM ``s`` walks the ring with ``ld.global.cg`` twice, timing each load alone
(``%clock64`` around it, the next instruction stalled until its data is back). The first pass finds
each line where the store left it; the second finds the copies the first left. Cold launches (the
first 8 SMs): the ring stored by a launch of its own, then ``FLUSH_MIB`` MiB read through the L2
(on the GPU; gpusim starts each launch with empty caches), then one pass: misses to DRAM,
near-homed and far-homed.

From the first pass of every SM: the two clusters of load cycles (2-means), their medians and
sizes. An SM whose first pass splits in two (the slow cluster over ``FAR_GAP`` cycles above the
fast one) reads the lines homed in the writer's partition from afar: it is on the other side
(partition 1, the writer's being 0); one whose first pass does not is on the writer's side.

Run: ``python3 validation/probes/far_hit.py --gpu OUT.json`` (CuPy, clocks untouched, ~1 s of GPU
time), ``--sim OUT.json`` (gpusim's h100 config; a few SMs only), ``--table GPU.json SIM.json``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

CODE = r"""
extern "C" __global__ void write_ring(unsigned* ring, const unsigned* next, int lines)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < lines * 32; i += gridDim.x * blockDim.x)
        ring[i] = i % 32 ? 0u : next[i / 32];   // whole lines: a partly written sector is read from DRAM
}

// One CTA per SM (dynamic shared memory). With `writer` >= 0 the CTA on SM `writer` first stores
// the ring (its 32 lanes, a line a store: ring[i * 32] = next[i], the rest 0), fences and raises `flag`; the first CTA to find
// itself on SM `target` waits for the flag (at most ~10^8 cycles), then walks the ring from line 0,
// `passes` times, each load timed alone: lat[p * lines + i] = cycles of the i-th load of pass p.
// who[0] = the SM it ran on (0xffffffff: the flag never came).
extern "C" __global__ void chase_on(unsigned* ring, const unsigned* next, int lines, int passes, unsigned target,
                                    int writer, unsigned* lat, unsigned* who, unsigned* claim, unsigned* flag)
{
    extern __shared__ unsigned pad[];
    __shared__ unsigned seen;
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    if (writer >= 0 && sm == (unsigned)writer) {
        if (threadIdx.x == 0)
            seen = atomicAdd(claim + 1, 1u);
        __syncthreads();
        if (seen != 0u || threadIdx.x >= 32)
            return;
        for (int i = 0; i < lines; ++i)   // whole lines: a partly written sector is read from DRAM
            ring[i * 32 + threadIdx.x] = threadIdx.x ? 0u : next[i];
        __threadfence();
        __syncwarp();
        if (threadIdx.x == 0)
            *(volatile unsigned*)flag = 1u;
        return;
    }
    if (threadIdx.x || sm != target || atomicAdd(claim, 1u) != 0u)
        return;
    if (writer >= 0) {
        long long start = clock64();
        while (*(volatile unsigned*)flag == 0u)
            if (clock64() - start > 100000000ll)
                return;
    }
    pad[0] = sm;
    who[0] = sm;
    unsigned j = 0;
    for (int p = 0; p < passes; ++p)
        for (int i = 0; i < lines; ++i) {
            long long t0, t1;
            asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0) :: "memory");
            j = __ldcg(ring + j);
            *(volatile unsigned*)&seen = j;  // issues once the load returned (in-order issue)
            asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1) :: "memory");
            lat[p * lines + i] = (unsigned)(t1 - t0);
        }
}

// Reads n float4 (grid-stride), so the L2 holds none of the ring's lines afterwards.
extern "C" __global__ void flush(const float4* buf, long long n, float* sink)
{
    float s = 0.0f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        s += buf[i].x;
    if (s == 1.2345f) sink[0] = s;
}
"""
SMS = 132               #: the H100's SMs: chase_on puts a CTA on each
LINES = 2048            #: the ring: 2,048 lines of 128 B (256 KiB, inside one or two 2 MiB pages)
PAD_BYTES = 160 * 1024  #: dynamic shared memory of chase_on's CTAs: one CTA an SM
WRITER = 0              #: the SM that stores the ring (SM 1 stores it when SM 0 chases)
FAR_GAP = 100           #: cycles between a first pass's clusters that tell a far home (the GPU's: ~180)
FLUSH_MIB = 256         #: --cold: MiB read between writing the ring and chasing it (the L2 holds 50)


def ring_order():
    """The ring: (the order its lines are visited, int64 (LINES,); ``next``, uint32 (LINES,): the
    word index of the line after line i, which ``write_ring`` stores in line i's first word)."""
    import numpy as np

    order = np.random.default_rng(0).permutation(LINES)
    nxt = np.zeros(LINES, np.uint32)
    nxt[order] = (np.roll(order, -1) * 32).astype(np.uint32)
    return np.roll(order, -int(np.flatnonzero(order == 0)[0])), nxt


def chase(xp, mod, target: int, passes: int = 2, cold: bool = False, flush_mib: int = 0, sms: int = SMS,
          writer: int = WRITER):
    """Chase the ring on SM ``target``. Not ``cold``: the CTA on SM ``writer`` (the next SM when
    that is ``target``) stores the ring in the same launch, just before. ``cold``: a launch of its
    own stores the ring, and a ``flush`` of ``flush_mib`` MiB (0: none; gpusim starts each launch
    with empty caches) comes between. Returns (cycles of each load by line, uint32 (passes, LINES); the SM it ran on, or
    -1 where the writer's flag never came)."""
    import numpy as np

    order, nxt = ring_order()
    ring = xp.asarray(np.zeros(LINES * 32, np.uint32))
    nxt = xp.asarray(nxt)
    if cold:
        mod.get_function("write_ring")((2,), (1024,), (ring, nxt, np.int32(LINES)))
    if cold and flush_mib:
        n = flush_mib * (1 << 20) // 16
        buf = xp.asarray(np.zeros(n * 4, np.float32))
        mod.get_function("flush")((sms * 4,), (512,), (buf, np.int64(n), xp.asarray(np.zeros(1, np.float32))))
        del buf
    lat = xp.asarray(np.zeros(passes * LINES, np.uint32))
    who = xp.asarray(np.full(1, 0xffffffff, np.uint32))
    claim, flag = xp.asarray(np.zeros(2, np.uint32)), xp.asarray(np.zeros(1, np.uint32))
    writer = -1 if cold else (writer if target != writer else (writer + 1) % sms)
    f = mod.get_function("chase_on")
    f.max_dynamic_shared_size_bytes = PAD_BYTES
    f((sms,), (32,), (
        ring, nxt, np.int32(LINES), np.int32(passes), np.uint32(target), np.int32(writer), lat, who, claim, flag),
        shared_mem=PAD_BYTES)
    by_line = np.zeros((passes, LINES), np.uint32)
    by_line[:, order] = lat.get().reshape(passes, LINES)   # load i of a pass reads line order[i]
    w = int(who.get()[0])
    return by_line, (-1 if w == 0xffffffff else w)


def two_means(x):
    """Split ``x`` (1-D cycles) in two clusters (Lloyd's 2-means from the 10th and 90th
    percentiles): (threshold, boolean mask of the slow cluster)."""
    import numpy as np

    x = np.asarray(x, np.float64)
    lo, hi = np.percentile(x, 10), np.percentile(x, 90)
    for _ in range(50):
        cut = (lo + hi) / 2
        slow = x > cut
        if slow.all() or not slow.any():
            break
        lo, hi = x[~slow].mean(), x[slow].mean()
    return float(cut), x > cut


def summarize(first, second=None) -> dict:
    """Cycles of one SM's first pass (and second): the clusters' medians, sizes and 99th percentiles."""
    import numpy as np

    cut, slow = two_means(first)
    rec = {"cut": cut, "fast_median": float(np.median(first[~slow])) if (~slow).any() else None,
           "slow_median": float(np.median(first[slow])) if slow.any() else None,
           "slow_lines": int(slow.sum()), "first_p50": float(np.median(first)),
           "first_p99": float(np.percentile(first, 99)), "slow_mask": np.packbits(slow).tobytes().hex()}
    if second is not None:
        rec.update(second_p50=float(np.median(second)), second_p99=float(np.percentile(second, 99)),
                   second_slow_lines=int((second > cut).sum()))
    return rec


def slow_mask(rec: dict):
    """The lines of :func:`summarize`'s record ``rec`` in its slow cluster: bool array (LINES,)."""
    import numpy as np

    return np.unpackbits(np.frombuffer(bytes.fromhex(rec["slow_mask"]), np.uint8))[:LINES].astype(bool)


def runs(mask):
    """Lengths (int array) of the runs of equal values in ``mask`` (bool, line order): the far lines of
    a walk come in runs of whole partition granules (the H100's: 32 and 64 lines, 4 KiB granules)."""
    import numpy as np

    edges = np.flatnonzero(np.diff(np.asarray(mask, np.int8))) + 1
    return np.diff(np.r_[0, edges, len(mask)])


def cold_tail(raw: dict, over: float = 75.0) -> dict:
    """The cold walks' (``raw["cold*"]``) DRAM reads beyond ``over`` cycles past their cluster's median,
    near-homed and far-homed apart (:func:`two_means`): ``{"near": share, "far": share, "far_mean":
    mean excess of those far reads, "far_p99": its 99th percentile (cycles), "reads": the reads counted}``."""
    import numpy as np

    near, far = [], []
    for key, cycles in raw.items():
        if key.startswith("cold"):
            x = np.asarray(cycles, np.float64).ravel()
            _, slow = two_means(x)
            far.append(x[slow] - np.median(x[slow]))
            near.append(x[~slow] - np.median(x[~slow]))
    near, far = np.concatenate(near), np.concatenate(far)
    tail = far[far > over]
    return {"near": float((near > over).mean()), "far": float(len(tail) / len(far)),
            "far_mean": float(tail.mean()), "far_p99": float(np.percentile(tail, 99)), "reads": len(near) + len(far)}


def sides(recs: dict) -> dict:
    """Each SM's partition (0: ``WRITER``'s; 1: the other, where its first pass split in two:
    the slow cluster ``FAR_GAP`` cycles over the fast one, 20-80 % of the lines), and, for those
    in partition 1, the share of lines they find slow alike with the first of them (1.0: the same
    lines are far from every SM over there)."""

    far = {s: slow_mask(r) for s, r in recs.items() if r["slow_median"] is not None
           and r["slow_median"] - r["fast_median"] > FAR_GAP and 0.2 * LINES < r["slow_lines"] < 0.8 * LINES}
    ref = far[min(far, key=int)] if far else None
    return {s: {"side": int(s in far), "agree": float((far[s] == ref).mean()) if s in far else None} for s in recs}


def run(xp, sms: list[int], cold: list[int], flush_mib: int, raw: list[int], writer: int = WRITER,
        offset: int | None = None) -> dict:
    """The probe on ``xp``: a record per SM of ``sms`` (two passes), per SM of ``cold`` (one pass
    after a flush), raw cycles of the SMs in ``raw``, and the partitions. ``offset``: SM ``s``'s
    ring is stored by SM ``s + offset`` instead of ``writer`` (then :func:`sides` does not apply:
    an SM whose writer shares its partition finds no line far)."""
    mod = xp.RawModule(code=CODE, options=("-std=c++17",))
    out: dict = {"lines": LINES, "flush_mib": flush_mib, "writer": writer if offset is None else f"s + {offset}",
                 "hit": {}, "cold": {}, "raw": {}}
    for s in sms:
        lat, who = chase(xp, mod, s, writer=writer if offset is None else (s + offset) % SMS)
        if who < 0:
            print("hit", s, "skipped: the writer's flag never came", flush=True)
            continue
        out["hit"][who] = summarize(lat[0], lat[1])
        if s in raw:
            out["raw"][f"hit{who}"] = lat.astype(int).tolist()
        print("hit", who, {k: v for k, v in out["hit"][who].items() if k != "slow_mask"}, flush=True)
    for s in cold:
        lat, who = chase(xp, mod, s, passes=1, cold=True, flush_mib=flush_mib)
        out["cold"][who] = summarize(lat[0])
        if s in raw:
            out["raw"][f"cold{who}"] = lat.astype(int).tolist()
        print("cold", who, {k: v for k, v in out["cold"][who].items() if k != "slow_mask"}, flush=True)
    if offset is None:
        out["sides"] = sides(out["hit"])
    return out


def table(gpu: dict, sim: dict) -> str:
    """The first and second passes' clusters, GPU beside gpusim, on the SMs both ran."""
    rows = ["| SM | pass | GPU: fast / slow median (slow lines) | gpusim: fast / slow median (slow lines) | second pass p50 GPU / gpusim |",
            "|---|---|---|---|---|"]
    for kind in ("hit", "cold"):
        for s in sorted(set(gpu[kind]) & set(sim[kind]), key=int)[:8]:
            g, m = gpu[kind][s], sim[kind][s]

            def cl(r):
                return f"{r['fast_median'] or 0:.0f} / {r['slow_median'] or 0:.0f} ({r['slow_lines']})"
            second = f"{g.get('second_p50', 0):.0f} / {m.get('second_p50', 0):.0f}" if kind == "hit" else ""
            rows.append(f"| {s} | {kind} | {cl(g)} | {cl(m)} | {second} |")
    return "\n".join(rows)


def _load(path: pathlib.Path) -> dict:
    """A result JSON, gzip-compressed (``.gz``) or not."""
    import gzip

    return json.loads(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes())


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="validation/probes/far_hit.py")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--gpu", type=pathlib.Path, help="run on the GPU (CuPy); write JSON here")
    g.add_argument("--sim", type=pathlib.Path, help="run on gpusim (h100, timing); write JSON here")
    g.add_argument("--table", nargs=2, type=pathlib.Path, metavar=("GPU_JSON", "SIM_JSON"), help="(.json or .json.gz)")
    p.add_argument("--sms", type=int, nargs="+", help="SMs to chase on (default: all 132 on the GPU, 0-3 on gpusim)")
    p.add_argument("--writer", type=int, default=WRITER, help="the SM that stores the ring (partition 0 is its)")
    p.add_argument("--writer-offset", type=int, help="SM s's ring is stored by SM s + this instead (no sides)")
    p.add_argument("--set", nargs="+", default=[], metavar="FIELD=VALUE", help="gpusim config overrides (--sim)")
    a = p.parse_args(argv)
    if a.table:
        print(table(*(_load(x) for x in a.table)))
        return
    if a.gpu:
        import cupy as xp

        sms = a.sms or list(range(SMS))
        res = run(xp, sms, cold=sms[:8], flush_mib=FLUSH_MIB, raw=sms[:4], writer=a.writer, offset=a.writer_offset)
        a.gpu.write_text(json.dumps(res, indent=1))
    else:
        import gpusim

        overrides = dict(gpusim.config.parse_override(s) for s in a.set) if a.set else None
        sms = a.sms or [0, 1, 2, 3]
        with gpusim.Device("h100", mode="timing", overrides=overrides):
            res = run(gpusim, sms, cold=sms[:2], flush_mib=0, raw=sms[:4])
        a.sim.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
