"""The lesson notebooks (examples/notebooks/) are current and run: each is rebuilt from
make_notebooks.py and compared, then executed with nbclient at the cases' test sizes, and its
outputs must include the HTML tables (lesson, launch, occupancy) and inline PNG pictures."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

from gpusim.lessons import LESSONS

nbformat = pytest.importorskip("nbformat", reason="needs nbformat (pip install gpusim[notebook])")
nbclient = pytest.importorskip("nbclient", reason="needs nbclient (pip install gpusim[notebook])")
pytest.importorskip("ipykernel", reason="needs ipykernel (pip install gpusim[notebook])")

ROOT = pathlib.Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "examples" / "notebooks"


def _maker():
    spec = importlib.util.spec_from_file_location("make_notebooks", NB_DIR / "make_notebooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", list(LESSONS))
def test_notebook_is_current_and_runs(name, monkeypatch):
    path = NB_DIR / f"lesson_{name}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    fresh = _maker().notebook(name)
    assert [c.source for c in nb.cells] == [c.source for c in fresh.cells], \
        "stale notebook: run python examples/notebooks/make_notebooks.py"
    assert nb.cells[1].source.startswith("SIZE = ")
    nb.cells[1].source = 'SIZE = "test"'
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    outs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outs if "text/html" in o.get("data", {})]
    assert any("sim/H100" in h for h in html)                       # the lesson table
    assert any("gpusim launch of" in h for h in html)               # LaunchResult
    assert any("theoretical occupancy" in h for h in html)          # OccupancyResult
    pngs = [o for o in outs if o.output_type == "display_data" and "image/png" in o["data"]]
    assert len(pngs) >= 1 + len(LESSONS[name].pictures)
