"""The docs' supported-PTX table is ``gpusim isa``'s output, so it cannot drift from the
opcode table (issue #13's proof: the supported instructions and the refused list in the docs).
The table lives in docs/isa.md, under the heading "The supported PTX"."""

from __future__ import annotations

import re
from pathlib import Path

from gpusim.cli import main

ISA_PAGE = Path(__file__).resolve().parents[1] / "docs" / "isa.md"


def test_docs_list_exactly_what_gpusim_isa_prints(capsys):
    assert main(["isa"]) == 0
    printed = capsys.readouterr().out.rstrip("\n")
    block = re.search(r"^## The supported PTX.*?```text\n(.*?)\n```", ISA_PAGE.read_text(), re.S | re.M)
    assert block is not None, "docs/isa.md lost its supported-PTX block"
    assert block.group(1) == printed, "docs/isa.md's supported-PTX table is stale: paste `gpusim isa`'s output into it"
