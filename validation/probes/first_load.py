"""GPU probe: what the first loads of a launch cost, from cold caches, in ncu's SM cycles.

``first_load.ptx`` (source: ``first_load.cu``): one thread follows k = 0, 1, 2, 4, 8 and 16
pointers through a 512 MiB buffer, either 4 KiB apart inside one 64 KiB region ("near") or 2 MiB
apart ("far", a new page each step). Under ``ncu --cache-control all`` every launch starts with
flushed caches. ``benchmarks/pipe_latency.py`` puts gpusim's cycles beside the H100's.

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --kernel-name chase --metrics sm__cycles_elapsed.avg,dram__bytes_read.sum \\
        --csv --page raw --print-units base --log-file $OUT/first_load.csv python3 validation/probes/first_load.py

Needs CuPy only.
"""

from __future__ import annotations

import pathlib

import numpy as np

PTX = pathlib.Path(__file__).with_name("first_load.ptx")
STEPS = (0, 1, 2, 4, 8, 16)
WORDS = (512 << 20) // 8          #: 8-byte words in the buffer
GAP = {"near": 4096 // 8, "far": (2 << 20) // 8}   #: words between two pointers of a chain


def chain(base: int, gap: int) -> np.ndarray:
    """The buffer's contents: word i * gap holds the address of word (i + 1) * gap."""
    buf = np.zeros(WORDS, np.uint64)
    idx = np.arange(0, 17 * gap, gap)
    buf[idx[:-1]] = base + 8 * idx[1:]
    return buf


def launches():
    """``(label, chain kind, k)`` in launch order."""
    return [(f"chase {kind} k{k}", kind, k) for kind in GAP for k in STEPS]


def main() -> None:
    import cupy

    f = cupy.RawModule(path=str(PTX)).get_function("chase")
    buf = cupy.zeros(WORDS, cupy.uint64)
    out = cupy.zeros(32, cupy.uint64)
    for label, kind, k in launches():
        buf.set(chain(buf.data.ptr, GAP[kind]))
        f((1,), (1,), (buf, cupy.int32(k), out))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


if __name__ == "__main__":
    main()
