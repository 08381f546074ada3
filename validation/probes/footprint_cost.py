"""GPU probe: what a random DRAM read costs by footprint, between the L2's capacity and 8 GiB.

``random_access.py`` found the H100's random 4-byte loads (``rd_rand``, 4.33M, every lane its own
line) taking 29.5 ps a DRAM miss at 64 MiB, 32.1 at 256 MiB, 32.7 at 1 GiB and 33.6 at 8 GiB, where
gpusim charged 34.1 ps whatever the footprint (``rd_rand 64 MiB`` +12.7 %, the corpus's ``gather``
over 64 MiB +19.7 %; session 51). A TLB's reach would make such a knee; this probe finds where it is
(session 52 models it: ``dram.translation_*``, docs/model/memory.md#irregular-access): the same
kernel (``random_access.py``'s ``rd_mod``: word ``mix(t iters + i) % words``) at footprints from 64 MiB
to 8 GiB, 16 loads a thread, 132 x 8 CTAs of 256 threads, launched twice each.

Run it under Nsight Compute on a GPU machine (clocks untouched)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,dram__bytes_read.sum,lts__t_sectors_op_read.sum \\
        --csv --page raw --print-units base --log-file $OUT/footprint_cost.csv \\
        python3 validation/probes/footprint_cost.py

and ``python3 validation/probes/footprint_cost.py --table footprint_cost.csv`` prints cycles, DRAM
bytes and picoseconds a 64-byte DRAM read (at the SM clock ``--clock-hz``, 1.98e9 by default).
Needs CuPy for the GPU side; the table needs nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.probes.random_access import BLOCK, CODE, CTAS_PER_SM, ITERS  # noqa: E402

#: footprints in MiB
FOOTPRINTS_MIB = (64, 96, 128, 192, 256, 384, 512, 1024, 2048, 4096, 8192)
COUNTERS = {"cycles": "sm__cycles_elapsed.avg", "dram_read_bytes": "dram__bytes_read.sum",
            "l2_read_sectors": "lts__t_sectors_op_read.sum"}


def labels() -> list[str]:
    """The launches' labels, in launch order."""
    return [f"rd_mod {m} MiB" for m in FOOTPRINTS_MIB]


def main() -> None:
    import cupy
    import numpy as np

    ctas = cupy.cuda.Device().attributes["MultiProcessorCount"] * CTAS_PER_SM
    f = cupy.RawModule(code=CODE).get_function("rd_mod")
    buf = cupy.zeros(max(FOOTPRINTS_MIB) << 18, cupy.uint32)
    out = cupy.zeros(ctas * BLOCK, cupy.uint32)
    for label, mib in zip(labels(), FOOTPRINTS_MIB):
        for _ in range(2):
            f((ctas,), (BLOCK,), (buf, np.uint32(mib << 18), np.uint32(ITERS), out))
        cupy.cuda.runtime.deviceSynchronize()
        print(f"launch {label}", flush=True)


def table(csv_path: str, clock_hz: float = 1.98e9) -> str:
    """Cycles, DRAM bytes read and picoseconds a 64-byte DRAM read, by footprint (Markdown)."""
    from validation.probekit import counter_rows

    rows = counter_rows(csv_path, ("rd_mod",), labels(), {k: (m,) for k, m in COUNTERS.items()})
    out = ["| launch | cycles | DRAM read MB | L2 read sectors | ps a 64 B DRAM read |", "|---|---:|---:|---:|---:|"]
    for label, r in rows.items():
        ps = r["cycles"] / clock_hz / (r["dram_read_bytes"] / 64) * 1e12 if r["dram_read_bytes"] else 0.0
        out.append(f"| {label} | {r['cycles']:,.0f} | {r['dram_read_bytes'] / 1e6:.1f} | {r['l2_read_sectors']:,.0f} | "
                   f"{ps:.1f} |")
    return "\n".join(out)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--table"]:
        print(table(sys.argv[2], float(sys.argv[4]) if sys.argv[3:4] == ["--clock-hz"] else 1.98e9))
    else:
        main()
