"""The resumable run loop of the sampling benchmarks (``iteration_sampling.py``,
``slice_loop_sampling.py``): each run in a fresh process, the JSON rewritten after each, runs
already in it skipped. Imports the standard library only."""

from __future__ import annotations

import concurrent.futures
import json
import pathlib
import sys
from typing import Callable


def resume_runs(out: pathlib.Path, runs: list[tuple[str, tuple]], one: Callable[..., dict]) -> dict:
    """``{key: one(*args)}`` for every ``(key, args)`` of ``runs``, each in a fresh process (so its
    peak memory and caches are its own), keeping those already in ``out`` (JSON) and rewriting
    ``out`` after each run, so a run cut short keeps what finished. ``one`` must return a
    JSON-ready dict with ``seconds``."""
    done = json.loads(out.read_text()) if out.exists() else {}
    for key, args in runs:
        if key in done:
            continue
        with concurrent.futures.ProcessPoolExecutor(1) as pool:
            done[key] = pool.submit(one, *args).result()
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(done, indent=1))
        print(f"{key}: {done[key]['seconds']:.1f} s", file=sys.stderr, flush=True)
    return done
