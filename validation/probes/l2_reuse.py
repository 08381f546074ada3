"""GPU probe: does a stream of lines read once evict the L2's re-read lines as LRU would?

The corpus's `bfs_topdown` (fit half) reads 277 MB from DRAM in gpusim and 123 MB on the H100: its
`level` array (16 MiB) is re-read at random while `row_ptr` and `cols` pass through the L2 about
once. gpusim's L2 replaces the least recently used line. This probe measures what a stream costs a
re-read set on the H100: every thread of a GPU-filling grid (8 CTAs of 256 threads an SM) first
reads its share of a *hot* set of ``H`` bytes (in order, so every hot line is in the L2), then
``ITERS`` times reads one hot word at random (``hash mod words``, the hash of ``random_access.py``)
and ``per`` 16-byte words of a *stream* (coalesced, every stream byte read once)::

    hot_stream(hot, hot_words, stream, per, iters, out)

The DRAM bytes read beyond the hot set's first pass and the stream's bytes are the hot reads that
missed: under LRU with the stream passing between two reads of a hot line more than the L2 (or its
partition) holds, most of them; under a replacement that protects re-read lines (RRIP-like), few.
``H`` is 8, 16, 24 MiB (with the far copies of every line, 16-48 MB of the 50 MB), ``per`` 0, 1, 2, 4
(0-277 MB of stream). Each launch runs twice (warm-up, then measured).

Under Nsight Compute on a GPU machine (clocks untouched; the caches are flushed before each launch,
the kernel's first pass refills the hot set)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,dram__bytes_read.sum,\\
        lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_op_read.sum,lts__t_sector_op_read_hit_rate.pct \\
        --csv --page raw --print-units base --log-file $OUT/l2_reuse.csv python3 validation/probes/l2_reuse.py

gpusim's side (timing mode, the same launches) beside the CSV, and the table of both::

    python3 validation/probes/l2_reuse.py sim l2_reuse.csv OUT.json [--jobs N] [--set FIELD=VALUE ...]
    python3 validation/probes/l2_reuse.py --table l2_reuse.csv OUT.json

Needs CuPy for the GPU run only; imports gpusim for ``sim`` only.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.probekit import MIX_CU  # noqa: E402

CODE = MIX_CU + r"""
// Every thread reads its share of the hot set in order, then `iters` times one hot word at random
// and `per` 16-byte stream words (coalesced; stream word (i per + j) n + t, n threads).
extern "C" __global__ void hot_stream(const unsigned* hot, unsigned hot_words, const uint4* stream, unsigned per,
                                      unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x, s = 0;
    for (unsigned w = t; w < hot_words; w += n)
        s += hot[w];
    for (unsigned i = 0; i < iters; ++i) {
        s += hot[mix(t * iters + i) % hot_words];
        for (unsigned j = 0; j < per; ++j) {
            uint4 v = stream[(size_t)(i * per + j) * n + t];
            s += v.x ^ v.w;
        }
    }
    out[t] = s;
}
"""

BLOCK = 256
CTAS_PER_SM = 8
ITERS = 16
#: hot set sizes (bytes) and stream words (16 B) a thread reads per hot read
HOT = tuple(m << 20 for m in (8, 16, 24))
PER = (0, 1, 2, 4)
METRICS = ("sm__cycles_elapsed.avg", "dram__bytes_read.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
           "lts__t_sectors_op_read.sum", "lts__t_sector_op_read_hit_rate.pct")


def launches(sm_count: int = 132) -> list[tuple[str, int, int, int]]:
    """``(label, hot bytes, per, CTAs)`` in launch order."""
    return [(f"hot {h >> 20} MiB per {p}", h, p, sm_count * CTAS_PER_SM) for h in HOT for p in PER]


def stream_bytes(per: int, ctas: int) -> int:
    """Bytes of stream a launch reads (each once)."""
    return ctas * BLOCK * ITERS * per * 16


def main() -> None:
    import cupy
    import numpy as np

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    f = cupy.RawModule(code=CODE).get_function("hot_stream")
    hot = cupy.arange(max(HOT) // 4, dtype=cupy.uint32)
    stream = cupy.ones(stream_bytes(max(PER), sms * CTAS_PER_SM) // 4, cupy.uint32)
    out = cupy.zeros(sms * CTAS_PER_SM * BLOCK, cupy.uint32)
    for label, h, per, ctas in launches(sms):
        for _ in range(2):
            f((ctas,), (BLOCK,), (hot, np.uint32(h // 4), stream, np.uint32(per), np.uint32(ITERS), out))
            cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """The CSV's measured launches by label: ``cycles``, ``dram_read_bytes``, the L2 counters."""
    from validation.probekit import second_launches

    rows = second_launches(path, ["hot_stream"], [r[0] for r in launches()], METRICS)
    return {lab: {"cycles": r[METRICS[0]], "dram_read_bytes": r[METRICS[1]], "l2_tex_read_sectors": r[METRICS[2]],
                  "l2_read_sectors": r[METRICS[3]], "l2_read_hit_pct": r[METRICS[4]]} for lab, r in rows.items()}


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch of :func:`launches` on gpusim in timing mode (sampled as any launch is)."""
    import time

    import numpy as np

    import gpusim

    t0 = time.perf_counter()
    _, h, per, ctas = next(r for r in launches() if r[0] == label)
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs):
        f = gpusim.RawModule(code=CODE).get_function("hot_stream")
        hot = gpusim.asarray(np.arange(h // 4, dtype=np.uint32))
        stream = gpusim.asarray(np.ones(max(stream_bytes(per, ctas), 16) // 4, np.uint32))
        out = gpusim.zeros(ctas * BLOCK, np.uint32)
        res = f((ctas,), (BLOCK,), (hot, np.uint32(h // 4), stream, np.uint32(per), np.uint32(ITERS), out))
    m = res.metrics
    return {"cycles": float(m["sm__cycles_elapsed.avg"]), "dram_read_bytes": float(m["dram__bytes_read.sum"]),
            "l2_tex_read_sectors": float(m["lts__t_sectors_srcunit_tex_op_read.sum"]),
            "l2_read_sectors": float(m["lts__t_sectors_op_read.sum"]),
            "l2_read_hit_pct": float(m["lts__t_sector_op_read_hit_rate.pct"]),
            "timed": str(res.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}


def hot_misses(row: dict, label: str) -> float:
    """The share of the random hot reads that DRAM served: (DRAM bytes - the hot set's first pass -
    the stream's bytes) / (64 B x the hot reads), the reads' granule being 64 B."""
    _, h, per, ctas = next(r for r in launches() if r[0] == label)
    reads = ctas * BLOCK * ITERS
    return (row["dram_read_bytes"] - h - stream_bytes(per, ctas)) / (64 * reads)


def table(csv: str, sim_json: str | None = None) -> str:
    """Markdown: per launch, the GPU's (and gpusim's) cycles, DRAM MB and hot-read miss share."""
    import json

    gpu = gpu_rows(csv)
    sim = {r["launch"]: r["gpusim"] for r in json.loads(Path(sim_json).read_text())["rows"]} if sim_json else {}
    out = ["| launch | stream MB | GPU cycles | gpusim | GPU DRAM read MB | gpusim | GPU hot reads missed | gpusim |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, _h, per, ctas in launches():
        g, s = gpu[label], sim.get(label)
        cells = [f"{g['cycles']:,.0f}", f"{s['cycles']:,.0f}" if s else "", f"{g['dram_read_bytes'] / 1e6:.1f}",
                 f"{s['dram_read_bytes'] / 1e6:.1f}" if s else "", f"{hot_misses(g, label):.3f}",
                 f"{hot_misses(s, label):.3f}" if s else ""]
        out.append(f"| {label} | {stream_bytes(per, ctas) / 1e6:.0f} | " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    from validation.probekit import probe_main
    probe_main("l2_reuse.py", sys.argv[1:], main, gpu_rows, simulate, ("dram_read_bytes", "DRAM read bytes"), table)
