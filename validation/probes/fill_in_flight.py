"""GPU probe: does a load that hits a line whose fill is still in flight wait for the fill?

A cache allocates a line's tag when a miss leaves for the next level; the data comes back
hundreds of cycles later. A second load of the same sector in between finds the tag. gpusim
answers it a hit's latency after the lookup (``l1.latency_cycles``, ``l2.latency_cycles``) unless
``l1.hits_wait_for_fills`` / ``l2.hits_wait_for_fills`` are set; physically it cannot have the
data before the fill does. Stencils, whose
neighbouring warps and CTAs load the rows above and below one another at about the same time,
make such hits by the million (``stencil2d_5pt``: 2.5 L2 lookups a sector).

``fill_in_flight.ptx`` (source ``fill_in_flight.cu``), every trial on a cold line of its own:

* ``same_thread_{ca,cg}``: one thread loads A, spins ``delay`` cycles, loads B of the same word
  and times B (issue to data): with a wait, B takes about ``A's latency - delay``, down to a hit's;
  without, a hit's latency (L1 for ``ca``, L2 for ``cg``) at every delay.
* ``two_sms_{ca,cg}``: CTA 0 sets a flag, spins ``delay`` cycles, loads the line; CTA 1 (another
  SM) loads it as soon as it sees the flag (a hop, ~475 cycles after). Small delays: CTA 0's
  request reaches the L2 first and CTA 1's hits its fill in flight; large ones, the other way.

GPU side: ``python3 fill_in_flight.py --gpu OUT.json`` (CuPy; the L2 is flushed by reading 256 MiB
before each launch); gpusim's (the detailed engine, as the kernels read ``%clock64``):
``python3 fill_in_flight.py --sim OUT.json [--jobs N] [--set FIELD=VALUE ...]``; the table:
``python3 fill_in_flight.py --table GPU.json SIM.json``. Needs CuPy (GPU side) or gpusim (``--sim``).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys

if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

PTX = pathlib.Path(__file__).with_name("fill_in_flight.ptx")
TRIALS = 32
STRIDE_WORDS = 16384          # a line every 64 KiB
DELAYS = (0, 100, 200, 300, 400, 500, 600, 700, 800, 1000, 1500)
#: (label, kernel, delay) in launch order; launch i uses lines TRIALS * i .. TRIALS * (i + 1) - 1
LAUNCHES = [(f"{k} delay {d}", k, d) for k in ("same_thread_ca", "same_thread_cg", "two_sms_ca", "two_sms_cg")
            for d in DELAYS]
FLUSH_WORDS = 64 << 20        # 256 MiB


def _run(xp, index: int, kernel: str, delay: int, buf, flush=None) -> dict:
    """Launch ``index`` of :data:`LAUNCHES` on ``xp`` (cupy or gpusim); returns B's and A's cycles
    per trial (for ``two_sms``: CTA 1's and CTA 0's) and, for ``two_sms``, the two SMs."""
    import numpy as np

    if flush is not None:
        xp.RawModule(path=str(PTX)).get_function("flush")((264,), (256,), (flush, np.uint64(flush.size),
                                                                         xp.zeros(1, np.uint32)))
    f = xp.RawModule(path=str(PTX)).get_function(kernel)
    base = buf[index * TRIALS * STRIDE_WORDS:]
    lat = xp.zeros(2 * TRIALS, np.uint32)
    args = (base, np.uint32(STRIDE_WORDS), np.uint32(TRIALS), np.uint32(delay))
    out = {}
    if kernel.startswith("two_sms"):
        flags = xp.zeros(64 * TRIALS, np.uint32)
        sm = xp.zeros(2, np.uint32)
        f((2,), (32,), args + (flags, lat, sm))
        out["sms"] = [int(v) for v in sm.get()]
    else:
        f((1,), (32,), args + (lat,))
    got = lat.get().reshape(TRIALS, 2)
    out["b"], out["a"] = got[:, 0].tolist(), got[:, 1].tolist()
    out["b_median"], out["a_median"] = statistics.median(out["b"]), statistics.median(out["a"])
    return out


def _buffer(xp):
    import numpy as np

    return xp.zeros(len(LAUNCHES) * TRIALS * STRIDE_WORDS, np.uint32)


def _sim_one(item) -> dict:
    import gpusim

    index, sets = item
    _, kernel, delay = LAUNCHES[index]
    overrides = dict(gpusim.config.parse_override(s) for s in sets) if sets else None
    with gpusim.Device("h100", mode="timing", overrides=overrides):
        return _run(gpusim, index, kernel, delay, _buffer(gpusim))


def table(gpu_json: pathlib.Path, sim_json: pathlib.Path) -> str:
    """Median cycles of the timed loads (B: the second, or CTA 1's), the GPU beside gpusim."""
    hw, sim = json.loads(gpu_json.read_text()), json.loads(sim_json.read_text())
    rows = ["| launch | GPU B | gpusim B | GPU A | gpusim A |", "|---|---:|---:|---:|---:|"]
    for label, *_ in LAUNCHES:
        if label in hw and label in sim:
            h, s = hw[label], sim[label]
            rows.append(f"| {label} | {h['b_median']:.0f} | {s['b_median']:.0f} | {h['a_median']:.0f} | "
                        f"{s['a_median']:.0f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="validation/probes/fill_in_flight.py")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--gpu", type=pathlib.Path, help="run on the GPU (CuPy); write the cycles to this JSON")
    g.add_argument("--sim", type=pathlib.Path, help="run on gpusim; write the cycles to this JSON")
    g.add_argument("--table", nargs=2, type=pathlib.Path, metavar=("GPU_JSON", "SIM_JSON"))
    p.add_argument("--jobs", type=int, default=1, help="launches simulated at once (--sim)")
    p.add_argument("--set", nargs="+", default=[], metavar="FIELD=VALUE", help="gpusim config overrides (--sim)")
    a = p.parse_args(argv)
    if a.table:
        print(table(*a.table))
    elif a.sim:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max(1, a.jobs), max_tasks_per_child=1) as pool:
            recs = list(pool.map(_sim_one, [(i, a.set) for i in range(len(LAUNCHES))]))
        a.sim.write_text(json.dumps({lab: r for (lab, *_), r in zip(LAUNCHES, recs)}, indent=1))
    else:
        import cupy
        import numpy as np

        dev = cupy.cuda.Device()
        out = {"gpu": cupy.cuda.runtime.getDeviceProperties(dev.id)["name"].decode()}
        buf, flush = _buffer(cupy), cupy.ones(FLUSH_WORDS, np.uint32)
        for i, (label, kernel, delay) in enumerate(LAUNCHES):
            out[label] = _run(cupy, i, kernel, delay, buf, flush)
            print(f"{label}: B {out[label]['b_median']:.0f}, A {out[label]['a_median']:.0f} cycles "
                  f"{out[label].get('sms', '')}", flush=True)
        a.gpu.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
