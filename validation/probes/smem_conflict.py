"""GPU probe: what a K-way bank-conflicted shared-memory load costs, in latency and in throughput.

``smem_conflict.ptx`` (source ``smem_conflict.cu``): lane t reads word ``t * K``, a K-way conflict
(K wavefronts, hardware-facts §5), for K = 1, 2, 4, ..., 32. ``chain_K``: one warp, a dependent
chain of such loads (``v = s[t * K + v]``): the cycles of one step. ``tput_K``: one CTA of 1,024
threads (8 warps per sub-partition), 8 independent such loads a loop trip: the cycles of a trip
per warp of a sub-partition. Timed as ``int_pipes.py`` times its kernels (``clock64``, the median
of 5, the difference of two trip counts).

Run on a GPU machine: ``python3 validation/probes/smem_conflict.py > $OUT/smem_conflict.json``;
``--sim`` runs the same kernels in gpusim (h100 config, timing mode) and prints the same keys.
"""

from __future__ import annotations

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:          # run as a script: make the validation package importable
    sys.path.insert(0, str(ROOT))

from validation import probekit  # noqa: E402

PTX = pathlib.Path(__file__).with_name("smem_conflict.ptx")
WAYS = (1, 2, 4, 8, 16, 32)


def main() -> None:
    probe = probekit.load_probe("int_pipes")
    if "--sim" in sys.argv:  # int_pipes.measure speaks CuPy's API, which gpusim mirrors
        import types

        import numpy as np

        import gpusim
        gpusim.Device("h100", mode="timing").__enter__()
        sys.modules["cupy"] = types.SimpleNamespace(RawModule=gpusim.RawModule, zeros=gpusim.zeros, uint32=np.uint32,
                                                    int32=np.int32, int64=np.int64)
        probe.N = (8, 24)  # fewer trips: the difference of two trip counts cancels the rest alike
    res = probe.measure(PTX, {f"chain_{k}": 8 for k in WAYS}, threads=32, key="cycles_per_step")
    res.update(probe.measure(PTX, {f"tput_{k}": 1 for k in WAYS}))
    json.dump(res, sys.stdout, indent=1)
    print()

if __name__ == "__main__":
    main()
