"""Wall-clock seconds of the suite's tiled SGEMM (``matmul_tiled``) at 1,024 in the default timing
mode, with ``Device(jobs=J)`` (issue #30's target: 60 s on the 16-core GPU machine, 4 min on 2 cores).

Usage::

    python benchmarks/sgemm1024_time.py 16 > benchmarks/results/session37_16cores/sgemm16.json

Prints one JSON line: jobs, seconds, cycles, ``result.sampling`` and the peak resident set (MB).
"""

import json
import resource
import sys
import time

import gpusim
from gpusim.suite import CASES, run_case

jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 1
t = time.perf_counter()
with gpusim.Device("h100", mode="timing", jobs=jobs):
    run = run_case(CASES["matmul_tiled"], gpusim, 1024)
r = run.launches[0]
print(json.dumps({"jobs": jobs, "seconds": round(time.perf_counter() - t, 1), "cycles": r.cycles,
                  "sampling": str(r.sampling),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
