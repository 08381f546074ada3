"""GPU probe: what the conversion and special-function SASS costs a sub-partition, alone and inside
an integer remainder by a variable (reduce0's ``tid % (2*s)``).

``xu_pipe.ptx`` (source ``xu_pipe.cu``), timed as ``int_pipes.py`` times its kernels (one CTA of
1,024 threads, 8 warps per sub-partition, 8 independent chains a warp, ``clock64``): ``i2f``
(``I2F.U32.RP``), ``i2fp`` (``I2FP.F32.U32``, sm_90's plain ``__uint2float_rn``), ``f2i``
(``F2I.FTZ.U32.TRUNC.NTZ``), ``rcp`` (``MUFU.RCP``), ``i2f_rcp_f2i`` (the three in one chain, as
ptxas's ``rem.u32`` expansion has them) and ``rem_var`` (``rem.u32`` by a divisor that changes
every iteration: the whole 17-instruction expansion). Prints, per kernel, the cycles of one loop
iteration (8 chain steps) per warp of a sub-partition.

Run on a GPU machine: ``python3 validation/probes/xu_pipe.py > $OUT/xu_pipe.json``. Needs CuPy only.
"""

from __future__ import annotations

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:          # run as a script: make the validation package importable
    sys.path.insert(0, str(ROOT))

from validation import probekit  # noqa: E402

PTX = pathlib.Path(__file__).with_name("xu_pipe.ptx")
KERNELS = ("i2f", "i2fp", "f2i", "rcp", "i2f_rcp_f2i", "rem_var")


def main() -> None:
    json.dump(probekit.load_probe("int_pipes").measure(PTX, KERNELS), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
