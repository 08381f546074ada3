"""GPU check: the independent-thread-scheduling kernels of ``tests/functional/ptx/its.ptx`` on a GPU.

``tests/functional/test_its.py`` asserts what gpusim computes for them: a lane waiting for a later
lane of its own warp (``flag_wait``), a spin lock taken by every lane of every warp
(``locked_sum``), and lanes that exit while their warp is diverged (``exit_then_join``). This runs
the same PTX file, with the same launch shapes and inputs, through CuPy on a GPU and prints the
outputs as JSON with whether each equals what the test expects; a hang would show as a timeout.

Usage (GPU machine; CuPy only)::

    python3 validation/probes/its_on_gpu.py > $OUT/its_GPU.json
"""

from __future__ import annotations

import json
import pathlib

PTX = pathlib.Path(__file__).resolve().parents[2] / "tests" / "functional" / "ptx" / "its.ptx"


def main() -> None:
    import cupy
    import numpy as np

    mod = cupy.RawModule(path=str(PTX))
    res = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()}
    flag, out = cupy.zeros(4, cupy.uint32), cupy.zeros(4, cupy.uint32)
    mod.get_function("flag_wait")((1,), (128,), (flag, out))
    res["flag_wait"] = {"flag": flag.get().tolist(), "out": out.get().tolist(),
                        "as_test": flag.get().tolist() == list(range(7, 11)) and out.get().tolist() == list(range(8, 12))}
    n = 150
    x = cupy.arange(n, dtype=cupy.int32) * 3
    lock, total = cupy.zeros(1, cupy.int32), cupy.zeros(1, cupy.int32)
    mod.get_function("locked_sum")((2,), (96,), (lock, total, x, np.int32(n)))
    res["locked_sum"] = {"total": int(total.get()[0]), "lock": int(lock.get()[0]),
                         "as_test": int(total.get()[0]) == 3 * n * (n - 1) // 2 and int(lock.get()[0]) == 0}
    o = cupy.full(64, 0xFFFF, cupy.uint32)
    mod.get_function("exit_then_join")((1,), (64,), (o,))
    i = np.arange(64, dtype=np.uint32)
    res["exit_then_join"] = {"out": o.get().tolist(),
                             "as_test": bool((o.get() == np.where(i % 2 == 0, i, 0xFFFF)).all())}
    cupy.cuda.runtime.deviceSynchronize()
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
