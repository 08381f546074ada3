"""The in-memory form of a PTX module: operands, instructions, kernels.

Owns: immutable dataclasses produced by :mod:`isa.parser` and consumed by the
functional engine, the timing engine and printers. Imports only the standard
library and :mod:`isa.types`; no numpy arrays live here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:  # pragma: no cover
    from isa.opcodes import OpSpec

__all__ = [
    "Loc", "Reg", "Imm", "Special", "Sym", "Addr", "Vec", "PredPair", "Operand",
    "Instr", "Param", "Variable", "Kernel", "Module",
]


@dataclass(frozen=True, slots=True)
class Loc:
    """A position in a PTX file: 1-based line and column."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Reg:
    """A register operand, e.g. ``%r1``; ``neg`` marks ``!%p`` on predicates."""

    name: str
    neg: bool = False

    def __str__(self) -> str:
        return ("!" if self.neg else "") + self.name


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate. ``value`` is a Python int (integer literal, or the raw bits
    of a ``0f``/``0d`` float literal when ``bits_of`` is ``"f32"``/``"f64"``) or
    a Python float (decimal float literal). ``text`` is the literal as written."""

    value: int | float
    text: str
    bits_of: str | None = None

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Special:
    """A special register such as ``%tid.x`` (``name="tid"``, ``comp="x"``)."""

    name: str
    comp: str | None = None

    def __str__(self) -> str:
        return f"%{self.name}" + (f".{self.comp}" if self.comp else "")


@dataclass(frozen=True, slots=True)
class Sym:
    """A symbol: a label, a variable (``sdata``) or a kernel parameter."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Addr:
    """A memory operand ``[base+offset]``; ``base`` is a register, a symbol or
    ``None`` for an absolute address."""

    base: Reg | Sym | None
    offset: int = 0

    def __str__(self) -> str:
        if self.base is None:
            return f"[{self.offset}]"
        if self.offset:
            return f"[{self.base}+{self.offset}]"
        return f"[{self.base}]"


@dataclass(frozen=True, slots=True)
class Vec:
    """A vector operand ``{%f1, %f2}`` (``_`` elements are ``None``)."""

    items: tuple[Reg | None, ...]

    def __str__(self) -> str:
        return "{" + ", ".join(str(i) if i else "_" for i in self.items) + "}"


@dataclass(frozen=True, slots=True)
class PredPair:
    """A destination pair ``%r1|%p1`` (``setp`` with two predicates, ``shfl``)."""

    first: Reg | None
    second: Reg

    def __str__(self) -> str:
        return f"{self.first or '_'}|{self.second}"


Operand = Union[Reg, Imm, Special, Sym, Addr, Vec, PredPair, None]


@dataclass(frozen=True, slots=True, eq=False)
class Instr:
    """One decoded PTX instruction.

    Attributes:
        spec: the opcode table row (:class:`isa.opcodes.OpSpec`).
        mnemonic: the opcode with all its suffixes as written (``"ld.global.f32"``).
        types: the type suffixes in order (``("f32",)``; ``cvt`` has two).
        mods: the other suffixes, in order (``("global",)``).
        operands: operand objects in PTX order (destinations first).
        guard: the ``@%p`` / ``@!%p`` guard, or ``None``.
        loc: position in the PTX file.
        src: the CUDA source position ``(file index, line, column)`` from the
            latest ``.loc`` directive, or ``None``.
        index: the instruction's PC (position in the kernel's instruction list).
        contract: for an ``add``/``sub`` that ptxas fuses with the ``mul`` feeding it, how
            (:class:`Contraction`, set by :func:`isa.contract.contract`); else ``None``.
    """

    spec: "OpSpec"
    mnemonic: str
    types: tuple[str, ...]
    mods: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: Reg | None
    loc: Loc
    src: tuple[int, int, int] | None = None
    index: int = -1
    contract: "Contraction | None" = None

    @property
    def op(self) -> str:
        """The base opcode (``"ld"``)."""
        return self.spec.name

    @property
    def ty(self) -> str | None:
        """The last type suffix (the operation type of most instructions)."""
        return self.types[-1] if self.types else None

    def has(self, mod: str) -> bool:
        """True if the modifier ``mod`` (no dot) was written."""
        return mod in self.mods

    def to_ptx(self) -> str:
        """Print the instruction as PTX text (guard, mnemonic, operands)."""
        guard = f"@{self.guard} " if self.guard else ""
        ops = ", ".join("_" if o is None else str(o) for o in self.operands)
        return f"{guard}{self.mnemonic}" + (f" {ops};" if ops else ";")


@dataclass(frozen=True, slots=True)
class Contraction:
    """An ``add``/``sub`` computed as one fused multiply-add, ``d = fma(a, b, c)`` rounded once,
    with the product and/or ``c`` negated: ptxas fuses a ``mul`` and an ``add``/``sub`` written
    without a rounding modifier (PTX ISA 9.0 section 9.7.3: "mul/add ... with no rounding
    modifier may be optimized aggressively by the code generator"). ``mul`` is the PC of the
    multiply, which still runs for its other uses."""

    a: "Operand"
    b: "Operand"
    c: "Operand"
    neg_product: bool
    neg_c: bool
    mul: int


@dataclass(frozen=True, slots=True)
class Param:
    """A kernel parameter: name, PTX type, size and offset in the parameter
    buffer (bytes), alignment (bytes) and element count for ``.b8 name[N]``."""

    name: str
    ty: str
    size: int
    offset: int
    align: int


@dataclass(frozen=True, slots=True, eq=False)
class Variable:
    """A ``.shared``/``.local`` variable (byte size and offset in its space), or a
    module-level ``.global``/``.const`` variable (``offset`` is -1: it gets a device
    address when a module is loaded on a device). ``size`` is ``None`` for
    ``extern .shared`` (dynamic shared memory). ``init`` holds the initial bytes of
    an initialised ``.global``/``.const`` variable (little-endian, ``size`` bytes),
    else ``None`` (zero-filled). Compared by identity: each declaration is one object."""

    name: str
    space: str
    ty: str
    size: int | None
    align: int
    offset: int
    loc: Loc
    init: bytes | None = None


@dataclass(slots=True)
class Kernel:
    """A ``.entry`` kernel.

    Attributes:
        name: the entry name.
        params: parameters in declaration order.
        regs: register name -> PTX type of its ``.reg`` declaration.
        variables: shared and local variables by name.
        instrs: the instructions; an instruction's PC is its index here.
        labels: label name -> PC of the instruction that follows it.
        static_shared_bytes: bytes of static ``.shared`` memory.
        dynamic_shared_align: alignment of ``extern .shared`` (0 if none).
        local_bytes: bytes of ``.local`` memory per thread.
        directives: performance directives (``maxntid``, ``reqntid``, ...).
        loc: position of the ``.entry`` line.
    """

    name: str
    params: list[Param]
    regs: dict[str, str]
    variables: dict[str, Variable]
    instrs: list[Instr]
    labels: dict[str, int]
    static_shared_bytes: int
    dynamic_shared_align: int
    local_bytes: int
    directives: dict[str, tuple[int, ...]]
    loc: Loc

    @property
    def param_bytes(self) -> int:
        """Size of the parameter buffer in bytes."""
        return max((p.offset + p.size for p in self.params), default=0)


@dataclass(slots=True)
class Module:
    """A parsed PTX module: header, source files of ``.loc`` info, kernels, and the
    module-level ``.global``/``.const`` variables by name (``globals``)."""

    path: str
    version: str
    target: str
    address_size: int
    files: dict[int, str] = field(default_factory=dict)
    kernels: dict[str, Kernel] = field(default_factory=dict)
    source_lines: list[str] = field(default_factory=list)
    globals: dict[str, Variable] = field(default_factory=dict)
