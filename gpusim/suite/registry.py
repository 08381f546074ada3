"""The registry: which family modules make up the suite, and their cases collected in order.

Owns :data:`FAMILIES` (the family modules of :data:`gpusim.suite.CASES`, in suite order),
:data:`SEED_FAMILIES` (families kept out of it: the course notes' A100 kernels, see
:mod:`gpusim.suite.seeds`), :func:`load_family`, :func:`collect` and :func:`groups`.

A family is one module ``gpusim/suite/<stem>.py`` beside ``cuda/<stem>.cu`` (none for
hand-written PTX) and ``ptx/<stem>.ptx``; it defines ``CASE_LIST``, its cases in order, every
one launching ``<stem>.ptx``.  Adding a family = that file + its stem in :data:`FAMILIES`.

Imports the standard library and :mod:`.case` only; never gpusim's engines, never cupy.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .case import Case

__all__ = ["FAMILIES", "SEED_FAMILIES", "collect", "groups", "load_family"]

#: the family modules whose cases make up ``CASES``, in suite order (case order follows it)
FAMILIES: tuple[str, ...] = ("reduce", "matmul", "conv", "memory", "ilp", "divergence", "shared",
                             "micro_shared", "micro_global", "hgemm")

#: family modules kept out of ``CASES`` (``gpusim.suite.seeds`` collects them as ``SEED_CASES``)
SEED_FAMILIES: tuple[str, ...] = ("reduce_int",)


def load_family(stem: str) -> ModuleType:
    """The family module ``<package>.<stem>`` (relative to this package, so it works however the
    package was loaded: as ``gpusim.suite`` or by file path)."""
    return importlib.import_module(f".{stem}", __package__)


def collect(families: tuple[str, ...]) -> dict[str, Case]:
    """Name -> Case of every family's ``CASE_LIST``, families in the given order; raises
    ``ValueError`` on a duplicate name."""
    cases: dict[str, Case] = {}
    for stem in families:
        for case in load_family(stem).CASE_LIST:
            if case.name in cases:
                raise ValueError(f"duplicate suite case {case.name!r} (family {stem})")
            cases[case.name] = case
    return cases


def groups(cases: dict[str, Case]) -> dict[str, list[str]]:
    """Group -> case names, in the order of ``cases``."""
    out: dict[str, list[str]] = {}
    for name, case in cases.items():
        out.setdefault(case.group, []).append(name)
    return out
