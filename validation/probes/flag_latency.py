"""GPU probe: how long a flag takes to pass between SMs through the L2, and one volatile load.

The corpus's ``scan_lookback`` (fit half) is 60 % fast in gpusim, on the detailed engine too
(42 K cycles against the H100's 109 K): its CTAs spin with volatile loads (``LDG.E.STRONG.SYS``)
on their predecessors' volatile stores (``STG.E.STRONG.SYS``), so its time is a chain of such
hops. ``flag_latency.ptx`` (source ``flag_latency.cu``) measures the two parts with ``%clock64``:

* ``chase_volatile`` / ``chase_cg``: one thread, 2,048 dependent loads over a ring of 128-byte
  lines (256 KiB: L2 hits after a warm-up pass over the same ring): cycles a volatile / ``ld.global.cg`` load;
* ``relay``: R rounds of a relay among ``roles`` lane-0 threads: role k waits (volatile loads)
  until role k-1's flag holds the round, then stores its own (role 0 starts each round and waits
  for the last). Cycles a hop = role 0's cycles / (rounds x roles). Roles one a CTA of one warp
  (other SMs: 2 to 132 CTAs) or warps of one CTA (the same SM), flags 32 words apart (a line
  each) or 2 (one line, 8 bytes apart like ``scan_lookback``'s status words).

* ``chase_each`` / ``chase_each2``: 132 one-warp CTAs chase one ring of 2,048 lines, each load
  timed alone (once, twice): how an L2 hit's cycles spread over SMs, lines and time;
* ``chase_wide``: one warp whose dependent loads touch 1 to 32 lines: does it wait for the slowest?

No Nsight Compute: the kernels time themselves. GPU side: ``python3 flag_latency.py --gpu OUT.json``;
gpusim's side: ``python3 flag_latency.py --sim OUT.json [--jobs N]`` (the detailed engine: the
kernels read ``%clock64``); the table: ``python3 flag_latency.py --table GPU.json SIM.json``.
Needs CuPy (GPU side) or gpusim (``--sim``).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

PTX = pathlib.Path(__file__).with_name("flag_latency.ptx")
STEPS = RING_LINES = 2048  # 256 KiB of 128-byte lines, read twice
#: (label, kernel, grid, block, rounds, stride in words)
LAUNCHES = [("chase_volatile", "chase_volatile", 1, 32, 0, 0), ("chase_cg", "chase_cg", 1, 32, 0, 0)] + [
    (f"relay {g} CTAs stride {s}", "relay", g, 32, max(4, 256 // g), s) for s in (32, 2) for g in (2, 8, 32, 132)] + [
    (f"relay 1 CTA {w} warps stride 32", "relay", 1, 32 * w, max(4, 256 // w), 32) for w in (2, 8)]
#: chase_each: CTAs (one an SM), each timing its ``STEPS`` loads one by one
EACH_CTAS, EACH_OFFSET = 132, 15


def _ring():
    """The chases' ring: (the order of its :data:`RING_LINES` lines, int64; the words, uint32, where
    word 0 of each line holds the word index of the next line in that order: one cycle)."""
    import numpy as np

    order = np.random.default_rng(0).permutation(RING_LINES)
    ring = np.zeros(RING_LINES * 32, np.uint32)
    ring[order * 32] = np.roll(order, -1) * 32
    return order, ring


def _run(xp, kernel: str, grid: int, block: int, rounds: int, stride: int) -> tuple[float, int]:
    """One launch on ``xp`` (cupy or gpusim); returns (role 0's or the chase's cycles, result)."""
    import numpy as np

    f = xp.RawModule(path=str(PTX)).get_function(kernel)
    t = xp.asarray(np.zeros(grid * block // 32, np.int64))
    if kernel.startswith("chase"):
        _, ring = _ring()
        sink = xp.asarray(np.zeros(1, np.uint32))
        res = f((1,), (block,), (xp.asarray(ring), np.uint32(STEPS), sink, t))
        return float(t.get()[0]), res
    flags = xp.asarray(np.zeros(grid * block // 32 * stride + 32, np.uint32))
    res = f((grid,), (block,), (flags, np.uint32(rounds), np.uint32(stride), t))
    return float(t.get()[0]), res


def chase_each(xp) -> tuple:
    """``chase_each`` on ``xp``, CTA b starting at the ring's position ``b * EACH_OFFSET``: (cycles of
    each load by line, shape (EACH_CTAS, STEPS), uint32, column l being line ``l`` for every CTA;
    %smid of each CTA, shape (EACH_CTAS,); the launch's result)."""
    import numpy as np

    f = xp.RawModule(path=str(PTX)).get_function("chase_each")
    order, ring = _ring()
    pos0 = np.arange(EACH_CTAS) * EACH_OFFSET % RING_LINES
    lat = xp.asarray(np.zeros((EACH_CTAS, STEPS), np.uint32))
    sm = xp.asarray(np.zeros(EACH_CTAS, np.uint32))
    res = f((EACH_CTAS,), (32,), (xp.asarray(ring), xp.asarray((order[pos0] * 32).astype(np.uint32)),
                                  np.uint32(STEPS), lat, sm))
    # load i of CTA b reads the line at ring position pos0[b] + i + 1
    lines = order[(pos0[:, None] + np.arange(STEPS)[None, :] + 1) % RING_LINES]
    by_line = np.zeros((EACH_CTAS, RING_LINES), np.uint32)
    np.put_along_axis(by_line, lines, lat.get(), axis=1)
    return by_line, sm.get(), res


#: chase_wide: lines a load touches, nodes of the ring, steps a pass
WIDTHS, WIDE_NODES, WIDE_STEPS = (1, 2, 4, 8, 16, 32), 1024, 1024


def chase_wide(xp) -> dict:
    """``chase_wide`` on ``xp`` at each of :data:`WIDTHS`: {width: cycles a step of the timed pass}."""
    import numpy as np

    f = xp.RawModule(path=str(PTX)).get_function("chase_wide")
    out = {}
    for w in WIDTHS:
        order = np.random.default_rng(1).permutation(WIDE_NODES)
        ring = np.zeros(WIDE_NODES * w * 32, np.uint32)
        ring[order * w * 32] = np.roll(order, -1)  # word 0 of a node's first line: the next node
        t = xp.asarray(np.zeros(2, np.int64))
        f((1,), (32,), (xp.asarray(ring), np.uint32(WIDE_STEPS), np.uint32(w), xp.asarray(np.zeros(32, np.uint32)), t))
        out[w] = float(t.get()[1]) / WIDE_STEPS
    return out


def chase_each2(xp):
    """``chase_each2`` on ``xp``: cycles of each load by pass, CTA and line, shape (2, EACH_CTAS,
    RING_LINES) (the layout of :func:`chase_each`)."""
    import numpy as np

    f = xp.RawModule(path=str(PTX)).get_function("chase_each2")
    order, ring = _ring()
    pos0 = np.arange(EACH_CTAS) * EACH_OFFSET % RING_LINES
    lat = xp.asarray(np.zeros((2, EACH_CTAS, STEPS), np.uint32))
    f((EACH_CTAS,), (32,), (xp.asarray(ring), xp.asarray((order[pos0] * 32).astype(np.uint32)), np.uint32(STEPS), lat))
    lines = order[(pos0[:, None] + np.arange(STEPS)[None, :] + 1) % RING_LINES]
    by_line = np.zeros((2, EACH_CTAS, RING_LINES), np.uint32)
    for k in range(2):
        np.put_along_axis(by_line[k], lines, lat.get()[k], axis=1)
    return by_line


def repeat_corr(lat2) -> dict:
    """How much of a load's spread repeats from one pass to the next: the correlation of the two
    passes' cycles per (SM, line), raw and once the per-SM and per-line means are taken out."""
    import numpy as np

    a, b = (x.astype(np.float64) for x in lat2)

    def rest(x):
        return x - x.mean(axis=1)[:, None] - x.mean(axis=0)[None, :] + x.mean()
    return {"corr": float(np.corrcoef(a.ravel(), b.ravel())[0, 1]),
            "corr_rest": float(np.corrcoef(rest(a).ravel(), rest(b).ravel())[0, 1]),
            "std_pass0": float(a.std()), "std_pass1": float(b.std())}


def spread(lat) -> dict:
    """How ``chase_each``'s load cycles vary: mean, standard deviation, percentiles, and the
    standard deviations of the per-SM means, of the per-line means and of what is left of each
    load once both are taken out (cycles)."""
    import numpy as np

    x = lat.astype(np.float64)
    sm_mean, line_mean = x.mean(axis=1), x.mean(axis=0)
    rest = x - sm_mean[:, None] - line_mean[None, :] + x.mean()
    return {"mean": x.mean(), "std": x.std(), "p1": np.percentile(x, 1), "p50": np.percentile(x, 50),
            "p99": np.percentile(x, 99), "min": x.min(), "max": x.max(), "sm_std": sm_mean.std(),
            "line_std": line_mean.std(), "rest_std": rest.std()}


def _per_step(label: str, cycles: float) -> float:
    """Cycles a load (chase) or a hop (relay)."""
    _, kernel, grid, block, rounds, _ = next(x for x in LAUNCHES if x[0] == label)
    return cycles / STEPS if kernel.startswith("chase") else cycles / (rounds * grid * block // 32)


def _sim_one(item) -> dict:
    import gpusim

    label, *args = item
    with gpusim.Device("h100", mode="timing"):
        cycles, r = _run(gpusim, *args)
    return {"label": label, "cycles": cycles, "per_step": _per_step(label, cycles),
            "kernel_cycles": float(r.metrics["sm__cycles_elapsed.avg"]), "sampling": str(r.sampling)}


def table(gpu_json: pathlib.Path, sim_json: pathlib.Path) -> str:
    """Cycles a load or a hop, the GPU beside gpusim."""
    hw, sim = json.loads(gpu_json.read_text()), json.loads(sim_json.read_text())
    rows = ["| launch | GPU cycles a step | gpusim cycles a step | gpusim / GPU |", "|---|---:|---:|---:|"]
    for label, *_ in LAUNCHES:
        if label in hw and label in sim:
            h, s = hw[label]["per_step"], sim[label]["per_step"]
            rows.append(f"| {label} | {h:.1f} | {s:.1f} | {s / h:.2f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="validation/probes/flag_latency.py")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--gpu", type=pathlib.Path, help="run on the GPU (CuPy); write the cycles to this JSON")
    g.add_argument("--sim", type=pathlib.Path, help="run on gpusim; write the cycles to this JSON")
    g.add_argument("--table", nargs=2, type=pathlib.Path, metavar=("GPU_JSON", "SIM_JSON"))
    p.add_argument("--jobs", type=int, default=1, help="launches simulated at once (--sim)")
    p.add_argument("--repeats", type=int, default=3, help="runs of each launch on the GPU; the median is kept")
    a = p.parse_args(argv)
    if a.table:
        print(table(*a.table))
    elif a.sim:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max(1, a.jobs), max_tasks_per_child=1) as pool:
            recs = list(pool.map(_sim_one, [(x[0], *x[1:]) for x in LAUNCHES]))
        a.sim.write_text(json.dumps({r["label"]: r for r in recs}, indent=1))
    else:
        import statistics

        import cupy

        out = {}
        for label, *args in LAUNCHES:
            runs = [_run(cupy, *args)[0] for _ in range(a.repeats)]
            c = statistics.median(runs)
            out[label] = {"cycles": c, "runs": runs, "per_step": _per_step(label, c)}
            print(f"{label}: {out[label]['per_step']:.1f} cycles a step ({runs})", flush=True)
        import numpy as np

        lat, sm, _ = chase_each(cupy)
        lat2 = chase_each2(cupy)
        np.savez_compressed(a.gpu.with_suffix(".npz"), lat=lat, sm=sm, lat2=lat2)
        out["chase_each"] = {k: float(v) for k, v in spread(lat).items()}
        out["chase_each2"] = repeat_corr(lat2)
        out["chase_wide"] = chase_wide(cupy)
        for k in ("chase_each", "chase_each2", "chase_wide"):
            print(f"{k}:", out[k], flush=True)
        a.gpu.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
