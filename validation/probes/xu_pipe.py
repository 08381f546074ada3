"""GPU probe: what the conversion and special-function SASS costs a sub-partition, alone and inside
an integer remainder by a variable (reduce0's ``tid % (2*s)``).

``xu_pipe.ptx`` (source ``xu_pipe.cu``), timed as ``int_pipes.py`` times its kernels (one CTA of
1,024 threads, 8 warps per sub-partition, 8 independent chains a warp, ``clock64``): ``i2f``
(``I2F.U32.RP``), ``i2fp`` (``I2FP.F32.U32``, sm_90's plain ``__uint2float_rn``), ``f2i``
(``F2I.FTZ.U32.TRUNC.NTZ``), ``rcp`` (``MUFU.RCP``), ``i2f_rcp_f2i`` (the three in one chain, as
ptxas's ``rem.u32`` expansion has them) and ``rem_var`` (``rem.u32`` by a divisor that changes
every iteration: the whole 17-instruction expansion). Prints, per kernel, the cycles of one loop
iteration (8 chain steps) per warp of a sub-partition; and, for ``rem_chain`` (a remainder by a
divisor made from the previous result, SHF + LOP3 + the expansion a step), ``xu_chain``
(I2F -> MUFU.RCP -> F2I a step), ``imadhi_chain`` (``IMAD.HI.U32``), ``setp_chain`` (``ISETP`` ->
``@P VIADD``: a predicate's producer and consumer) and ``imad_chain`` (``IMAD``), each run by one
warp, the cycles of one dependent step.

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
#: one-warp chains -> dependent steps a loop trip
CHAINS = {"rem_chain": 1, "xu_chain": 1, "imadhi_chain": 8, "setp_chain": 8, "imad_chain": 8}


def main() -> None:
    measure = probekit.load_probe("int_pipes").measure
    res = measure(PTX, dict.fromkeys(KERNELS, 8))
    res.update(measure(PTX, CHAINS, threads=32, key="cycles_per_step"))
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
