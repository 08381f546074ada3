"""Measure the per-opcode SASS expansion table that gpusim ships for machines without ptxas.

For every suite PTX file and every architecture of the shipped configurations, ptxas and
nvdisasm give each PTX instruction's SASS (:mod:`gpusim.sass`); the table keeps, per mnemonic
and per base opcode, the expansion seen most often. Writes ``gpusim/data/sass_expansion.json``
and prints how far the table's SASS-equivalent instruction counts are from ptxas's own on the
suite's kernels (every instruction weighted by one execution).

Usage: python benchmarks/sass_table.py
"""

from __future__ import annotations

import json
import sys

from gpusim import config
from gpusim.ptxas import PtxasError, ptxas_version
from gpusim.sass import EXPANSION_FILE, from_table, measure_table, sass_listing, sass_per_pc
from gpusim.suite import PTX_DIR
from isa import parse


def main() -> int:
    files = sorted(PTX_DIR.glob("*.ptx"))
    pairs = []
    for f in files:
        text = f.read_text()
        pairs += [(k, text) for k in parse(text, str(f)).kernels.values()]
    arches = sorted({config.load(name).arch for name in config.available()})
    out = {"about": "SASS opcodes ptxas most often makes of each PTX mnemonic and base opcode, measured on "
                    "gpusim's suite kernels by benchmarks/sass_table.py (used where no ptxas/nvdisasm exists)",
           "ptxas": ptxas_version(), "arches": {}}
    for arch in arches:
        try:
            out["arches"][arch] = measure_table(pairs, arch)
        except PtxasError as exc:  # e.g. CUDA 13 no longer targets sm_70
            print(f"{arch}: skipped ({str(exc).splitlines()[-1]})")
    EXPANSION_FILE.parent.mkdir(parents=True, exist_ok=True)
    EXPANSION_FILE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    from gpusim.sass import expansion_table
    expansion_table.cache_clear()
    print(f"wrote {EXPANSION_FILE} ({', '.join(out['arches'])}; {len(pairs)} kernels)")
    print("static SASS count per kernel, table vs ptxas (sm_90):")
    worst = 0.0
    for kernel, text in pairs:
        exact = sum(sass_per_pc(kernel, sass_listing(text, "sm_90")[kernel.name]).counts)
        table = sum(from_table(kernel, "sm_90").counts)
        err = table / exact - 1
        worst = max(worst, abs(err))
        print(f"  {kernel.name:28s} ptxas {exact:5d}  table {table:5d}  {err:+6.1%}")
    print(f"largest difference {worst:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
