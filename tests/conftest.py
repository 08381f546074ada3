"""Shared test fixtures: a fresh simulated device per test, and paths."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpusim

ROOT = Path(__file__).resolve().parents[1]
PTX_DIR = Path(__file__).parent / "functional" / "ptx"


@pytest.fixture
def dev():
    """A fresh H100 device (its own global memory), current for the test."""
    with gpusim.Device("h100") as d:
        yield d


@pytest.fixture
def kernels():
    """Load a test PTX module by stem: ``kernels("control").get_function(...)``."""
    return lambda stem: gpusim.RawModule(path=PTX_DIR / f"{stem}.ptx")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``ptxas`` need ptxas; tests marked ``sass`` need ptxas and nvdisasm
    (``pip install -e .[dev]`` provides both); without them they are skipped, saying why."""
    from gpusim.ptxas import find_ptxas
    from gpusim.sass import find_nvdisasm

    have_ptxas = find_ptxas() is not None
    missing = {"ptxas": None if have_ptxas else "no ptxas on this machine (pip install -e .[dev] provides one)",
               "sass": None if have_ptxas and find_nvdisasm() else
               "no ptxas or nvdisasm on this machine (pip install -e .[dev] provides both)"}
    for item in items:
        for mark, reason in missing.items():
            if reason and mark in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))
