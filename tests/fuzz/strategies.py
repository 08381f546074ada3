"""Fuzz inputs for gpusim (issue #29, part 7): mutated PTX, command lines, experiment and sweep
TOML files, and sequences of API calls; and the runners that feed them to gpusim and say how
each ended.

Owns: one generator per kind, written against a small :class:`Chooser` interface so that the
same code serves hypothesis (:func:`strategy`, which draws every choice from hypothesis, so
failures shrink) and the long run of ``benchmarks/fuzz.py`` (:class:`RandomChooser`, a seeded
``random.Random``), and one runner per kind. A runner returns ``"accepted"`` (the input was
taken: it loaded, launched, exited 0) or ``"rejected"`` (a :class:`gpusim.GpusimError`, or for
the command line one error line and exit status 1, 2 or 130), and raises :class:`RawTraceback`
for anything else: an exception that is not a GpusimError, a traceback or an "internal error"
printed by the command line, an exit status outside 0/1/2/130, or an experiment error that does
not name its file.

Inputs are plain data (str, int, float, bool, None, lists, dicts, bytes), so they print, pickle
and replay; every input runs in a fresh temporary folder (``tmp``) holding the files it names.
Imports gpusim's public API, the CLI's ``main`` and the experiment/sweep loaders; never simpy or
cupy itself (timing-mode launches import simpy through the API).
"""

from __future__ import annotations

import contextlib
import io
import random
import re
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

import gpusim
from gpusim.errors import GpusimError

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("ptx", "cli", "experiment", "api")


class RawTraceback(AssertionError):
    """An input ended in a way the rules forbid (a raw Python error, a traceback printed, an
    unexpected exit status, an unlocated error). ``kind``: the exception type or the status;
    ``where``: the last frame (file:line function) or a short description; ``text``: details."""

    def __init__(self, kind: str, where: str, text: str):
        self.kind, self.where, self.text = kind, where, text
        super().__init__(f"{kind} at {where}\n{text}")


# ------------------------------------------------------------------ choosers
class Chooser:
    """Where a generator's choices come from."""

    def int(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def choice(self, seq: Sequence) -> Any:
        return seq[self.int(0, len(seq) - 1)]

    def chance(self, percent: int) -> bool:
        return self.int(0, 99) < percent

    def text(self, max_len: int = 12) -> str:
        """A short string of odd characters (ASCII, controls, non-ASCII letters, symbols, emoji)."""
        return "".join(self.choice(_ODD_CHARS) for _ in range(self.int(0, max_len)))

    def raw_bytes(self, max_len: int = 12) -> bytes:
        return bytes(self.int(0, 255) for _ in range(self.int(1, max_len)))


class RandomChooser(Chooser):
    """Choices from a seeded ``random.Random`` (the benchmark)."""

    def __init__(self, seed: Any):
        self.rng = random.Random(seed)

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)


class DrawChooser(Chooser):
    """Choices drawn from hypothesis (inside ``st.composite``), so failing inputs shrink."""

    def __init__(self, draw: Callable):
        from hypothesis import strategies as st

        self.draw, self.st = draw, st

    def int(self, lo: int, hi: int) -> int:
        return self.draw(self.st.integers(lo, hi))


_ODD_CHARS = list("aZ09_-.,;:%$@!{}[]()<>=+*/\\\"' \t\n") + ["\x00", "\x7f", "\x1b", "é", "ß", "Ω", "∞", "→", "中",
                                                                  "\u202e", "\ufeff", "\U0001f642", "ǅ"]


def strategy(kind: str):
    """The hypothesis strategy of inputs of ``kind`` (one of :data:`KINDS`)."""
    from hypothesis import strategies as st

    gen = GENERATORS[kind]
    return st.composite(lambda draw: gen(DrawChooser(draw)))()


def generate(kind: str, seed: Any) -> Any:
    """The input of ``kind`` that ``seed`` gives (the benchmark's inputs; deterministic)."""
    return GENERATORS[kind](RandomChooser(f"{kind}:{seed}"))


def run(kind: str, inp: Any, tmp: Path) -> str:
    """Feed ``inp`` to gpusim in folder ``tmp``: ``"accepted"``/``"rejected"``, or raise RawTraceback."""
    return RUNNERS[kind](inp, Path(tmp))


def _raw(exc: BaseException) -> RawTraceback:
    """A RawTraceback for an exception that escaped the API: its type and its last frame in gpusim/isa."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/gpusim/" in f.filename or "/isa/" in f.filename] or frames
    last = ours[-1] if ours else None
    where = f"{Path(last.filename).name}:{last.lineno} {last.name}" if last else "?"
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-12:])
    return RawTraceback(type(exc).__name__, where, text)


def _api(fn: Callable[[], Any]) -> str:
    """Call ``fn``: ``"accepted"`` if it returns, ``"rejected"`` on a GpusimError, else RawTraceback."""
    try:
        fn()
    except GpusimError:
        return "rejected"
    except RawTraceback:
        raise
    except BaseException as exc:  # noqa: BLE001 - anything else is the finding
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise _raw(exc) from None
    return "accepted"


# ------------------------------------------------------------------ mutated PTX
#: The project's small PTX files (a few KB each), the seeds of the mutants.
PTX_SEEDS = ("tests/functional/ptx/warp.ptx", "tests/functional/ptx/control.ptx", "tests/functional/ptx/memory.ptx",
             "gpusim/suite/ptx/conv.ptx", "tests/corpus/ptx/bits.ptx", "tests/corpus/ptx/device_globals.ptx",
             "tests/corpus/ptx/loads.ptx", "tests/corpus/ptx/const_stencil.ptx", "tests/corpus/ptx/atomics.ptx",
             "tests/corpus/ptx/int64_fp64.ptx", "tests/timing/ptx/timing.ptx", "gpusim/suite/ptx/micro_global.ptx",
             "tests/functional/ptx/cp_async_ops.ptx", "validation/probes/first_load.ptx",
             "validation/probes/l1_stride.ptx")
_PTX_TEXT: dict[str, str] = {}


def ptx_seed(name: str) -> str:
    if name not in _PTX_TEXT:
        _PTX_TEXT[name] = (ROOT / name).read_text()
    return _PTX_TEXT[name]


def _opcodes() -> list[str]:
    from isa.opcodes import OPCODES

    return sorted(OPCODES)


_PTX_WORDS = [
    ".u8", ".u16", ".u32", ".u64", ".s8", ".s16", ".s32", ".s64", ".b8", ".b16", ".b32", ".b64", ".b128", ".f16",
    ".f16x2", ".bf16", ".f32", ".f64", ".pred", ".v2", ".v4", ".v8", ".global", ".shared", ".local", ".param", ".const",
    ".reg", ".entry", ".func", ".visible", ".extern", ".weak", ".version", ".target", ".address_size", ".maxntid",
    ".reqntid", ".minnctapersm", ".align", ".volatile", ".relaxed", ".acquire", ".release", ".gpu", ".sys", ".cta",
    ".sync", ".aligned", ".uni", ".rn", ".rz", ".ftz", ".sat", ".approx", ".full", ".wide", ".lo", ".hi", ".cc",
    ".eq", ".ne", ".lt", ".ge", ".and", ".or", ".xor", ".add", ".min", ".max", ".cas", ".exch", ".inc", ".down",
    ".up", ".bfly", ".idx", ".all", ".any", ".ballot", ".to", ".nc", ".ca", ".cg", ".cs", ".L2::128B", ".loc", ".file",
    "%r1", "%r2", "%r0", "%r99999", "%rd1", "%rd2", "%f1", "%fd1", "%p1", "%p0", "%h1", "%rs1", "%tid.x", "%tid.w",
    "%ntid.y", "%ctaid.z", "%nctaid.x", "%laneid", "%warpid", "%clock", "%clock64", "%smid", "%lanemask_lt",
    "%dynamic_smem_size", "%nope", "%", "%r<4>", "%r<100000000>", "%r<0>", "%r<-1>", "WARP_SZ",
    "sm_90", "sm_80", "sm_999", "sm_90a", "sm_10", "1.0", "9.0", "9.9", "99.0", "8.0", "32", "64",
    "0", "1", "-1", "2", "3", "7", "31", "32", "33", "255", "256", "1024", "65535", "65536", "0x7fffffff",
    "0xffffffff", "0x100000000", "0xffffffffffffffff", "18446744073709551616", "2147483648", "-2147483649",
    "9999999999999999999999999", "0f7F800000", "0fFFFFFFFF", "0f3F800000", "0d7FF0000000000000", "1e400", "1.5",
    "-0.0", "0.5", "nan", "inf", "0b1010", "017",
    ",", ";", "{", "}", "[", "]", "(", ")", "<", ">", "+", "-", "|", "@", "!", "=", ":", "_", "$", ".",
    "//", "/*", "*/", '"', "\\", "\x00", "\t", "é", "∞", "中", "\U0001f642", "\u202e", "label", "$L__BB0_1",
    "loop:", "bra", "ret", "exit", "call", "[%rd1]", "[%rd1+4]", "[%rd1+-1]", "[%r1]", "[a]", "[x+0x7fffffff]",
    "{%r1, %r2}", "{%r1, %r2, %r3, %r4}", "{%r1}", "_", "__cudart_builtin__",
]
#: Dotted suffixes (types, state spaces, modifiers) put into or taken out of a mnemonic or directive.
_SUFFIXES = [w for w in _PTX_WORDS if w.startswith(".")] + [".x", ".w", ".v3", ".b1", ".u128", ".f8", ".nope"]
_VOCAB: list[str] | None = None


def _vocab() -> list[str]:
    global _VOCAB
    if _VOCAB is None:
        _VOCAB = _PTX_WORDS + _opcodes()
    return _VOCAB


_TOKEN = re.compile(r"\s+|[,;{}\[\]()<>]|[^\s,;{}\[\]()<>]+")
_NUMBER = re.compile(r"^-?(?:0[xX][0-9a-fA-F]+|\d+)$")


def _tokens(line: str) -> list[str]:
    return _TOKEN.findall(line)


def mutate_ptx(c: Chooser, text: str) -> str:
    """One to three mutations of ``text``: token delete/duplicate/swap/replace (vocabulary of PTX
    tokens and garbage), numbers replaced by extreme ones, line delete/duplicate/swap,
    truncation, random bytes or unicode inserted."""
    lines = text.split("\n")
    for _ in range(c.int(1, 3)):
        op = c.int(0, 9)
        i = c.int(0, len(lines) - 1)
        toks = _tokens(lines[i])
        words = [k for k, t in enumerate(toks) if not t.isspace()]
        if op <= 3 and words:
            k = c.choice(words)
            if op == 0:
                del toks[k]
            elif op == 1:
                toks.insert(k, toks[k] + " ")
            elif op == 2 and len(words) > 1:
                j = c.choice(words)
                toks[k], toks[j] = toks[j], toks[k]
            else:
                toks[k] = c.choice(_vocab())
            lines[i] = "".join(toks)
        elif op == 4 and c.chance(50) and any("." in toks[k][1:] for k in words):
            k = c.choice([k for k in words if "." in toks[k][1:]])
            parts = toks[k].split(".")
            j = c.int(1, len(parts) - 1)
            r = c.int(0, 2)
            if r == 0:
                del parts[j]
            else:
                parts.insert(j + r - 1, c.choice(_SUFFIXES).lstrip("."))
            toks[k] = ".".join(parts)
            lines[i] = "".join(toks)
        elif op == 4:
            nums = [k for k, t in enumerate(toks) if _NUMBER.match(t)]
            if nums:
                toks[c.choice(nums)] = c.choice(["0", "-1", "1", "3", "33", "4096", "65537", "2147483647",
                                                 "2147483648", "4294967295", "4294967296", "0xffffffffffffffff",
                                                 "18446744073709551616", "99999999999999999999999", "-99999"])
                lines[i] = "".join(toks)
            else:
                toks.insert(c.int(0, len(toks)), " " + c.choice(_vocab()) + " ")
                lines[i] = "".join(toks)
        elif op == 5:
            del lines[i]
            if not lines:
                lines = [""]
        elif op == 6:
            lines.insert(i, lines[i])
        elif op == 7:
            j = c.int(0, len(lines) - 1)
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 8:
            joined = "\n".join(lines)
            lines = joined[:c.int(0, len(joined))].split("\n")
        else:
            pos = c.int(0, len(lines[i]))
            junk = c.text(6) if c.chance(50) else c.raw_bytes(6).decode("latin-1")
            lines[i] = lines[i][:pos] + junk + lines[i][pos:]
    return "\n".join(lines)


def gen_ptx(c: Chooser) -> dict:
    """A mutant of one of :data:`PTX_SEEDS` and how to launch its kernels."""
    seed = c.choice(PTX_SEEDS)
    return {"seed": seed, "text": mutate_ptx(c, ptx_seed(seed)), "kernels": [c.int(0, 99) for _ in range(c.int(1, 2))],
            "grid": c.int(1, 2), "block": c.choice([32, 64]), "scalar": c.choice([0, 1, 3, 32, 64, 1000]),
            "smem": c.choice([0, 0, 256, 4096]), "sass": c.chance(10)}


def _ptx_args(kernel, scalar: int) -> tuple:
    """Arguments for every .param: 64 KiB zero-filled arrays for 8-byte parameters, ``scalar`` of the
    parameter's width otherwise."""
    args = []
    for p in kernel.params:
        if p.size == 8 and p.ty in ("u64", "b64", "s64"):
            args.append(gpusim.zeros(1 << 14, np.uint32))
        elif p.size in (1, 2, 4, 8):
            kind = "f" if p.ty.startswith("f") and p.size >= 2 else "u"
            args.append(np.dtype(f"{kind}{p.size}").type(scalar))
        else:
            args.append(np.zeros(1, f"V{p.size}")[0])
    return tuple(args)


def run_ptx(inp: dict, tmp: Path) -> str:
    """Load the mutant with ``RawModule(code=...)``; if it loads, launch up to two of its kernels
    (small grids, small watchdog budgets) in functional and in timing mode."""
    holder: dict = {}

    def load():
        holder["mod"] = gpusim.RawModule(code=inp["text"])

    if _api(load) == "rejected":
        return "rejected"
    mod = holder["mod"]
    names = mod.kernel_names
    if not names:
        return "accepted"
    outcome = "accepted"
    for mode in ("functional", "timing"):
        for pick in inp["kernels"]:
            name = names[pick % len(names)]

            def launch(mode=mode, name=name):
                with gpusim.Device("h100", mode, max_steps=4000, max_cycles=40_000, regs_per_thread=32,
                                   sass=inp["sass"], sampling=False):
                    k = mod.get_function(name)
                    k((inp["grid"],), (inp["block"],), _ptx_args(k.kernel, inp["scalar"]), shared_mem=inp["smem"])

            if _api(launch) == "rejected":
                outcome = "rejected"
    return outcome


# ------------------------------------------------------------------ command lines
#: A tiny kernel the command lines run (files are written into each input's folder by _files).
TINY_PTX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 a, .param .u32 n)
{
.reg .b32 %r<4>;
.reg .b64 %rd<4>;
.reg .pred %p<2>;
ld.param.u64 %rd1, [a];
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
setp.ge.u32 %p1, %r2, %r1;
@%p1 bra done;
cvta.to.global.u64 %rd2, %rd1;
mul.wide.u32 %rd3, %r2, 4;
add.s64 %rd2, %rd2, %rd3;
st.global.u32 [%rd2], %r2;
done:
ret;
}
"""
TINY_EXPERIMENT = 'ptx = "k.ptx"\nkernel = "k"\ngrid = 1\nblock = 32\nargs = ["u32[64]", "u32=32"]\n'
TINY_SWEEP = ('name = "tiny"\n[[kernels]]\nptx = "k.ptx"\nkernel = "k"\ngrid = 1\nblock = 32\n'
              'args = ["u32[64]", "u32=32"]\n[fixed]\nmode = "functional"\n[sweep]\nblock = [32, 64]\n')


def _files(tmp: Path) -> None:
    """The files command lines and experiments may name, in ``tmp``."""
    (tmp / "k.ptx").write_text(TINY_PTX)
    (tmp / "bad.ptx").write_text(TINY_PTX.replace("ret;", "ret"))
    (tmp / "bin.ptx").write_bytes(b"\xff\xfe\x00garbage\x80")
    (tmp / "k.toml").write_text(TINY_EXPERIMENT)
    (tmp / "sweep.toml").write_text(TINY_SWEEP)
    (tmp / "bad.toml").write_text("ptx = [\n")
    (tmp / "bin.toml").write_bytes(b"\xff\xfe\x00\x80ptx = 1")
    (tmp / "gpu.toml").write_text("name = 'x'\n")
    (tmp / "k.txt").write_text("hello")
    (tmp / "results.csv").write_text("a,b\n1,2\n")
    (tmp / "empty.csv").write_text("")
    (tmp / "adir").mkdir(exist_ok=True)
    (tmp / "adir.ptx").mkdir(exist_ok=True)
    (tmp / "exists.npz").write_bytes(b"")


_CASES = ("reduce_v0", "reduce_v3", "copy_offset", "warp_vote", "divergent_branch", "transpose_conflict", "conv1d_naive")
_PATHS = ("k.ptx", "bad.ptx", "bin.ptx", "k.toml", "bad.toml", "bin.toml", "k.txt", "missing.ptx", "missing.toml",
          "adir", "adir.ptx", "", "k.cubin", "é.ptx", "adir/", "results.csv", "empty.csv", "nodir/x.ptx")
_OUTS = ("out.npz", "out.png", "out.json", "out.html", "out.csv", "exists.npz", "adir", "nodir/x.out", "", "k.ptx",
         "é.png", "out")
_SMALL_INTS = ("1", "2", "3", "16", "32", "64")
#: Integers a number option may get: small ones, and ones that are wrong (a huge one is beyond
#: any device's memory, never a long legitimate run).
_BAD_INTS = ("0", "-1", "-5", "x", "", "1.5", "1e3", "0x10", "0b11", "1_0", "99999999999999999999999", " 7",
             "٣", "nan", "inf", "--", "1,2", "2**40", "+3", "-0")
_GRIDS = ("1", "2", "32", "64", "1,1", "2,1,1", "0", "-1", "x", "", "1.5", "1,,1", ",", "1,2,3,4", "2147483648",
          "99999999999999999999", "32,32,32", "65536,1", "1e2", " 32 ", "١")
_ARGS = ("u32[64]", "u32=32", "u32=-1", "u32=4294967296", "s8=200", "f16=1e6", "f32=nan", "f32=1e400", "f32[0]",
         "f32[64]:random", "u32[64]:range", "f32[64]:fill=abc", "f32[64]:fill=1e400", "u32[64]:fill=-1",
         "u32[99999999999999999]", "u32[4,4]:ones", "u32[]", "u32[,]", "b32=1", "x", "", "u64=0x10", "u32=1.5",
         "u32[64]:zeros", "f64[2,0]", "u32[3]:fill=inf", "s64=-9223372036854775809", "f32=inf", "u32=", "u8[64]:fill=300")
_SETS = ("sm.max_warps=48", "sm.max_warps=-1", "sm.max_warps=abc", "sm.max_warps=1e99", "x=1", "noequals", "=",
         "sm..x=1", "sm.scheduler.policy=zzz", "sm.scheduler.policy=lrr", "l2.size_bytes=0", "dram.capacity_bytes=1",
         "sm_count=0", "sm_count=1", "max_grid_dims=[1,1,1]", "sm=1", "name=", "sm.max_warps=", "sm.max_warps=[1]",
         "sm.max_warps=true", "l1.carveout_kib=-5", "sm.max_warps=99999999999999999999999")
_GPUS = ("h100", "a100", "v100", "nope", "", "gpu.toml", "bad.toml", "missing.toml", "adir", "H100", "bin.toml")


def _value(c: Chooser, pool: Sequence[str]) -> str:
    return c.text(8) if c.chance(8) else c.choice(pool)


def _int_value(c: Chooser) -> str:
    return c.choice(_SMALL_INTS) if c.chance(50) else _value(c, _BAD_INTS)


#: Per sub-command: positional choices, then (option, value pool) pairs. Sub-commands that run long
#: simulations or reach a GPU by design (``validate`` without ``--from``, ``calibrate``, ``sweep run``
#: of a real experiment, ``lesson NAME``) get only inputs that are refused before any run.
def _cli_spec() -> dict[str, tuple]:
    ints = "INT"
    common = [("-n", ints), ("--seed", ints), ("--gpu", _GPUS), ("--set", _SETS), ("--regs", ints),
              ("--launch", ints), ("--kernel", ("k", "nope", "", "é")), ("--grid", _GRIDS), ("--block", _GRIDS),
              ("--shared-mem", ints), ("--arg", _ARGS)]
    targets = _CASES + ("k.ptx", "k.toml", "bad.ptx", "missing.ptx", "adir", "nope", "", "bin.ptx")
    return {
        "run": ((None,) + _PATHS[:10] + ("k.ptx",) * 6, [
            ("--case", _CASES + ("nope", "")), ("--group", ("reduce", "nope", "")), ("--list", None), ("-n", ints),
            ("--seed", ints), ("--gpu", _GPUS), ("--mode", ("functional", "timing", "x", "")),
            ("--no-sampling", None), ("--set", _SETS), ("--kernel", ("k", "k", "nope", "")), ("--grid", _GRIDS),
            ("--block", _GRIDS), ("--shared-mem", ints), ("--arg", _ARGS), ("--max-steps", ints),
            ("--max-cycles", ints), ("--save", _OUTS), ("--force", None)]),
        "isa": ((None, "add", "ld", "bra", "nope", "", "é", "mma", "wgmma", "ADD", "add.u32"), []),
        "occupancy": ((None, "k.ptx", "bad.ptx", "missing.ptx", "adir", "bin.ptx"), [
            ("--kernel", ("k", "nope", "")), ("--gpu", _GPUS), ("--set", _SETS),
            ("--block-size", ("256", "32,64", "0", "-1", "x", "", "1025", "32:1024:32", "1..4", "1e3", "64,")),
            ("--regs", ("32", "0", "256", "x", "", "-1", "16,32", "1e9")),
            ("--smem", ("0", "1024", "-1", "x", "", "1e12", "48K")), ("--dynamic-smem", ("0", "1024", "-1", "x", "")),
            ("--max-dynamic-smem", ("0", "99999999999", "x", "-3")), ("--carveout", ("0", "100", "-1", "x", "101", "")),
            ("--barriers", ("0", "16", "17", "-1", "x")), ("--plot", _OUTS), ("--csv", _OUTS), ("--force", None),
            ("--format", ("table", "json", "x"))]),
        "validate": ((None,), [("--from", ("missing", "adir", "k.txt", "bad.toml", "results.csv")), ("--out", _OUTS),
                               ("--cases", _CASES + ("nope",)), ("--tier", ("small", "scale", "x")),
                               ("--max-threads", ints), ("--jobs", ints), ("--gpu", _GPUS), ("--force", None)]),
        "sweep": (("points", "table", "plot", "run"), [
            ("--x", ("block", "nope", "")), ("--y", ("sm__cycles_elapsed.avg", "nope", "")), ("--hue", ("gpu", "x")),
            ("--where", ("block=32", "x", "=", "block=")), ("--rows", ("block", "nope")), ("--cols", ("gpu", "")),
            ("--value", ("block", "nope")), ("-o", _OUTS), ("--force", None)]),
        "trace": (targets, common + [("-o", _OUTS), ("--time", ("cycles", "real", "x")), ("--force", None)]),
        "report": (targets, common + [("-o", _OUTS), ("--title", ("t", "", "é<script>")), ("--force", None)]),
        "diagram": (targets, common + [("-o", _OUTS), ("--line", ints), ("--cta", ints), ("--warp", ints),
                                       ("--instance", ints), ("--sm", ints),
                                       ("--cycles", ("0:100", "x", "", "5", "100:0", "-1:2", "0:99999999999")),
                                       ("--force", None)]),
        "source": (targets, common + [("--html", _OUTS), ("--all-lines", None), ("--force", None)]),
        "lesson": ((None, "nope", "", "é"), [("--list", None), ("--size", ("small", "x", "", "1")), ("-o", _OUTS),
                                             ("--no-html", None), ("--gpu", _GPUS)]),
        "step": (_CASES + ("nope", "", "k.ptx"), [("--warp", ints), ("--cta", ints), ("-n", ints), ("--launch", ints),
                                                  ("--gpu", _GPUS), ("--max", ints), ("--only-memory", None)]),
    }


_SPEC: dict | None = None
_DIAGRAMS = ("banks", "coalescing", "warps", "roofline", "stalls", "nope")


def gen_cli(c: Chooser) -> list[str]:
    """An argv for ``gpusim``: a real sub-command, a positional from its vocabulary, and a few of its
    options with fuzzed values; sometimes a word dropped, an unknown option, or a random word."""
    global _SPEC
    if _SPEC is None:
        _SPEC = _cli_spec()
    cmd = c.choice(sorted(_SPEC))
    positionals, options = _SPEC[cmd]
    argv = [cmd]
    if cmd == "diagram":
        argv.append(c.choice(_DIAGRAMS))
    if cmd == "sweep":
        sub = c.choice(positionals)
        argv += [sub, c.choice(("sweep.toml", "bad.toml", "missing.toml", "k.toml", "adir", "bin.toml", "k.ptx",
                                "results.csv", "empty.csv"))]
        if sub == "run":  # a sweep experiment that can run is refused first, by an existing --out
            argv += ["--out", "adir", "--jobs", "1"] if argv[-1] == "sweep.toml" else []
            options = [("--jobs", "INT"), ("--no-progress", None), ("--resume", None), ("--retry-failed", None)]
        elif sub == "points":
            options = []
    else:
        pos = c.choice(positionals)
        if pos is not None:
            argv.append(pos)
    for _ in range(c.int(0, 5)):
        if not options:
            break
        opt, pool = c.choice(options)
        argv.append(opt)
        if pool == "INT":
            argv.append(_int_value(c))
        elif pool is not None:
            argv.append(_value(c, pool))
    if cmd in ("trace", "report", "diagram", "source", "step", "run") and "-n" not in argv and c.chance(90):
        argv += ["-n", c.choice(("32", "64"))]
    if cmd == "run" and "--max-steps" not in argv:
        argv += ["--max-steps", "20000"]
    if cmd == "lesson" and len(argv) > 1 and argv[1] not in ("nope", "", "é") and "--list" not in argv:
        argv.append("--list")
    r = c.int(0, 19)
    if r == 0 and len(argv) > 1:
        del argv[c.int(1, len(argv) - 1)]
    elif r == 1:
        argv.insert(c.int(1, len(argv)), c.choice(("--nope", "-", "--", "-x", c.text(5))))
    return argv


_STATUSES = (0, 1, 2, 130)


def run_cli(argv: list[str], tmp: Path) -> str:
    """``gpusim.cli.main(argv)`` in folder ``tmp`` (stdout and stderr captured, stdin empty):
    ``"accepted"`` on status 0, ``"rejected"`` on 1/2/130 with no traceback; else RawTraceback."""
    import os
    import sys

    from gpusim.cli import main

    _files(tmp)
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    stdin = sys.stdin
    os.chdir(tmp)
    try:
        sys.stdin = io.StringIO("")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(list(argv))
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except BaseException as exc:  # noqa: BLE001 - main let an exception escape
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise _raw(exc) from None
    finally:
        os.chdir(cwd)
        sys.stdin = stdin
    text = err.getvalue()
    if "Traceback (most recent call last)" in text or "internal error" in text or status not in _STATUSES:
        frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', text)
        last = [f for f in frames if "/gpusim/" in f[0] or "/isa/" in f[0]] or frames
        where = f"{Path(last[-1][0]).name}:{last[-1][1]} {last[-1][2]}" if last else f"status {status}"
        exc_line = [ln for ln in text.splitlines() if re.match(r"^\w+(\.\w+)*(Error|Exception|Interrupt)\b", ln)]
        kind = exc_line[-1].split(":")[0] if exc_line else f"status {status}"
        raise RawTraceback(kind, where, f"argv: {argv}\nstatus: {status}\n{text[-3000:]}")
    return "accepted" if status == 0 else "rejected"


# ------------------------------------------------------------------ experiment and sweep TOML files
_TOML_VALUES = ('"k.ptx"', '"missing.ptx"', '"adir"', '"k.txt"', '"bin.ptx"', '"bad.ptx"', '"k.cu"', '"k.py"',
                '"/"', '""', '"é\\u0000"', "1", "0", "-1", "32", "1.5", "-0.0", "nan", "inf", "true", "false",
                "9223372036854775807", "-9223372036854775808", "[]", "[1]", "[1, 2]", "[1, 2, 3, 4]", "[0, 1, 1]",
                "[-1]", '["x"]', '["u32[64]"]', "[[1]]", "{}", '{ a = 1 }', "1979-05-27", "07:32:00",
                '"h100"', '"nope"', '"k"', '"u32[64]"', '[1.5, 2]', "[true]", '"32"', "4294967296")
_EXP_KEYS = ("ptx", "python", "kernel", "grid", "block", "shared_mem", "gpu", "seed", "set", "args", "meta", "nope")
_SWEEP_KEYS = ("name", "metrics", "kernels", "fixed", "sweep", "zip", "points", "nope")
_SWEEP_PARAMS = ("block", "grid", "gpu", "mode", "shared_mem", "regs_per_thread", "n", "threads", "sampling",
                 "set.sm.max_warps", "set.l2.size_bytes", "set.sm.scheduler.policy", "set.nope", "nope", "seed",
                 "max_steps", "set", "kernel", "args")


def _toml_value(c: Chooser) -> str:
    if c.chance(10):
        return '"' + c.text(6).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if c.chance(8):
        return "[" + ", ".join(c.choice(_TOML_VALUES) for _ in range(c.int(0, 40))) + "]"
    return c.choice(_TOML_VALUES)


def gen_experiment(c: Chooser) -> dict:
    """A ``gpusim run`` experiment or a sweep experiment TOML text: the tiny valid one with keys
    deleted, added or given values of other types, argument strings fuzzed, or the text mutated."""
    sweep = c.chance(40)
    base = TINY_SWEEP if sweep else TINY_EXPERIMENT
    lines = base.strip("\n").split("\n")
    for _ in range(c.int(1, 3)):
        op = c.int(0, 6)
        i = c.int(0, len(lines) - 1)
        if op == 0:
            del lines[i]
            if not lines:
                lines = [""]
        elif op in (1, 2) and "=" in lines[i]:
            key = lines[i].split("=")[0].strip()
            lines[i] = f"{key} = {_toml_value(c)}"
        elif op == 3:
            keys = _SWEEP_PARAMS if sweep else _EXP_KEYS
            key = c.choice(keys)
            line = f'"{key}" = {_toml_value(c)}' if "." in key else f"{key} = {_toml_value(c)}"
            lines.insert(c.int(0, len(lines)), line)
        elif op == 4:
            args = ", ".join('"' + _value(c, _ARGS) + '"' for _ in range(c.int(0, 3)))
            lines = [ln for ln in lines if not ln.startswith("args")] + [f"args = [{args}]"]
            if sweep:  # args belong to the kernel table
                lines.insert(next(k for k, ln in enumerate(lines) if ln.startswith("kernel =")) + 1 if any(
                    ln.startswith("kernel =") for ln in lines) else 0, lines.pop())
        elif op == 5:
            if sweep:
                table = c.choice(("[sweep]", "[fixed]", "[[zip]]", "[[points]]", "[[kernels]]", "[set]", "[nope]"))
                lines.append(table)
                lines.append(f'"{c.choice(_SWEEP_PARAMS)}" = {_toml_value(c)}')
            else:
                lines.append(c.choice(("[set]", "[meta]", "[nope]")))
                lines.append(f'"{c.choice(("sm.max_warps", "x", "", "sm_count", "l2.size_bytes"))}" = '
                             f'{_toml_value(c)}')
        else:
            text = mutate_ptx(c, "\n".join(lines))  # token/line/byte mutations work on TOML text too
            lines = text.split("\n")
    return {"sweep": sweep, "text": "\n".join(lines) + "\n", "binary": c.chance(3)}


def run_experiment(inp: dict, tmp: Path) -> str:
    """Load the file (``load_experiment``, or ``load_spec`` and ``expand`` for a sweep); a loaded
    ``gpusim run`` experiment is also run (``gpusim run FILE --max-steps 20000``). A refusal must name
    the file."""
    _files(tmp)
    path = tmp / ("sweep_x.toml" if inp["sweep"] else "exp_x.toml")
    data = inp["text"].encode("utf-8", "surrogatepass")
    path.write_bytes(b"\xff" + data if inp["binary"] else data)

    def load():
        if inp["sweep"]:
            from gpusim.sweep import expand, load_spec

            pts = expand(load_spec(path))
            if len(pts) > 10_000:
                raise RawTraceback("too many points", "expand", f"{len(pts)} points")
        else:
            from gpusim.experiment import load_experiment

            load_experiment(path)

    try:
        outcome = _api(load)
    except RawTraceback:
        raise
    if outcome == "rejected":
        try:
            load()
        except GpusimError as exc:
            if path.name not in str(exc):
                raise RawTraceback("unlocated " + type(exc).__name__, "load",
                                   f"{exc}\n--- file:\n{inp['text']}") from None
        return "rejected"
    if not inp["sweep"]:
        return run_cli(["run", str(path), "--max-steps", "20000"], tmp)
    return outcome


# ------------------------------------------------------------------ API calls
_SHAPES = (0, 1, 3, 64, -1, 3.5, True, None, "4", (), (2, 3), [2, 3], (2, -3), (2, 3.0), 2**40, 2**64, -2**63,
           (2**31, 2**31), np.int32(4), np.float32(4), (1,) * 40, [[]], object, b"4", {"a": 1}, (np.uint8(3), 2))
_DTYPES = (np.float32, np.uint32, np.int8, np.float64, np.complex64, "float32", "u4", "f2", "S4", "U3", object, None,
           "nope", 0, 3.5, np.bool_, "V8", "i8,f4", "m8[s]", "M8[D]", np.dtype([("a", "u4"), ("b", "f4")]), "", "O",
           np.float16, "<u2", ">f8", "V0", "S0")
_VALUES = (0, 1, -1, 2, 3.5, True, None, "x", "", 2**31, 2**63, 2**64, -2**63, 10**30, float("nan"), float("inf"),
           [], (), [1, 2], (1, 2, 3, 4), np.int32(5), np.float32(1.5), np.uint64(2**63), b"bytes", {"a": 1},
           complex(1, 2), "h100", "a100", np.uint8(7), np.float64(2.5), np.int64(-4), np.array([1, 2]),
           np.zeros((2, 2), np.float32), np.array(3), Ellipsis, slice(None), slice(1, None, 2), slice(None, None, -1),
           slice(0, 0), slice(None, None, 0), (0, 0), (Ellipsis, None), [0, 1], [True, False, True],
           np.array([True, False]), 1.0, -0.0, (slice(None), 0), (0, slice(None), None))
_KEYS = (0, -1, 1, 5, 99, -99, slice(None), slice(1, None, 2), slice(None, None, -1), slice(None, None, 0), Ellipsis,
         None, (0, 0), (slice(None), 0), (Ellipsis, None), [0, 1], [True, False, True], 1.5, "x", (0, 0, 0),
         np.int64(1), np.array([0, 2]), True, (None, None, 0), (Ellipsis, Ellipsis), [[0], [1]], 2**64, b"x", ())
_GPU_NAMES = ("h100", "a100", "v100", "rtx3090", "a5000", "nope", "", None, 5, 3.5, b"h100", ["h100"],
              "configs/h100.toml", "/", "missing.toml", "H100")
_OVERRIDES = (None, {}, {"sm.max_warps": 48}, {"sm.max_warps": 10**9}, {"sm.max_warps": "x"}, {"sm.max_warps": -1},
              {"nope": 1}, {"sm": 1}, {"sm.nope": 1}, {"": 1}, {"sm.max_warps": 2.5}, {"sm.max_warps": True},
              {"l2.size_bytes": 0}, {"sm_count": 0}, {"sm_count": 1}, {"max_grid_dims": [1]},
              {"max_grid_dims": [0, 0, 0]}, {"sm.scheduler.policy": "nope"}, {"dram.capacity_bytes": 16},
              {"sm.max_warps": None}, {1: 2}, {"sm.max_warps": [48]}, [("sm.max_warps", 48)], "sm.max_warps=48",
              {"l1.carveout_kib": 10**6}, {"sm.max_threads": 10**12}, {"name": 5}, {"sm.shared_per_block_bytes": -1})
#: A small module the API launches: (.u64 a, .u32 n, .f32 x) writes tid into a[tid] for tid < n.
API_PTX = TINY_PTX.replace(".param .u32 n)", ".param .u32 n, .param .f32 x)")
_OPS = ("device", "create", "asarray", "arange", "getitem", "setitem", "reshape", "view", "astype", "transpose",
        "misc", "launch", "launch", "module", "shared_attr", "full", "like")


def _val(c: Chooser, pool=_VALUES):
    return c.choice(pool)


def gen_api(c: Chooser) -> list[tuple]:
    """A sequence of 1 to 4 API calls with fuzzed arguments (as (operation, arguments) tuples); the
    array calls work on an array made by the previous ``create`` (a 4x6 float32 array by default)."""
    ops = []
    for _ in range(c.int(1, 4)):
        op = c.choice(_OPS)
        if op == "device":
            args = {"gpu": c.choice(_GPU_NAMES), "mode": c.choice(("functional", "timing", "x", None, 1)),
                    "overrides": c.choice(_OVERRIDES)}
            for k in ("max_steps", "max_cycles", "regs_per_thread", "sampling", "sass", "record_events"):
                if c.chance(25):
                    args[k] = _val(c)
            ops.append((op, args))
        elif op == "create":
            ops.append((op, {"fn": c.choice(("zeros", "empty", "ones", "ndarray")), "shape": c.choice(_SHAPES),
                             "dtype": c.choice(_DTYPES), "order": c.choice(("C", "F", "K", "x", None, 1))}))
        elif op == "full":
            ops.append((op, {"shape": c.choice(_SHAPES), "fill": _val(c), "dtype": c.choice(_DTYPES)}))
        elif op == "asarray":
            ops.append((op, {"obj": c.choice(_VALUES + ([1, [2]], [[1, 2], [3]], "abc", [1.5, "x"], np.array(["a"]),
                                                        np.array([1, None], object))),
                             "dtype": c.choice(_DTYPES) if c.chance(40) else None}))
        elif op == "arange":
            ops.append((op, {"args": tuple(_val(c) for _ in range(c.int(1, 3))),
                             "dtype": c.choice(_DTYPES) if c.chance(30) else None}))
        elif op in ("getitem", "setitem"):
            ops.append((op, {"key": c.choice(_KEYS), "value": _val(c)}))
        elif op == "reshape":
            ops.append((op, {"shape": c.choice(_SHAPES + ((-1,), (-1, -1), (6, -1), (4, 6), 24, (2, 2, 6))),
                             "order": c.choice(("C", "F", "A", "x"))}))
        elif op == "view":
            ops.append((op, {"dtype": c.choice(_DTYPES)}))
        elif op == "astype":
            ops.append((op, {"dtype": c.choice(_DTYPES), "copy": c.choice((True, False, None, 2))}))
        elif op == "transpose":
            ops.append((op, {"axes": c.choice(((), (0,), (1, 0), (0, 0), (2, 1), (None,), ("x",), (1.5,), (-1, -2),
                                                ((1, 0),), (99,)))}))
        elif op == "misc":
            ops.append((op, {"what": c.choice(("T", "ravel", "flatten", "copy", "get", "fill", "item", "tolist",
                                               "bool", "int", "float", "squeeze", "swapaxes", "set", "strides",
                                               "cai", "repr", "ascontiguous", "asnumpy", "flags")),
                             "arg": _val(c)}))
        elif op == "launch":
            ops.append((op, {"grid": c.choice((1, 2, (1,), (1, 1, 1), 0, -1, 1.5, (1, 0), (2**31,), 2**64, None, "1",
                                                (1, 1, 1, 1), [], (np.int32(2),), True, (2**31 - 1, 2**16), 2**31)),
                             "block": c.choice((32, 64, (32,), (8, 4), 0, -32, 32.0, 1025, (1024, 2), (32, 1, 65),
                                                None, "32", (33,), np.int64(32), (2**31,), ())),
                             "args": c.choice(("ok", "ok", "few", "many", "types", "host", "list", "none", "str")),
                             "arg": _val(c), "smem": c.choice((0, 0, 256, -1, 2**31, 1.5, None, "x", 10**20,
                                                               np.int32(8), 48 * 1024, 48 * 1024 + 1, True)),
                             "mode": c.choice(("functional", "timing"))}))
        elif op == "module":
            ops.append((op, {"code": c.choice((API_PTX, None, b"x", 5, "", "  .version 8.0", API_PTX[:40], [API_PTX])),
                             "path": c.choice((None, None, None, "missing.ptx", "k.cu.txt", "/", ".", 5, "k.cubin")),
                             "name": c.choice(("k", "nope", "", None, 5, b"k", "k" * 300))}))
        elif op == "shared_attr":
            ops.append((op, {"value": _val(c)}))
        else:
            ops.append((op, {"fn": c.choice(("empty_like", "zeros_like", "ones_like", "full_like")),
                             "a": c.choice(("arr", 3, [1, 2], None, "x", np.zeros((2, 2)))),
                             "dtype": c.choice(_DTYPES) if c.chance(30) else None,
                             "shape": c.choice(_SHAPES) if c.chance(30) else None, "fill": _val(c)}))
    return ops


def _call_api(op: str, a: dict, state: dict) -> None:
    arr = state["arr"]
    if op == "device":
        d = gpusim.Device(**{k: v for k, v in a.items()})
        state["device"] = d
    elif op == "create":
        fn = gpusim.ndarray if a["fn"] == "ndarray" else getattr(gpusim, a["fn"])
        state["arr"] = fn(a["shape"], a["dtype"], order=a["order"])
    elif op == "full":
        state["arr"] = gpusim.full(a["shape"], a["fill"], a["dtype"])
    elif op == "asarray":
        state["arr"] = gpusim.asarray(a["obj"], a["dtype"])
    elif op == "arange":
        gpusim.arange(*a["args"], dtype=a["dtype"])
    elif op == "getitem":
        state["arr"] = arr[a["key"]]
    elif op == "setitem":
        arr[a["key"]] = a["value"]
    elif op == "reshape":
        state["arr"] = arr.reshape(a["shape"], order=a["order"])
    elif op == "view":
        state["arr"] = arr.view(a["dtype"])
    elif op == "astype":
        state["arr"] = arr.astype(a["dtype"], copy=a["copy"])
    elif op == "transpose":
        state["arr"] = arr.transpose(*a["axes"])
    elif op == "misc":
        w, x = a["what"], a["arg"]
        if w in ("T", "strides", "flags"):
            getattr(arr, w)
        elif w in ("ravel", "flatten", "copy"):
            getattr(arr, w)(x if isinstance(x, str) else "C")
        elif w == "get":
            arr.get(order=x if isinstance(x, str) else "C")
        elif w == "fill":
            arr.fill(x)
        elif w in ("item", "tolist"):
            getattr(arr, w)()
        elif w in ("bool", "int", "float"):
            if arr.size == 1:
                {"bool": bool, "int": int, "float": float}[w](arr)
        elif w == "squeeze":
            arr.squeeze(x)
        elif w == "swapaxes":
            arr.swapaxes(x, 0)
        elif w == "set":
            arr.set(x)
        elif w == "cai":
            dict(arr.__cuda_array_interface__)
        elif w == "repr":
            repr(arr)
        elif w == "ascontiguous":
            gpusim.ascontiguousarray(arr, x if isinstance(x, str) else None)
        else:
            gpusim.asnumpy(arr)
    elif op == "launch":
        mod = gpusim.RawModule(code=API_PTX)
        k = mod.get_function("k")
        out = gpusim.zeros(256, np.uint32)
        ok = [out, np.uint32(64), np.float32(1.0)]
        args = {"ok": ok, "few": ok[:2], "many": ok + [out], "types": [out, a["arg"], np.float32(1)],
                "host": [np.zeros(4, np.uint32), np.uint32(1), np.float32(0)], "list": [out, [1], np.float32(0)],
                "none": None, "str": "abc"}[a["args"]]
        with gpusim.Device("h100", a["mode"], max_steps=5000, max_cycles=50_000, regs_per_thread=32, sass=False,
                           sampling=False):
            out2 = gpusim.zeros(256, np.uint32)
            if a["args"] in ("ok", "few", "many", "types"):
                args = [out2] + list(args[1:])
            elif a["args"] == "list":
                args = [out2, [1], np.float32(0)]
            k(a["grid"], a["block"], tuple(args) if isinstance(args, list) else args, shared_mem=a["smem"])
    elif op == "module":
        kw = {k: a[k] for k in ("code", "path") if a[k] is not None}
        m = gpusim.RawModule(**kw)
        m.get_function(a["name"])
    elif op == "shared_attr":
        k = gpusim.RawModule(code=API_PTX).get_function("k")
        k.max_dynamic_shared_size_bytes = a["value"]
    else:
        src = arr if isinstance(a["a"], str) and a["a"] == "arr" else a["a"]
        fn = getattr(gpusim, a["fn"])
        if a["fn"] == "full_like":
            fn(src, a["fill"], a["dtype"], shape=a["shape"])
        else:
            fn(src, a["dtype"], shape=a["shape"])


def run_api(ops: list[tuple], tmp: Path) -> str:
    """Run the calls in order on a fresh default device, in folder ``tmp``; the first refusal ends
    the sequence."""
    import os

    cwd = os.getcwd()
    os.chdir(tmp)
    try:  # a device of 1 GiB: an allocation beyond it is refused at once, never a long legitimate fill
        with gpusim.Device("h100", overrides={"dram.capacity_bytes": 1 << 30}):
            state = {"arr": gpusim.zeros((4, 6), np.float32), "device": None}
            for op, a in ops:
                if _api(lambda op=op, a=a: _call_api(op, a, state)) == "rejected":
                    return "rejected"
        return "accepted"
    finally:
        os.chdir(cwd)


GENERATORS: dict[str, Callable[[Chooser], Any]] = {"ptx": gen_ptx, "cli": gen_cli, "experiment": gen_experiment,
                                                   "api": gen_api}
RUNNERS: dict[str, Callable[[Any, Path], str]] = {"ptx": run_ptx, "cli": run_cli, "experiment": run_experiment,
                                                  "api": run_api}

__all__ = ["KINDS", "RawTraceback", "Chooser", "RandomChooser", "DrawChooser", "strategy", "generate", "run",
           "gen_ptx", "gen_cli", "gen_experiment", "gen_api", "run_ptx", "run_cli", "run_experiment", "run_api",
           "mutate_ptx", "PTX_SEEDS", "TINY_PTX"]


# ------------------------------------------------------------------ pytest side
#: Seconds an input may take before it counts as a hang (the benchmark's --timeout).
HANG_S = 20.0


def fuzz_settings(max_examples: int):
    """hypothesis settings of the fuzz tests: derandomized (CI sees the same inputs every run), no
    example database, no deadline per example (a hang is :data:`HANG_S`, checked by :func:`check`)."""
    from hypothesis import HealthCheck, settings

    return settings(max_examples=max_examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much], print_blob=True)


def check(kind: str, inp: Any) -> str:
    """Run ``inp`` in a fresh temporary folder; fail (RawTraceback, or AssertionError for a hang: more
    than :data:`HANG_S` seconds of this process's CPU time, or 4 times that of wall time, as the
    benchmark counts on a shared machine) as the rules say; return ``"accepted"`` or ``"rejected"``."""
    import tempfile
    import time

    t0, c0 = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory(prefix="gpusim-fuzz-") as tmp:
        outcome = run(kind, inp, Path(tmp))
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    assert cpu < HANG_S and wall < 4 * HANG_S, f"hang: {kind} input took {cpu:.1f} s CPU, {wall:.1f} s: {inp!r}"
    return outcome
