"""Static timing facts of each instruction of a kernel, computed once per launch.

Owns: :class:`Timed`, per PC: the functional-unit class (from the opcode table,
``OpSpec.unit_of``) with its latency and issue interval (from the GPU config,
keyed by unit name), the registers the instruction reads and writes (the
scoreboard's view), and the stall reason a consumer of its results reports
while waiting (Nsight Compute's warp-state names, NCU #warp-stall-reasons):

* ``long_scoreboard``: results of global or local memory (the L1TEX path);
* ``short_scoreboard``: results of MIO operations: shared memory, shuffles,
  and the special-function unit (MUFU);
* ``wait``: results of fixed-latency pipes (ALU, FMA, FP64), whose
  dependencies the compiler encodes as fixed stall counts.

SASS-aware costs (given the kernel's :class:`gpusim.sass.KernelSass`): an instruction takes
one issue cycle per SASS instruction ptxas makes of it (none for one it folds into others,
such as a ``mov`` or an ``ld.param``). One that ptxas expands into several (``rem.u32``,
``div.rn.f32``, a ``setp`` with its ``ULDC``...) issues its SASS one at a time
(:attr:`Timed.micro`): each on its own pipe for its own interval, once the registers it reads
from earlier SASS of the expansion are ready (operands from the listing,
:attr:`gpusim.sass.SassInstr.reads`), while the scheduler issues other warps in the gaps.
``rem.u32``'s 17 SASS hold the XU pipe three times for 8 cycles and deliver the remainder
125 cycles after the first issues, where the H100 takes 137.5 cycles a dependent step
(``validation/probes/xu_pipe.py``). Latencies: the unit's (:func:`sass_unit`), except where
``sm.sass_latency`` names the instruction (``IMAD.HI``: 9, measured against IMAD's 4.2), and a
predicate reaches its readers (a guarded instruction, a branch, ``selp``) after
``sm.predicate_latency`` (14 on the H100: an ``ISETP`` -> ``@P VIADD`` chain takes 18.2 cycles a
step), at the PTX level (``setp``) too. An if-converted branch costs, when all its threads take
it, the guarded SASS it jumps over. An integer instruction that becomes one SASS instruction
issues to the pipe of that instruction: ``IMAD*`` (integer multiplies, and the
``IMAD.MOV``/``IMAD.IADD``/``IMAD.SHL`` ptxas uses to balance pipes) to ``imad``, the
FMA-heavy pipe at half rate on sm_86/sm_90, uniform-datapath (``UMOV``, ``USHF``), constant
and special-register reads to none, the rest to ``alu``. Without SASS costs every instruction
takes one issue cycle (the PTX-only model).

Imports isa, gpusim.config, gpusim.functional.memops and gpusim.sass only; never simpy or cupy.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from gpusim.config import GPUConfig
from gpusim.functional.memops import state_space
from gpusim.sass import KernelSass
from isa.ir import Addr, Instr, Kernel, PredPair, Reg, Vec
from isa.opcodes import Kind

__all__ = ["Timed", "decode", "EXIT", "wgmma_steps", "unused_atom_results", "aggregated_atoms"]

#: Kinds the issue logic treats specially (:attr:`Timed.plain` is False for them).
_SPECIAL = frozenset({Kind.BRA, Kind.BAR, Kind.EXIT, Kind.FENCE, Kind.CPASYNC, Kind.WGMMA})
#: Kinds whose first operand is a destination register.
_WRITES_FIRST = {Kind.ALU, Kind.MOV, Kind.LD, Kind.CVTA, Kind.SHFL, Kind.VOTE, Kind.ACTIVEMASK, Kind.MMA, Kind.WGMMA}


@dataclass(frozen=True, slots=True)
class Timed:
    """Timing facts of one PC.

    Attributes:
        pc: the instruction's index; ``len(kernel.instrs)`` for the implicit return.
        kind: the opcode table's execution kind.
        unit: functional-unit class name (a key of ``config.sm.units``).
        latency: cycles until a dependent instruction may use a fixed-latency result.
        interval: cycles the unit's pipe stays busy per warp instruction.
        regs: registers read or written (a later instruction waits until each is ready).
        writes: registers written.
        reason: stall reason of an instruction waiting for this one's results.
        space: state space of a memory instruction (``"global"``, ``"shared"``,
            ``"local"``, ``"param"``, ``"generic"``), else ``""``.
        cache_l1: loads that may be cached in L1 (not ``.cg``/``.cv``/``.volatile``).
        queue: the SM memory queue it enters: ``"mio"`` (shared memory), ``"lg"``
            (global, local and generic: the L1TEX path) or ``""``.
        slots: issue cycles: SASS instructions per warp execution (1 without SASS costs).
        skip_slots: an if-converted branch: issue cycles when every active thread takes it.
        shared_width: a shared-memory load's bytes per lane as ptxas emits it (``LDS``: 4,
            ``LDS.64``: 8, ``LDS.128``: 16): where ptxas merged several ``ld.shared.f32`` of
            consecutive words into one ``LDS.128``, the load it attributes that to takes the
            vector load's data stage, and the others, ``0``, none (their words come with it);
            ``-1`` without SASS costs (the PTX access as it is).
        micro: an expansion's SASS instructions after its first (:func:`_expansion`), each
            issued on its own (one issue cycle, its own pipe for its own interval, unit ``""``
            for none) ``latency`` cycles after the one before it at the earliest: the gaps of
            the expansion's dependency schedule. The warp issues nothing else in between, and
            the instruction's results are ready ``latency`` (this Timed's) cycles after the
            last one issued; ``()`` for an instruction that issues at once.
        skip_shared: an if-converted branch: the guarded shared loads and stores among them, each of
            which still passes the SM's shared-memory data stage (one cycle); and
        skip_wait: whether the warp then waits for those loads (a later guarded SASS reads a
            load's result: its scoreboard wait is static) (:meth:`gpusim.sass.KernelSass.skipped_shared`).
        forward: an instruction ptxas folded into the SASS that uses its result (``slots == 0``,
            no memory access): the registers it reads. It waits for none of them and holds no
            issue; its results are ready when the latest of them is (with that one's stall
            reason), so a later instruction waits for them where the SASS does. ``nvcc``'s ``ld;
            add; ld; add`` chains, whose ``add``s ptxas folds into ``IADD3``s after all the
            ``LDG``s (``validation/probes/load_exposure.py``'s ``late``), otherwise issue each load
            only when the one before it has returned.
        holds: other pipes of the sub-partition the instruction holds, ``(unit, cycles)`` each,
            from ``sm.sass_pipes`` (H100: an ``IMAD.WIDE`` holds the ``fma`` pipe 8 cycles, as long as
            its own ``imad`` pipe, and the ``alu`` 4; ``validation/probes/ldg_cost.py``); ``()`` for most.
        plain: derived, not an argument: the instruction needs none of the issue logic's special
            cases (not a branch, barrier, exit, fence, ``cp.async`` or ``wgmma``, no ``micro``,
            no ``skip_slots``), so :meth:`gpusim.timing.sm.SM.issue` books it on its short path.
        pipe: derived: the key of the scheduler's ``unit_free`` this instruction waits for:
            ``unit``, or ``None`` (a key never booked, always free) for one ptxas folds away
            (``slots == 0``: it uses no pipe).
    """

    pc: int
    kind: Kind
    unit: str
    latency: int
    interval: int
    regs: tuple[str, ...]
    writes: tuple[str, ...]
    reason: str
    space: str = ""
    cache_l1: bool = True
    queue: str = ""
    slots: int = 1
    skip_slots: int = 0
    shared_width: int = -1
    micro: tuple["Timed", ...] = ()
    skip_shared: int = 0
    skip_wait: bool = False
    forward: tuple[str, ...] = ()
    holds: tuple[tuple[str, int], ...] = ()
    plain: bool = field(init=False, repr=False, compare=False)
    pipe: str | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "plain", self.kind not in _SPECIAL and not self.micro and not self.skip_slots)
        object.__setattr__(self, "pipe", self.unit if self.slots else None)
        # interned register names: a warp's scoreboard (a dict by name) then compares them by identity
        object.__setattr__(self, "regs", tuple(map(sys.intern, self.regs)))
        object.__setattr__(self, "writes", tuple(map(sys.intern, self.writes)))
        object.__setattr__(self, "forward", tuple(map(sys.intern, self.forward)))


def _names(op) -> list[str]:
    if isinstance(op, Reg):
        return [op.name]
    if isinstance(op, Addr):
        return [op.base.name] if isinstance(op.base, Reg) else []
    if isinstance(op, Vec):
        return [r.name for r in op.items if r is not None]
    if isinstance(op, PredPair):
        return [r.name for r in (op.first, op.second) if r is not None]
    return []


#: SASS that occupies none of the sub-partition's math pipes (besides the uniform datapath's ``U*``
#: instructions): constant loads, special-register reads, control flow.
_NO_PIPE = frozenset({"LDC", "S2R", "S2UR", "R2UR", "CS2R", "BRA", "BSSY", "BSYNC", "EXIT", "NOP", "WARPSYNC"})

#: Kinds whose instructions ptxas may fold into the SASS that uses their results (Timed.forward).
_FOLDABLE = frozenset({Kind.ALU, Kind.MOV, Kind.CVTA})

#: Kinds that issue at least one SASS instruction whatever ptxas's line attribution says.
_ALWAYS_ISSUE = {Kind.BAR, Kind.EXIT, Kind.ATOM, Kind.ST}


def sass_unit(opcode: str) -> str:
    """The unit class (a key of ``config.sm.units``) whose latency and pipe a SASS instruction of
    ``opcode`` gets: ``MUFU`` and the conversions ``I2F``/``F2I`` -> sfu (the XU pipe), ``D*``
    double precision -> fp64, float arithmetic -> fma, ``IMAD*`` and ``VIADD`` -> imad (the
    FMA-heavy pipe), the rest -> alu (memory instructions are timed by the memory model and do
    not occur inside expansions).

    ``VIADD`` (sm_90's integer add) is not an ALU instruction, measured on the H100
    (``validation/probes/int_pipes.py``): 8 warps per sub-partition running ``VIADD`` + ``SHF`` +
    ``LOP3`` chains take 32.8 cycles a round of 8 chains, as ``IMAD`` + ``SHF`` + ``LOP3`` (32.5):
    the 16 ``SHF``/``LOP3`` at 2 cycles each, the adds beside them; three ALU instructions would
    take 48. Its pipe's rate is taken as IMAD's: ptxas splits a run of adds evenly between
    ``VIADD`` and ``IADD3`` (ALU), as it would between two pipes of one rate.

    ``I2F.U32.RP``, ``F2I.FTZ.U32.TRUNC`` and ``MUFU.RCP`` share one pipe at 8 cycles a warp
    instruction, measured on the H100 (``validation/probes/xu_pipe.py``): chains of each alone take
    64.0 cycles a round of 8, the three in one chain 192.0. sm_90's ``I2FP.F32.U32`` (what a plain
    ``__uint2float_rn`` becomes) is not on it: 16.6 cycles a round of 8, an ALU rate."""
    op = opcode.split(".", 1)[0]
    if op in ("MUFU", "I2F", "F2I"):
        return "sfu"
    if op in ("IMAD", "VIADD"):
        return "imad"
    if op in ("DADD", "DFMA", "DMUL", "DSETP", "DMNMX"):
        return "fp64"
    if op in ("FADD", "FFMA", "FMUL", "FSETP", "FSEL", "FMNMX", "FCHK", "FSWZADD"):
        return "fma"
    return "alu"


def _by_prefix(table: dict, opcode: str):
    """``table``'s entry for the longest key that is ``opcode`` or a prefix of it ending at a dot
    (``IMAD.HI`` matches ``IMAD.HI.U32``, not ``IMAD.HIX``), else None."""
    best = max((p for p in table if opcode == p or opcode.startswith(p + ".")), key=len, default=None)
    return None if best is None else table[best]


def sass_latency(opcode: str, cfg: GPUConfig, default: int | None = None) -> int:
    """Cycles until an instruction that depends on a SASS instruction of ``opcode`` may issue:
    ``cfg.sm.sass_latency``'s entry for its longest matching prefix (H100: ``IMAD.HI`` 9), else
    ``default``, else its unit's latency (:func:`sass_unit`)."""
    lat = _by_prefix(cfg.sm.sass_latency, opcode)
    if lat is not None:
        return lat
    return default if default is not None else cfg.sm.units[sass_unit(opcode)].latency


def _pipes(opcode: str, unit: str, interval: int, cfg: GPUConfig) -> tuple[int, tuple[tuple[str, int], ...]]:
    """(issue interval, :attr:`Timed.holds`) of a SASS instruction of ``opcode`` on ``unit``'s pipe:
    ``cfg.sm.sass_pipes``'s entry for it (its longest matching prefix) replaces ``interval`` with
    its own unit's cycles and lists the other pipes it holds; else ``interval`` and none."""
    pipes = _by_prefix(cfg.sm.sass_pipes, opcode)
    if not pipes:
        return interval, ()
    return pipes.get(unit, interval), tuple((u, c) for u, c in pipes.items() if u != unit)


def _no_pipe(opcode: str) -> bool:
    return opcode.split(".", 1)[0] in _NO_PIPE or opcode.startswith("U")


def _expansion(pc: int, ops: tuple[str, ...], regs, cfg: GPUConfig) -> tuple[Timed, tuple[Timed, ...], int, str]:
    """The issue schedule of an expansion's SASS ``ops`` (``regs``: their (reads, writes), or
    ``()``: each then depends on the one before it): SASS ``k`` issues at ``e_k``, one cycle
    after ``k - 1`` at the earliest and once every register it reads or writes that an earlier
    one of ``ops`` writes is ready (its latency, :func:`sass_latency`; a predicate that a compare
    (``ISETP``, ``FSETP``, ``PLOP3``...) writes, ``cfg.sm.predicate_latency``; a carry out, the
    latency). Returns (the first SASS as a :class:`Timed`, the rest as
    ``Timed.micro`` with their gaps ``e_k - e_(k-1)`` as ``latency``, the cycles from the last
    one's issue until every result is ready, the unit whose result is ready last)."""
    ready: dict[str, tuple[int, str]] = {}
    steps = []
    prev, chain = -1, (0, "alu")
    for k, op in enumerate(ops):
        unit = sass_unit(op)
        lat = sass_latency(op, cfg)
        if regs:
            reads, writes = regs[k]
            e = max([prev + 1] + [ready[r][0] for r in reads + writes if r in ready])
        else:
            writes = ()
            e = max(prev + 1, chain[0])
        done = e + lat
        compare = op.split(".", 1)[0].endswith("SETP") or op.startswith("PLOP3")  # not a carry out (IADD3)
        for r in writes:
            pred = compare and r.startswith(("P", "UP"))
            ready[r] = (e + max(lat, cfg.sm.predicate_latency or 0) if pred else done, unit)
        chain = (done, unit)
        pipe, (interval, holds) = ("", (0, ())) if _no_pipe(op) else (unit, _pipes(op, unit, cfg.sm.units[unit].issue_interval, cfg))
        steps.append(Timed(pc, Kind.ALU, pipe, e - prev if k else 0, interval, (), (), "wait", holds=holds))
        prev = e
    end, slow = max(list(ready.values()) + [chain], key=lambda x: x[0])
    return steps[0], tuple(steps[1:]), max(end - prev, 1), slow


def _one(ins: Instr, cfg: GPUConfig, sass: KernelSass | None = None) -> Timed:
    kind = ins.spec.kind
    unit = ins.spec.unit_of(ins)
    ops = ins.operands
    writes = _names(ops[0]) if kind in _WRITES_FIRST or (kind is Kind.ATOM and ins.op == "atom") else []
    reads = [n for op in (ops[1:] if writes else ops) for n in _names(op)]
    if ins.guard is not None:
        reads.append(ins.guard.name)
    space = state_space(ins) if kind in (Kind.LD, Kind.ST, Kind.ATOM) else ""
    if ins.op == "cp.async":
        space = "global"  # LDGSTS: an L1TEX global request (its shared store is booked with it)
    spec = cfg.sm.units[unit]
    if space in ("global", "local", "generic"):
        reason = "long_scoreboard"
    elif space == "shared" or kind is Kind.SHFL or unit == "sfu":
        reason = "short_scoreboard"
    else:
        reason = "wait"
    cache_l1 = not any(m in ins.mods for m in ("cg", "cv", "volatile"))
    queue = "mio" if space == "shared" else "lg" if space and space not in ("param", "const") else ""
    latency, slots, skip, shared_width, micro, holds = spec.latency, 1, 0, -1, (), ()
    interval = spec.issue_interval
    if sass is not None:
        sass_ops = sass.ops[ins.index]
        if len(sass_ops) == 1 and not space and unit in ("alu", "imad") and sass_unit(sass_ops[0]) in ("alu", "imad"):
            # the pipe ptxas chose: a mov or add made IMAD.MOV/IMAD.IADD issues to the FMA-heavy
            # pipe, a multiply by a power of two made SHF/LEA to the ALU
            unit = sass_unit(sass_ops[0])
            spec = cfg.sm.units[unit]
            latency, interval = spec.latency, spec.issue_interval
            if _no_pipe(sass_ops[0]):  # a uniform-datapath (UMOV, USHF), constant or special-register read
                unit, interval = "", 0
        slots = max(len(sass_ops), 1 if kind in _ALWAYS_ISSUE or space in ("global", "shared", "local") else 0)
        if kind is Kind.LD and space == "shared":
            loads = [o.split(".") for o in sass_ops if o.split(".")[0] in ("LDS", "LDSM")]
            if not loads:  # its words come with another load's vector LDS (or it was removed)
                shared_width, slots = 0, len(sass_ops)
            elif all(o[0] == "LDS" for o in loads):  # LDS, LDS.64, LDS.128 (ldmatrix's LDSM: as in PTX)
                shared_width = max(next((int(x) // 8 for x in o[1:] if x.isdigit()), 4) for o in loads)
        elif not space and sass_ops and unit != "sfu" and all(sass_unit(o) == "sfu" for o in sass_ops):
            unit, spec = "sfu", cfg.sm.units["sfu"]  # a cvt ptxas made I2F/F2I: the XU pipe's
            latency, interval = spec.latency, spec.issue_interval
        skip = sass.skipped_slots(ins.index)
        if slots == 0:
            latency = 0  # folded into the instructions that use its result
        elif len(sass_ops) > 1 and not space and kind in (Kind.ALU, Kind.MOV):
            regs = sass.regs[ins.index] if sass.regs else ()
            # its own schedule sets when results (a predicate too) are ready after its last SASS
            first, micro, latency, slow = _expansion(ins.index, sass_ops, regs, cfg)
            unit, interval, slots, holds = first.unit, first.interval, 1, first.holds
            if slow == "sfu":
                reason = "short_scoreboard"
        elif len(sass_ops) == 1:
            latency = sass_latency(sass_ops[0], cfg, latency)
            if unit:  # (H100: an IMAD.WIDE holds the FMA pipes and the ALU, Timed.holds)
                interval, holds = _pipes(sass_ops[0], unit, interval, cfg)
    if kind is Kind.WGMMA:
        # A warp's share of wgmma.m64nNk16 (16 x N x 16) runs as N/8 m16n8k16 steps back to back on its
        # sub-partition's tensor pipe, sm.wgmma_step_interval cycles each (h100: 4, the measured dense-f16
        # peak; mma.sync's is 6); its D is ready a pipe latency after the last step starts (ASSUMED).
        step = cfg.sm.wgmma_step_interval or spec.issue_interval
        steps = wgmma_steps(ins)
        latency = spec.latency + (steps - 1) * step
        interval = steps * step
        # wgmma.mma_async is asynchronous: the warp goes on while the op waits in its tensor pipe's queue
        # (SM._wgmma), and its accumulator registers are off limits until a wgmma.wait_group (PTX ISA 9.0
        # "wgmma.mma_async"): back-to-back wgmmas into one accumulator chain in the pipe, not through the
        # scoreboard. The instructions after the wait still wait for D.
        acc = set(writes)
        reads = [r for r in reads if r not in acc]
    if (ins.op == "setp" or ins.ty == "pred") and latency and not micro:
        latency = max(latency, cfg.sm.predicate_latency or 0)
    regs = reads if kind is Kind.WGMMA else reads + writes
    forward = ()
    if sass is not None and slots == 0 and not space and kind in _FOLDABLE:
        regs, forward = [], tuple(dict.fromkeys(reads))  # Timed.forward
    loads, stores, wait = sass.skipped_shared(ins.index) if sass is not None else (0, 0, False)
    return Timed(ins.index, kind, unit, latency, interval, tuple(dict.fromkeys(regs)),
                 tuple(writes), reason, space, cache_l1, queue, slots, skip, shared_width, micro,
                 loads + stores, wait, forward, holds)


def wgmma_steps(ins: Instr) -> int:
    """The m16n8k16 steps of one warp's share of a ``wgmma.mma_async.m64nNk16``: N / 8."""
    return int(next(m for m in ins.mods if m.startswith("m64n"))[4:-3]) // 8


def decode(kernel: Kernel, cfg: GPUConfig, sass: KernelSass | None = None) -> list[Timed]:
    """:class:`Timed` for every PC of ``kernel``, plus one for the implicit return; with
    ``sass`` (what ptxas makes of ``kernel``), SASS-aware issue cycles and latencies."""
    out = [_one(ins, cfg, sass) for ins in kernel.instrs]
    out.append(EXIT(len(kernel.instrs), cfg))
    return out


def unused_atom_results(kernel: Kernel) -> frozenset[int]:
    """PCs of the ``atom`` instructions whose result register no instruction of ``kernel`` reads:
    ptxas makes them ``RED`` (no value returned; Nsight Compute counts them as ``op_red``), as it
    does NVRTC's ``atomicAdd`` whose result is unused."""
    read: set[str] = set()
    for ins in kernel.instrs:
        writes = ins.spec.kind in _WRITES_FIRST or (ins.spec.kind is Kind.ATOM and ins.op == "atom")
        read.update(n for op in (ins.operands[1:] if writes else ins.operands) for n in _names(op))
        if ins.guard is not None:
            read.add(ins.guard.name)
    return frozenset(ins.index for ins in kernel.instrs
                     if ins.spec.kind is Kind.ATOM and ins.op == "atom" and ins.operands
                     and not any(n in read for n in _names(ins.operands[0])))


def aggregated_atoms(kernel: Kernel, sass: KernelSass | None) -> frozenset[int]:
    """PCs of the global atomics that ptxas warp-aggregates (its listing shows ``VOTEU`` and
    ``POPC`` among the instruction's SASS: e.g. ``atomicAdd(counter, 1)`` on a uniform address,
    which the H100 then receives once per warp); empty without a ptxas listing."""
    if sass is None or sass.source != "ptxas":
        return frozenset()
    return frozenset(ins.index for ins in kernel.instrs if ins.spec.kind is Kind.ATOM
                     and any(o.startswith("VOTEU") for o in sass.ops[ins.index])
                     and any(o.startswith("POPC") for o in sass.ops[ins.index]))


def EXIT(pc: int, cfg: GPUConfig) -> Timed:
    """The implicit return after the last instruction (a branch-unit instruction)."""
    b = cfg.sm.units["branch"]
    return Timed(pc, Kind.EXIT, "branch", b.latency, b.issue_interval, (), (), "wait")
