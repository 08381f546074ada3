"""The architecture rules, checked: the layer table of docs/architecture.md as import-linter contracts
(``[tool.importlinter]`` in pyproject.toml), no import circles inside a package, and ruff.

Import circles are looked for with grimp (import-linter's graph library) among the direct
children of each package (its modules and subpackages, a subpackage standing for everything
inside it; the package's own ``__init__`` is left out, since it re-exports its children).
Every import counts: module-level, inside functions (lazy imports) and under
``if TYPE_CHECKING:`` (grimp's default), because an import that only a type checker runs is
still a dependency of the design, and a circle hidden behind it is still a circle to untangle.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOT_PACKAGES = ("gpusim", "isa", "validation")


def _env() -> dict[str, str]:
    # The checked-out tree, not whichever gpusim is installed, is what gets analysed.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _packages() -> list[str]:
    return sorted(
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ROOT_PACKAGES
        for init in (ROOT / top).rglob("__init__.py")
        if "__pycache__" not in init.parts
    )


@functools.cache
def _graph():
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (pip install -e .[dev])")
    return grimp.build_graph(*ROOT_PACKAGES, cache_dir=None)


def _circles(graph, package: str) -> list[list[str]]:
    """Strongly connected components (Tarjan) of more than one child of ``package``."""
    children = sorted(graph.find_children(package))

    def owner(module: str) -> str | None:
        for child in children:
            if module == child or module.startswith(child + "."):
                return child
        return None

    edges: dict[str, set[str]] = {child: set() for child in children}
    for module in graph.modules:
        src = owner(module)
        if src is None:
            continue
        for imported in graph.find_modules_directly_imported_by(module):
            dst = owner(imported)
            if dst is not None and dst != src:
                edges[src].add(dst)

    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for child in children:
        if child not in index:
            visit(child)
    return found


def test_the_layer_contracts_hold():
    """``lint-imports`` (import-linter) keeps every contract in pyproject.toml."""
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter is not installed (pip install -e .[dev])")
    proc = subprocess.run([exe, "--no-cache"], cwd=ROOT, env=_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " broken" in proc.stdout and "0 broken" in proc.stdout


@pytest.mark.parametrize("package", _packages())
def test_no_import_circle_inside_a_package(package):
    circles = _circles(_graph(), package)
    assert not circles, f"modules of {package} that import each other: " + "; ".join(
        " <-> ".join(c) for c in circles)


def test_the_circle_finder_finds_circles():
    grimp = pytest.importorskip("grimp")
    graph = grimp.ImportGraph()
    for m in ("p", "p.a", "p.b", "p.c", "p.d", "p.d.x"):
        graph.add_module(m)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.d.x")
    graph.add_import(importer="p.d.x", imported="p.a")
    graph.add_import(importer="p.c", imported="p.a")
    assert _circles(graph, "p") == [["p.a", "p.b", "p.d"]]


def _ruff() -> list[str] | None:
    exe = shutil.which("ruff")
    if exe:
        return [exe]
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    return None


def test_ruff_is_clean():
    """``ruff check .`` with the rules in pyproject.toml's ``[tool.ruff]``."""
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e .[dev])")
    proc = subprocess.run([*ruff, "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
