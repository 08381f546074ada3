"""validation/probes/store_merge.py on its committed runs (validation/reports/h200/store_merge/): on the
H200 a warp's adjacent 4-byte stores that fill a sector between them reach L2 as about one write a
sector, 8- and 16-byte stores, 4-byte stores over 8 lines and stores apart as one a store; gpusim's rule
(l1.store_merge_*) gives the same split on a small launch of the probe's kernels."""

from __future__ import annotations

import json
import pathlib

import numpy as np

import gpusim
from validation.probes import store_merge

DATA = pathlib.Path(__file__).resolve().parents[2] / "validation" / "reports" / "h200" / "store_merge"


def _writes_a_sector(row: dict, label: str) -> float:
    """L2 write sectors over the sectors the launch stores, each counted once with the far partition's
    lines twice (1.5: ``split``'s count, every sector written whole once)."""
    _, kernel, k, _, ctas, block = next(x for x in store_merge.LAUNCHES if x[0] == label)
    per_thread = {"st_pair": 8 if k == 2 else 16, "st_quad": 16, "st_quad_late": 16, "st_k4": 4 * k,
                  "st_k8": 8 * k, "st_k16": 16 * k, "st_gap4": 8}[kernel]   # bytes a thread stores
    return row["l2_write_sectors"] / (ctas * block * per_thread / 32 * 1.5)


def test_adjacent_four_byte_stores_merge_on_the_h200_and_the_others_do_not():
    rows = store_merge.gpu_rows(DATA / "run4" / "store_merge.csv")
    assert list(rows) == [lab for lab, *_ in store_merge.LAUNCHES]
    assert abs(_writes_a_sector(rows["split"], "split") - 1.0) < 0.01
    for label in ("k2 w4", "k4 w4", "quad", "k2 w4 gap 0"):           # merged: about once a sector
        assert _writes_a_sector(rows[label], label) < 1.45, label
    for label in ("quad few", "quad late 256", "quad late 1024"):     # stores that do not queue: exactly once
        assert abs(_writes_a_sector(rows[label], label) - 1.0) < 0.02, label
    for label, stores in (("pair", 2), ("k2 w8", 2), ("k4 w8", 4), ("k2 w16", 2), ("k2 w4 gap 32", 2)):
        assert _writes_a_sector(rows[label], label) > 0.95 * stores, label


def test_gpusim_times_the_probe_within_its_committed_errors():
    rows = {r["launch"]: r for r in json.loads((DATA / "sim.json").read_text())["rows"]}
    assert len(rows) == 20   # run3's launches (run4 added "quad few" and "quad late G": sim_run4.json)
    for label in ("quad", "k4 w4", "k2 w4", "k2 w4 gap 0", "k2 w4 gap 8", "k8 w4", "pair", "k2 w8"):
        assert abs(rows[label]["error_pct"]) < 16, (label, rows[label]["error_pct"])


def test_a_small_launch_merges_four_byte_stores_only():
    # 8 CTAs of 256: st_k4 with K = 2 (out[2t + k]) against st_k8 with K = 2 (the same pattern, 8 bytes)
    out = np.zeros(1 << 16, np.float32)
    counts = {}
    with gpusim.Device("h100", mode="timing"):
        mod = gpusim.RawModule(code=store_merge.CODE)
        for kernel in ("st_k4", "st_k8"):
            buf = gpusim.asarray(out)
            r = mod.get_function(kernel)((8,), (256,), (buf, np.int32(2)))
            counts[kernel] = (r.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"],
                              r.metrics["lts__t_sectors_srcunit_tex_op_write.sum"])
    assert counts["st_k4"] == (1024, 512)     # 2 stores over the same 512 sectors: one write a sector
    assert counts["st_k8"] == (2048, 2048)    # 8-byte stores: a write a store
