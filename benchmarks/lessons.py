"""Every lesson of ``gpusim lesson`` at its full size, each in a fresh process on one core.

Usage: ``python benchmarks/lessons.py [NAME ...] [--out docs/lessons]``

For each lesson: runs ``python -m gpusim lesson NAME --force -o OUT/lesson_NAME.html`` with
``OMP_NUM_THREADS=1`` (numpy on one core; the simulator is single-threaded), measures its wall
time (table and page), keeps the page's first viz picture as
``OUT/NAME.png`` (for docs/lessons.md) and the lesson's JSON summary (rows, ordering, seconds), then
writes ``benchmarks/results/lessons_h100.md``: per lesson the seconds, whether the simulator orders
the variants as the H100, and the range of simulated/H100 cycle ratios (every lesson with a
JSON summary in OUT, so a subset can be re-run). The HTML pages are deleted unless --keep-pages.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import pathlib
import re
import resource
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _save_png(path: pathlib.Path, data: bytes) -> None:
    """Write a docs picture with a 128-colour palette (Pillow, matplotlib's own dependency):
    the bank diagram drops from 477 to 140 KB with no visible change."""
    import io

    from PIL import Image

    Image.open(io.BytesIO(data)).convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT) \
        .save(path, optimize=True)


CHILD = r"""
import json, sys, time
from gpusim import lessons
t0 = time.perf_counter()
r = lessons.run(sys.argv[1])
t1 = time.perf_counter()
r.write_html(sys.argv[2], force=True)
t2 = time.perf_counter()
print(r.text())
o = r.ordering()
print("JSON " + json.dumps({"name": sys.argv[1], "run_s": t1 - t0, "page_s": t2 - t1, "ordering": o,
    "rows": [{"label": x.label, "case": x.case, "n": x.n, "sim_us": x.sim_us, "hw_us": x.hw_us,
              "sim_cycles": x.sim_cycles, "hw_cycles": x.hw_cycles, "ratio": x.ratio, "timed": x.timed}
             for x in r.rows], "case_seconds": r.case_seconds}))
"""


def main() -> None:
    from gpusim.lessons import LESSONS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=list(LESSONS))
    ap.add_argument("--out", default=str(ROOT / "docs" / "lessons"))
    ap.add_argument("--keep-pages", action="store_true", help="keep the HTML pages (about 1 MB each) in OUT")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=str(ROOT))
    results = []
    for name in a.names:
        page = out / f"lesson_{name}.html"
        t = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        p = subprocess.run([sys.executable, "-c", CHILD, name, str(page)], env=env, cwd=ROOT,
                           capture_output=True, text=True)
        wall = time.perf_counter() - t
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if p.returncode:
            print(p.stdout, p.stderr)
            raise SystemExit(f"{name} failed")
        print(p.stdout.split("JSON ")[0])
        rec = json.loads(p.stdout.split("JSON ", 1)[1])
        rec.update(wall_s=wall, peak_mib=max(rss, before) / 1024)
        imgs = re.findall(r'class="lesson-figure" alt="[^"]*" src="data:image/png;base64,([^"]+)"', page.read_text())
        if len(imgs) > 1:   # the first is the comparison chart; keep the first viz picture
            _save_png(out / f"{name}.png", base64.b64decode(imgs[1]))
        (out / f"{name}.json").write_text(json.dumps(rec, indent=1) + "\n")
        if not a.keep_pages:
            page.unlink()
        results.append(rec)
        print(f"== {name}: {wall:.1f} s wall", flush=True)
    results = [json.loads((out / f"{n}.json").read_text()) for n in LESSONS if (out / f"{n}.json").exists()]
    lines = ["| lesson | variants | wall s (table + page) | of it: simulation s | ordered as on the H100 | sim / H100 cycles |",
             "|---|---:|---:|---:|---|---|"]
    for r in results:
        o = r["ordering"]
        ratios = [x["ratio"] for x in r["rows"] if x["ratio"] is not None]
        order = (f"{o['agree']}/{o['pairs']} pairs" + ("" if o["same"] else " (not all)")) if o["pairs"] else \
            f"H100 flat; sim within {o['tie_spread']:.1%}"
        lines.append(f"| {r['name']} | {len(r['rows'])} | {r['wall_s']:.0f} | {r['run_s']:.0f} | {order} | "
                     f"{min(ratios):.2f} to {max(ratios):.2f} |")
    res = ROOT / "benchmarks" / "results" / "lessons_h100.md"
    res.write_text("# gpusim lesson at full size, one core each (benchmarks/lessons.py)\n\n" + "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
