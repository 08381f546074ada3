"""The suite's layout (issue #15): one module per kernel family beside its ``.cu``/``.ptx``, and a
registry that collects every family's cases, in order, under unique names."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from gpusim import suite
from gpusim.suite import CASES, CUDA_DIR, PTX_DIR, SUITE_DIR
from gpusim.suite.registry import FAMILIES, SEED_FAMILIES, collect, load_family
from gpusim.suite.seeds import SEED_CASES

#: the suite's modules that are not kernel families (the core every family shares)
CORE = {"__init__", "case", "launch", "dryrun", "registry", "sizes", "occupancy", "seeds"}


def test_every_ptx_and_cu_file_has_its_family_module():
    stems = {p.stem for p in PTX_DIR.glob("*.ptx")} | {p.stem for p in CUDA_DIR.glob("*.cu")}
    assert stems == set(FAMILIES) | set(SEED_FAMILIES)
    for stem in stems:
        assert (SUITE_DIR / f"{stem}.py").is_file(), f"ptx/{stem}.ptx has no module gpusim/suite/{stem}.py"


def test_every_module_is_a_family_or_core():
    modules = {p.stem for p in SUITE_DIR.glob("*.py")}
    assert modules - CORE == set(FAMILIES) | set(SEED_FAMILIES)
    assert not (set(FAMILIES) & set(SEED_FAMILIES))
    assert len(FAMILIES) == len(set(FAMILIES))


@pytest.mark.parametrize("stem", FAMILIES + SEED_FAMILIES)
def test_family_cases_launch_its_own_ptx(stem):
    module = load_family(stem)
    assert module is importlib.import_module(f"gpusim.suite.{stem}")
    assert module.__doc__ and module.CASE_LIST
    for case in module.CASE_LIST:
        assert case.ptx == f"{stem}.ptx", f"{case.name} (family {stem}) launches {case.ptx}"


def test_registry_collects_every_family_in_order():
    expected = [c.name for stem in FAMILIES for c in load_family(stem).CASE_LIST]
    assert list(CASES) == expected
    assert list(SEED_CASES) == [c.name for stem in SEED_FAMILIES for c in load_family(stem).CASE_LIST]
    assert all(CASES[c.name] is c for stem in FAMILIES for c in load_family(stem).CASE_LIST)


def test_case_names_unique():
    names = [c.name for stem in FAMILIES + SEED_FAMILIES for c in load_family(stem).CASE_LIST]
    assert len(names) == len(set(names))
    with pytest.raises(ValueError, match="duplicate suite case"):
        collect(("reduce", "reduce"))


def test_public_names_kept():
    """Every name the rest of the repository imports from gpusim.suite is still there."""
    for name in ("CASES", "GROUPS", "Case", "CaseRun", "SizeError", "DryRun", "check", "compare", "run_case",
                 "ptx_path", "cuda_path", "entry_params", "PTX_DIR", "CUDA_DIR", "SUITE_DIR", "TIMING_SIZES",
                 "SCALE_SIZES", "COPY_OCCUPANCY_SMEM", "copy_occupancy_smem"):
        assert name in suite.__all__ and hasattr(suite, name), name


def test_package_loads_by_file_path_with_the_same_cases():
    """validation/probes/suite_on_gpu.py loads gpusim/suite/__init__.py by path (no gpusim import):
    the families load relative to it, and the seeds too."""
    code = (
        "import importlib, importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('s', {str(SUITE_DIR / '__init__.py')!r})\n"
        "m = importlib.util.module_from_spec(spec); sys.modules['s'] = m; spec.loader.exec_module(m)\n"
        "seeds = importlib.import_module('s.seeds')\n"
        "assert 'gpusim' not in sys.modules, 'loaded gpusim'\n"
        "print(' '.join(m.CASES)); print(' '.join(seeds.SEED_CASES))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    cases, seeds = proc.stdout.splitlines()
    assert cases.split() == list(CASES)
    assert seeds.split() == list(SEED_CASES)
