"""Write one Jupyter notebook per lesson of :mod:`gpusim.lessons` (nbformat).

Usage: ``python examples/notebooks/make_notebooks.py`` (rewrites ``lesson_<name>.ipynb`` beside
this file). The notebooks run with ``pip install gpusim[notebook]``; their first code cell sets
``SIZE`` ("full": the H100's sizes, about a minute or two per lesson on one core; "quick";
"test": seconds), which ``tests/lessons/test_notebooks.py`` replaces with "test" before it
executes every notebook with nbclient.
"""

from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))


def notebook(name: str):
    """The notebook of lesson ``name`` (an ``nbformat`` v4 NotebookNode)."""
    import nbformat.v4 as v4

    from gpusim.lessons import get

    les = get(name)
    first = les.variants[0]
    cells = [
        v4.new_markdown_cell(f"# Lesson `{les.name}`: {les.title}\n\n**Course notes:** {les.seed}\n\n{les.idea}\n\n"
                             "Needs `pip install gpusim[notebook]`. The same lesson on the command line: "
                             f"`gpusim lesson {les.name}`."),
        v4.new_code_cell('SIZE = "full"   # "full": the sizes the H100 was measured at; "quick"; "test": seconds'),
        v4.new_code_cell("import gpusim\nfrom gpusim import lessons\n\n"
                         f"result = lessons.run({les.name!r}, SIZE)\nresult   # the table, beside the H100"),
        v4.new_markdown_cell("Does the simulator put the variants in the H100's order? Pairs closer than 5 % on "
                             "the H100 are ties."),
        v4.new_code_cell("result.ordering()"),
        v4.new_markdown_cell("The pictures (drawn by `gpusim.viz` from recordings at each case's small test size):"),
        v4.new_code_cell("from IPython.display import display\n\nfor image in lessons.page.pictures(result):\n"
                         "    display(image)"),
        v4.new_markdown_cell(f"One launch by hand, as with CuPy: `{first.case}` at its test size. The launch result "
                             "and its occupancy render as tables."),
        v4.new_code_cell("from gpusim.suite import CASES, run_case\n\n"
                         f"with gpusim.Device('h100', mode='timing'):\n    run = run_case(CASES[{first.case!r}], gpusim,"
                         f" CASES[{first.case!r}].test_n)\nlaunch = run.launches[0]\nlaunch"),
        v4.new_code_cell("launch.occupancy"),
    ]
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def main() -> None:
    """Write every lesson's notebook beside this script."""
    import nbformat

    from gpusim.lessons import LESSONS

    for name in LESSONS:
        path = HERE / f"lesson_{name}.ipynb"
        nbformat.write(notebook(name), str(path))
        print(path)


if __name__ == "__main__":
    main()
