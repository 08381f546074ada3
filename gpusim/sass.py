"""What ptxas makes of each PTX instruction: the SASS instructions it emits for it.

Owns: running ``ptxas -lineinfo`` on a PTX file and ``nvdisasm -gp`` on the cubin, parsing
the listing (each SASS instruction with the PTX line ptxas attributes it to, from the
cubin's ``.nv_debug_line_sass`` section), mapping the lines to a kernel's PCs
(:func:`sass_per_pc`), caching the listing per file content, and the shipped per-opcode
expansion table used where no ptxas or nvdisasm exists (:func:`expansion_table`).

The rules (what the mapping counts):

* The file is assembled for the configuration's architecture (its ``.target`` replaced)
  with ``.pragma "nounroll"`` at module scope, both on existing lines so that every line
  keeps its number: a PTX line's SASS is then one loop iteration's worth. Where the real
  code unrolls a loop, its loop overhead is counted per iteration (measured: the unrolled
  ``matmul_naive`` +33 % in ``smsp__inst_executed.sum`` against the H100), then corrected
  by the unrolled listing (below).
* A SASS instruction belongs to the PTX instruction on the line ptxas names; lines that
  hold no instruction (the ``.entry`` line, declarations, labels) give theirs to the next
  instruction after them. Instructions with no line of their own take the previous one's.
* ...unless ptxas moved it to code that runs a different number of times: each SASS basic
  block (split at labels and after branches and exits) belongs to the PTX region (split at
  branch targets and after branches, an if-converted branch's region inside its own) most
  of its instructions come from, and an instruction from another region is given to the
  nearest instruction of the block that is from it. ``shared_stride``'s loop: ptxas hoists
  three of its instructions into the preheader and puts the ``BSYNC`` of its ``bra`` after
  it; per-line attribution counted them once an iteration (+24 % against the H100).
* Where ptxas unrolls an innermost PTX loop (the file assembled as it is, without the
  pragma, has a SASS loop doing ``U`` >= 2 iterations' loads, stores and float arithmetic
  in one pass), each PC of the loop is charged its SASS of that unrolled loop divided by
  ``U``, rounded so that the loop costs the unrolled body's length over ``U`` an iteration:
  unrolling shares the address arithmetic and the loop test between iterations
  (``matmul_naive``: 73 SASS instructions for 4 iterations, where one iteration alone takes
  25). Iterations that the real code runs in its remainder loop are charged the same.
* Code placed after a kernel's last ``EXIT`` in address order is out-of-line: slow paths
  entered through ``BRA.DIV`` (divergent shuffles) or ``CALL`` (IEEE division), and the
  final ``BRA`` to itself with its ``NOP`` padding. It does not run on the common path and
  counts for nothing.
* A forward conditional ``bra`` with no SASS of its own whose skipped instructions all
  became guarded SASS was if-converted: every warp issues that SASS whether or not its
  threads take the branch (:attr:`KernelSass.skip`). So was one whose skipped loads, stores
  and float arithmetic are all guarded, though unguarded SASS from outside the region
  (a loop's counter update and moves, scheduled among it) is charged there:
  ``stencil3d_coarse``'s interior test, counted 0.928x the H100's instructions as a branch,
  0.9995x as if-converted.

The hardware's ``smsp__inst_executed`` counts SASS warp instructions; multiplying each
PC's PTX executions by its SASS count gives the SASS-equivalent count
(:meth:`KernelSass.executed`). Where ptxas hoists code out of a loop, the attribution is
static and the equivalence approximate.

Tools are found like ptxas (:mod:`gpusim.ptxas`): ``GPUSIM_NVDISASM``, ``nvdisasm`` on
``PATH``, the PyPI wheel ``nvidia-cuda-nvdisasm`` (``site-packages/nvidia/cu13/bin``),
``$CUDA_HOME/bin``. The cache is ``$GPUSIM_CACHE_DIR/sass`` (default
``~/.cache/gpusim/sass``), keyed by the SHA-256 of the PTX, the architecture and both
tools' builds.

Must not import: simpy, cupy, or gpusim modules other than :mod:`gpusim.errors`,
:mod:`gpusim.ptxas` and :mod:`isa`.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gpusim.ptxas import (
    PtxasError,
    PtxasNotFoundError,
    _arch_name,
    _cache_dir,
    _ptxas_identity,
    _require_ptxas,
    find_tool,
    run_tool,
)
from isa.opcodes import Kind

__all__ = ["SassInstr", "KernelSass", "find_nvdisasm", "sass_listing", "sass_per_pc", "kernel_sass", "from_table",
           "expansion_table", "measure_table", "EXPANSION_FILE"]

#: The shipped per-opcode expansion table (``benchmarks/sass_table.py`` measures it).
EXPANSION_FILE = Path(__file__).with_name("data") / "sass_expansion.json"

_memory_cache: dict[str, dict[str, list["SassInstr"]]] = {}
#: Part of the cache key: bump when :class:`SassInstr` or the parser changes.
_LISTING_FORMAT = b"listing-3"


@dataclass(frozen=True, slots=True)
class SassInstr:
    """One SASS instruction of a kernel's listing.

    Attributes:
        address: byte offset in the kernel's code.
        opcode: the mnemonic with its modifiers (``"IMAD.WIDE.U32"``), no guard.
        line: the PTX line ptxas attributes it to (1-based), or 0 when none precedes it.
        out_of_line: placed after the kernel's last ``EXIT`` (see the module docstring).
        guarded: it carries a guard predicate (``@P0``, ``@!P1``).
        label: a label precedes it (a branch may enter here).
        target: for a branch, the address of the instruction it jumps to, else ``-1``.
        reads: the registers it reads (``R7``, ``P1``, ``UR4``; its guard's predicate included;
            ``RZ``/``PT`` left out; a 64-bit operand ``R2`` as ``R2`` and ``R3``).
        writes: the registers it writes (:func:`_operand_regs` says which operands those are).
    """

    address: int
    opcode: str
    line: int
    out_of_line: bool
    guarded: bool = False
    label: bool = False
    target: int = -1
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()


def find_nvdisasm() -> str | None:
    """Path of a usable ``nvdisasm``, or ``None`` (search order in the module docstring)."""
    return find_tool("nvdisasm", "GPUSIM_NVDISASM", ("cuda_nvdisasm",))


_RE_FUNC = re.compile(r"^\.text\.(\S+):\s*$")
_RE_LINE = re.compile(r'//## File "[^"]*", line (\d+)')
_RE_INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*)")
_RE_LABEL = re.compile(r"^\s*(\.L\w+):")
_RE_BRANCH_TO = re.compile(r"`\((\.L\w+)\)")
_RE_REG = re.compile(r"\b(U?R\d+|U?P\d)\b")
_RE_GPR = re.compile(r"(U?R)(\d+)")
#: base opcodes with no destination operand (stores, reductions, control flow)
_NO_DEST = ("ST", "STS", "STG", "STL", "RED", "REDG", "BRA", "BRX", "EXIT", "BAR", "BSSY", "BSYNC", "WARPSYNC",
            "NOP", "CALL", "RET", "MEMBAR", "CCTL", "DEPBAR")


def _operand_regs(opcode: str, guard: str, operands: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(registers read, registers written) of one SASS instruction, from its listing text.

    The destination is the first operand (none for stores, reductions and control flow); a
    ``*SETP``/``PLOP3`` also writes its second operand, and a predicate in second place (the
    carry out of ``IADD3``, ``LEA``...) is written too. Where the opcode works on 64 bits
    (``.WIDE``, ``.64``, the ``D*`` double-precision instructions) each register ``Rn`` also
    names ``Rn+1``. Memory operands (``[R2.64]``) and the guard are read."""
    base = opcode.split(".", 1)[0]
    parts = [p.strip() for p in operands.split(",")] if operands.strip() else []
    ndest = 0 if base in _NO_DEST or not parts or parts[0].startswith(("[", "desc")) else 1
    if ndest and len(parts) > 1 and (base.endswith("SETP") or base == "PLOP3"
                                     or re.fullmatch(r"!?U?P(\d|T)", parts[1])):
        ndest = 2
    wide = any(m in opcode for m in (".WIDE", ".64", ".F64")) or base in ("DADD", "DFMA", "DMUL", "DSETP", "DMNMX")

    def regs(texts) -> list[str]:
        out = []
        for t in texts:
            for r in _RE_REG.findall(t):
                out.append(r)
                m = _RE_GPR.fullmatch(r)
                if wide and m:
                    out.append(f"{m.group(1)}{int(m.group(2)) + 1}")
        return out

    reads = regs(parts[ndest:]) + regs([guard])
    return tuple(dict.fromkeys(reads)), tuple(dict.fromkeys(regs(parts[:ndest])))


def parse_listing(text: str) -> dict[str, list[SassInstr]]:
    """Parse ``nvdisasm -gp -c`` output into each kernel's SASS instructions, in address order."""
    raw: dict[str, list[tuple]] = {}
    labels: dict[str, dict[str, int]] = {}  # per kernel: label -> index in its rows
    current: list | None = None
    line, pending = 0, []
    for row in text.splitlines():
        m = _RE_FUNC.match(row.strip())
        if m:
            current = raw.setdefault(m.group(1), [])
            where = labels.setdefault(m.group(1), {})
            line, pending = 0, []
            continue
        m = _RE_LINE.search(row)
        if m:
            line = int(m.group(1))
            continue
        m = _RE_LABEL.match(row)
        if m:
            pending.append(m.group(1))
            continue
        m = _RE_INSTR.match(row)
        if m and current is not None:
            t = _RE_BRANCH_TO.search(m.group(4)) if m.group(3).startswith("BRA") else None
            for name in pending:
                where[name] = len(current)
            reads, writes = _operand_regs(m.group(3), m.group(2) or "", m.group(4))
            current.append((int(m.group(1), 16), m.group(3), line, bool(m.group(2)), bool(pending), t.group(1) if t else "",
                            reads, writes))
            pending = []
    out: dict[str, list[SassInstr]] = {}
    for name, rows in raw.items():
        exits = [i for i, r in enumerate(rows) if r[1] == "EXIT" and not r[3]]  # an unguarded EXIT
        last = exits[-1] if exits else len(rows) - 1
        at = labels[name]
        out[name] = [SassInstr(a, op, ln, i > last, g, lab, rows[at[t]][0] if t in at else -1, rd, wr)
                     for i, (a, op, ln, g, lab, t, rd, wr) in enumerate(rows)]
    return out


def sass_listing(ptx: str, arch: str, *, source: str = "<ptx>", use_cache: bool = True,
                 nounroll: bool = True) -> dict[str, list[SassInstr]]:
    """Each kernel's SASS instructions as ptxas emits them for ``arch`` (``"sm_90"``).

    Args:
        ptx: the PTX text (the lines of :class:`SassInstr` are this text's lines).
        arch: target architecture, or a ``GPUConfig``.
        source: the file name used in error messages.
        nounroll: assembled with ``.pragma "nounroll"`` (:func:`_prepare`), so that each line's
            SASS is one iteration's worth; ``False``: as the real code unrolls its loops.

    Raises:
        PtxasNotFoundError: no ptxas, or no nvdisasm (the message says which).
        PtxasError: ptxas or nvdisasm failed (with their diagnostics).
    """
    arch_name = _arch_name(arch)
    exe = _require_ptxas(None)
    dis = find_nvdisasm()
    if dis is None:
        raise PtxasNotFoundError("nvdisasm not found: `pip install nvidia-cuda-nvdisasm`, put nvdisasm on PATH "
                                 "or set GPUSIM_NVDISASM=/path/to/nvdisasm")
    data = ptx.encode()
    key = hashlib.sha256(b"\0".join([data, arch_name.encode(), _ptxas_identity(exe).encode(),
                                      _ptxas_identity(dis).encode(), _LISTING_FORMAT, b"nounroll" * nounroll])).hexdigest()
    if use_cache and key in _memory_cache:
        return _memory_cache[key]
    cache_file = _cache_dir("sass") / f"{key}.json"
    if use_cache:
        try:
            stored = json.loads(cache_file.read_text())
            listing = {k: [SassInstr(*row[:7], tuple(row[7]), tuple(row[8])) for row in v] for k, v in stored.items()}
            _memory_cache[key] = listing
            return listing
        except (OSError, ValueError, TypeError):
            pass
    with tempfile.TemporaryDirectory(prefix="gpusim-sass-") as tmp:
        src, cubin = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_bytes(_prepare(ptx, arch_name, nounroll).encode())
        run_tool([exe, "-lineinfo", f"-arch={arch_name}", "-o", str(cubin), str(src)], str(source))
        text = run_tool([dis, "-gp", "-c", str(cubin)], f"the cubin of {source}").stdout
    listing = parse_listing(text)
    if use_cache:
        _memory_cache[key] = listing
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp_file = cache_file.with_suffix(f".{os.getpid()}.tmp")
            tmp_file.write_text(json.dumps({k: [[i.address, i.opcode, i.line, i.out_of_line, i.guarded, i.label, i.target,
                                                 i.reads, i.writes]
                                                for i in v]
                                            for k, v in listing.items()}))
            os.replace(tmp_file, cache_file)
        except OSError:
            pass  # the disk cache is an optimisation only
    return listing


_RE_ADDRESS_SIZE = re.compile(r"^([ \t]*\.address_size[ \t]+\d+)", re.M)
_RE_TARGET = re.compile(r"^([ \t]*\.target[ \t]+)sm_\d+[af]?", re.M)


def _prepare(ptx: str, arch: str, nounroll: bool = True) -> str:
    """``ptx`` as assembled for the listing, every line keeping its number: ``.target`` set to
    ``arch`` (so a file written for sm_90 is costed for an sm_80 GPU as if recompiled), and
    ``.pragma "nounroll";`` at module scope (PTX ISA 9.0 section 11.3) on the ``.address_size``
    line, so that each PTX line's SASS is one iteration's worth and executions of the line
    count it once (ptxas would otherwise unroll some loops into several copies of a line);
    ``nounroll=False``: the target alone."""
    ptx = _RE_TARGET.sub(lambda m: m.group(1) + arch, ptx, count=1)
    return _RE_ADDRESS_SIZE.sub(r'\1 .pragma "nounroll";', ptx, count=1) if nounroll else ptx


@dataclass(frozen=True)
class KernelSass:
    """What ptxas makes of one kernel, per PC.

    Attributes:
        ops: per PC, the SASS opcodes ptxas attributes to the instruction (``()`` when it
            folded it into others, e.g. a ``mov`` or an ``ld.param``).
        guarded: per PC, how many of ``ops`` carry a guard predicate.
        skip: per PC of a forward conditional ``bra`` that ptxas if-converted (no SASS of its
            own; the instructions it jumps over became guarded SASS, which every warp issues
            whether or not its threads take the branch): the PC of its target; else ``-1``.
        source: ``"ptxas"`` (this kernel's listing) or ``"table"`` (the shipped per-opcode
            expansion table, where no ptxas or nvdisasm was found).
        order: per PC, where ptxas scheduled it: the address of its last SASS instruction
            (when it completes; parts such as a ``ULDC`` may be hoisted out of a loop); a folded
            PC takes the next PC's. Sorting a block's PCs by it gives the SASS issue order;
            ``()`` without a listing.
        block: per PC, its straight-line region: regions end after a branch ptxas kept, a
            barrier, an exit or a fence, and start at the target of a branch ptxas kept (the
            region of an if-converted branch is part of its block, as in SASS); ``()`` without
            a listing.
        regs: per PC, each of its SASS instructions' (registers read, registers written), in
            ``ops``' order (:attr:`SassInstr.reads`); ``()`` where they are not known (the
            expansion table; a loop's PCs charged from its unrolled listing).
    """

    ops: tuple[tuple[str, ...], ...]
    guarded: tuple[int, ...]
    skip: tuple[int, ...]
    source: str = "ptxas"
    order: tuple[int, ...] = ()
    block: tuple[int, ...] = ()
    regs: tuple[tuple[tuple[tuple[str, ...], tuple[str, ...]], ...], ...] = ()

    @property
    def counts(self) -> list[int]:
        """SASS instructions per PC."""
        return [len(o) for o in self.ops]

    def skipped_slots(self, pc: int) -> int:
        """SASS instructions a warp issues at the if-converted branch ``pc`` when all its
        threads take it (those of the instructions it jumps over); 0 for other PCs."""
        t = self.skip[pc]
        return sum(len(o) for o in self.ops[pc + 1:t]) if t >= 0 else 0

    def skipped_shared(self, pc: int) -> tuple[int, int, bool]:
        """The shared-memory SASS among what a warp issues at the if-converted branch ``pc`` when
        all its threads take it: (loads ``LDS*``, stores ``STS``, whether a later SASS instruction
        of the region reads a load's result, so that the warp waits for the load even with every
        lane off: SASS scoreboard waits are static, not predicated); ``(0, 0, False)`` for other
        PCs. Measured on the H100 (``validation/reports/h100/corpus_stalls``): such guarded loads
        and stores count in ``smsp__inst_executed_op_shared_{ld,st}`` (scan_brent_kung: exactly
        gpusim's active ones plus these)."""
        t = self.skip[pc]
        if t < 0:
            return 0, 0, False
        known = bool(self.regs) and all(self.regs[q] for q in range(pc + 1, t))  # else: any later SASS waits
        loads = stores = 0
        loaded: set[str] = set()
        waits = False
        for q in range(pc + 1, t):
            for k, op in enumerate(self.ops[q]):
                reads, writes = self.regs[q][k] if known else ((), ())
                if loads and (loaded.intersection(reads) if known else True):
                    waits = True
                name = op.split(".", 1)[0]
                if name in ("LDS", "LDSM"):
                    loads += 1
                    loaded.update(writes)
                elif name == "STS":
                    stores += 1
        return loads, stores, waits

    def skipped_shared_executed(self, inst_executed) -> tuple[int, int]:
        """Guarded shared loads and stores issued with every lane off at if-converted branches
        (:meth:`skipped_shared`), from the PTX counts per PC as in :meth:`executed`: (loads, stores)."""
        n = [int(c) for c in inst_executed]
        loads = stores = 0
        for pc, t in enumerate(self.skip):
            if t >= 0 and n[pc] > n[pc + 1]:
                ld, st, _ = self.skipped_shared(pc)
                loads += (n[pc] - n[pc + 1]) * ld
                stores += (n[pc] - n[pc + 1]) * st
        return loads, stores

    def executed(self, inst_executed) -> int:
        """SASS-equivalent warp instructions executed, from the PTX counts per PC
        (``LaunchResult.inst_executed``, int array of shape (number of instructions,)): each
        PC's executions times its SASS count, plus what warps issue at if-converted branches
        that all their threads took (executions of the branch less those of the next PC)."""
        n = [int(c) for c in inst_executed]
        total = sum(c * len(o) for c, o in zip(n, self.ops))
        for pc, t in enumerate(self.skip):
            if t >= 0:
                total += max(0, n[pc] - n[pc + 1]) * self.skipped_slots(pc)
        return total


def sass_per_pc(kernel, listing: list[SassInstr], unrolled: list[SassInstr] | None = None) -> KernelSass:
    """Map ``listing`` (:func:`sass_listing` of the text ``kernel``, an
    :class:`isa.ir.Kernel`, was parsed from) onto the kernel's PCs by the rules of the module
    docstring; out-of-line code is left out. ``unrolled``: the same kernel's listing assembled
    without the ``nounroll`` pragma (``sass_listing(..., nounroll=False)``), for the loops
    ptxas unrolls; without it every loop is costed as not unrolled."""
    lines = [ins.loc.line for ins in kernel.instrs]
    body = [s for s in listing if not s.out_of_line] if lines else []
    pcs = [_pc_of(lines, s.line) for s in body]
    _reattribute(kernel, body, pcs)
    mapped = _assemble(kernel, body, pcs)
    if unrolled is None:
        return mapped
    ops = [list(o) for o in mapped.ops]
    for lo, hi in _innermost_loops(kernel):
        _apply_unrolling(ops, lines, lo, hi, body, unrolled)
    return _assemble(kernel, body, pcs, ops)


def _pc_of(lines: list[int], line: int) -> int:
    """The first PC on or after PTX line ``line``."""
    return min(bisect.bisect_left(lines, line), len(lines) - 1)


def _assemble(kernel, body: list[SassInstr], pcs: list[int], ops: list[list[str]] | None = None) -> KernelSass:
    """:class:`KernelSass` from each SASS instruction's PC (``ops`` given: each PC's opcodes
    replaced, the unrolled loops' correction)."""
    n = len(kernel.instrs)
    by_pc: list[list[str]] = [[] for _ in range(n)]
    regs: list[list] = [[] for _ in range(n)]
    guarded = [0] * n
    work = [0] * n          # per PC: its loads, stores and float arithmetic, and of them the guarded
    guarded_work = [0] * n
    last = [-1] * n
    for s, pc in zip(body, pcs):
        by_pc[pc].append(s.opcode)
        regs[pc].append((s.reads, s.writes))
        guarded[pc] += s.guarded
        if s.opcode.split(".", 1)[0] in _WORK:
            work[pc] += 1
            guarded_work[pc] += s.guarded
        last[pc] = max(last[pc], s.address)
    if ops is not None:
        regs = [r if list(o) == b else [] for r, o, b in zip(regs, ops, by_pc)]
        by_pc = ops
        guarded = [min(g, len(o)) for g, o in zip(guarded, ops)]
    skip = []
    for pc, ins in enumerate(kernel.instrs):
        t = kernel.labels.get(ins.operands[0].name, -1) if ins.op == "bra" and ins.guard is not None else -1
        region = range(pc + 1, t)
        converted = all(guarded[i] == len(by_pc[i]) for i in region) or (
            any(work[i] for i in region) and all(guarded_work[i] == work[i] for i in region))
        if by_pc[pc] or t <= pc + 1 or not converted:
            t = -1
        skip.append(t)
    order, block = _issue_order(kernel, last, skip)
    return KernelSass(tuple(tuple(o) for o in by_pc), tuple(guarded), tuple(skip), "ptxas", order, block,
                      tuple(tuple(r) for r in regs))


def _sass_blocks(body: list[SassInstr]) -> list[range]:
    """Index ranges of ``body``'s basic blocks: a block starts at a label and after a branch or
    an exit; a lone ``BSYNC`` (the reconvergence of a ``BSSY``) starts the block after it."""
    out, start = [], 0
    for i, s in enumerate(body):
        if i > start and s.label and not (i - start == 1 and body[start].opcode == "BSYNC"):
            out.append(range(start, i))
            start = i
        if s.opcode.startswith(("BRA", "EXIT", "RET")):
            out.append(range(start, i + 1))
            start = i + 1
    if start < len(body):
        out.append(range(start, len(body)))
    return out


def _reattribute(kernel, body: list[SassInstr], pcs: list[int]) -> None:
    """Give each SASS instruction that ptxas moved into or out of an innermost loop (hoisted
    into the preheader, a ``BSYNC`` after the loop) to the nearest instruction of its basic
    block that is in the same loops as it: the one before it, else the one after (``pcs`` is
    updated in place). A PTX loop's SASS loop is the one its backward branch closes, where
    that holds no other SASS loop (outer loops are laid out with other code inside their
    address range, so that addresses do not tell what runs in them)."""
    loops = []  # (PTX PCs lo..hi, SASS addresses first..last)
    back = [s for s in body if 0 <= s.target <= s.address]
    for lo, hi in _innermost_loops(kernel):
        closing = [s for s, pc in zip(body, pcs) if pc == hi and 0 <= s.target <= s.address]
        if len(closing) == 1 and not any(closing[0].target <= s.target and s is not closing[0]
                                          and s.address <= closing[0].address for s in back):
            loops.append((lo, hi, closing[0].target, closing[0].address))

    def by_pc(pc):
        return frozenset(i for i, (lo, hi, _, _) in enumerate(loops) if lo <= pc <= hi)

    def by_address(address):
        return frozenset(i for i, (_, _, first, last) in enumerate(loops) if first <= address <= last)

    want = [by_address(s.address) for s in body]
    for blk in _sass_blocks(body):
        fits = [i for i in blk if by_pc(pcs[i]) == want[i]]
        for i in blk:
            if by_pc(pcs[i]) != want[i]:
                near = [j for j in fits if j < i][-1:] or [j for j in fits if j > i][:1]
                if near:
                    pcs[i] = pcs[near[0]]


def _loops(kernel) -> list[tuple[int, int]]:
    """(first PC, backward branch's PC) of each PTX loop."""
    return [(kernel.labels[ins.operands[0].name], pc) for pc, ins in enumerate(kernel.instrs)
            if ins.spec.kind is Kind.BRA and kernel.labels.get(ins.operands[0].name, pc + 1) <= pc]


def _innermost_loops(kernel) -> list[tuple[int, int]]:
    """(first PC, backward branch's PC) of each PTX loop that holds no other loop."""
    loops = _loops(kernel)
    return [(lo, hi) for lo, hi in loops if not any(lo <= a and b <= hi and (a, b) != (lo, hi) for a, b in loops)]


_WORK = ("LDG", "STG", "LDS", "STS", "LD", "ST", "ATOM", "ATOMS", "ATOMG", "RED", "FFMA", "FADD", "FMUL",
         "DFMA", "DADD", "DMUL", "HFMA2", "HADD2", "HMUL2")


def _apply_unrolling(ops: list[list[str]], lines: list[int], lo: int, hi: int,
                     listing: list[SassInstr], unrolled: list[SassInstr]) -> None:
    """Charge the PCs ``lo..hi`` of a loop ptxas unrolls their SASS of the unrolled loop over
    the unroll factor (module docstring); ``ops`` is updated in place."""
    first, last = lines[lo], lines[hi]

    def work(instrs) -> int:
        return sum(s.opcode.split(".", 1)[0] in _WORK for s in instrs)

    def loops(instrs) -> list[list[SassInstr]]:
        """Each SASS loop (a backward branch's body) whose instructions all come from the PTX loop."""
        out = []
        for s in instrs:
            if 0 <= s.target <= s.address:
                loop = [x for x in instrs if s.target <= x.address <= s.address]
                if all(first <= x.line <= last for x in loop):
                    out.append(loop)
        return out

    one = loops(listing)
    per_iteration = work(one[0]) if len(one) == 1 else 0
    if not per_iteration:
        return
    main = max(loops(unrolled), key=work, default=[])
    factor = round(work(main) / per_iteration)
    if factor < 2:
        return
    got: list[list[str]] = [[] for _ in range(hi - lo + 1)]
    for s in main:
        got[_pc_of(lines, s.line) - lo].append(s.opcode)
    # largest remainder: each PC gets len/factor, the loop round(len(main) / factor) in all
    share = [len(g) / factor for g in got]
    keep = [int(x) for x in share]
    for i in sorted(range(len(share)), key=lambda i: keep[i] - share[i])[:round(len(main) / factor) - sum(keep)]:
        keep[i] += 1
    for i, (g, k) in enumerate(zip(got, keep)):
        ops[lo + i] = g[:k]


def _issue_order(kernel, last: list[int], skip: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """:attr:`KernelSass.order` and :attr:`KernelSass.block` from each PC's last SASS address
    (``-1`` where ptxas folded it) and the if-converted branches ``skip``."""
    order = list(last)
    nxt = 1 << 62
    for pc in range(len(order) - 1, -1, -1):
        if order[pc] < 0:
            order[pc] = nxt
        nxt = order[pc]
    starts = {kernel.labels[ins.operands[0].name] for pc, ins in enumerate(kernel.instrs)
              if ins.spec.kind is Kind.BRA and skip[pc] < 0 and ins.operands[0].name in kernel.labels}
    block, b = [], 0
    for pc, ins in enumerate(kernel.instrs):
        if pc in starts:
            b += 1
        block.append(b)
        kind = ins.spec.kind
        if (kind is Kind.BRA and skip[pc] < 0) or kind in (Kind.EXIT, Kind.BAR, Kind.FENCE):
            b += 1
    return tuple(order), tuple(block)


@lru_cache(maxsize=None)
def expansion_table(arch: str) -> dict[str, tuple[str, ...]]:
    """The shipped per-opcode expansion table for ``arch``: ``{mnemonic or base opcode: the
    SASS opcodes ptxas most often makes of it}``, measured on the suite's kernels by
    :func:`measure_table`; an architecture the table lacks gets the nearest one's (``{}``
    when the file is missing)."""
    try:
        tables = json.loads(EXPANSION_FILE.read_text()).get("arches", {})
    except (OSError, ValueError):
        return {}
    if not tables:
        return {}
    num = int(re.sub(r"\D", "", arch) or 0)
    near = min(tables, key=lambda a: (abs(int(re.sub(r"\D", "", a)) - num), a))
    return {k: tuple(v) for k, v in tables.get(arch, tables[near]).items()}


def from_table(kernel, arch: str) -> KernelSass:
    """:class:`KernelSass` of ``kernel`` from the shipped table (no ptxas needed): each PC gets
    its mnemonic's modal expansion, else its base opcode's, else one SASS instruction; no
    branch is taken as if-converted."""
    table = expansion_table(arch)
    ops = tuple(table.get(i.mnemonic, table.get(i.op, (i.op.upper(),))) for i in kernel.instrs)
    n = len(ops)
    return KernelSass(ops, (0,) * n, (-1,) * n, "table")


def kernel_sass(kernel, ptx: str, arch: str, *, source: str = "<ptx>") -> KernelSass:
    """What ptxas makes of ``kernel`` (parsed from ``ptx``) for ``arch``: from its SASS listing
    (:func:`sass_listing`, cached) where ptxas and nvdisasm exist and assemble the file, else
    from the shipped table (:func:`from_table`); ``.source`` says which."""
    try:
        listing = sass_listing(ptx, arch, source=source).get(kernel.name)
        unrolled = sass_listing(ptx, arch, source=source, nounroll=False).get(kernel.name) if listing else None
    except PtxasError:
        listing = None
    return from_table(kernel, _arch_name(arch)) if listing is None else sass_per_pc(kernel, listing, unrolled)


def measure_table(pairs, arch: str) -> dict[str, list[str]]:
    """Measure the expansion table from ``pairs`` of (:class:`isa.ir.Kernel`, its PTX text):
    for each mnemonic and each base opcode, the SASS opcode sequence ptxas made of it most
    often (ties: the shorter)."""
    from collections import Counter, defaultdict

    seen: dict[str, Counter] = defaultdict(Counter)
    for kernel, ptx in pairs:
        ks = sass_per_pc(kernel, sass_listing(ptx, arch)[kernel.name])
        for ins, ops in zip(kernel.instrs, ks.ops):
            seen[ins.mnemonic][ops] += 1
            seen[ins.op][ops] += 1
    return {k: list(max(c.items(), key=lambda kv: (kv[1], -len(kv[0])))[0]) for k, c in sorted(seen.items())}
