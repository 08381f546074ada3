"""Teaching visualizations of a timing-mode launch (issue #6).

One module per concept; each says what it owns and what it must not import:

* :mod:`gpusim.viz.capture` -- recording a launch: issue events plus per-lane addresses;
* :mod:`gpusim.viz.trace` -- Chrome Trace Event / Perfetto JSON timeline;
* :mod:`gpusim.viz.warpstate` -- warp-state picture of one SM and cycle window;
* :mod:`gpusim.viz.banks` -- shared-memory bank diagram (lanes, addresses, banks, wavefronts);
* :mod:`gpusim.viz.coalescing` -- global coalescing diagram (lanes, 32 B sectors, 128 B lines);
* :mod:`gpusim.viz.source` -- source view (PTX + CUDA lines with per-line counters);
* :mod:`gpusim.viz.charts` -- roofline, stall breakdown and the occupancy charts;
* :mod:`gpusim.viz.report` -- one self-contained HTML page per run or comparison;
* :mod:`gpusim.viz.style` -- shared matplotlib set-up, colours and PNG encoding.

The package never imports simpy (timing mode is reached through ``gpusim.Device``) nor
cupy. matplotlib is imported inside the functions that draw.
"""

from gpusim.viz.capture import Recording, record_case, record_launch

__all__ = ["Recording", "record_case", "record_launch"]
