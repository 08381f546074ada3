"""validation/probes/bfs_parts.py: its full variants are the corpus's BFS kernels, and each other
variant leaves out exactly the part it names (small graphs, on gpusim); the H100's committed rows
(validation/reports/h100/bfs_parts/) put both steps' misses on their one hot counter."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import gpusim
from validation.corpus import cases as C
from validation.probes import bfs_parts


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(bfs_parts, "N", 1 << 12)


def _run(label: str):
    host = bfs_parts.host_args(label)
    with gpusim.Device("h100", mode="timing"):
        dev = [gpusim.asarray(a) if isinstance(a, np.ndarray) else a for a in host]
        res = bfs_parts._launch(gpusim, gpusim.RawModule(code=bfs_parts.CODE), label, dev)
        return host, res.metrics, [d.get() if hasattr(d, "get") else d for d in dev]


def test_the_full_variants_compute_the_corpus_kernels_results(small):
    n = bfs_parts.N
    for label, case in (("td_full", "bfs_topdown"), ("bu_full", "bfs_bottomup")):
        host, _, dev = _run(label)
        c = C.BY_NAME[case]
        args = C.inputs(c, n, 0)
        want = C.reference(c, args, n)
        got = C.canonical(c, [dev[i][:1] if i == 7 else dev[i] for i in c.outputs])  # td: the one counter
        assert len(want) == len(got) and all(np.array_equal(w, g) for w, g in zip(want, got)), label


def test_each_variant_leaves_out_the_part_it_names(small):
    m = {lab: _run(lab)[1] for lab in bfs_parts.LAUNCHES}
    atom, red = "lts__t_requests_srcunit_tex_op_atom.sum", "lts__t_requests_srcunit_tex_op_red.sum"
    writes = "lts__t_sectors_op_write.sum"
    # the loads-only variants make no atomic and no store; the others keep their loads
    for lab in ("td_loads", "bu_loads"):
        assert m[lab][atom] == m[lab][red] == m[lab][writes] == 0, lab
    # no counter: the CASes alone; the spread counter: about as many requests as the one counter (one a
    # warp; the CASes tried depend on which warps claimed a vertex first)
    assert 0 < m["td_nocount"][atom] < m["td_full"][atom] == pytest.approx(m["td_spread"][atom], rel=0.05)
    assert m["td_nocas"][atom] < m["td_full"][atom]   # the counter's only
    assert m["bu_full"][red] > 0 and m["bu_nored"][red] == 0 and m["bu_nored"][writes] == m["bu_full"][writes]


DATA = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h100"


def test_the_h100_loses_the_bfs_steps_time_to_their_one_hot_counter():
    from validation import probekit

    hw = probekit.second_launches(DATA / "bfs_parts" / "bfs_parts.csv", set(bfs_parts.LAUNCHES),
                                  list(bfs_parts.LAUNCHES), bfs_parts.METRICS)
    sim = json.loads((DATA / "bfs_parts" / "sim_after.json").read_text())
    c = "sm__cycles_elapsed.avg"
    # the same requests spread over 1,024 lines: the top-down step in 40 % of the time
    assert hw["td_spread"][c] < 0.45 * hw["td_full"][c]
    assert hw["td_spread"]["lts__t_requests_srcunit_tex_op_atom.sum"] >= hw["td_full"]["lts__t_requests_srcunit_tex_op_atom.sum"]
    # the bottom-up step: the one red a warp costs the H100 a third of its time, gpusim a 25th
    assert hw["bu_full"][c] - hw["bu_nored"][c] > 0.3 * hw["bu_full"][c]
    assert sim["bu_full"][c] - sim["bu_nored"][c] < 0.05 * sim["bu_full"][c]
    # ... and without it gpusim is within 5 % of the H100
    assert sim["bu_nored"][c] == pytest.approx(hw["bu_nored"][c], rel=0.05)
    assert "| bu_nored | 311,621 | 303,087 | -2.7 |" in bfs_parts.table(DATA / "bfs_parts" / "bfs_parts.csv",
                                                                     DATA / "bfs_parts" / "sim_after.json")
