"""``gpusim isa``: list the supported PTX instructions from the opcode table."""

from __future__ import annotations

import argparse

from gpusim.errors import GpusimError
from gpusim.table import format_table
from isa.opcodes import OPCODES, REFUSED
from isa.parser import find_spec


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("isa", help="list the supported PTX instructions",
                       description="List the PTX instructions gpusim supports (from the opcode table).")
    p.add_argument("opcode", nargs="?", help="show one instruction in detail")
    p.set_defaults(func=run)


def _unit(spec) -> str:
    return "by type" if callable(spec.unit) else spec.unit


def run(args: argparse.Namespace) -> int:
    if args.opcode:
        spec = find_spec(args.opcode)[0]
        if spec is None:
            raise GpusimError(f"{args.opcode!r} is not a supported instruction; 'gpusim isa' lists them")
        print(f"{spec.name}: {spec.doc}")
        print(f"  execution: {spec.kind.value}; timing unit: {_unit(spec)}")
        print(f"  types: {', '.join('.' + t for t in sorted(spec.types)) or '(none)'}")
        print(f"  modifiers: {', '.join('.' + m for m in sorted(spec.mods)) or '(none)'}")
        print(f"  operands: {' or '.join(map(str, spec.n_operands))}")
        return 0
    rows = [(s.name, s.kind.value, _unit(s), s.doc) for s in OPCODES.values()]
    print(format_table(["opcode", "kind", "unit", "semantics (PTX ISA 9.0 section)"], rows))
    print(f"\n{len(rows)} opcodes. 'gpusim isa OPCODE' shows types and modifiers.")
    print("\nAlso read: module .global/.const variables (initialisers, .extern), scoped { .reg ... } blocks,\n"
          "WARP_SZ, %reserved_smem_offset_*. Refused at load time ('unsupported instruction', with file:line):")
    print(format_table(["instructions", "what they are"], list(REFUSED)))
    return 0
