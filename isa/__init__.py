"""gpusim's ISA layer: a strict subset of NVIDIA PTX (ISA 9.0).

Owns: PTX types (:mod:`isa.types`), the in-memory form of modules and
instructions (:mod:`isa.ir`), the single opcode table (:mod:`isa.opcodes`)
with the lane-vectorised semantics it points to (:mod:`isa.fp`,
:mod:`isa.intops`), and the parser (:mod:`isa.parser`).
Needs only numpy and lark: never imports simpy, cupy or gpusim's engines.
"""

from isa.errors import GpusimError, PTXError
from isa.parser import parse, parse_file

__all__ = ["GpusimError", "PTXError", "parse", "parse_file"]
