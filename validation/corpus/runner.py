"""One corpus case on an array module: CuPy on a GPU, gpusim on the simulator.

Owns :func:`launch` (upload a case's inputs with ``xp.asarray``, write its ``__constant__``
variables, launch its kernel through ``xp.RawModule(code=..., options=cases.OPTIONS)`` and read the
outputs back) and :class:`Modules` (one compiled module per family). The array module ``xp`` is
passed in: this module imports neither cupy nor gpusim (both spell the calls used here the same way:
``RawModule``, ``get_function``, ``get_global``, ``ndarray(shape, dtype, memptr)``, ``asarray``,
``.set``, ``.get``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from validation.corpus.cases import OPTIONS, Case, source

__all__ = ["Modules", "launch"]


class Modules:
    """The families' modules on ``xp``, compiled once each (NVRTC, :data:`cases.OPTIONS`)."""

    def __init__(self, xp):
        self.xp, self._mods = xp, {}

    def __call__(self, family: str):
        if family not in self._mods:
            self._mods[family] = self.xp.RawModule(code=source(family), options=OPTIONS)
        return self._mods[family]


def launch(xp, mods: Modules, case: Case, n: int, args: list, sync=None) -> tuple[Any, list[np.ndarray]]:
    """Launch ``case`` at size ``n`` with host arguments ``args`` (from :func:`cases.inputs`).

    Returns (what the kernel call returned: gpusim's ``LaunchResult``, CuPy's ``None``; the output
    arrays read back as numpy). ``sync``: called after the launch, before the read-back (CuPy:
    ``cupy.cuda.runtime.deviceSynchronize``).
    """
    mod = mods(case.family)
    for name, host in (case.constants(n) if case.constants else {}).items():
        xp.ndarray(host.shape, host.dtype, mod.get_global(name)).set(host)
    dev = [xp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    res = mod.get_function(case.kernel)(case.grid(n), case.block, tuple(dev), shared_mem=case.shared_mem)
    if sync is not None:
        sync()
    return res, [dev[i].get() for i in case.outputs]
