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

from isa.errors import PTXError
from isa.ir import Addr, Imm, Instr, Kernel, Loc, Module, Param, PredPair, Reg, Special, Sym, Variable, Vec
from isa.opcodes import OPCODES, Kind
from isa.types import TYPES

__all__ = ["parse", "parse_file", "SPECIAL_REGISTERS"]

#: Special registers (PTX ISA 9.0 chapter 10) gpusim provides.
SPECIAL_REGISTERS = frozenset({
    "tid", "ntid", "ctaid", "nctaid", "laneid", "warpid", "nwarpid", "smid", "nsmid",
    "gridid", "clock", "clock64", "lanemask_eq", "lanemask_le", "lanemask_lt",
    "lanemask_ge", "lanemask_gt", "globaltimer", "dynamic_smem_size", "total_smem_size",
})

_SUPPORTED_TARGETS = re.compile(r"sm_(\d+)a?f?$")


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
        raise _syntax_error(exc, filename, lines) from None
    return _Builder(filename, lines).module(tree)


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

    def __init__(self, filename: str, lines: list[str]):
        self.file = filename
        self.lines = lines

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
                module_shared.append(self.variable(node, module_level=True))
            elif kind == "entry":
                k = self.entry(node, module_shared)
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
        """Return (name, space, type, size or None, align, extern, node)."""
        toks = [c for c in node.children if isinstance(c, lark.Token)]
        linkage = [str(c.children[0]) for c in node.children if isinstance(c, lark.Tree) and c.data == "linkage"]
        space = next(str(t)[1:] for t in toks if t.type == "STATE_SPACE")
        ty = next(str(t)[1:] for t in toks if t.type == "TYPE")
        name = next(str(t) for t in toks if t.type == "NAME")
        align, _ = self._attrs(node.children)
        dims = [c for c in node.children if isinstance(c, lark.Tree) and c.data == "array_dim"]
        if any(isinstance(c, lark.Tree) and c.data == "initializer" for c in node.children):
            raise self.err(node, f"initialised variables are not supported ({name!r})")
        space = space.split("::")[0]
        if space not in ("shared", "local"):
            where = "module-level " if module_level else ""
            raise self.err(node, f"{where}.{space} variables are not supported ({name!r}); gpusim supports .shared and .local variables")
        elem = TYPES[ty].size
        size: int | None = elem
        for d in dims:
            if not d.children:
                size = None
            else:
                size = (size or 0) * int(d.children[0])
        if size is None and not (space == "shared" and ".extern" in linkage):
            raise self.err(node, f"unsized array {name!r} must be 'extern .shared' (dynamic shared memory)")
        return name, space, ty, size, align or elem, ".extern" in linkage, node

    def entry(self, node, module_shared: list) -> Kernel:
        children = node.children
        name_tok = next(c for c in children if isinstance(c, lark.Token) and c.type == "NAME")
        kname = str(name_tok)
        params: list[Param] = []
        offset = 0
        directives: dict[str, tuple[int, ...]] = {}
        body = []
        for c in children:
            if isinstance(c, lark.Tree) and c.data == "param":
                p = self.param(c, offset)
                params.append(p)
                offset = p.offset + p.size
            elif isinstance(c, lark.Tree) and c.data == "perf_directive":
                toks = c.children
                if toks and toks[0].type == "PERF_NAME":
                    directives[str(toks[0])[1:]] = tuple(int(t) for t in toks[1:])
            elif isinstance(c, lark.Tree) and c.data not in ("linkage",):
                body.append(c)
        state = _KernelState(kname, {p.name for p in params})
        self.statements(body, state)
        # Shared variables declared at module scope belong to each kernel that uses them.
        used = state.symbols_used
        decls = [v for v in module_shared if v[0] in used] + state.decls
        variables: dict[str, Variable] = {}
        offs = {"shared": 0, "local": 0}
        dyn_align = 0
        for name, space, ty, size, align, extern, vnode in decls:
            if name in variables:
                raise self.err(vnode, f"variable {name!r} is declared twice")
            if size is None:
                dyn_align = max(dyn_align, align)
                variables[name] = Variable(name, space, ty, None, align, -1, self.loc(vnode))
                continue
            off = -(-offs[space] // align) * align
            variables[name] = Variable(name, space, ty, size, align, off, self.loc(vnode))
            offs[space] = off + size
        kernel = Kernel(kname, params, state.regs, variables, state.instrs, state.labels,
                        offs["shared"], dyn_align, offs["local"], directives, self.loc(node))
        self.check_kernel(kernel, state)
        return kernel

    def param(self, node, offset: int) -> Param:
        toks = [c for c in node.children if isinstance(c, lark.Token)]
        ty = next(str(t)[1:] for t in toks if t.type == "TYPE")
        name = next(str(t) for t in toks if t.type == "NAME")
        align, _ = self._attrs(node.children)
        size = TYPES[ty].size
        dims = [c for c in node.children if isinstance(c, lark.Tree) and c.data == "array_dim"]
        for d in dims:
            if not d.children:
                raise self.err(node, f"parameter {name!r} needs a size")
            size *= int(d.children[0])
        align = align or TYPES[ty].size
        off = -(-offset // align) * align
        return Param(name, ty, size, off, align)

    # ------------------------------------------------------------ statements
    def statements(self, nodes, st: "_KernelState") -> None:
        for node in nodes:
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
            elif kind == "scope":
                self.statements(node.children, st)
            elif kind == "instruction":
                st.instrs.append(self.instruction(node, st))
            # pragma: accepted and ignored

    def reg_decl(self, node, st: "_KernelState") -> None:
        ty = next(str(t)[1:] for t in node.children if isinstance(t, lark.Token) and t.type == "TYPE")
        for item in node.children:
            if not (isinstance(item, lark.Tree) and item.data == "reg_item"):
                continue
            base = str(item.children[0])
            names = [f"{base}{i}" for i in range(int(item.children[1]))] if len(item.children) > 1 else [base]
            for n in names:
                st.regs[n] = ty

    # ------------------------------------------------------------ instructions
    def instruction(self, node, st: "_KernelState") -> Instr:
        children = list(node.children)
        guard = None
        if isinstance(children[0], lark.Tree) and children[0].data == "guard":
            g = children.pop(0)
            neg = len(g.children) == 2
            guard = Reg(str(g.children[-1]), neg)
            self.check_reg(g.children[-1], guard.name, st, want="pred")
        mtok = children.pop(0)
        mnemonic = str(mtok)
        parts = mnemonic.split(".")
        spec = OPCODES.get(parts[0])
        if spec is None:
            raise self.err(mtok, f"unsupported instruction {parts[0]!r} (in {mnemonic!r}); run 'gpusim isa' for the supported instructions")
        types = tuple(p for p in parts[1:] if p in TYPES)
        mods = tuple(p for p in parts[1:] if p not in TYPES)
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
        for group in spec.required:
            n = sum(1 for m in mods if m in group)
            if n != 1:
                choices = "/".join("." + g for g in sorted(group))
                raise self.err(mtok, f"{mnemonic!r} needs exactly one of {choices}")
        operands = tuple(self.operand(o, st) for o in children)
        if len(operands) not in spec.n_operands:
            want = " or ".join(str(n) for n in spec.n_operands)
            raise self.err(mtok, f"{mnemonic!r} takes {want} operands, got {len(operands)}")
        return Instr(spec, mnemonic, types, mods, operands, guard,
                     Loc(self.file, mtok.line, mtok.column), st.src, len(st.instrs))

    def check_reg(self, tok, name: str, st: "_KernelState", want: str | None = None) -> None:
        if name not in st.regs:
            raise self.err(tok, f"undeclared register {name} (declare it with .reg)")
        if want == "pred" and st.regs[name] != "pred":
            raise self.err(tok, f"{name} is a .{st.regs[name]} register, not a predicate")

    def register(self, tok, st: "_KernelState", neg: bool = False):
        name = str(tok)
        base = name[1:].split(".")[0]
        if name not in st.regs and base in SPECIAL_REGISTERS:
            comp = name.split(".")[1] if "." in name else None
            return Special(base, comp)
        self.check_reg(tok, name, st)
        return Reg(name, neg)

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
            st.symbols_used.add(str(ch[0]))
            return Sym(str(ch[0]))
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
                        raise PTXError(self.file, ins.loc.line, ins.loc.column, f"branch to undefined label {sym!r}", self.lines[ins.loc.line - 1])
                elif sym not in k.variables and sym not in params:
                    raise PTXError(self.file, ins.loc.line, ins.loc.column,
                                   f"unknown symbol {sym!r} (not a parameter, .shared or .local variable of kernel {k.name!r})",
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
