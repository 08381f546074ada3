"""GPU probe: what the L2 writes back, and re-reads, when written data nears its capacity.

On the H100, 4-byte atomics at random words of 32 MiB read every sector once from DRAM and write back
0.59 sectors an atomic; at 16 MiB nothing (``random_access.py``'s ``red_rand``). Whole-sector stores at
32 MiB write back 0.03 a store, and a sequential stream of whole lines leaves 25 MB written
(``store_cleaning.py``). gpusim's rule (a written line takes ``l2.dirty_places`` = 2 places) re-reads
the atomics' lines 4.5x. This probe maps the knee between 16 and 40 MiB, every thread of a
GPU-filling grid (8 CTAs of 256 threads an SM) making ``ITERS`` accesses at ``hash mod words`` (the
hash of ``random_access.py``):

* ``red_mod``: ``atomicAdd`` (``red.global.add.u32``);
* ``wsec_mod``: whole-sector stores (8 lanes store the 8 words of one random sector);
* ``read_red``: each thread first loads its share of the footprint in order (every line read once,
  clean), then ``red_mod``;
* ``store_red``: each thread first stores its share in order (every line written whole, dirty),
  then ``red_mod``.

The first phases' own traffic is known: a read of ``F`` bytes, or ``F`` bytes written. Each launch
runs twice (warm-up, then measured; ncu flushes the caches before each).

Under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,dram__bytes_read.sum,dram__bytes_write.sum \\
        --csv --page raw --print-units base --log-file $OUT/dirty_capacity.csv python3 validation/probes/dirty_capacity.py

gpusim's side and the table::

    python3 validation/probes/dirty_capacity.py sim dirty_capacity.csv OUT.json [--jobs N] [--set FIELD=VALUE ...]
    python3 validation/probes/dirty_capacity.py --table dirty_capacity.csv [OUT.json]

Needs CuPy for the GPU run only; imports gpusim for ``sim`` only.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.probekit import MIX_CU  # noqa: E402

CODE = MIX_CU + r"""
extern "C" __global__ void red_mod(unsigned* x, unsigned words, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned i = 0; i < iters; ++i)
        atomicAdd(&x[mix(t * iters + i) % words], 1u);
}

// 8 lanes store the 8 words of one random sector (of words / 8).
extern "C" __global__ void wsec_mod(unsigned* x, unsigned words, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, g = t >> 3;
    for (unsigned i = 0; i < iters; ++i)
        x[(mix(g * iters + i) % (words >> 3)) * 8 + (t & 7)] = t;
}

extern "C" __global__ void read_red(unsigned* x, unsigned words, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x, s = 0;
    for (unsigned w = t; w < words; w += n)
        s += x[w];
    for (unsigned i = 0; i < iters; ++i)
        atomicAdd(&x[mix(t * iters + i) % words], 1u);
    out[t] = s;
}

extern "C" __global__ void store_red(unsigned* x, unsigned words, unsigned iters, unsigned* out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    for (unsigned w = t; w < words; w += n)
        x[w] = t;
    for (unsigned i = 0; i < iters; ++i)
        atomicAdd(&x[mix(t * iters + i) % words], 1u);
}
"""

BLOCK = 256
CTAS_PER_SM = 8
ITERS = 16
KERNELS = ("red_mod", "wsec_mod", "read_red", "store_red")
FOOTPRINTS = tuple(m << 20 for m in (16, 20, 24, 28, 32, 40))
METRICS = ("sm__cycles_elapsed.avg", "dram__bytes_read.sum", "dram__bytes_write.sum")


def launches(sm_count: int = 132) -> list[tuple[str, str, int, int]]:
    """``(label, kernel, footprint bytes, CTAs)`` in launch order."""
    return [(f"{k} {f >> 20} MiB", k, f, sm_count * CTAS_PER_SM) for k in KERNELS for f in FOOTPRINTS]


def dirty_line_cap_model(footprint_mib: int, cap_lines: int, seed: int = 0) -> float:
    """DRAM bytes written back per footprint byte that a candidate rule predicts for ``red_mod``
    (host-side, no GPU): each L2 partition holds at most ``cap_lines`` lines with dirty sectors
    (fully associative); an atomic that dirties another line writes back the least recently written
    one's dirty sectors, which stays, clean; nothing is re-read. The atomics come in random order,
    lines homed by :func:`gpusim.timing.memsys.home_partition`'s hash; partition 0 is simulated and
    doubled. Compare with the table's DRAM written / F (the H100's 0.00, 0.20, 1.12, 2.13, 2.34,
    2.31 at 16-40 MiB; 82K lines give 0.00, 0.00, 2.11, 2.61, 2.67, 2.46: a sharper onset)."""
    import collections

    import numpy as np

    w = np.random.default_rng(seed).integers(0, (footprint_mib << 20) // 4, 132 * CTAS_PER_SM * BLOCK * ITERS)
    lines, sec = w // 32, (w // 8) % 4
    home0 = (lines * 2654435761 >> 16) % 2 == 0
    dirty: collections.OrderedDict[int, int] = collections.OrderedDict()
    written = 0
    for line, bit in zip(lines[home0].tolist(), (1 << sec[home0]).tolist()):
        m = dirty.pop(line, 0)
        dirty[line] = m | bit
        if not m and len(dirty) > cap_lines:
            written += bin(dirty.popitem(last=False)[1]).count("1")
    return 2 * written * 32 / (footprint_mib << 20)


def main() -> None:
    import cupy
    import numpy as np

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    mod = cupy.RawModule(code=CODE)
    x = cupy.zeros(max(FOOTPRINTS) // 4, cupy.uint32)
    out = cupy.zeros(sms * CTAS_PER_SM * BLOCK, cupy.uint32)
    for label, k, f, ctas in launches(sms):
        for _ in range(2):
            mod.get_function(k)((ctas,), (BLOCK,), (x, np.uint32(f // 4), np.uint32(ITERS), out))
            cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def gpu_rows(path: str) -> dict[str, dict[str, float]]:
    """The CSV's measured launches by label: ``cycles``, ``dram_read_bytes``, ``dram_write_bytes``."""
    from validation.probekit import second_launches

    rows = second_launches(path, KERNELS, [r[0] for r in launches()], METRICS)
    return {lab: {"cycles": r[METRICS[0]], "dram_read_bytes": r[METRICS[1]], "dram_write_bytes": r[METRICS[2]]}
            for lab, r in rows.items()}


def simulate(label: str, gpu: str = "h100", overrides: dict | None = None, jobs: int = 1) -> dict:
    """One launch of :func:`launches` on gpusim in timing mode (sampled as any launch is)."""
    import time

    import numpy as np

    import gpusim

    t0 = time.perf_counter()
    _, k, f, ctas = next(r for r in launches() if r[0] == label)
    with gpusim.Device(gpu, mode="timing", overrides=overrides, jobs=jobs):
        fn = gpusim.RawModule(code=CODE).get_function(k)
        x = gpusim.zeros(f // 4, np.uint32)
        out = gpusim.zeros(ctas * BLOCK, np.uint32)
        res = fn((ctas,), (BLOCK,), (x, np.uint32(f // 4), np.uint32(ITERS), out))
    m = res.metrics
    return {"cycles": float(m["sm__cycles_elapsed.avg"]), "dram_read_bytes": float(m["dram__bytes_read.sum"]),
            "dram_write_bytes": float(m["dram__bytes_write.sum"]), "timed": str(res.sampling),
            "host_seconds": round(time.perf_counter() - t0, 1)}


def table(csv: str, sim_json: str | None = None) -> str:
    """Markdown: per launch, DRAM bytes read and written per footprint byte, and per access the
    sectors written back (GPU, and gpusim's where ``sim_json`` is given)."""
    import json

    gpu = gpu_rows(csv)
    sim = {r["launch"]: r["gpusim"] for r in json.loads(Path(sim_json).read_text())["rows"]} if sim_json else {}
    out = ["| launch | GPU cycles | gpusim | DRAM read / footprint, GPU | gpusim | DRAM written / footprint, GPU | gpusim |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    def cols(r: dict, f: int) -> tuple[str, str, str]:
        return f"{r['cycles']:,.0f}", f"{r['dram_read_bytes'] / f:.2f}", f"{r['dram_write_bytes'] / f:.2f}"
    for label, _k, f, _ctas in launches():
        g, s = gpu[label], sim.get(label)
        gc, sc = cols(g, f), cols(s, f) if s else ("", "", "")
        out.append(f"| {label} | {gc[0]} | {sc[0]} | {gc[1]} | {sc[1]} | {gc[2]} | {sc[2]} |")
    return "\n".join(out)


if __name__ == "__main__":
    from validation.probekit import probe_main
    probe_main("dirty_capacity.py", sys.argv[1:], main, gpu_rows, simulate, ("dram_read_bytes", "DRAM read bytes"), table)
