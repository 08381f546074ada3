"""Chrome Trace Event / Perfetto JSON timeline of a recorded launch (``gpusim trace``).

Owns: turning a :class:`gpusim.viz.capture.Recording` into the JSON object of the Trace
Event Format (design-anchors B.1) that ui.perfetto.dev and chrome://tracing open:

* one **process per SM** (``pid = sm + 1``, named ``"SM 3"``), one **thread track per warp
  slot** (``tid = 1000 * (sm + 1) + slot``, globally unique, named ``"warp slot 5 (scheduler 1)"``);
* on each warp-slot track, complete (``X``) slices, perfectly nested:
  depth 0: the resident warp, ``"CTA 2 warp 1"``, from its CTA's start to its last issue;
  depth 1: one slice per stall segment of the warp (named by the Nsight Compute reason,
  ``"stall: long_scoreboard"``) and one per issued instruction (named by its mnemonic,
  ``"ld.global.f32"``, 1 cycle long; args: pc, PTX line, CUDA line, CTA, warp, active lanes);
* **async** (``b``/``e``) slices for memory instructions in flight, from issue to the cycle
  their data is ready (``IssueEvent.ready``), category ``memory``, with sectors/wavefronts;
* **counter** (``C``) tracks per SM: ``warps`` (series ``active``: resident warps) and
  ``IPC`` (series ``issued per cycle``, over buckets of :data:`IPC_BUCKET` cycles);
* metadata (``M``) naming every process and thread, and ``otherData`` with the kernel,
  GPU, launch shape, cycles and the time unit.

Time axis: with ``time="cycles"`` (default) one SM cycle is drawn as 1 ns (``ts`` in µs =
cycle / 1000, so cycle counts read directly off the ns axis); with ``time="real"`` ``ts`` is
the cycle divided by the configuration's ``clock_hz`` (real time; 1-cycle slices may round
in viewers that keep integer nanoseconds).

Must not import: simpy, cupy, matplotlib.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

from gpusim.errors import GpusimError
from gpusim.viz.capture import Recording

__all__ = ["build_trace", "write_trace", "IPC_BUCKET", "TIME_MODES"]

#: Cycles per sample of the IPC counter track.
IPC_BUCKET = 32
#: ``time=`` choices of :func:`build_trace`.
TIME_MODES = ("cycles", "real")


def _pid(sm: int) -> int:
    return sm + 1


def _tid(sm: int, slot: int) -> int:
    return 1000 * (sm + 1) + slot


def _mem_args(step) -> dict[str, Any]:
    """Sectors / wavefronts of a recorded step's accesses (for slice args)."""
    from gpusim.memmodel import global_sectors, shared_wavefronts

    out: dict[str, Any] = {}
    for a in step.accesses:
        if not a.active.any():
            continue
        if a.space == "shared" and a.op in ("ld", "st"):
            c = shared_wavefronts(a.addrs, max(4, min(a.width, 16)), a.op == "ld", a.active)
            out["shared_wavefronts"] = out.get("shared_wavefronts", 0) + int(c.wavefronts[0])
            out["bank_conflicts"] = out.get("bank_conflicts", 0) + int(c.conflicts[0])
        elif a.space in ("global", "local"):
            c = global_sectors(a.addrs.astype("uint64"), min(a.width, 16), a.active)
            out[f"{a.space}_sectors"] = out.get(f"{a.space}_sectors", 0) + int(c.sectors[0])
    return out


def build_trace(rec: Recording, *, time: str = "cycles") -> dict[str, Any]:
    """The trace of ``rec`` as a JSON-serialisable dict ``{"traceEvents": [...], ...}``.

    Args:
        rec: a recording (its result must carry events: ``record_events=True``).
        time: ``"cycles"`` (1 cycle drawn as 1 ns) or ``"real"`` (cycles / clock).

    Returns:
        The trace object. Event counts: one ``X`` slice per issued warp instruction, one per
        stall segment and one per resident warp; one ``b`` and one ``e`` per memory
        instruction whose data arrives after its issue cycle.

    Raises:
        gpusim.errors.GpusimError: unknown ``time`` mode, or a recording without events.
    """
    if time not in TIME_MODES:
        raise GpusimError(f"unknown time axis {time!r}; choose one of {', '.join(TIME_MODES)}")
    res = rec.result
    if not res.events:
        raise GpusimError(f"{rec.label}: the launch has no issue events (record it with "
                          "gpusim.Device(..., 'timing', record_events=True))")
    clock = rec.config.clock_hz
    scale = 1e-3 if time == "cycles" else 1e6 / clock

    def ts(c: float) -> float:
        return round(c * scale, 9)

    kernel = rec.kernel
    by_warp = {(s.cta, s.warp, s.seq): s for s in rec.steps}
    seq: collections.Counter = collections.Counter()
    cta_start = {c: (sm, start) for c, sm, _slots, start, _end in (res.cta_spans or [])}
    ev: list[dict[str, Any]] = []
    last: dict[tuple[int, int], Any] = {}
    threads: set[tuple[int, int]] = set()
    async_id = 0
    for e in res.events:  # each warp's last issue, for its resident-warp slice
        last[(e.cta, e.warp)] = e
        threads.add((e.sm, e.slot))
    # Resident-warp slices (depth 0, emitted first so that equal-ts children follow their parent)
    # and the active-warps counter.
    deltas: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
    for (cta, warp), e in sorted(last.items()):
        sm, start = cta_start.get(cta, (e.sm, None))
        if start is None:
            start = min(x.cycle for x in res.events if x.cta == cta)
        ev.append({"name": f"CTA {cta} warp {warp}", "cat": "warp", "ph": "X", "ts": ts(start),
                   "dur": ts(e.cycle + max(e.slots, 1)) - ts(start), "pid": _pid(e.sm), "tid": _tid(e.sm, e.slot),
                   "args": {"cta": cta, "cta_coords": list(_coords(cta, rec.grid)), "warp": warp,
                            "start_cycle": start, "last_issue_cycle": e.cycle}})
        deltas[e.sm][start] += 1
        deltas[e.sm][e.cycle] -= 1
    for e in res.events:
        key = (e.cta, e.warp)
        n = seq[key]
        seq[key] += 1
        pid, tid = _pid(e.sm), _tid(e.sm, e.slot)
        for a, b, reason in e.stalls:
            ev.append({"name": f"stall: {reason}", "cat": "stall", "ph": "X", "ts": ts(a), "dur": ts(b) - ts(a),
                       "pid": pid, "tid": tid, "args": {"reason": reason, "cycles": b - a, "pc": e.pc}})
        ins = kernel.instrs[e.pc] if e.pc < len(kernel.instrs) else None
        name = ins.mnemonic if ins is not None else "ret (end of kernel)"
        args: dict[str, Any] = {"cycle": e.cycle, "pc": e.pc, "cta": e.cta, "warp": e.warp,
                                "active_threads": e.active}
        if ins is not None:
            args["ptx_line"] = ins.loc.line
            args["ptx"] = ins.to_ptx()
            cl = rec.cuda_line(e.pc)
            if cl:
                args["cuda_line"] = cl
        step = by_warp.get((e.cta, e.warp, n))
        mem = _mem_args(step) if step is not None and step.accesses else {}
        args.update(mem)
        args["issue_cycles"] = e.slots
        if e.slots:
            ev.append({"name": name, "cat": "issue", "ph": "X", "ts": ts(e.cycle),
                       "dur": ts(e.cycle + e.slots) - ts(e.cycle), "pid": pid, "tid": tid, "args": args})
        else:  # folded by ptxas into other instructions: no issue cycle of its own
            ev.append({"name": name, "cat": "issue", "ph": "i", "s": "t", "ts": ts(e.cycle), "pid": pid, "tid": tid,
                       "args": args})
        if e.space in ("global", "local", "shared") and e.ready > e.cycle + 1:
            async_id += 1
            op = ins.op if ins is not None else "mem"
            aname = f"{op}.{e.space}"
            common = {"name": aname, "cat": "memory", "pid": pid, "tid": tid, "id": async_id}
            ev.append({**common, "ph": "b", "ts": ts(e.cycle),
                       "args": {"pc": e.pc, "cta": e.cta, "warp": e.warp, "latency_cycles": e.ready - e.cycle, **mem}})
            ev.append({**common, "ph": "e", "ts": ts(e.ready)})
    for sm, d in sorted(deltas.items()):
        level = 0
        for c in sorted(d):
            level += d[c]
            ev.append({"name": "warps", "ph": "C", "ts": ts(c), "pid": _pid(sm), "args": {"active": level}})
    # IPC per SM in buckets.
    issued: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
    for e in res.events:
        issued[e.sm][e.cycle // IPC_BUCKET] += e.slots
    for sm, cnt in sorted(issued.items()):
        lo, hi = min(cnt), max(cnt)
        for b in range(lo, hi + 2):
            ev.append({"name": "IPC", "ph": "C", "ts": ts(b * IPC_BUCKET), "pid": _pid(sm),
                       "args": {"issued per cycle": cnt.get(b, 0) / IPC_BUCKET}})
    # Metadata.
    for sm in sorted({s for s, _ in threads}):
        ev.append({"name": "process_name", "ph": "M", "pid": _pid(sm), "args": {"name": f"SM {sm}"}})
        ev.append({"name": "process_sort_index", "ph": "M", "pid": _pid(sm), "args": {"sort_index": sm}})
    n_sched = rec.config.sm.scheduler.count
    for sm, slot in sorted(threads):
        ev.append({"name": "thread_name", "ph": "M", "pid": _pid(sm), "tid": _tid(sm, slot),
                   "args": {"name": f"warp slot {slot} (scheduler {slot % n_sched})"}})
        ev.append({"name": "thread_sort_index", "ph": "M", "pid": _pid(sm), "tid": _tid(sm, slot),
                   "args": {"sort_index": slot}})
    other = {
        "kernel": rec.kernel.name, "label": rec.label, "gpu": rec.config.name, "grid": list(rec.grid),
        "block": list(rec.block), "dynamic_shared_bytes": rec.shared_mem, "cycles": res.cycles,
        "clock_hz": clock, "time_axis": ("1 ns on the time axis = 1 SM cycle" if time == "cycles"
                                         else f"real time at {clock / 1e9:g} GHz"),
        "producer": "gpusim trace",
    }
    return {"traceEvents": ev, "otherData": other}


def _coords(cta: int, grid: tuple[int, int, int]) -> tuple[int, int, int]:
    gx, gy, _ = grid
    return cta % gx, cta // gx % gy, cta // (gx * gy)


def write_trace(rec: Recording, path: str | Path, *, time: str = "cycles", force: bool = False) -> Path:
    """Write :func:`build_trace` of ``rec`` to ``path`` (JSON); return the path.

    Raises:
        gpusim.errors.GpusimError: ``path`` exists and ``force`` is false (never overwrites
            silently); bad ``time``; no events.
    """
    p = Path(path)
    if p.exists() and not force:
        raise GpusimError(f"{p} exists; pass --force (force=True) to overwrite it")
    data = build_trace(rec, time=time)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data, separators=(",", ":")))
    return p
