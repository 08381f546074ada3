"""Shared test fixtures: a fresh simulated device per test, and paths."""

from __future__ import annotations

import shutil
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
    if shutil.which("ptxas") is None:
        try:
            from gpusim.ptxas import find_ptxas
        except ImportError:  # pragma: no cover
            find_ptxas = lambda: None  # noqa: E731
        if find_ptxas() is None:
            skip = pytest.mark.skip(reason="no ptxas on this machine (pip install -e .[dev] provides one)")
            for item in items:
                if "ptxas" in item.keywords:
                    item.add_marker(skip)
