"""The long fuzz run of issue #29: 10^4 inputs of four kinds through gpusim, counting raw tracebacks
and hangs.

Owns: running the generators and runners of ``tests/fuzz/strategies.py`` (mutated PTX loaded and
launched in both modes, ``gpusim`` command lines, experiment and sweep TOML files, sequences of
API calls) outside pytest, each input in a worker process under a wall-clock timeout, so that a
hang is detected and counted, not suffered; and the summary JSON. Imports the standard library
and the strategies module (which imports gpusim).

An input is a hang when its worker spends more than ``--timeout`` seconds of CPU time on it (user +
system, read from /proc; on a shared machine wall time would count other processes' load), or
``WALL_FACTOR`` times that in wall time (a blocked wait that uses no CPU); the worker is then killed
and replaced. Where /proc is missing, wall time is the measure.

Each input is generated in the worker from (kind, seed, index), deterministically, so any input
can be replayed: ``python benchmarks/fuzz.py --replay cli 123 --seed 0`` prints it and its outcome.

    python benchmarks/fuzz.py --n 10000 --seed 0 --jobs 2 --timeout 20
    # -> benchmarks/results/fuzz.json: per kind, accepted, rejected (a GpusimError), raw tracebacks
    #    (the first few distinct ones, by exception type and last frame) and hangs (with the input)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from multiprocessing.connection import wait
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: Tasks a worker runs before it is replaced (bounds what a long run accumulates in one process).
RECYCLE = 300
#: An input still running after this many times ``--timeout`` seconds of wall time is a hang too.
WALL_FACTOR = 4
#: Address space of a worker (bytes).
MEMORY_LIMIT = 8 << 30
#: Distinct raw tracebacks kept per kind in the summary.
KEEP = 10


def _worker(conn, seed: int) -> None:
    """Run tasks (kind, index) from ``conn``; answer (kind, index, outcome, detail, seconds)."""
    import warnings

    try:  # an input that makes gpusim allocate without bound fails here (a MemoryError: raw), not the host
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass
    warnings.simplefilter("ignore")
    os.environ.setdefault("MPLBACKEND", "Agg")
    from tests.fuzz import strategies as S

    while True:
        task = conn.recv()
        if task is None:
            return
        kind, i = task
        t0 = time.perf_counter()
        detail = None
        try:
            inp = S.generate(kind, f"{seed}:{i}")
            with tempfile.TemporaryDirectory(prefix="gpusim-fuzz-") as tmp:
                outcome = S.run(kind, inp, Path(tmp))
        except S.RawTraceback as exc:
            outcome, detail = "raw", {"type": exc.kind, "where": exc.where, "text": exc.text[-4000:],
                                      "input": repr(inp)[:4000]}
        except BaseException as exc:  # noqa: BLE001 - the harness itself failed: report, keep going
            outcome, detail = "raw", {"type": f"harness {type(exc).__name__}", "where": "benchmarks/fuzz.py",
                                      "text": repr(exc)[:2000], "input": f"{kind} {i}"}
        conn.send((kind, i, outcome, detail, time.perf_counter() - t0))


def _cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system, its waited-for children's too) process ``pid`` has used, or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


class _Slot:
    """One worker process and the task it runs."""

    def __init__(self, ctx, seed: int):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, seed), daemon=True)
        self.proc.start()
        child.close()
        self.task = None
        self.started = 0.0
        self.done = 0

    def give(self, task) -> None:
        self.task, self.started, self.cpu0 = task, time.perf_counter(), _cpu_seconds(self.proc.pid)
        self.conn.send(task)

    def used(self, now: float) -> tuple[float, float]:
        """(CPU seconds, wall seconds) spent on the current task; CPU is wall where /proc is missing."""
        wall = now - self.started
        cpu = _cpu_seconds(self.proc.pid)
        return (wall if cpu is None or self.cpu0 is None else cpu - self.cpu0), wall

    def kill(self) -> None:
        self.proc.kill()
        self.proc.join()
        self.conn.close()


def fuzz(n: int, seed: int, jobs: int, timeout: float, kinds: tuple[str, ...], progress: bool = True) -> dict:
    """Run ``n`` inputs split evenly across ``kinds``; return the summary."""
    from tests.fuzz.strategies import generate

    ctx = mp.get_context("fork")
    tasks = [(k, i) for i in range(-(-n // len(kinds))) for k in kinds][:n]
    todo = list(reversed(tasks))
    stats = {k: {"inputs": 0, "accepted": 0, "rejected": 0, "raw": 0, "hangs": 0, "seconds": 0.0,
                 "slowest_s": 0.0, "cpu_seconds": 0.0, "slowest_cpu_s": 0.0, "raw_tracebacks": [], "hang_inputs": []} for k in kinds}
    seen: set = set()
    slots = [_Slot(ctx, seed) for _ in range(jobs)]
    t0 = last = time.perf_counter()
    finished = 0
    while todo or any(s.task for s in slots):
        for s in slots:
            if s.task is None and todo:
                s.give(todo.pop())
        ready = wait([s.conn for s in slots if s.task], timeout=0.5)
        now = time.perf_counter()
        for i, s in enumerate(slots):
            if s.task is None:
                continue
            cpu, wall = s.used(now)
            if s.conn in ready:
                try:
                    kind, idx, outcome, detail, secs = s.conn.recv()
                except EOFError:  # the worker died (killed by the OS, a crash in C code): counts as raw
                    kind, idx = s.task
                    outcome, secs = "raw", wall
                    detail = {"type": "worker died", "where": "process", "text": f"exit code {s.proc.exitcode}",
                              "input": repr(generate(kind, f"{seed}:{idx}"))[:4000]}
                    s.kill()
                    slots[i] = s = _Slot(ctx, seed)
            elif cpu > timeout or wall > WALL_FACTOR * timeout:
                kind, idx = s.task
                outcome, secs, detail = "hang", wall, None
                s.kill()
                slots[i] = s = _Slot(ctx, seed)
            else:
                continue
            s.task = None
            finished += 1
            st = stats[kind]
            st["inputs"] += 1
            st["seconds"] += secs
            st["slowest_s"] = max(st["slowest_s"], round(secs, 2))
            st["cpu_seconds"] += cpu
            st["slowest_cpu_s"] = max(st["slowest_cpu_s"], round(cpu, 2))
            if outcome == "hang":
                st["hangs"] += 1
                st["hang_inputs"].append({"index": idx, "input": repr(generate(kind, f"{seed}:{idx}"))[:4000]})
            elif outcome == "raw":
                st["raw"] += 1
                key = (kind, detail["type"], detail["where"])
                if key not in seen and len(st["raw_tracebacks"]) < KEEP:
                    seen.add(key)
                    st["raw_tracebacks"].append({"index": idx, **detail})
            else:
                st[outcome] += 1
            s.done += 1
            if s.done >= RECYCLE and s.task is None:
                s.conn.send(None)
                s.proc.join(5)
                s.kill()
                slots[i] = _Slot(ctx, seed)
        if progress and now - last > 10:
            last = now
            counts = ", ".join(f"{k} {v['inputs']} ({v['raw']} raw, {v['hangs']} hangs)" for k, v in stats.items())
            print(f"[{now - t0:6.0f} s] {finished}/{len(tasks)}: {counts}", file=sys.stderr, flush=True)
    for s in slots:
        s.conn.send(None)
        s.proc.join(5)
        if s.proc.is_alive():
            s.kill()
    wall = time.perf_counter() - t0
    for st in stats.values():
        st["seconds"], st["cpu_seconds"] = round(st["seconds"], 1), round(st["cpu_seconds"], 1)
    total = {k: sum(v[k] for v in stats.values()) for k in ("inputs", "accepted", "rejected", "raw", "hangs")}
    return {"seed": seed, "jobs": jobs, "timeout_cpu_s": timeout, "timeout_wall_s": WALL_FACTOR * timeout,
            "wall_s": round(wall, 1),
            "inputs_per_s": round(total["inputs"] / wall, 2), "total": total, "kinds": stats,
            "python": sys.version.split()[0], "cpus": os.cpu_count()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=10_000, help="inputs in all, split evenly across the kinds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2, help="worker processes")
    p.add_argument("--timeout", type=float, default=20.0, help="CPU seconds before an input counts as a hang (or "
                   f"{WALL_FACTOR} times that of wall time)")
    p.add_argument("--kinds", default="ptx,cli,experiment,api", help="comma-separated kinds")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "fuzz.json"))
    p.add_argument("--replay", nargs=2, metavar=("KIND", "INDEX"), help="print one input and its outcome, then stop")
    a = p.parse_args(argv)
    if a.replay:
        from tests.fuzz import strategies as S

        kind, idx = a.replay[0], int(a.replay[1])
        inp = S.generate(kind, f"{a.seed}:{idx}")
        print(repr(inp))
        with tempfile.TemporaryDirectory() as tmp:
            try:
                print(S.run(kind, inp, Path(tmp)))
            except S.RawTraceback as exc:
                print(f"RAW {exc}")
        return 0
    kinds = tuple(k for k in a.kinds.split(",") if k)
    summary = fuzz(a.n, a.seed, a.jobs, a.timeout, kinds)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(summary, indent=1) + "\n")
    t = summary["total"]
    print(f"{t['inputs']} inputs in {summary['wall_s']} s ({summary['inputs_per_s']}/s, {a.jobs} workers): "
          f"{t['accepted']} accepted, {t['rejected']} rejected, {t['raw']} raw tracebacks, {t['hangs']} hangs "
          f"-> {a.out}")
    return 0 if t["raw"] == 0 and t["hangs"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
