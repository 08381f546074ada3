"""PTX text -> :class:`isa.ir.Module`.

Owns: reading PTX with the LALR grammar ``grammar.lark`` (lark), laying out
parameters and shared/local variables, decoding each mnemonic against the
opcode table and reporting every problem as a :class:`isa.errors.PTXError`
that names the file, line, column and the rule broken.
Imports only lark, the standard library and the rest of :mod:`isa`.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import lark

from isa.contract import contract
from isa.errors import PTXError
from isa.ir import Addr, Imm, Instr, Kernel, Loc, Module, Param, PredPair, Reg, Special, Sym, Variable, Vec
from isa.opcodes import OPCODES, Kind
from isa.types import TYPES
from isa.verify import verify

__all__ = ["parse", "parse_file", "SPECIAL_REGISTERS"]

#: Special registers (PTX ISA 9.0 chapter 10) gpusim provides.
SPECIAL_REGISTERS = frozenset({
    "tid", "ntid", "ctaid", "nctaid", "laneid", "warpid", "nwarpid", "smid", "nsmid",
    "gridid", "clock", "clock64", "lanemask_eq", "lanemask_le", "lanemask_lt",
    "lanemask_ge", "lanemask_gt", "globaltimer", "dynamic_smem_size", "total_smem_size",
})

#: Reserved shared-memory specials (PTX ISA 9.0 §10.33: ``%reserved_smem_offset_begin``,
#: ``_end``, ``_cap`` and ``_<n>``), which cooperative groups read in inline assembly.
_RESERVED_SMEM = re.compile(r"reserved_smem_offset_(begin|end|cap|\d+)$")

#: Registers one ``.reg`` declaration (``%r<N>``) and one kernel may declare. PTX registers are virtual and
#: ptxas has no documented limit (ptxas 13.0 takes ``%r<2147483648>``, using 16 GB and 11 s, and fails from
#: 2**32 with "Memory allocation failure"); gpusim keeps one array per register and thread, so it bounds them:
#: 8 times the largest the suite's and the corpus's PTX declare (8,203 in one declaration; the GPU itself has at
#: most 255 registers per thread).
MAX_REGS_PER_DECL = MAX_REGS_PER_KERNEL = 65_536
#: ``{ }`` blocks nested deeper than this inside a kernel are refused: ptxas 13.0 fails beyond 1,663
#: ("Parsing error near '{': memory exhausted").
MAX_SCOPE_DEPTH = 1663

#: ``WARP_SZ``: the predefined constant operand of PTX ISA 9.0 §5.5 (the warp size, 32).
WARP_SZ = 32

_SUPPORTED_TARGETS = re.compile(r"sm_(\d+)a?f?$")

#: The first word of an instruction statement on a line: optional label, '{' and guard, then
#: the mnemonic (used to report unsupported instructions whose operands the grammar cannot read).
_INSTR_START = re.compile(r"^\s*(?:[A-Za-z_$][\w$]*:\s*)?(?:\{\s*)*(?:@!?%?[\w$]+\s+)?"
                          r"([a-z][a-z0-9_]*)((?:\.[\w:]+)*)(?=[\s;{\[]|$)")


@functools.lru_cache(maxsize=1)
def _lark() -> lark.Lark:
    grammar = (Path(__file__).parent / "grammar.lark").read_text()
    return lark.Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=False)


def parse_file(path: str | Path) -> Module:
    """Parse the PTX file at ``path``. Raises :class:`PTXError` (also for an
    unreadable file) naming the file, line and column."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise PTXError(str(path), 0, 0, f"cannot read PTX file: {exc}") from None
    return parse(text, str(path))


def parse(text: str, filename: str = "<ptx>") -> Module:
    """Parse PTX ``text`` (``filename`` is used in messages only).

    Returns a :class:`Module` whose kernels are fully decoded and validated
    against :data:`isa.opcodes.OPCODES`. Raises :class:`PTXError`.
    """
    lines = text.splitlines()
    try:
        tree = _lark().parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        line = getattr(exc, "line", 0) or len(lines)
        raise (_unsupported_before(lines, line, filename) or _syntax_error(exc, filename, lines)) from None
    files = {int(n.children[0]): str(n.children[1]).strip('"') for n in tree.children if n.data == "file"}
    mod = _Builder(filename, lines, files).module(tree)
    verify(mod, source_note)  # ptxas's rules on the decoded module (isa/verify.py)
    return mod


_LOC_LINE = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_FILE_LINE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"\n]*)"')


def source_note(files: dict[int, str], src: tuple[int, int, int] | None) -> str:
    """``" (source: kernel.py:12:7, from .loc)"``: where the compiler that wrote the PTX put the
    instruction in its own source (the latest ``.loc`` before it and the ``.file`` it names:
    the .cu file for nvcc, the Python file of a ``@triton.jit`` function for Triton), or ``""``
    when the PTX has no such line information."""
    if src is None or src[1] == 0:
        return ""
    name = files.get(src[0], f"file {src[0]}")
    return f" (source: {name}:{src[1]}" + (f":{src[2]}" if src[2] else "") + ", from .loc)"


def _text_source_note(lines: list[str], no: int) -> str:
    """:func:`source_note` for line ``no`` of PTX the grammar could not read (found by regex)."""
    src = None
    for ln in lines[:no]:
        m = _LOC_LINE.match(ln)
        if m:
            src = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    files = {int(m.group(1)): m.group(2) for m in map(_FILE_LINE.match, lines) if m}
    return source_note(files, src)


def find_spec(mnemonic: str):
    """The opcode-table row of ``mnemonic`` (``"bar.red.popc.u32"`` -> the ``bar.red`` row,
    ``"ld.global.f32"`` -> ``ld``, ``"cp.async.wait_group"`` -> ``cp.async.wait_group``: the longest
    name of up to three parts) and how many dotted parts its name takes; ``(None, 1)`` if
    unsupported (``cp.async.bulk...`` and ``cp.async.mbarrier...`` too, not the ``cp.async`` row)."""
    parts = mnemonic.split(".")
    if len(parts) > 2 and ".".join(parts[:3]) in OPCODES:
        return OPCODES[".".join(parts[:3])], 3
    if parts[:2] == ["cp", "async"] and len(parts) > 2 and parts[2] in ("bulk", "mbarrier"):
        return None, 1
    if len(parts) > 1 and f"{parts[0]}.{parts[1]}" in OPCODES:
        return OPCODES[f"{parts[0]}.{parts[1]}"], 2
    return OPCODES.get(parts[0]), 1


def _unsupported_message(mnemonic: str) -> str:
    base = mnemonic.split(".")[0]
    if base == "call":
        return ("device functions (.func / call) are not supported: inline them "
                "(nvcc inlines __device__ functions by default)")
    return f"unsupported instruction {base!r} (in {mnemonic!r}); run 'gpusim isa' for the supported instructions"


def _strip_comments(lines: list[str]) -> list[str]:
    out, in_block = [], False
    for ln in lines:
        res = ""
        i = 0
        while i < len(ln):
            if in_block:
                j = ln.find("*/", i)
                if j < 0:
                    i = len(ln)
                    break
                in_block, i = False, j + 2
                continue
            if ln.startswith("//", i):
                break
            if ln.startswith("/*", i):
                in_block, i = True, i + 2
                continue
            res += ln[i]
            i += 1
        out.append(res)
    return out


def _unsupported_before(lines: list[str], last: int, filename: str) -> PTXError | None:
    """On a syntax error at line ``last``: the first instruction at or before it whose
    opcode the table does not have, as the one-line 'unsupported instruction' error (the
    grammar reads only the operand forms of supported instructions, so an unsupported
    instruction must never surface as a syntax error). ``None`` if there is none."""
    for no, ln in enumerate(_strip_comments(lines[:last]), 1):
        m = _INSTR_START.match(ln)
        if not m or ln[m.end():].lstrip().startswith(":"):
            continue
        mnemonic = m.group(1) + m.group(2)
        if find_spec(mnemonic)[0] is None:
            return PTXError(filename, no, m.start(1) + 1, _unsupported_message(mnemonic) + _text_source_note(lines, no),
                            lines[no - 1])
    return None


def _syntax_error(exc: lark.exceptions.UnexpectedInput, filename: str, lines: list[str]) -> PTXError:
    line, col = getattr(exc, "line", 0) or 0, getattr(exc, "column", 0) or 0
    src = lines[line - 1] if 0 < line <= len(lines) else None
    if isinstance(exc, lark.exceptions.UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            reason = "unexpected end of file (missing '}' or ';'?)"
        elif str(tok) == ".func" or str(tok) == "call":
            reason = "device functions (.func / call) are not supported: inline them (nvcc inlines __device__ functions by default)"
        else:
            expected = sorted(_PUNCT.get(e, e) for e in exc.expected if not e.startswith("__ANON"))
            hint = f"; expected {' or '.join(expected[:8])}" if expected else ""
            reason = f"unexpected {str(tok).split()[0] if str(tok).strip() else str(tok)!r}{hint}"
    elif isinstance(exc, lark.exceptions.UnexpectedCharacters):
        reason = f"unexpected character {exc.char!r}"
    else:
        reason = "unexpected end of file"
    return PTXError(filename, line, col, f"syntax error: {reason}", src)


_PUNCT = {"COMMA": "','", "SEMICOLON": "';'", "VBAR": "'|'", "LSQB": "'['", "RSQB": "']'", "LBRACE": "'{'",
          "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'", "COLON": "':'", "PLUS": "'+'", "MINUS": "'-'",
          "LESSTHAN": "'<'", "MORETHAN": "'>'", "EQUAL": "'='", "AT": "'@'"}


class _Builder:
    """Walks the parse tree of one file and builds the :class:`Module`."""

    def __init__(self, filename: str, lines: list[str], files: dict[int, str] | None = None):
        self.file = filename
        self.lines = lines
        #: The ``.file`` table (Triton writes it after the kernels), for errors that name the source line.
        self.files = files or {}

    # ------------------------------------------------------------ helpers
    def err(self, node, reason: str) -> PTXError:
        line = getattr(node, "line", None) or getattr(getattr(node, "meta", None), "line", 0) or 0
        col = getattr(node, "column", None) or getattr(getattr(node, "meta", None), "column", 0) or 0
        src = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        return PTXError(self.file, line, col, reason, src)

    def loc(self, node) -> Loc:
        meta = node.meta
        return Loc(self.file, getattr(meta, "line", 0), getattr(meta, "column", 0))

    # ------------------------------------------------------------ module
    def module(self, tree) -> Module:
        mod = Module(self.file, "", "", 64, source_lines=self.lines)
        module_shared: list = []
        for node in tree.children:
            kind = node.data
            if kind == "version":
                mod.version = str(node.children[0])
                major = int(mod.version.split(".")[0])
                if major > 9:
                    raise self.err(node, f"PTX ISA version {mod.version} is newer than gpusim supports (<= 9.x)")
            elif kind == "target":
                mod.target = str(node.children[0])
                if not _SUPPORTED_TARGETS.match(mod.target):
                    raise self.err(node.children[0], f"unsupported .target {mod.target!r} (expected sm_NN)")
            elif kind == "address_size":
                mod.address_size = int(node.children[0])
                if mod.address_size != 64:
                    raise self.err(node.children[0], ".address_size must be 64")
            elif kind == "file":
                mod.files[int(node.children[0])] = str(node.children[1]).strip('"')
            elif kind == "module_var":
                v = self.variable(node, module_level=True)
                if v[1] in ("global", "const"):
                    if v[0] in mod.globals:
                        raise self.err(node, f"module variable {v[0]!r} is declared twice")
                    mod.globals[v[0]] = Variable(v[0], v[1], v[2], v[3], v[4], -1, self.loc(node), v[7])
                else:
                    module_shared.append(v[:7])
            elif kind == "entry":
                k = self.entry(node, module_shared, mod.globals)
                if k.name in mod.globals or any(v[0] == k.name for v in module_shared):
                    raise self.err(node, f"Inconsistent redefinition of variable {k.name!r} (a module variable and "
                                         f"a kernel)")
                if k.name in mod.kernels:
                    raise self.err(node, f"kernel {k.name!r} is defined twice")
                mod.kernels[k.name] = k
        if not mod.version:
            raise PTXError(self.file, 1, 1, "missing .version directive (PTX modules start with .version, .target, .address_size)")
        return mod

    # ------------------------------------------------------------ declarations
    @staticmethod
    def _attrs(children) -> tuple[int, str | None]:
        align, space = 0, None
        for c in children:
            if isinstance(c, lark.Tree) and c.data == "var_attr":
                tok = c.children[0] if c.children else None
                if tok is not None and tok.type == "INT":
                    align = int(tok)
                elif tok is not None and tok.type == "STATE_SPACE":
                    space = str(tok)[1:]
        return align, space

    def variable(self, node, module_level: bool = False) -> tuple:
        """Return (name, space, type, size or None, align, extern, node, initial bytes or None)."""
        toks = [c for c in node.children if isinstance(c, lark.Token)]
        linkage = [str(c.children[0]) for c in node.children if isinstance(c, lark.Tree) and c.data == "linkage"]
        space = next(str(t)[1:] for t in toks if t.type == "STATE_SPACE")
        ty = next(str(t)[1:] for t in toks if t.type == "TYPE")
        name = next(str(t) for t in toks if t.type == "NAME")
        align, extra_space = self._attrs(node.children)
        dims = [c for c in node.children if isinstance(c, lark.Tree) and c.data == "array_dim"]
        init_node = next((c for c in node.children if isinstance(c, lark.Tree) and c.data == "initializer"), None)
        self.check_decl_attrs(node, name, space, extra_space, align, linkage)
        if ty == "pred":
            raise self.err(node, f"Predicate variable {name!r} must be in register state space (.reg .pred)")
        space = space.split("::")[0]
        # A .const variable inside a kernel is a module constant only that kernel names (ptxas takes it).
        allowed = ("shared", "global", "const") if module_level else ("shared", "local", "const")
        if space not in allowed:
            where = ("module-level .{0} variables are not supported ({1!r}); module scope has .global, .const and "
                     ".shared variables" if module_level else
                     ".{0} variables inside a kernel are not supported ({1!r}); declare .global/.const variables at "
                     "module scope, and use .shared or .local inside kernels")
            raise self.err(node, where.format(space, name))
        elem = TYPES[ty].size
        size: int | None = elem
        for d in dims:
            if not d.children:
                size = None
            else:
                size = (size or 0) * int(d.children[0])
        extern = ".extern" in linkage
        if size == 0 and not extern:
            raise self.err(node, f"Non-external variable {name!r} has incomplete type (an array of 0 elements)")
        if size is None and not (space == "shared" and extern):
            if space in ("global", "const") and init_node is not None:
                raise self.err(node, f"unsized array {name!r} with an initialiser: write its size")
            raise self.err(node, f"unsized array {name!r} must be 'extern .shared' (dynamic shared memory); "
                                 f"an unsized .extern .{space} variable is defined in another module, and gpusim "
                                 f"loads one module without linking")
        init = None
        if init_node is not None:
            if space not in ("global", "const"):
                raise self.err(node, f"initialised .{space} variables do not exist in PTX ({name!r}): only .global "
                                     f"and .const variables take initialisers")
            if extern:
                raise self.err(node, f".extern variable {name!r} cannot have an initialiser")
            init = self.initial_bytes(init_node, ty, size, name)
        return name, space, ty, size, align or elem, extern, node, init

    def check_decl_attrs(self, node, name: str, space: str, extra_space: str | None, align: int,
                         linkage: list[str]) -> None:
        """ptxas's rules on a declaration's attributes: one state space ("Multiple state spaces
        specified"), one linkage, ``.common`` only on ``.global`` variables, a power-of-two
        ``.align`` (PTX ISA 9.0 §5.4.5-6)."""
        if extra_space is not None:
            raise self.err(node, f"Multiple state spaces specified for {name!r} (.{space} and .{extra_space})")
        if len(linkage) > 1:
            raise self.err(node, f"syntax error: more than one linkage ({' '.join(linkage)}) on {name!r}")
        if ".common" in linkage and space != "global":
            raise self.err(node, f".common variables must be declared in .global space ({name!r} is .{space})")
        if align and align & (align - 1):
            raise self.err(node, f"Alignment must be a power of two (.align {align} of {name!r})")
        if align >= 1 << 32:
            raise self.err(node, f"Constant overflow (.align {align} of {name!r})")

    def initial_bytes(self, init_node, ty: str, size: int, name: str) -> bytes:
        """The bytes of an initialiser ``= v`` / ``= {v, ...}`` (nested braces for arrays of
        arrays; fewer values than elements leave the rest zero, PTX ISA 9.0 §5.4.4)."""
        import numpy as np  # isa needs numpy anyway (opcodes); keep the parser's import light

        text = str(init_node.children[0]).strip()
        items = [t.strip() for t in text.replace("{", ",").replace("}", ",").split(",") if t.strip()]
        info = TYPES[ty]
        n = size // info.size
        if len(items) > n:
            raise self.err(init_node, f"initialiser of {name!r} has {len(items)} values for {n} elements")
        out = np.zeros(n, info.dtype)
        bits_dtype = np.dtype(f"u{info.size}")
        for k, item in enumerate(items):
            m = re.fullmatch(r"(-?)(0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|0[xX][0-9a-fA-F]+U?|\d+\.\d*([eE][+-]?\d+)?|\d+U?)", item)
            if m is None:
                raise self.err(init_node, f"initialiser value {item!r} of {name!r} is not supported: gpusim takes "
                                          f"integer and floating-point literals (not addresses such as generic(...))")
            imm = self.immediate(([lark.Token("SIGN", "-")] if m.group(1) else []) + [lark.Token("IMM", m.group(2))])
            if imm.bits_of is not None:  # raw float bits: 0f.../0d...
                if (imm.bits_of == "f32") != (info.size == 4) or info.kind != "f":
                    raise self.err(init_node, f"float literal {item!r} does not match the type .{ty} of {name!r} "
                                              f"(a float literal for a .{ty} variable is not supported)")
                out.view(bits_dtype)[k] = imm.value
            elif info.kind == "f":
                out[k] = imm.value
            else:
                out.view(bits_dtype)[k] = int(imm.value) & ((1 << (8 * info.size)) - 1)
        return out.tobytes()

    def entry(self, node, module_shared: list, module_globals: dict | None = None) -> Kernel:
        children = node.children
        name_tok = next(c for c in children if isinstance(c, lark.Token) and c.type in ("NAME", "LABEL_NAME"))
        kname = str(name_tok)
        params: list[Param] = []
        offset = 0
        directives: dict[str, tuple[int, ...]] = {}
        body = []
        for c in children:
            if isinstance(c, lark.Tree) and c.data == "param":
                p = self.param(c, offset)
                if any(q.name == p.name for q in params):
                    raise self.err(c, f"Duplicate definition of variable {p.name!r} (a parameter of {kname!r})")
                params.append(p)
                offset = p.offset + p.size
            elif isinstance(c, lark.Tree) and c.data == "perf_directive":
                toks = c.children
                if toks and toks[0].type == "PERF_NAME":
                    dname, values = str(toks[0])[1:], tuple(int(t) for t in toks[1:])
                    most = 3 if dname in ("maxntid", "reqntid", "reqnctapercluster") else 1
                    if len(values) > most:
                        raise self.err(toks[0], f"syntax error: .{dname} takes at most {most} value(s), got "
                                                f"{len(values)} (ptxas: Parsing error near ',')")
                    directives[dname] = values
            elif isinstance(c, lark.Tree) and c.data not in ("linkage",):
                body.append(c)
        state = _KernelState(kname, {p.name for p in params})
        self.statements(body, state)
        # Shared variables declared at module scope belong to each kernel that uses them.
        used = state.symbols_used
        decls = [v for v in module_shared if v[0] in used] + [d[:7] + ((d[7],) if d[1] == "const" else ()) for d in state.decls]
        variables: dict[str, Variable] = {n: v for n, v in (module_globals or {}).items() if n in used}
        offs = {"shared": 0, "local": 0}
        dyn_align = 0
        for name, space, ty, size, align, _extern, vnode, *init in decls:
            if name in variables:
                raise self.err(vnode, f"variable {name!r} is declared twice (or shadows a module variable)")
            if space == "const":  # a kernel's own .const variable: placed with the module's variables
                var = Variable(name, space, ty, size, align, -1, self.loc(vnode), init[0] if init else None)
                variables[name] = (module_globals if module_globals is not None else {}).setdefault(
                    f"{kname}::{name}", var)
                continue
            if size is None:
                dyn_align = max(dyn_align, align)
                variables[name] = Variable(name, space, ty, None, align, -1, self.loc(vnode))
                continue
            off = -(-offs[space] // align) * align
            variables[name] = Variable(name, space, ty, size, align, off, self.loc(vnode))
            offs[space] = off + size
        instrs = contract(state.instrs, set(state.labels.values()))
        kernel = Kernel(kname, params, state.regs, variables, instrs, state.labels,
                        offs["shared"], dyn_align, offs["local"], directives, self.loc(node))
        self.check_kernel(kernel, state)
        return kernel

    def param(self, node, offset: int) -> Param:
        toks = [c for c in node.children if isinstance(c, lark.Token)]
        ty = next(str(t)[1:] for t in toks if t.type == "TYPE")
        name = next(str(t) for t in toks if t.type == "NAME")
        align, extra_space = self._attrs(node.children)
        if extra_space is not None:
            raise self.err(node, f"Multiple state spaces specified for parameter {name!r} (.param and .{extra_space})")
        if ty == "pred":
            raise self.err(node, f"Predicate variable {name!r} must be in register state space (.reg .pred)")
        if align and align & (align - 1) or align >= 1 << 32:
            raise self.err(node, f"Alignment must be a power of two below 2^32 (.align {align} of parameter {name!r})")
        size = TYPES[ty].size
        ptr = next((c for c in node.children if isinstance(c, lark.Tree) and c.data == "ptr_attr"), None)
        if ptr is not None:
            self.check_ptr_attr(ptr, ty, name)
        dims = [c for c in node.children if isinstance(c, lark.Tree) and c.data == "array_dim"]
        for d in dims:
            if not d.children:
                raise self.err(node, f"parameter {name!r} needs a size")
            size *= int(d.children[0])
        align = align or TYPES[ty].size
        off = -(-offset // align) * align
        return Param(name, ty, size, off, align)

    def check_ptr_attr(self, node, ty: str, name: str) -> None:
        """The ``.ptr [.space] [.align N]`` attribute of a kernel parameter (PTX ISA 9.0 §5.1.6.1:
        only on ``.u32``/``.u64`` parameters; the space is ``.const``, ``.global``, ``.local`` or
        ``.shared``; N, the alignment of the data pointed to, is a power of two). It tells ptxas
        what the pointer may address; gpusim accepts it and passes the pointer as a plain integer."""
        if ty not in ("u32", "u64"):  # ptxas 13.0 takes .ptr on any type; gpusim keeps to the PTX ISA
            raise self.err(node, f"parameter {name!r}: .ptr applies to .u32 and .u64 parameters only, not .{ty} "
                                 f"(PTX ISA 9.0 §5.1.6.1; ptxas 13.0 takes it, gpusim does not support it)")
        for tok in node.children:
            if tok.type == "STATE_SPACE" and str(tok)[1:] not in ("const", "global", "local", "shared"):
                raise self.err(tok, f"parameter {name!r}: .ptr takes the state space .const, .global, .local or "
                                    f".shared, not {tok}")
            if tok.type == "INT" and (int(tok) < 1 or int(tok) & (int(tok) - 1)):
                raise self.err(tok, f"parameter {name!r}: .ptr .align {tok} is not a power of two")

    # ------------------------------------------------------------ statements
    def statements(self, nodes, st: "_KernelState") -> None:
        # Iterative, not recursive over nested { } scopes: their depth is bounded by MAX_SCOPE_DEPTH, not by
        # Python's recursion limit.
        stack = [iter(nodes)]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                if stack:
                    st.scopes.pop()
                continue
            kind = node.data
            if kind == "reg_decl":
                self.reg_decl(node, st)
            elif kind == "var_decl":
                st.decls.append(self.variable(node))
            elif kind == "label":
                name = str(node.children[0])
                if name in st.labels:
                    raise self.err(node, f"label {name!r} is defined twice")
                st.labels[name] = len(st.instrs)
            elif kind == "loc":
                st.src = tuple(int(t) for t in node.children[:3])
            elif kind == "scope":  # { ... }: registers declared inside are local to it
                if len(st.scopes) > MAX_SCOPE_DEPTH:
                    raise self.err(node, f"{{ }} blocks nested more than {MAX_SCOPE_DEPTH} deep (ptxas 13.0 fails "
                                         f"beyond that depth: 'Parsing error near '{{': memory exhausted')")
                st.scopes.append({})
                stack.append(iter(node.children))
            elif kind == "instruction":
                try:
                    st.instrs.append(self.instruction(node, st))
                except PTXError as exc:  # name the source line (.loc) that produced the instruction
                    note = source_note(self.files, st.src)
                    if not note:
                        raise
                    src = self.lines[exc.line - 1] if 0 < exc.line <= len(self.lines) else None
                    raise PTXError(exc.file, exc.line, exc.column, exc.reason + note, src) from None
            # pragma: accepted and ignored

    def reg_decl(self, node, st: "_KernelState") -> None:
        ty = next(str(t)[1:] for t in node.children if isinstance(t, lark.Token) and t.type == "TYPE")
        for item in node.children:
            if not (isinstance(item, lark.Tree) and item.data == "reg_item"):
                continue
            base = str(item.children[0])
            count = int(item.children[1]) if len(item.children) > 1 else 1
            if count > MAX_REGS_PER_DECL or len(st.regs) + count > MAX_REGS_PER_KERNEL:
                what = (f"{base}<{count}> declares {count:,} registers" if count > MAX_REGS_PER_DECL else
                        f"{base}<{count}> brings kernel {st.name!r} to {len(st.regs) + count:,} registers")
                raise self.err(item, f"{what}; gpusim allows at most {MAX_REGS_PER_DECL:,} per declaration and "
                                     f"{MAX_REGS_PER_KERNEL:,} per kernel (virtual registers: the GPU has at most "
                                     f"255 per thread; ptxas itself has no documented limit)")
            names = [f"{base}{i}" for i in range(count)] if len(item.children) > 1 else [base]
            for n in names:
                scope = st.scopes[-1]
                if n in scope:
                    raise self.err(item, f"register {n} is declared twice in the same scope")
                unique = n if len(st.scopes) == 1 else f"{n}${st.next_scope_id()}"
                scope[n] = unique
                st.regs[unique] = ty

    # ------------------------------------------------------------ instructions
    def instruction(self, node, st: "_KernelState") -> Instr:
        children = list(node.children)
        guard = None
        if isinstance(children[0], lark.Tree) and children[0].data == "guard":
            g = children.pop(0)
            neg = len(g.children) == 2
            self.check_reg(g.children[-1], str(g.children[-1]), st, want="pred")
            guard = Reg(st.resolve(str(g.children[-1])), neg)
        mtok = children.pop(0)
        mnemonic = str(mtok)
        parts = mnemonic.split(".")
        spec, n_name = find_spec(mnemonic)
        if spec is None:
            raise self.err(mtok, _unsupported_message(mnemonic))
        types = tuple(p for p in parts[n_name:] if p in TYPES)
        mods = tuple(p for p in parts[n_name:] if p not in TYPES)
        for m in mods:
            ok = m in spec.mods or ("hints" in spec.mods and (m.startswith("L1::") or m.startswith("L2::")))
            if not ok:
                allowed = ", ".join("." + x for x in sorted(spec.mods - {"hints"})) or "none"
                raise self.err(mtok, f"unsupported modifier .{m} on {spec.name!r} (supported: {allowed})")
        if len(types) not in spec.n_types:
            want = " or ".join(str(n) for n in spec.n_types)
            raise self.err(mtok, f"{mnemonic!r} has {len(types)} type suffix(es); {spec.name!r} takes {want}")
        for t in types:
            if t not in spec.types:
                allowed = ", ".join("." + x for x in sorted(spec.types))
                raise self.err(mtok, f"type .{t} is not supported by {spec.name!r} (supported: {allowed})")
        if "sat" in mods and any(t in ("u16x2", "s16x2") for t in types):
            raise self.err(mtok, f"modifier .sat does not apply to the packed type .{types[-1]} (ptxas refuses it)")
        for group in spec.required:
            n = len({m for m in mods if m in group})
            if n != 1:
                choices = "/".join("." + g for g in sorted(group))
                raise self.err(mtok, f"{mnemonic!r} needs exactly one of {choices}")
        operands = tuple(self.operand(o, st) for o in children)
        if spec.kind is Kind.BRA and operands and not isinstance(operands[0], Sym):
            shown = "".join(children[0].scan_values(lambda v: isinstance(v, lark.Token))) \
                if isinstance(children[0], lark.Tree) else str(children[0])
            raise self.err(children[0], f"the target of {mnemonic!r} must be a label, not {shown} "
                                        f"(ptxas: 'Label expected for argument 0 of instruction 'bra'')")
        if len(operands) not in spec.n_operands:
            want = " or ".join(str(n) for n in spec.n_operands)
            raise self.err(mtok, f"{mnemonic!r} takes {want} operands, got {len(operands)}")
        if spec.check is not None:
            why = spec.check(types, mods, len(operands))
            if why:
                raise self.err(mtok, why)
        return Instr(spec, mnemonic, types, mods, operands, guard,
                     Loc(self.file, mtok.line, mtok.column), st.src, len(st.instrs))

    def check_reg(self, tok, name: str, st: "_KernelState", want: str | None = None) -> None:
        if st.resolve(name) is None:
            raise self.err(tok, f"undeclared register {name} (declare it with .reg)")
        if want == "pred" and st.regs[st.resolve(name)] != "pred":
            raise self.err(tok, f"{name} is a .{st.regs[name]} register, not a predicate")

    def register(self, tok, st: "_KernelState", neg: bool = False):
        name = str(tok)
        base = name[1:].split(".")[0]
        if st.resolve(name) is None and (base in SPECIAL_REGISTERS or _RESERVED_SMEM.match(base)):
            comp = name.split(".")[1] if "." in name else None
            return Special(base, comp)
        self.check_reg(tok, name, st)
        return Reg(st.resolve(name), neg)

    def operand(self, node, st: "_KernelState"):
        if isinstance(node, lark.Token):  # single-token rules are inlined by '?operand'
            raise self.err(node, f"unexpected operand {str(node)!r}")
        kind = node.data
        ch = node.children
        if kind == "register":
            neg = len(ch) == 2
            return self.register(ch[-1], st, neg)
        if kind == "pred_pair":
            return PredPair(self.register(ch[0], st), self.register(ch[1], st))
        if kind == "pred_pair_sink":
            return PredPair(None, self.register(ch[0], st))
        if kind == "immediate":
            return self.immediate(ch)
        if kind == "symbol":
            name = str(ch[0])
            if name == "WARP_SZ":
                return Imm(WARP_SZ, name)
            if st.resolve(name) is not None:  # a register declared without '%' (inline-asm blocks)
                return self.register(ch[0], st)
            st.symbols_used.add(name)
            return Sym(name)
        if kind in ("address", "address_neg", "address_abs"):
            return self.address(node, st)
        if kind == "vector":
            items = []
            for it in ch:
                items.append(self.register(it.children[0], st) if it.children else None)
            return Vec(tuple(items))
        if kind == "sink":
            return None
        raise self.err(node, f"unsupported operand form {kind!r}")

    @staticmethod
    def immediate(ch) -> Imm:
        neg = len(ch) == 2
        text = str(ch[-1])
        t = text.rstrip("U")
        if t[:2] in ("0f", "0F"):
            val, bits_of = int(t[2:], 16), "f32"
        elif t[:2] in ("0d", "0D"):
            val, bits_of = int(t[2:], 16), "f64"
        elif t[:2] in ("0x", "0X"):
            val, bits_of = int(t, 16), None
        elif "." in t:
            val, bits_of = float(t), None
        else:
            val, bits_of = int(t), None
        if neg:
            if bits_of:
                val ^= 1 << (31 if bits_of == "f32" else 63)
            else:
                val = -val
        return Imm(val, ("-" if neg else "") + text, bits_of)

    def address(self, node, st: "_KernelState") -> Addr:
        ch = node.children
        if node.data == "address_abs":
            return Addr(None, int(self.immediate(ch).value))
        base_node = ch[0]
        if base_node.data == "addr_reg":
            base = self.register(base_node.children[0], st)
            if isinstance(base, Special):
                raise self.err(base_node.children[0], f"special register {base} cannot be used as an address")
        elif st.resolve(str(base_node.children[0])) is not None:
            base = self.register(base_node.children[0], st)
        else:
            base = Sym(str(base_node.children[0]))
            st.symbols_used.add(base.name)
        off = 0
        if len(ch) > 1:
            imm = self.immediate(ch[1:])
            if not isinstance(imm.value, int) or imm.bits_of:
                raise self.err(node, "address offsets must be integers")
            off = -imm.value if node.data == "address_neg" else imm.value
        return Addr(base, off)

    # ------------------------------------------------------------ whole-kernel checks
    def check_kernel(self, k: Kernel, st: "_KernelState") -> None:
        params = {p.name for p in k.params}
        for ins in k.instrs:
            for op in ins.operands:
                sym = op.name if isinstance(op, Sym) else op.base.name if isinstance(op, Addr) and isinstance(op.base, Sym) else None
                if sym is None:
                    continue
                if ins.spec.kind == Kind.BRA:
                    if sym not in k.labels:
                        raise PTXError(self.file, ins.loc.line, ins.loc.column, f"branch to undefined label {sym!r}",
                                       self.lines[ins.loc.line - 1])
                elif sym not in k.variables and sym not in params:
                    raise PTXError(self.file, ins.loc.line, ins.loc.column,
                                   f"unknown symbol {sym!r} (not a parameter, a .shared or .local variable of kernel "
                                   f"{k.name!r}, or a module .global/.const variable)",
                                   self.lines[ins.loc.line - 1])
        if not k.instrs or k.instrs[-1].spec.kind not in (Kind.EXIT, Kind.BRA):
            # Falling off the end of a kernel behaves like ret.
            pass


class _KernelState:
    def __init__(self, name: str, params: set[str]):
        self.name = name
        self.params = params
        self.regs: dict[str, str] = {}
        self.decls: list = []
        self.instrs: list[Instr] = []
        self.labels: dict[str, int] = {}
        self.src: tuple[int, int, int] | None = None
        self.symbols_used: set[str] = set()
        #: Register scopes, outermost (the kernel's) first: declared name -> unique name.
        self.scopes: list[dict[str, str]] = [{}]
        self._scope_ids = 0

    def resolve(self, name: str) -> str | None:
        """The unique name of register ``name`` as seen from the current scope, or ``None``."""
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def next_scope_id(self) -> int:
        self._scope_ids += 1
        return self._scope_ids
