"""Single-token mutants of PTX files, and their verdicts by ptxas and by gpusim's loader.

Owns: a seeded generator of PTX mutants (each changes one token of one instruction or
directive line of a PTX file) and the two judges the benchmark ``benchmarks/ptx_mutants.py``
and ``tests/isa/test_verify.py`` compare: ptxas (accept/reject of the mutant text) and gpusim's
load-time checks (:func:`isa.parse`: the grammar, the opcode table and the verifier
:mod:`isa.verify`, everything ``gpusim.RawModule(path=...)`` applies before a launch).
Imports the standard library and :mod:`isa` only (no cupy, no engine).

Mutation operators (a mutant applies exactly one, to one token of one line):

========== ==========================================================================================
operator    what it does
========== ==========================================================================================
type        replaces a type suffix (``.u32``) of a mnemonic or declaration by another type of the
            file's vocabulary or of a small base set (``.b64``, ``.f32``, ``.pred``, ``.u16`` ...)
space       replaces a state space (``.global``) by another (``.shared``, ``.param``, ``.const``,
            ``.local``)
modifier    replaces another suffix of a mnemonic (``.rn``, ``.lt``, ``.v4``, ``.wide`` ...) by a
            modifier the file uses elsewhere
opcode      replaces the base opcode (``add``) by another opcode the file uses
register    replaces a register operand (also inside ``[...]`` and ``{...}``) by another register the
            file declares; half of the time one declared with another type
special     replaces a special register (``%tid.x``) by another special register or component
            (``%tid.w``, ``%laneid.x``, ``%ntid`` ...)
immediate   replaces a number (an immediate, an address offset, an array size, an alignment) by
            another (0, 1, -1, 3, 4096, 2^32, 1.5, ``0f3F800000``, ``0d3FF0000000000000`` ...)
symbol      replaces a symbol (parameter, variable, label) by another symbol of the file
vector      drops one or more elements of a vector operand ``{a, b, c, d}``
header      replaces the number of ``.version``, the name of ``.target`` or the size of
            ``.address_size`` (``1.0``, ``7.8``, ``9.1``, ``sm_80``, ``sm_90a``, ``sm_999``, 32 ...)
delete      deletes one token (with its comma, for an operand)
duplicate   duplicates one token (``.u32.u32``, ``%r1, %r1, %r2``)
========== ==========================================================================================

Lines eligible: instructions, ``.reg``/``.param``/variable declarations and the module header;
not comments, labels, braces, ``.loc``/``.file``/``.pragma`` or the ``.section`` debug data.
The generator is deterministic in (files, n, seed): :func:`generate` draws the file uniformly,
then the operator by :data:`WEIGHTS`, then a site of that operator in the file, and draws again
when the file has no such site or the mutant equals the original.
"""

from __future__ import annotations

import functools
import os
import random
import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["Mutant", "WEIGHTS", "project_ptx_files", "generate", "judge_ptxas", "judge_gpusim", "judge",
           "is_unsupported"]

ROOT = Path(__file__).resolve().parents[1]

#: Relative weight of each operator (see the module docstring).
WEIGHTS = {"type": 12, "space": 6, "modifier": 8, "opcode": 6, "register": 14, "special": 4, "immediate": 8,
           "symbol": 5, "vector": 4, "header": 5, "delete": 14, "duplicate": 14}

_PTX_DIRS = ("gpusim/suite/ptx/", "tests/corpus/ptx/", "tests/functional/ptx/", "tests/timing/ptx/",
             "validation/probes/", "validation/reports/")

_TOKEN = re.compile(
    r"(?P<reg>%[A-Za-z_$][\w$]*(?:\.[A-Za-z_]\w*)?)"
    r"|(?P<suffix>\.[A-Za-z_][\w:]*)"
    r"|(?P<imm>0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|0[xX][0-9a-fA-F]+U?|\d+\.\d*(?:[eE][+-]?\d+)?|\d+U?)"
    r"|(?P<name>[A-Za-z_$][\w$]*)"
    r"|(?P<punct>[{}\[\](),;|+\-!@<>=:])")

_TYPES = frozenset({"pred", "b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
                    "f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "u16x2", "s16x2"})
_SPACES = frozenset({"global", "shared", "param", "const", "local", "shared::cta", "shared::cluster",
                     "param::entry"})
_DIRECTIVES = frozenset({"reg", "param", "entry", "visible", "extern", "weak", "align", "version", "target",
                         "address_size", "maxntid", "reqntid", "minnctapersm", "maxnreg", "ptr", "func",
                         "noreturn", "pragma", "loc", "file"})
_SPECIALS = frozenset({"tid", "ntid", "ctaid", "nctaid", "laneid", "warpid", "nwarpid", "smid", "nsmid",
                       "gridid", "clock", "clock64", "lanemask_eq", "lanemask_le", "lanemask_lt", "lanemask_ge",
                       "lanemask_gt", "globaltimer", "dynamic_smem_size", "total_smem_size"})

_BASE_TYPES = (".b64", ".f32", ".pred", ".u16", ".s64", ".b32", ".u32", ".f16", ".f64", ".s32", ".b16", ".u8")
_BASE_SPACES = (".global", ".shared", ".param", ".const", ".local")
_BASE_IMMS = ("0", "1", "-1", "3", "4096", "4294967296", "1.5", "0f3F800000", "0d3FF0000000000000", "0x7fffffff")
#: Largest register count a mutant writes into ``.reg .b32 %r<N>`` (ptxas takes gigabytes for 2^31).
_MAX_REG_COUNT = 100_000
_BASE_SPECIALS = ("%tid.x", "%tid.w", "%tid", "%ntid.y", "%ctaid.z", "%laneid", "%laneid.x", "%warpid",
                  "%clock64", "%nctaid.w", "%smid.y", "%lanemask_lt")
_VERSIONS = ("1.0", "6.0", "7.0", "7.8", "8.0", "8.3", "8.7", "9.0", "9.1", "10.0")
_TARGETS = ("sm_50", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_999")
_ADDRESS_SIZES = ("32", "16", "128")


@dataclass(frozen=True)
class Mutant:
    """One mutant: ``file`` (repository-relative), 1-based ``line``, the ``op`` applied, the
    line before and after, and the whole mutated text (``text``)."""

    file: str
    line: int
    op: str
    before: str
    after: str
    text: str
    arch: str = "sm_90"

    def summary(self) -> dict:
        """The mutant without its full text (for reports)."""
        d = asdict(self)
        del d["text"]
        return d


@dataclass
class _Tok:
    kind: str      # reg, special, type, space, modifier, directive, imm, opcode, name, punct
    text: str
    start: int
    end: int


class _FileInfo:
    """Tokens of the eligible lines of one PTX file and its vocabulary per token class."""

    def __init__(self, rel: str, text: str):
        self.rel, self.text = rel, text
        self.lines = text.split("\n")
        self.toks: dict[int, list[_Tok]] = {}
        self.vocab: dict[str, set[str]] = {k: set() for k in ("reg", "special", "type", "space", "modifier",
                                                              "imm", "opcode", "name")}
        self.reg_type: dict[str, str] = {}
        in_section = False
        for no, raw in enumerate(self.lines):
            code = raw.split("//")[0]
            s = code.strip()
            if s.startswith(".section"):
                in_section = True
            if in_section:
                if s.startswith("}"):
                    in_section = False
                continue
            if not s or s.startswith((".loc", ".file", ".pragma", "/*", "*", "}", "{")) or re.fullmatch(r"[\w$]+:", s):
                continue
            toks = self._tokens(code)
            if toks:
                self.toks[no] = toks
        for no, toks in self.toks.items():
            if toks[0].text == ".reg" and len(toks) > 2:
                ty = next((t.text for t in toks if t.kind == "type"), None)
                for t in toks:
                    if t.kind == "reg" and ty:
                        base = t.text
                        m = re.search(rf"{re.escape(base)}\s*<\s*(\d+)\s*>", self.lines[no][t.start:])
                        count = int(m.group(1)) if m else 0
                        for i in range(1, min(count, 8)) if count else [None]:
                            self.reg_type[base if i is None else f"{base}{i}"] = ty
        self.vocab["reg"] = {r for r in self.vocab["reg"]} | set(self.reg_type)

    def _tokens(self, code: str) -> list[_Tok]:
        out: list[_Tok] = []
        first_word = True
        for m in _TOKEN.finditer(code):
            kind, text = m.lastgroup, m.group()
            if kind == "reg":
                kind = "special" if text[1:].split(".")[0] in _SPECIALS else "reg"
            elif kind == "suffix":
                word = text[1:]
                kind = ("type" if word in _TYPES else "space" if word in _SPACES else
                        "directive" if word in _DIRECTIVES or not out else "modifier")
            elif kind == "name" and first_word:
                kind = "opcode"
            if kind != "punct":
                first_word = False
            out.append(_Tok(kind, text, m.start(), m.end()))
            if kind in self.vocab:
                self.vocab[kind].add(text)
        # A guard '@%p' is followed by the opcode.
        for i, t in enumerate(out):
            if t.kind == "reg" and i and out[i - 1].text in ("@", "!") and i + 1 < len(out) and out[i + 1].kind == "name":
                out[i + 1].kind = "opcode"
                self.vocab["name"].discard(out[i + 1].text)
                self.vocab["opcode"].add(out[i + 1].text)
        if out and out[0].kind == "directive":  # no opcodes in declarations
            for t in out:
                if t.kind == "opcode":
                    t.kind = "name"
        return out

    # ------------------------------------------------------------------ sites
    def sites(self, op: str) -> list[tuple[int, int]]:
        """(line, token index) pairs an operator applies to."""
        out = []
        for no, toks in self.toks.items():
            head = toks[0].text
            for i, t in enumerate(toks):
                if op == "header":
                    if head in (".version", ".target", ".address_size") and i == 1:
                        out.append((no, i))
                elif head in (".version", ".target", ".address_size"):
                    continue
                elif op in ("type", "space", "modifier", "opcode", "special") and t.kind == op:
                    out.append((no, i))
                elif op == "register" and t.kind == "reg":
                    out.append((no, i))
                elif op == "immediate" and t.kind == "imm":
                    out.append((no, i))
                elif op == "symbol" and t.kind == "name":
                    out.append((no, i))
                elif op == "vector" and t.text == "{" and head not in (".reg",) and i > 0:
                    out.append((no, i))
                elif op in ("delete", "duplicate") and t.kind != "punct":
                    out.append((no, i))
        return out

    def mutate(self, op: str, no: int, i: int, rng: random.Random) -> str | None:
        """The mutated line, or None if the operator has nothing to do at this site."""
        line = self.lines[no]
        toks = self.toks[no]
        t = toks[i]

        def repl(new: str) -> str:
            return line[:t.start] + new + line[t.end:]

        def choose(pool) -> str | None:
            pool = sorted(set(pool) - {t.text})
            return rng.choice(pool) if pool else None

        if op == "header":
            head = toks[0].text
            new = choose(_VERSIONS if head == ".version" else _TARGETS if head == ".target" else _ADDRESS_SIZES)
            return repl(new) if new else None
        if op == "type":
            new = choose(self.vocab["type"] | set(_BASE_TYPES))
        elif op == "space":
            new = choose(self.vocab["space"] | set(_BASE_SPACES))
        elif op in ("modifier", "opcode", "symbol"):
            new = choose(self.vocab[{"symbol": "name"}.get(op, op)])
        elif op == "special":
            new = choose(self.vocab["special"] | set(_BASE_SPECIALS))
        elif op == "immediate":
            pool = self.vocab["imm"] | set(_BASE_IMMS)
            if toks[0].text == ".reg":
                pool = {x for x in pool if x.isdigit() and int(x) <= _MAX_REG_COUNT}
            new = choose(pool)
        elif op == "register":
            mine = self.reg_type.get(t.text)
            others = [r for r, ty in self.reg_type.items() if ty != mine] if rng.random() < 0.5 else []
            new = choose(others or self.reg_type)
        elif op == "vector":
            j = next((k for k in range(i + 1, len(toks)) if toks[k].text == "}"), None)
            if j is None:
                return None
            items = [x.text for x in toks[i + 1:j] if x.text != ","]
            if len(items) < 2:
                return None
            keep = sorted(rng.sample(range(len(items)), rng.randrange(1, len(items))))
            return line[:t.start] + "{" + ", ".join(items[k] for k in keep) + "}" + line[toks[j].end:]
        elif op == "delete":
            start, end = t.start, t.end
            if t.kind not in ("type", "space", "modifier", "directive"):
                if i + 1 < len(toks) and toks[i + 1].text == "," and (i == 0 or toks[i - 1].text != ","):
                    end = toks[i + 1].end
                elif i and toks[i - 1].text == ",":
                    start = toks[i - 1].start
            return line[:start] + line[end:]
        elif op == "duplicate":
            if t.kind in ("type", "space", "modifier", "directive"):
                return line[:t.end] + t.text + line[t.end:]
            if t.kind == "opcode":
                return line[:t.end] + " " + t.text + line[t.end:]
            return line[:t.end] + ", " + t.text + line[t.end:]
        else:
            raise ValueError(f"unknown mutation operator {op!r}")
        return repl(new) if new else None


def project_ptx_files(root: Path = ROOT) -> list[str]:
    """The project's PTX files (``git ls-files '*.ptx'`` under the suite, the tests' PTX, the probes
    and the front ends' reports), repository-relative and sorted."""
    try:
        out = subprocess.run(["git", "ls-files", "*.ptx"], cwd=root, capture_output=True, text=True, check=True).stdout
        files = out.split()
    except (OSError, subprocess.CalledProcessError):
        files = [str(p.relative_to(root)) for p in root.rglob("*.ptx")]
    return sorted(f for f in files if f.startswith(_PTX_DIRS))


_INFO: dict[str, _FileInfo] = {}


def _info(rel: str, root: Path) -> _FileInfo:
    if rel not in _INFO:
        _INFO[rel] = _FileInfo(rel, (root / rel).read_text())
    return _INFO[rel]


def generate(n: int, seed: int = 0, files: list[str] | None = None, root: Path = ROOT) -> list[Mutant]:
    """``n`` mutants, deterministic in (``files``, ``n``, ``seed``); ``files`` defaults to
    :func:`project_ptx_files`. No two mutants are the same text."""
    rng = random.Random(seed)
    files = sorted(files if files is not None else project_ptx_files(root))
    ops, weights = list(WEIGHTS), list(WEIGHTS.values())
    out: list[Mutant] = []
    seen: set[tuple[str, int, str]] = set()
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > 50 * n + 1000:
            raise RuntimeError(f"could not draw {n} distinct mutants from {len(files)} files")
        info = _info(rng.choice(files), root)
        op = rng.choices(ops, weights)[0]
        sites = info.sites(op)
        if not sites:
            continue
        no, i = rng.choice(sites)
        after = info.mutate(op, no, i, rng)
        before = info.lines[no]
        if after is None or after == before or (info.rel, no, after) in seen:
            continue
        seen.add((info.rel, no, after))
        lines = list(info.lines)
        lines[no] = after
        m = _TARGET.search(info.text)
        out.append(Mutant(info.rel, no + 1, op, before.strip(), after.strip(), "\n".join(lines),
                          m.group(1) if m else "sm_90"))
    return out


# ---------------------------------------------------------------------- judges
_TARGET = re.compile(r"^\s*\.target\s+(sm_\w+)", re.M)


def _limit_memory() -> None:
    """Cap a ptxas child at 4 GiB of address space (a mutant must not take the machine's memory)."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@functools.lru_cache(maxsize=4)
def _ptxas_archs(ptxas: str) -> frozenset[str]:
    """The ``-arch`` values (``sm_NN``) this ptxas takes, from ``ptxas --help``."""
    try:
        out = subprocess.run([ptxas, "--help"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(re.findall(r"'(sm_\w+)'", out))


def judge_ptxas(text: str, ptxas: str = "ptxas", fallback_arch: str = "sm_90", workdir: str | None = None,
                timeout: float = 120) -> tuple[bool, str]:
    """ptxas's verdict on PTX ``text``: (accepted, first error line or ""). Compiles to a
    temporary cubin for the GPU the text's ``.target`` names (``-arch`` = the target), or, when
    this ptxas has no such GPU (``sm_70``, ``sm_999``), for ``fallback_arch`` (the original
    file's target): PTX for an older target assembles for a newer GPU."""
    m = _TARGET.search(text)
    arch = m.group(1) if m and m.group(1) in _ptxas_archs(ptxas) else fallback_arch
    with tempfile.TemporaryDirectory(dir=workdir) as d:
        src, out = os.path.join(d, "m.ptx"), os.path.join(d, "m.cubin")
        Path(src).write_text(text)
        try:
            r = subprocess.run([ptxas, f"-arch={arch}", src, "-o", out], capture_output=True, text=True,
                               timeout=timeout, preexec_fn=_limit_memory)
        except subprocess.TimeoutExpired:
            return False, "ptxas timed out"
    if r.returncode == 0:
        return True, ""
    msg = [ln for ln in (r.stderr + r.stdout).splitlines() if "error" in ln.lower() or "fatal" in ln.lower()]
    return False, (msg[0] if msg else (r.stderr + r.stdout).strip().splitlines()[0] if (r.stderr + r.stdout).strip()
                   else f"ptxas exit status {r.returncode}").replace(src, "m.ptx")


def judge_gpusim(text: str, filename: str = "m.ptx") -> tuple[bool | None, str]:
    """gpusim's load-time verdict on PTX ``text`` (:func:`isa.parse`, what ``RawModule`` applies
    before a launch): (True, "") accepted, (False, "file:line:col: reason") a located
    :class:`isa.PTXError`, (None, traceback line) any other exception (a bug)."""
    from isa import parse
    from isa.errors import PTXError

    try:
        parse(text, filename)
    except PTXError as exc:
        return False, str(exc).splitlines()[0]
    except Exception as exc:  # noqa: BLE001 - a raw traceback is what the benchmark looks for
        return None, f"{type(exc).__name__}: {exc}"
    return True, ""


def is_unsupported(gpusim_message: str) -> bool:
    """True if a gpusim rejection says the construct is outside gpusim's subset (not invalid PTX)."""
    low = gpusim_message.lower()
    return any(w in low for w in ("not supported", "unsupported", "does not support", "gpusim allows", "gpusim loads"))


def judge(m: Mutant, ptxas: str = "ptxas") -> dict:
    """Both verdicts on one mutant, as a dict: the mutant's summary, ``ptxas`` and ``gpusim``
    (True/False/None), their messages and ``agree``."""
    p_ok, p_msg = judge_ptxas(m.text, ptxas, m.arch)
    g_ok, g_msg = judge_gpusim(m.text, m.file)
    return {**m.summary(), "ptxas": p_ok, "ptxas_msg": p_msg, "gpusim": g_ok, "gpusim_msg": g_msg,
            "agree": g_ok is not None and p_ok == g_ok}
