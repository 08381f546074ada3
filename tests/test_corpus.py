"""The third-party-style corpus (tests/corpus): every kernel nvcc emitted loads, the kernels
with launch recipes match their numpy oracles bit for bit in the functional engine, and,
where the GPU's outputs are committed, match the H100 bit for bit."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import gpusim
from isa import parse_file

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"
CORPUS_PTX = sorted((CORPUS / "ptx").glob("*.ptx"))
#: What validation/probes/corpus.py wrote on the H100 (committed by whoever runs it there).
GPU_NPZ = Path(os.environ.get("GPUSIM_CORPUS_NPZ", ROOT / "validation" / "probes" / "corpus.h100.npz"))


def _recipes():
    spec = importlib.util.spec_from_file_location("corpus_recipes", CORPUS / "recipes.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["corpus_recipes"] = mod
    spec.loader.exec_module(mod)
    return mod


R = _recipes()
WITH_ORACLE = [r for r in R.RECIPES if r.oracle is not None]


def test_corpus_is_broad():
    assert len(CORPUS_PTX) >= 10
    assert sum(len(parse_file(p).kernels) for p in CORPUS_PTX) >= 130
    assert len(WITH_ORACLE) >= 130
    for p in CORPUS_PTX:  # each PTX file sits next to its CUDA source
        assert (CORPUS / "cuda" / f"{p.stem}.cu").is_file(), p


@pytest.mark.parametrize("path", CORPUS_PTX, ids=lambda p: p.name)
def test_every_entry_of_every_corpus_file_loads(path):
    entries = re.findall(r"^\.(?:visible |weak )?\.entry (\S+)\(", path.read_text(), re.M)
    mod = gpusim.RawModule(path=path)
    assert sorted(mod.kernel_names) == sorted(entries)
    for name in entries:
        assert mod.get_function(name).kernel.instrs


def _check(name: str, got: dict, want: dict) -> None:
    for key, exp in want.items():
        g = got[key]
        exp = np.asarray(exp)
        assert g.shape == exp.shape, (name, key)
        e = exp.astype(g.dtype)
        if g.tobytes() != e.tobytes():
            bad = np.flatnonzero(g.view(f"u{g.dtype.itemsize}") != e.view(f"u{g.dtype.itemsize}"))
            raise AssertionError(f"{name} {key}: {bad.size} elements differ, first {bad[:5].tolist()}: "
                                 f"got {g[bad[:5]].tolist()}, want {e[bad[:5]].tolist()}")


@pytest.mark.parametrize("recipe", WITH_ORACLE, ids=lambda r: r.name)
def test_corpus_kernel_matches_its_numpy_oracle(recipe, dev):
    got = R.run(gpusim, recipe, 0)
    args, globals_in = recipe.make(np.random.default_rng(0))
    _check(recipe.name, got, recipe.oracle(args, globals_in))


def test_oracle_comparison_catches_a_one_bit_difference(dev):
    rec = next(r for r in WITH_ORACLE if r.name == "convert_float32_float64")
    got = R.run(gpusim, rec, 0)
    got["arg1"].view(np.uint64)[7] ^= np.uint64(1)
    args, g = rec.make(np.random.default_rng(0))
    with pytest.raises(AssertionError, match="1 elements differ, first \\[7\\]"):
        _check(rec.name, got, rec.oracle(args, g))


@pytest.mark.skipif(not GPU_NPZ.is_file(), reason=f"no GPU outputs at {GPU_NPZ}: run validation/probes/corpus.py on a GPU "
                                                  f"(see its docstring) and commit the .npz")
def test_corpus_matches_the_gpu_bit_for_bit():
    gpu = np.load(GPU_NPZ)
    names = sorted({k.split("/")[0] for k in gpu.files if "/" in k})
    assert names, "the GPU file holds no outputs"
    by_name = {r.name: r for r in R.RECIPES}
    failures = []
    with gpusim.Device("h100"):
        for name in names:
            rec = by_name[name]
            got = R.run(gpusim, rec, 0)
            want = {k.split("/", 1)[1]: gpu[k] for k in gpu.files if "/" in k and k.split("/")[0] == name}
            try:
                _check(name, got, want)
            except AssertionError as exc:
                failures.append(str(exc))
    assert not failures, "\n".join(failures)
