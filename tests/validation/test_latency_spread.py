"""benchmarks/latency_spread.py's statistics of per-warp stamp rows (smid, CTA, warp, t_entry, t_loaded,
t_end, globaltimer), on rows made by hand."""

import importlib.util
import pathlib

import numpy as np
import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "latency_spread.py"
_spec = importlib.util.spec_from_file_location("latency_spread", _PATH)
latency_spread = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(latency_spread)


def _rows(latencies):
    """Stamp rows of CTAs (one list of warp latencies each), every warp entering at cycle 100."""
    out = [(0, c, w, 100, 100 + lat, 0, 0) for c, lats in enumerate(latencies) for w, lat in enumerate(lats)]
    return np.array(out, dtype=np.int64)


def test_slowest_over_mean_and_warp_order():
    # served in warp order: each CTA's latencies rise with the warp index
    s = latency_spread.spread(_rows([[100, 110, 120, 130], [200, 210, 220, 230]]))
    assert s["slowest_over_mean"] == pytest.approx(15.0)
    assert s["order_corr"] == pytest.approx(1.0)
    assert s["warps"] == 8
    # the same latencies in an order unrelated to the warps' (first warp slowest in one CTA, fastest in the other)
    s = latency_spread.spread(_rows([[130, 100, 120, 110], [200, 230, 210, 220]]))
    assert s["slowest_over_mean"] == pytest.approx(15.0)
    assert abs(s["order_corr"]) < 0.5
    # CTAs below first_cta and warps with no stamp are left out
    s = latency_spread.spread(_rows([[100, 110], [300, 0, 500]]), first_cta=1)
    assert s["warps"] == 2 and s["slowest_over_mean"] == pytest.approx(100.0)
    with pytest.raises(ValueError, match="no stamped warp in CTAs >= 5"):
        latency_spread.spread(_rows([[100]]), first_cta=5)
