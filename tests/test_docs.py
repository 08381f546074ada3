"""The documentation: the README stays a landing page (at most 300 lines, the set-up commands that
``.ci/run`` runs, links that resolve) and the MkDocs site (mkdocs.yml, docs/) builds with
``mkdocs build --strict``, so a broken link or anchor between pages, a page missing from the nav or
a missing picture fails the tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: The set-up commands, verbatim: .ci/run runs the second, and the docs repeat both.
SETUP = ("python3 -m pip install . && gpusim run", 'python3 -m pip install -e ".[dev]" && python3 -m pytest')


def _prose(text: str) -> str:
    """The Markdown without its fenced code blocks and code spans (whose brackets are not links)."""
    return re.sub(r"`[^`\n]*`", "", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M))


def test_readme_is_a_landing_page():
    text = README.read_text()
    n = len(text.splitlines())
    assert n <= 300, f"README.md has {n} lines (at most 300): move the details into docs/ and link them"
    for cmd in SETUP:
        assert f"\n    {cmd}\n" in text, f"README.md lost its set-up command {cmd!r}"


def test_readme_links_resolve():
    missing = []
    for target in re.findall(r"\]\(([^)\s]+)\)", _prose(README.read_text())):
        path = target.split("#", 1)[0]
        if path and "://" not in path and not (ROOT / path).exists():
            missing.append(target)
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (the dev extra has it)")
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                        str(ROOT / "mkdocs.yml"), "--site-dir", str(site)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"mkdocs build --strict failed:\n{r.stdout}\n{r.stderr}"
    # The supported-PTX table (tests/test_readme_isa.py keeps it equal to `gpusim isa`) is a code block.
    assert re.search(r"<code[^>]*>opcode +kind +unit +semantics", (site / "isa" / "index.html").read_text())
    assert (site / "gallery" / "stalls_reductions.png").is_file()


_EXTRAS = {"numba": "numba.cuda", "triton": "triton", "cuda": "cuda.bindings.nvrtc"}


@pytest.mark.parametrize("index", range(len(re.findall(r"```python\n", README.read_text()))))
def test_readme_examples_run(index, tmp_path):
    """Each Python example of the README runs as a script (its 2^20-element arrays cut to 2^12 to stay
    fast); an example whose front-end's compiler is not installed is skipped."""
    import importlib.util

    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[index]
    needs = {"numba": "numba" in code, "triton": "triton" in code, "cuda": "code=" in code or "Kernel(" in code}
    for extra, used in needs.items():
        if used and importlib.util.find_spec(_EXTRAS[extra].split(".")[0]) is None:
            pytest.skip(f"needs gpusim[{extra}]")
    script = tmp_path / f"readme_example_{index}.py"
    script.write_text(code.replace("1 << 20", "1 << 12"))
    run = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "GPUSIM_CACHE_DIR": str(tmp_path / "cache")})
    assert run.returncode == 0, f"README example {index} failed:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
