"""Source view: the PTX listing annotated per instruction, like Nsight Compute's source page.

Owns: :func:`source_rows` (one :class:`SourceRow` per PTX instruction: PTX line, CUDA line
from ``.loc`` debug info where present, executions, active-thread efficiency, stall cycles by
reason, shared wavefronts / ideal / bank conflicts, global requests and sectors per request),
:func:`source_text` (terminal table) and :func:`source_html` (one self-contained HTML page,
jinja2 template ``templates/source.html.j2``).

Where each number comes from:

* ``inst_executed`` / ``thread_inst_executed``: the launch result's per-PC arrays
  (``smsp__inst_executed``, ``smsp__thread_inst_executed`` per instruction; guard-false
  threads count, as in Nsight Compute); efficiency = thread / (32 x warp) instructions.
* stall cycles: ``result.stalls[reason][pc]``, warp-cycles spent while that instruction was
  the warp's next one (``smsp__pcsamp_warps_issue_stalled_<reason>``, every cycle sampled);
  ``selected`` (the issue cycles) is listed apart from the stalls.
* shared wavefronts and bank conflicts (``ld``/``st.shared``; atomics excluded as in the
  launch metrics) and global requests and sectors (``ld``/``st.global``): the launch's
  per-instruction counters ``result.pc_metrics`` (Nsight names, e.g.
  ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum``); ideal wavefronts are
  wavefronts minus conflicts (:mod:`gpusim.memmodel.shared` defines conflicts so).

Must not import: simpy, cupy, matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusim.errors import GpusimError
from gpusim.table import format_table
from gpusim.viz.capture import Recording
from gpusim.viz.style import REASONS

__all__ = ["SourceRow", "source_rows", "source_text", "source_html", "template_env"]

STALLS = tuple(r for r in REASONS if r != "selected")


@dataclass
class SourceRow:
    """One PTX instruction of the source view (counts over the whole launch).

    Attributes:
        pc, ptx_line, ptx: instruction index, PTX file line, PTX text.
        cuda: ``"file.cu:LINE"`` from ``.loc`` or ``""``; cuda_text: that source line or ``""``.
        inst_executed, thread_inst_executed: warp- and thread-level executions.
        stalls: reason -> warp-cycles (all :data:`gpusim.viz.style.REASONS`, ``selected`` included).
        shared_wavefronts, shared_ideal, bank_conflicts: sums over warp executions (0 if none).
        global_requests, global_sectors: sums over warp executions (0 if none).
    """

    pc: int
    ptx_line: int
    ptx: str
    cuda: str
    cuda_text: str
    inst_executed: int
    thread_inst_executed: int
    stalls: dict[str, int] = field(default_factory=dict)
    shared_wavefronts: int = 0
    shared_ideal: int = 0
    bank_conflicts: int = 0
    global_requests: int = 0
    global_sectors: int = 0

    @property
    def efficiency_pct(self) -> float | None:
        """Average active threads per executed warp instruction, in % of 32 (``None`` if never run)."""
        return 100.0 * self.thread_inst_executed / (32 * self.inst_executed) if self.inst_executed else None

    @property
    def stall_cycles(self) -> int:
        """Warp-cycles stalled (every reason but ``selected``)."""
        return int(sum(v for k, v in self.stalls.items() if k != "selected"))

    @property
    def top_stall(self) -> str:
        """The reason with the most stall cycles, or ``""``."""
        best = max(((v, k) for k, v in self.stalls.items() if k != "selected" and v), default=None)
        return best[1] if best else ""

    @property
    def sectors_per_request(self) -> float | None:
        return self.global_sectors / self.global_requests if self.global_requests else None


def _cuda_lines(rec: Recording) -> dict[int, list[str]]:
    from pathlib import Path

    out = {}
    for idx, path in rec.source_files.items():
        p = Path(path)
        cands = [p]
        try:
            from gpusim.suite import CUDA_DIR
            cands.append(CUDA_DIR / p.name)
        except ImportError:  # pragma: no cover
            pass
        for c in cands:
            if c.is_file():
                out[idx] = c.read_text(errors="replace").splitlines()
                break
    return out


def source_rows(rec: Recording) -> list[SourceRow]:
    """One :class:`SourceRow` per PTX instruction of ``rec``'s kernel, in PC order.

    Raises:
        gpusim.errors.GpusimError: the recording has no stall data (not a timing-mode launch).
    """
    res = rec.result
    if res.stalls is None:
        raise GpusimError(f"{rec.label}: the source view needs a timing-mode launch (stall cycles per line)")
    k = rec.kernel
    files = _cuda_lines(rec)
    pm = res.pc_metrics

    def both(name: str, pc: int) -> int:  # ld + st
        return int(pm[name.format(op="ld")][pc] + pm[name.format(op="st")][pc])
    rows = []
    for ins in k.instrs:
        pc = ins.index
        cuda_text = ""
        if ins.src is not None and ins.src[0] in files and 0 < ins.src[1] <= len(files[ins.src[0]]):
            cuda_text = files[ins.src[0]][ins.src[1] - 1].strip()
        row = SourceRow(pc, ins.loc.line, ins.to_ptx(), rec.cuda_line(pc), cuda_text,
                        int(res.inst_executed[pc]), int(res.thread_inst_executed[pc]),
                        {r: int(res.stalls[r][pc]) for r in REASONS})
        row.shared_wavefronts = both("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum", pc)
        row.bank_conflicts = both("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum", pc)
        row.shared_ideal = row.shared_wavefronts - row.bank_conflicts
        row.global_requests = both("l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum", pc)
        row.global_sectors = both("l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum", pc)
        rows.append(row)
    return rows


def source_text(rec: Recording, *, only_executed: bool = False) -> str:
    """The source view as a terminal table (one line per PTX instruction) with a header and totals."""
    rows = source_rows(rec)
    table = []
    for r in rows:
        if only_executed and not r.inst_executed:
            continue
        eff = r.efficiency_pct
        table.append((r.ptx_line, r.cuda, r.ptx[:46], r.inst_executed, "" if eff is None else f"{eff:.1f}",
                      r.stall_cycles, r.top_stall,
                      f"{r.shared_wavefronts}/{r.shared_ideal}" if r.shared_wavefronts else "",
                      r.bank_conflicts if r.shared_wavefronts else "",
                      f"{r.sectors_per_request:.2f}" if r.global_requests else ""))
    heads = ["PTX line", "CUDA", "instruction", "warp inst", "thread eff %", "stall cycles", "top stall",
             "smem wavefronts/ideal", "bank conflicts", "sectors/req"]
    res = rec.result
    tot_stall = sum(r.stall_cycles for r in rows)
    head = (f"{rec.label}: kernel {rec.kernel.name} ({rec.ptx_path.rsplit('/', 1)[-1]}) on {rec.config.name}, "
            f"grid {rec.grid} x block {rec.block}, {res.cycles:,} cycles\n"
            f"{int(res.inst_executed.sum()):,} warp instructions, {tot_stall:,} stalled warp-cycles, "
            f"{sum(r.shared_wavefronts for r in rows):,} shared wavefronts "
            f"({sum(r.bank_conflicts for r in rows):,} bank conflicts), "
            f"{sum(r.global_sectors for r in rows):,} global sectors in {sum(r.global_requests for r in rows):,} "
            "requests\n")
    return head + "\n" + format_table(heads, table)


def template_env():
    """The jinja2 environment of the viz templates (autoescaping on)."""
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("gpusim.viz", "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"]), trim_blocks=True,
                              lstrip_blocks=True)


def source_context(rec: Recording) -> dict:
    """What the ``source`` template needs: rows, stall columns, maximum stall (for shading)."""
    rows = source_rows(rec)
    return {"rows": rows, "reasons": STALLS, "max_stall": max([r.stall_cycles for r in rows] + [1]),
            "rec": rec}


def source_html(rec: Recording) -> str:
    """The source view as one self-contained HTML page (no external files)."""
    env = template_env()
    return env.get_template("source_page.html.j2").render(title=f"gpusim source view: {rec.label}",
                                                          src=source_context(rec))
