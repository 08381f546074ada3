"""Shared-memory bank diagram: lanes -> addresses -> 32 banks -> wavefronts.

Owns: :func:`bank_rows` (per lane: address, 32-bit word, banks, wavefront) and
:func:`bank_figure` (one panel per access, side by side, e.g. a transpose before and after
padding or swizzling). Each panel lists the 32 lanes with their byte address and word on the
left, the banks on the right, and a line from every active lane to each bank it touches,
coloured by the wavefront that serves it; each bank shows how many distinct words were
asked of it (the conflict degree).

Numbers: :mod:`gpusim.memmodel.shared` (hardware-facts.md §5: 32 banks x 4 B on sm_70..sm_90,
PG13 §5.x; wavefront counts exact for all 48 H100-measured patterns). The order of the
wavefronts inside one unit is the model's drawing convention (lowest lane first), not measured.

Must not import: simpy, cupy.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.errors import GpusimError
from gpusim.memmodel import shared_lane_wavefront, shared_wavefronts
from gpusim.viz.select import Selected
from gpusim.viz.style import pyplot

__all__ = ["BankRow", "bank_rows", "bank_figure"]


@dataclass(frozen=True)
class BankRow:
    """One lane of a shared access: address (bytes), first 32-bit word, banks touched,
    wavefront (0-based; -1 if the lane is inactive)."""

    lane: int
    active: bool
    address: int
    word: int
    banks: tuple[int, ...]
    wavefront: int


def bank_rows(sel: Selected, banks: int = 32, bank_bytes: int = 4) -> list[BankRow]:
    """The 32 lanes of a selected shared access (see :class:`BankRow`).

    Raises:
        gpusim.errors.GpusimError: the access is not to shared memory or is an atomic.
    """
    a = sel.access
    if a.space != "shared" or a.op == "atom":
        raise GpusimError(f"{sel.describe()}: the bank diagram needs an ld/st.shared access, not {a.op}.{a.space}")
    width = max(4, min(a.width, 16))
    wf = shared_lane_wavefront(a.addrs, width, a.op == "ld", a.active, banks, bank_bytes)
    rows = []
    for t in range(32):
        addr = int(a.addrs[t])
        word = addr // bank_bytes
        n = max(1, width // bank_bytes)
        rows.append(BankRow(t, bool(a.active[t]), addr, word,
                            tuple((word + k) % banks for k in range(n)) if a.active[t] else (), int(wf[t])))
    return rows


def _panel(ax, sel: Selected, title: str | None, banks: int, bank_bytes: int) -> None:
    plt = pyplot()
    a = sel.access
    width = max(4, min(a.width, 16))
    cost = shared_wavefronts(a.addrs, width, a.op == "ld", a.active, banks, bank_bytes)
    rows = bank_rows(sel, banks, bank_bytes)
    n_wf = int(cost.wavefronts[0])
    cmap = plt.get_cmap("tab10" if n_wf <= 10 else "turbo")

    def color(w):
        if n_wf <= 10:
            return cmap(w % 10)
        return cmap(0.05 + 0.9 * w / max(1, n_wf - 1))

    words_per_bank: dict[int, set] = {b: set() for b in range(banks)}
    unit_words: dict[tuple[int, int], set] = {}
    ul = int(cost.unit_lanes[0])
    for r in rows:
        for k, b in enumerate(r.banks):
            words_per_bank[b].add(r.word + k)
            unit_words.setdefault((b, r.lane // ul), set()).add(r.word + k)
    conflicted = {b for (b, _u), w in unit_words.items() if len(w) > 1}
    xl, xr = 0.0, 1.0
    for r in rows:
        y = r.lane
        c = color(r.wavefront) if r.active else "#bbbbbb"
        ax.text(xl - 0.13, y, f"lane {r.lane:2d}  {r.address:#07x}  w{r.word}" if r.active else f"lane {r.lane:2d}  (inactive)",
                ha="right", va="center", fontsize=7.5, family="monospace", color="black" if r.active else "#999999")
        if r.active:
            ax.text(xl - 0.07, y, f"{r.wavefront + 1}", ha="center", va="center", fontsize=7, color=c,
                    fontweight="bold")
            for b in r.banks:
                ax.plot([xl, xr], [y, b * 32 / banks], color=c, lw=1.1, alpha=0.85)
    for b in range(banks):
        k = len(words_per_bank[b])
        y = b * 32 / banks
        ax.text(xr + 0.03, y, f"bank {b:2d}" + (f"  {k} word{'s' if k > 1 else ''}" if k else ""), ha="left",
                va="center", fontsize=7.5, family="monospace",
                color="#b00000" if b in conflicted else ("black" if k else "#999999"),
                fontweight="bold" if b in conflicted else "normal")
    ax.scatter([xl] * 32, range(32), s=10, color="black", zorder=3)
    ax.scatter([xr] * banks, [b * 32 / banks for b in range(banks)], s=18, marker="s", color="#444444", zorder=3)
    ax.set_xlim(-1.05, 1.75)
    ax.set_ylim(32, -2.2)
    ax.axis("off")
    ax.text(xl - 0.07, -1.2, "wf", ha="center", fontsize=8, family="monospace", fontweight="bold")
    ax.text(xl - 0.13, -1.2, "lane  address   word", ha="right", fontsize=8, family="monospace", fontweight="bold")
    ax.text(xr + 0.03, -1.2, "bank  distinct words", ha="left", fontsize=8, family="monospace", fontweight="bold")
    head = title or sel.rec.label
    ax.set_title(f"{head}\n{sel.describe()}\n{width} B per lane: {n_wf} wavefront{'s' if n_wf != 1 else ''} "
                 f"(ideal {int(cost.ideal[0])}), {int(cost.conflicts[0])} bank conflict"
                 f"{'s' if int(cost.conflicts[0]) != 1 else ''}", fontsize=9)


def bank_figure(selections: list[Selected], titles: list[str] | None = None, banks: int | None = None,
                bank_bytes: int | None = None):
    """Bank diagrams of one or more shared accesses, side by side.

    Args:
        selections: accesses from :func:`gpusim.viz.select.select_access` (space ``"shared"``).
        titles: panel titles (default: each recording's label).
        banks, bank_bytes: default: the first recording's configuration (``shared.banks``,
            ``shared.bank_width_bytes``).

    Returns:
        A matplotlib Figure; the number in front of each lane's line is its wavefront (1-based),
        and lines of one wavefront share a colour.

    Raises:
        gpusim.errors.GpusimError: no selection, or a selection that is not an ld/st.shared.
    """
    if not selections:
        raise GpusimError("bank_figure needs at least one shared-memory access")
    cfg = selections[0].rec.config
    banks = banks or cfg.shared.banks
    bank_bytes = bank_bytes or cfg.shared.bank_width_bytes
    plt = pyplot()
    n = len(selections)
    fig, axes = plt.subplots(1, n, figsize=(6.6 * n, 9.2), squeeze=False)
    for i, sel in enumerate(selections):
        _panel(axes[0][i], sel, titles[i] if titles else None, banks, bank_bytes)
    fig.text(0.5, 0.005, f"{banks} banks x {bank_bytes} B (hardware-facts §5); the number before a lane's line is "
             "the wavefront (one pass through the banks per cycle) that serves it;\na bank asked for k distinct "
             "words within one unit needs k wavefronts (red); 8/16-byte accesses are served by half/quarter-warp units "
             "in separate wavefronts (§5 rule 1)", ha="center", wrap=True, fontsize=8, color="#333333")
    fig.tight_layout(rect=(0, 0.035, 1, 1))
    return fig
