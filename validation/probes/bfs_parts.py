"""GPU probe: which part of the corpus's two BFS steps gpusim times too fast.

``bfs_topdown`` and ``bfs_bottomup`` (``validation/corpus/kernels/graph.cu``, fit half) are the
corpus's largest misses: -40 % and -32 % in gpusim at n = 2^22 vertices, with the H100's DRAM
and L2 counts matched or exceeded (``validation/reports/h100/corpus/corpus_score_session44.md``).
Their warps wait on ``long_scoreboard`` on the H100 (723 and 147 warps per issue), on the L1's
``lg_throttle`` in gpusim (``validation/reports/h100/corpus_stalls``). This probe runs each at the
corpus's launch (same inputs: ``validation.corpus.cases.inputs``, seed 0) beside variants that
each leave one part out:

* ``td_full``: the corpus's top-down step (one thread per frontier vertex; ``atomicCAS`` claims an
  unvisited neighbour, ``atomicAdd`` on one counter, warp-aggregated by ptxas, gives it a queue slot);
* ``td_spread``: the queue counter spread over 1,024 lines (``blockIdx.x % 1024``: still one
  aggregated ``atom`` a warp, but no address shared by the whole GPU);
* ``td_nocount``: no counter (the slot is the edge's index);
* ``td_nocas``: the claim by a plain load and store instead of ``atomicCAS``;
* ``td_loads``: the loads only (row bounds, neighbours, their levels; no atomic, no store);
* ``bu_full``: the corpus's bottom-up step (one thread per vertex; the first parent found ends
  the search, the vertex's level is stored and ``atomicAdd(found, 1)`` counts it);
* ``bu_nored``: without the ``atomicAdd``;
* ``bu_loads``: without the atomic and the store (the search then has no effect, and NVVM drops it:
  this times the vertex's own level check only).

Each launch starts from the inputs as generated (the levels and the queue are restored before
it). On the GPU machine (repository root; clocks untouched)::

    ncu --clock-control none --metrics $(python3 validation/probes/bfs_parts.py --metrics) \\
        --csv --page raw --print-units base --log-file $OUT/bfs_parts.csv \\
        python3 validation/probes/bfs_parts.py --gpu

Each kernel runs twice; ncu's second row of each is the measurement. gpusim's side: ``--sim
OUT.json [--jobs N] [--set FIELD=VALUE ...]`` (timed as the corpus times them: sampled);
``--table CSV JSON`` prints both. Needs CuPy (``--gpu``) or gpusim (``--sim``); numpy for both.
"""

from __future__ import annotations

import json
import pathlib
import sys

if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from validation import probekit  # noqa: E402

CODE = r"""
#define UNVISITED 0xffffffffu

// MODE 0 full, 1 spread counter, 2 no counter, 3 no CAS, 4 loads only
template <int MODE>
__device__ void topdown(const int* __restrict__ row_ptr, const int* __restrict__ cols, const int* __restrict__ frontier,
                        int frontier_size, unsigned* level, unsigned cur, int* __restrict__ next, int* next_size, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= frontier_size)
        return;
    int v = frontier[t];
    unsigned acc = 0;
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; ++e) {
        int u = cols[e];
        if (MODE == 4) {
            acc += level[u];
            continue;
        }
        if (level[u] != UNVISITED)
            continue;
        if (MODE == 3)
            level[u] = cur;
        else if (atomicCAS(&level[u], UNVISITED, cur) != UNVISITED)
            continue;
        if (MODE == 0 || MODE == 3)
            next[atomicAdd(next_size, 1)] = u;
        else if (MODE == 1)
            next[(atomicAdd(next_size + 32 * (blockIdx.x & 1023), 1) * 1024 + (blockIdx.x & 1023)) & (n - 1)] = u;
        else
            next[e & (n - 1)] = u;
    }
    if (MODE == 4 && acc == 0x9e3779b9u)
        next[t] = (int)acc;
}

// MODE 0 full, 1 no atomicAdd, 2 no atomicAdd and no store
template <int MODE>
__device__ void bottomup(const int* __restrict__ row_ptr, const int* __restrict__ cols, unsigned* level, unsigned cur,
                         int* found, int n)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || level[v] != UNVISITED)
        return;
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; ++e) {
        if (level[cols[e]] == cur - 1) {
            if (MODE != 2)
                level[v] = cur;
            if (MODE == 0)
                atomicAdd(found, 1);
            break;
        }
    }
}

#define TD(name, mode) extern "C" __global__ void name(const int* row_ptr, const int* cols, const int* frontier, \
    int frontier_size, unsigned* level, unsigned cur, int* next, int* next_size, int n) \
    { topdown<mode>(row_ptr, cols, frontier, frontier_size, level, cur, next, next_size, n); }
#define BU(name, mode) extern "C" __global__ void name(const int* row_ptr, const int* cols, unsigned* level, \
    unsigned cur, int* found, int n) { bottomup<mode>(row_ptr, cols, level, cur, found, n); }
TD(td_full, 0) TD(td_spread, 1) TD(td_nocount, 2) TD(td_nocas, 3) TD(td_loads, 4)
BU(bu_full, 0) BU(bu_nored, 1) BU(bu_loads, 2)
"""
#: vertices (the corpus's size of both cases)
N = 1 << 22
LAUNCHES = ("td_full", "td_spread", "td_nocount", "td_nocas", "td_loads", "bu_full", "bu_nored", "bu_loads")
STALLS = ("long_scoreboard", "lg_throttle", "drain", "wait", "math_pipe_throttle", "branch_resolving", "membar")
METRICS = ("sm__cycles_elapsed.avg", "gpu__time_duration.sum", "smsp__inst_executed.sum",
           "sm__warps_active.avg.pct_of_peak_sustained_active", "lts__t_sectors_op_read.sum",
           "lts__t_sectors_op_write.sum", "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum",
           "lts__t_requests_srcunit_tex_op_atom.sum", "lts__t_requests_srcunit_tex_op_red.sum",
           "dram__bytes_read.sum", "dram__bytes_write.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
           "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") + tuple(
    f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALLS)


def host_args(label: str) -> list:
    """The launch's arguments as host values (numpy arrays and scalars, kernel order): the corpus
    case's inputs at :data:`N`, with the spread counters' 1,024 lines (``td_*``: ``n`` appended)."""
    import numpy as np

    from validation.corpus import cases as C

    if label.startswith("td"):
        a = C.inputs(C.BY_NAME["bfs_topdown"], N, 0)
        return a[:7] + [np.zeros(1024 * 32, np.int32), np.int32(N)]
    return C.inputs(C.BY_NAME["bfs_bottomup"], N, 0)


def launch_shape(label: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(grid, block) of the corpus's launch: 256 threads a CTA, one thread a frontier vertex (n/8)
    or a vertex."""
    threads = N // 8 if label.startswith("td") else N
    return (-(-threads // 256), 1, 1), (256, 1, 1)


def _launch(xp, mod, label: str, dev: list):
    grid, block = launch_shape(label)
    return mod.get_function(label)(grid, block, tuple(dev))


def _sim_one(item) -> dict:
    import time

    import numpy as np

    import gpusim

    label, sets = item
    overrides = dict(gpusim.config.parse_override(s) for s in sets) if sets else None
    t0 = time.perf_counter()
    with gpusim.Device("h100", mode="timing", overrides=overrides):
        dev = [gpusim.asarray(a) if isinstance(a, np.ndarray) else a for a in host_args(label)]
        r = _launch(gpusim, gpusim.RawModule(code=CODE), label, dev)
    m = r.metrics
    out = {k: float(m[k]) for k in METRICS if k in m} | probekit.stall_ratios(m, m.get("smsp__inst_executed.sum", 0.0),
                                                                             STALLS)
    return out | {"sampling": str(r.sampling), "host_seconds": round(time.perf_counter() - t0, 1)}


def table(csv_path: pathlib.Path, sim_json: pathlib.Path) -> str:
    """Cycles (and each variant's saving from its ``*_full``), atomics' requests, DRAM bytes and two
    warp states, the H100 beside gpusim."""
    hw = probekit.second_launches(csv_path, set(LAUNCHES), list(LAUNCHES), METRICS)
    sim = json.loads(sim_json.read_text())
    c = "sm__cycles_elapsed.avg"
    rows = ["| launch | H100 cycles | gpusim | error % | saved from full: H100 / gpusim | atom + red requests | "
            "DRAM read MB | long_scoreboard | lg_throttle |", "|---|---:|---:|---:|---|---|---|---|---|"]
    for label in LAUNCHES:
        h, s = hw.get(label), sim.get(label)
        if h is None or s is None:
            continue
        full = label[:3] + "full"
        saved = (f"{hw[full][c] - h[c]:,.0f} / {sim[full][c] - s[c]:,.0f}" if full in sim and label != full else "")
        req = [x.get("lts__t_requests_srcunit_tex_op_atom.sum", 0) + x.get("lts__t_requests_srcunit_tex_op_red.sum", 0)
               for x in (h, s)]
        st = [" / ".join(f"{x.get(f'smsp__average_warps_issue_stalled_{k}_per_issue_active.ratio', 0):.1f}"
                         for x in (h, s)) for k in ("long_scoreboard", "lg_throttle")]
        rows.append(f"| {label} | {h[c]:,.0f} | {s[c]:,.0f} | {100 * (s[c] / h[c] - 1):+.1f} | {saved} | "
                    f"{req[0]:,.0f} / {req[1]:,.0f} | {h['dram__bytes_read.sum'] / 1e6:.1f} / "
                    f"{s.get('dram__bytes_read.sum', 0) / 1e6:.1f} | {st[0]} | {st[1]} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    a = probekit.parts_parser("validation/probes/bfs_parts.py", LAUNCHES)[0].parse_args(argv)
    labels = [lab for lab in LAUNCHES if a.labels is None or lab in a.labels]
    if a.metrics:
        print(",".join(METRICS))
    elif a.table:
        print(table(*a.table))
    elif a.sim:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        done: dict = {}
        with ProcessPoolExecutor(max(1, a.jobs), max_tasks_per_child=1) as pool:
            futures = {pool.submit(_sim_one, (lab, a.set)): lab for lab in labels}
            for f in as_completed(futures):  # written as each finishes: a run cut short keeps what it has
                done[futures[f]] = f.result()
                a.sim.write_text(json.dumps({k: done[k] for k in labels if k in done}, indent=1))
                print(futures[f], f"{done[futures[f]]['sm__cycles_elapsed.avg']:,.0f}", flush=True)
    else:
        import cupy
        import numpy as np

        mod = cupy.RawModule(code=CODE)
        for label in labels:
            host = host_args(label)
            dev = [cupy.asarray(x) if isinstance(x, np.ndarray) else x for x in host]
            for _ in range(2):
                for d, x in zip(dev, host):  # the levels, the queue and the counters as generated
                    if isinstance(x, np.ndarray):
                        d.set(x)
                _launch(cupy, mod, label, dev)
            cupy.cuda.runtime.deviceSynchronize()
            print(label, flush=True)


if __name__ == "__main__":
    main()
