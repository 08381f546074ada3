"""Address-pattern models of one warp-level memory instruction (pure, vectorised over warps).

Owns: the cost of a warp's memory access that follows from its addresses alone:

* :mod:`gpusim.memmodel.shared`: shared-memory banking: wavefronts, conflict-free ("ideal")
  wavefronts and bank conflicts of ``ld/st.shared`` (hardware-facts.md §5's 4-rule model,
  which reproduces the H100-measured table exactly), and which lanes each wavefront serves.
* :mod:`gpusim.memmodel.constant`: constant-cache transactions of an indexed ``ld.const``
  (one per distinct address of a warp).
* :mod:`gpusim.memmodel.coalesce`: global coalescing: requests, distinct 32 B sectors and
  128 B lines of ``ld/st.global`` (hardware-facts.md §6), and the sector/line addresses.

Each output is named after the Nsight Compute metric it predicts (hardware-facts.md §7), so
the functional engine can report those counters and the timing engine and teaching diagrams
can use the same numbers. Cache state (L1/L2 hits), timing and queueing are not modelled here.

Must not import: simpy, cupy, or any gpusim module other than :mod:`gpusim.errors`; only
numpy. Inputs are (W, 32) arrays (one row per warp; a (32,) array is one warp) and every
result is a frozen dataclass of per-warp int64 arrays of shape (W,).
"""

from gpusim.memmodel.coalesce import (
    GlobalCost,
    global_sector_addresses,
    global_sectors,
    partial_sectors,
    sector_byte_masks,
)
from gpusim.memmodel.constant import constant_transactions
from gpusim.memmodel.shared import SharedCost, shared_lane_wavefront, shared_wavefront_lanes, shared_wavefronts

__all__ = [
    "SharedCost", "shared_wavefronts", "shared_lane_wavefront", "shared_wavefront_lanes",
    "GlobalCost", "global_sectors", "global_sector_addresses", "sector_byte_masks", "partial_sectors",
    "constant_transactions",
]
