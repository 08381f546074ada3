"""One corpus case on the detailed engine (sampling=False), as session 40 ran hash_insert_75,
hash_insert_half and bfs_topdown on the 2-core machine (repository root)::

    python3 validation/reports/h100/corpus/detailed_case_session40.py CASE

writes /tmp/fl/detailed_CASE.json (merged into corpus_sim_session40_final.json)."""
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[4]))
import gpusim  # noqa: E402
from validation.corpus import cases as C  # noqa: E402
from validation.corpus.runner import Modules, launch  # noqa: E402
from validation.corpus.simulate import METRICS  # noqa: E402

name = sys.argv[1]
case = C.BY_NAME[name]
n = case.sizes['gpu']
t = time.time()
with gpusim.Device('h100', mode='timing', sampling=False):
    res, outs = launch(gpusim, Modules(gpusim), case, n, C.inputs(case, n, 0))
rec = {"case": name, "n": n, "metrics": {m: float(res.metrics[m]) for m in METRICS if m in res.metrics},
       "sampling": str(res.sampling), "digests": C.digests(case, outs), "host_seconds": round(time.time() - t, 1)}
json.dump(rec, open(f'/tmp/fl/detailed_{name}.json', 'w'), indent=1)
print(rec)
