"""A lesson's HTML page and pictures (and their notebook display).

Owns: :class:`Image` (one PNG with a caption; shows inline in Jupyter through ``_repr_png_``),
:func:`comparison_figure` (simulated against H100 time per variant, the one picture drawn
here), :func:`pictures` (the lesson's :class:`gpusim.lessons.specs.Picture` list drawn by
:mod:`gpusim.viz` -- bank and coalescing diagrams, warp states, stall breakdown, occupancy
chart -- from timing-mode recordings at each case's small ``test_n``), :func:`table_html`
and :func:`lesson_html` / :func:`write_page` (``templates/lesson.html.j2``, which extends the
viz pages' ``base.html.j2``; every picture embedded as a base64 PNG, so the page is one
offline file).

Must not import: simpy, cupy (recordings go through ``gpusim.Device``).
"""

from __future__ import annotations

import base64
import datetime
from dataclasses import dataclass
from pathlib import Path

from gpusim.errors import GpusimError

__all__ = ["Image", "comparison_figure", "pictures", "table_html", "lesson_html", "write_page"]


@dataclass(frozen=True)
class Image:
    """One picture: ``caption`` and ``png`` bytes. Displays inline in Jupyter."""

    caption: str
    png: bytes

    @property
    def data_uri(self) -> str:
        """``data:image/png;base64,...`` for an ``<img src>``."""
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")

    def _repr_png_(self) -> bytes:
        return self.png

    def _repr_html_(self) -> str:
        from markupsafe import escape

        return f'<figure><img alt="{escape(self.caption)}" src="{self.data_uri}"><figcaption>{escape(self.caption)}</figcaption></figure>'


def comparison_figure(result):
    """Bars of simulated and H100 time (us) per variant of a :class:`LessonResult` (matplotlib figure)."""
    from gpusim.viz.style import pyplot

    plt = pyplot()
    rows = result.rows
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(rows) + 2), 3.4))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r.sim_us or 0 for r in rows], 0.4, label="gpusim (timing model)", color="#4477aa")
    ax.bar([x + 0.2 for x in xs], [r.hw_us or 0 for r in rows], 0.4, label="H100 (ncu, measured)", color="#ee7733")
    ax.set_xticks(list(xs), [r.label for r in rows], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("time (us)")
    ax.set_title(f"{result.lesson.title}: simulated and measured", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _recordings(cases, cache: dict):
    from gpusim.viz.capture import record_case

    for c in cases:
        if c not in cache:
            cache[c] = record_case(c)
    return [r for c in cases for r in cache[c]]


def pictures(result) -> list[Image]:
    """The lesson's pictures: the comparison chart, then each of ``lesson.pictures``.

    The viz pictures come from timing-mode recordings of each case at its small ``test_n``
    (a recording keeps every issue event, so it is taken in detail at a small size; the
    table's numbers come from the sampled runs at the lesson's size).
    """
    from gpusim.viz import charts
    from gpusim.viz.banks import bank_figure
    from gpusim.viz.coalescing import coalescing_figure
    from gpusim.viz.select import select_access
    from gpusim.viz.style import png_bytes
    from gpusim.viz.warpstate import warp_state_figure

    out = [Image("Simulated and H100 time per variant", png_bytes(comparison_figure(result)))]
    cache: dict = {}
    for p in result.lesson.pictures:
        recs = _recordings(p.cases, cache)
        if p.kind == "banks":
            sels = [select_access(cache[c][0], "shared", cta=None, warp=None) for c in p.cases]
            out.append(Image(p.caption, png_bytes(bank_figure(sels, titles=list(p.cases)))))
        elif p.kind == "coalescing":
            for c in p.cases:
                sel = select_access(cache[c][0], "global", cta=None, warp=None)
                out.append(Image(f"{p.caption} ({c})", png_bytes(coalescing_figure(sel))))
        elif p.kind == "warps":
            rec = recs[0]
            out.append(Image(p.caption, png_bytes(warp_state_figure(rec, min(e.sm for e in rec.result.events)))))
        elif p.kind == "stalls":
            out.append(Image(p.caption, png_bytes(charts.stall_figure(recs))))
        elif p.kind == "occupancy":
            out.append(Image(p.caption, charts.occupancy_pngs(recs[p.launch])["block_size"]))
        else:
            raise GpusimError(f"lesson {result.lesson.name}: unknown picture kind {p.kind!r}")
    return out


def _env():
    import jinja2

    return jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader("gpusim.lessons", "templates"),
                                    jinja2.PackageLoader("gpusim.viz", "templates")]),
        autoescape=jinja2.select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)


def _context(result) -> dict:
    return {"r": result, "les": result.lesson, "headers": result.headers(), "rows": result.table_rows(),
            "summary": result.summary(), "ordering": result.ordering()}


def table_html(result) -> str:
    """The lesson's table and verdict as an HTML fragment (``LessonResult._repr_html_``)."""
    return _env().get_template("lesson_table.html.j2").render(**_context(result))


def lesson_html(result, *, with_pictures: bool = True) -> str:
    """The lesson's self-contained HTML page: title, seed section, idea, table, verdict, pictures."""
    import gpusim

    ctx = _context(result)
    ctx.update(title=f"gpusim lesson {result.lesson.name}: {result.lesson.title}",
               images=pictures(result) if with_pictures else [],
               stamp=f"gpusim {gpusim.__version__}, "
                     f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}")
    return _env().get_template("lesson.html.j2").render(**ctx)


def write_page(result, path, *, force: bool = False, pictures: bool = True) -> Path:
    """Write :func:`lesson_html` to ``path``; refuses to overwrite an existing file unless ``force``.

    Raises:
        gpusim.errors.GpusimError: ``path`` exists and ``force`` is false.
    """
    p = Path(path)
    if p.exists() and not force:
        raise GpusimError(f"{p} exists; pass --force (force=True) to overwrite it")
    html = lesson_html(result, with_pictures=pictures)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(html, encoding="utf-8")
    return p
