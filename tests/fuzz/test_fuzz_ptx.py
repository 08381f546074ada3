"""Fuzz: mutated PTX (issue #29, part 7). Mutants of the project's small PTX files either load or
raise a GpusimError; a mutant that loads is launched (small grids, small watchdog budgets) in
functional and timing mode and finishes or raises a GpusimError (KernelFault, LaunchError...).
The inputs are those of ``tests/fuzz/strategies.py``; ``benchmarks/fuzz.py`` runs many more."""

from __future__ import annotations

from hypothesis import given

from tests.fuzz.strategies import RandomChooser, check, fuzz_settings, gen_ptx, strategy


@fuzz_settings(max_examples=60)
@given(strategy("ptx"))
def test_mutated_ptx_loads_or_is_refused(inp):
    check("ptx", inp)


def test_mutants_are_mutated_and_some_load():
    """The generator is not a no-op: its inputs differ from their seed files, and some still load
    (so launches are fuzzed too)."""
    import gpusim
    from tests.fuzz.strategies import ptx_seed

    inputs = [gen_ptx(RandomChooser(i)) for i in range(60)]
    assert sum(inp["text"] != ptx_seed(inp["seed"]) for inp in inputs) >= 55
    loaded = 0
    for inp in inputs:
        try:
            gpusim.RawModule(code=inp["text"])
            loaded += 1
        except gpusim.GpusimError:
            pass
    assert 3 <= loaded < 60
