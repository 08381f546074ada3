"""The README's supported-PTX table is ``gpusim isa``'s output, so it cannot drift from the
opcode table (issue #13's proof: the supported instructions and the refused list in the README)."""

from __future__ import annotations

import re
from pathlib import Path

from gpusim.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_lists_exactly_what_gpusim_isa_prints(capsys):
    assert main(["isa"]) == 0
    printed = capsys.readouterr().out.rstrip("\n")
    block = re.search(r"<summary>The supported PTX.*?```text\n(.*?)\n```", README.read_text(), re.S)
    assert block is not None, "README lost its supported-PTX block"
    assert block.group(1) == printed, "README's supported-PTX table is stale: paste `gpusim isa`'s output into it"
