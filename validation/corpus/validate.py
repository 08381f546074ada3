"""``gpusim validate --corpus``: the generalization corpus's hardware side, gpusim's side and their score.

Owns: reading a folder of the corpus's hardware side (:func:`load_hardware`: ``on_gpu.py``'s
``corpus_digests.json`` and ncu's ``corpus.csv``, as ``validation/reports/h100/corpus`` holds them), the
choice of cases (:func:`validation.corpus.simulate.select`: names, families, a half, restricted to what
the hardware measured), and :func:`run`: simulate (:func:`validation.corpus.simulate.run_cases`), score
(:func:`validation.corpus.score.score`) and write the report (:data:`REPORT_FILES`) into the output
folder. Collecting on a GPU is :func:`validation.corpus.on_gpu.collect`; the command line is
``gpusim/cli/validate.py``'s.

Simulates at the size and seed the hardware side ran (``size`` and ``seed`` of the digests JSON), so a
folder measured at the ``small`` sizes is scored against ``small`` simulations.

Imports gpusim (errors; the simulations run in worker processes); never cupy.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable

from gpusim.errors import GpusimError
from validation.corpus import cases as C
from validation.corpus.on_gpu import CSV_NAME, DIGESTS_NAME, gpu_rows
from validation.corpus.score import markdown, score
from validation.corpus.simulate import run_cases, select

__all__ = ["REPORT_FILES", "SIM_FILE", "load_hardware", "choose", "check_out", "run", "headline"]

#: the report: the per-case and per-half Markdown tables, the same as JSON (rows, summary, missing, meta)
REPORT_FILES = ("corpus_score.md", "corpus_score.json")
#: gpusim's side, as ``simulate.py`` writes it (rewritten as each case finishes)
SIM_FILE = "corpus_sim.json"


def load_hardware(folder: str | Path) -> dict:
    """The hardware side in ``folder``: ``{"folder", "csv", "digests" (the JSON), "rows" (case -> ncu
    metrics of the measured launch, :func:`validation.corpus.on_gpu.gpu_rows`)}``.

    Raises :class:`GpusimError` naming ``--from`` and the file: the folder is missing or not a folder,
    ``corpus.csv`` or ``corpus_digests.json`` is missing, the JSON is not on_gpu.py's, its size is not a
    corpus size, or the CSV's rows do not pair up with the JSON's order (two per case).
    """
    folder = Path(folder)
    rule = (f"with --corpus, --from is a folder holding ncu's {CSV_NAME} and on_gpu.py's {DIGESTS_NAME} "
            "(as validation/reports/h100/corpus does)")
    if not folder.is_dir():
        raise GpusimError(f"--from {folder}: {'no such folder' if not folder.exists() else 'not a folder'}; {rule}")
    csv, dg = folder / CSV_NAME, folder / DIGESTS_NAME
    for f in (csv, dg):
        if not f.is_file():
            raise GpusimError(f"--from {folder}: no {f.name} in it ({f} is missing); {rule}")
    try:
        digests = json.loads(dg.read_text())
    except json.JSONDecodeError as exc:
        raise GpusimError(f"--from {dg}: not valid JSON ({exc}); {rule}") from None
    if not isinstance(digests, dict) or not isinstance(digests.get("order"), list) or \
            not isinstance(digests.get("cases"), dict):
        raise GpusimError(f"--from {dg}: not on_gpu.py's digests JSON (it needs 'order', the cases in launch "
                          "order, and 'cases')")
    unknown = [x for x in digests["order"] if x not in C.BY_NAME]
    if unknown:
        raise GpusimError(f"--from {dg}: 'order' names {', '.join(map(str, unknown))}, not corpus cases "
                          "(validation/corpus/cases.py)")
    size = digests.get("size", "gpu")
    if size not in ("gpu", "small"):
        raise GpusimError(f"--from {dg}: size {size!r}: must be gpu or small (the sizes of validation/corpus/cases.py)")
    if not isinstance(digests.get("seed", 0), int):
        raise GpusimError(f"--from {dg}: seed {digests['seed']!r}: must be an integer")
    try:
        rows = gpu_rows(csv, digests["order"])
    except ValueError as exc:  # rows that do not pair up with the JSON's order
        raise GpusimError(f"--from {exc}; ncu's rows must be a warm-up and a measured launch per case of "
                          f"{dg.name}'s order") from None
    except (KeyError, UnicodeDecodeError) as exc:
        raise GpusimError(f"--from {csv}: not ncu's --csv --page raw output ({type(exc).__name__}: {exc})") from None
    return {"folder": folder, "csv": csv, "digests": digests, "rows": rows}


def choose(hw: dict, cases: list[str] | None, half: str | None) -> list[str]:
    """The cases to simulate: ``cases`` (case or family names; default every case the hardware side
    measured) in ``half`` (fit / test / all), in corpus order. Raises :class:`GpusimError` for an
    unknown name or half (:func:`validation.corpus.simulate.select`) and for a named case the hardware
    side did not measure."""
    names = select(cases, half, among=hw["digests"]["order"])
    measured = set(hw["rows"])
    absent = [x for x in names if x not in measured]
    if absent:
        raise GpusimError(f"--cases: {', '.join(absent)} not measured in {hw['folder'] / DIGESTS_NAME} (it holds "
                          f"{len(measured)} case(s)); name measured cases or families only")
    return names


def check_out(out: str | Path, force: bool, names: tuple[str, ...] = (*REPORT_FILES, SIM_FILE)) -> None:
    """Raise :class:`GpusimError` when ``out`` is a file, or holds any of ``names`` and not ``force``:
    called before any simulation, so that none of it is lost to a refusal at the end."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise GpusimError(f"--out {out}: exists and is not a folder")
    clash = [str(out / x) for x in names if (out / x).exists()]
    if clash and not force:
        raise GpusimError(f"--out {out}: {', '.join(clash)} exist(s); pass --force to replace, or another --out")


def _json_safe(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _json_safe(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_safe(x) for x in v]
    return v


def run(hw: dict, names: list[str], out: str | Path, *, jobs: int = 1, gpu: str = "h100",
        overrides: dict | None = None, split_path: str | Path | None = None,
        progress: Callable[[str], None] = print) -> dict:
    """Simulate ``names`` (:func:`choose`) at the hardware side's size and seed, ``jobs`` at once, score
    them against ``hw`` (:func:`load_hardware`) and write ``out/corpus_sim.json`` and the report
    (:data:`REPORT_FILES`). Returns the report's document: ``rows``, ``summary`` ({fit, test, all} x
    {all, size buckets}: MAE, Pearson r, max error, launches over 50 %, best constant and its MAE,
    bit-exact count; :func:`validation.corpus.score.summarise`), ``missing`` and ``meta``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    dg = hw["digests"]
    size, seed = dg.get("size", "gpu"), int(dg.get("seed", 0))
    progress(f"corpus: {len(names)} case(s) at the {size} size, seed {seed}, gpusim {gpu} in timing mode, "
             f"{jobs} at once")
    sim = run_cases(names, out / SIM_FILE, jobs=jobs, size=size, seed=seed, gpu=gpu, overrides=overrides or {},
                    progress=lambda line: progress("  " + line))
    doc = score(hw["rows"], dg, sim, C.split(split_path), names)
    failed = {x: r["error"] for x, r in sim["cases"].items() if r.get("error")}
    doc["meta"] = {"hardware": str(hw["folder"]), "hardware_gpu": dg.get("gpu"), "size": size, "seed": seed,
                   "gpu_config": gpu, "overrides": overrides or {}, "cases": names, "failed_in_gpusim": failed,
                   "simulation": str(out / SIM_FILE)}
    md = [f"# gpusim against {dg.get('gpu') or 'the GPU'}: the generalization corpus", "",
          f"Hardware side: `{hw['folder']}` ({len(hw['rows'])} cases measured); gpusim `{gpu}` in timing mode"
          + (f" with {overrides}" if overrides else "") + f"; {len(names)} case(s) at the `{size}` size, seed {seed}. "
          "Halves: `validation/corpus/split.toml`. The best constant is the one cycle count that minimises the "
          "MAE on those launches, chosen after the fact.", "", markdown(doc["rows"], doc["summary"], doc["missing"])]
    if failed:
        md += ["", "Failed in gpusim: " + "; ".join(f"{k}: {v}" for k, v in failed.items())]
    (out / REPORT_FILES[0]).write_text("\n".join(md) + "\n")
    (out / REPORT_FILES[1]).write_text(json.dumps(_json_safe(doc), indent=1) + "\n")
    return doc


def headline(summary: dict) -> str:
    """One line per half of ``summary``: launches, cycles MAE beside the best constant's, r, bit-exact."""
    lines = []
    for half in ("fit", "test", "all"):
        st = summary[half]["all"]
        if not st["n"]:
            continue
        r = st["pearson_r"]
        lines.append(f"{half:4s}: {st['n']} launches, cycles MAE {st['mae_pct']:.1f} % (best constant "
                     f"{st['best_constant_mae_pct']:.1f} %), r {'-' if r is None or math.isnan(r) else f'{r:.3f}'}, "
                     f"{st['over_50pct']} over 50 %, bit-exact {st['bit_exact']}/{st['bit_checked']}")
    return "\n".join(lines)
