"""``gpusim validate``: the same suite kernels and sweeps on the GPU and in gpusim, one report.

Owns: the sub-command's arguments, the choice between collecting hardware data (needs
CuPy and a GPU) and reading it (``--from``), the output-folder policy, and progress
messages. The work is in :mod:`validation` (hardware, simulate, score, report), imported
inside :func:`run` only, so the rest of the CLI never needs CuPy.

Examples::

    gpusim validate                                   # GPU machine: everything, report in ./validation-report
    gpusim validate --sweeps reduction matmul --out rep/
    gpusim validate --hardware-only --out hw/         # GPU machine: collect only (no simulation)
    gpusim validate --from validation/reports/h100/hardware_h100.json --out rep/   # no GPU needed
    gpusim validate --from hw/ --cases reduce_v0 reduce_v1 --jobs 2
    gpusim validate --from validation/reports/h100 validation/reports/h100/scale_tier --tier scale --jobs 2
    gpusim validate --from rep/validation_h100.json --out rep2/   # re-render a report, no simulation
    gpusim validate --experiment validation/experiments/copy_offset.toml --out rep/   # your kernel (GPU)
    gpusim validate --corpus --from validation/reports/h100/corpus --half test --jobs 2 --out corpus-rep/
    gpusim validate --corpus --out corpus-rep/        # GPU machine with ncu: collect the corpus, then score it

``--corpus`` takes the generalization corpus (validation/corpus, issue #28) instead of the suite:
its cases (``--cases`` names cases or families, ``--half fit|test|all`` one half of split.toml) are
simulated and scored per half and size bucket beside the best constant (``corpus_score.md`` and
``.json`` in ``--out``); ``--from`` is then a folder holding ncu's ``corpus.csv`` and on_gpu.py's
``corpus_digests.json``.

Without CuPy or a GPU and without ``--from`` it says so and exits with status 2. Files
in ``--out`` that the run would write (``report.html``, ``validation_<gpu>.json``, the
hardware bundle) are not replaced unless ``--force`` is given.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from gpusim.cli._types import positive_int
from gpusim.errors import GpusimError

__all__ = ["register", "run"]


def register(sub) -> None:
    """Add the ``validate`` parser to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser("validate", help="run suite kernels and sweeps on a GPU and in gpusim; HTML report",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--from", dest="from_", metavar="PATH", nargs="+",
                   help="build the report from hardware data collected earlier (hardware_<gpu>.json, a folder "
                        "holding one, or validation/reports/h100/timing_h100.json; several are merged, e.g. the "
                        "small and the scale tier's), or re-render a report's validation_<gpu>.json without "
                        "simulating; no GPU needed")
    p.add_argument("--out", default="validation-report", help="output folder (default ./validation-report)")
    p.add_argument("--cases", nargs="+", metavar="CASE", help="suite cases (default: all; see gpusim run --list); "
                   "with --corpus, corpus case or family names (default: every case the hardware side measured)")
    p.add_argument("--corpus", action="store_true", help="the generalization corpus (validation/corpus, "
                   "docs/validation/corpus.md) instead of the suite: simulate its cases and score them per "
                   "fit/test half beside the best constant; --from is then a folder holding corpus.csv and "
                   "corpus_digests.json (validation/reports/h100/corpus)")
    p.add_argument("--half", metavar="{fit,test,all}", help="with --corpus: only the cases of that half of "
                   "validation/corpus/split.toml (default all)")
    p.add_argument("--sweeps", nargs="+", metavar="SWEEP", help="sweeps (default: all; names in the report and "
                   "in validation/sweeps.py); with --sweeps and no --cases only their cases run")
    p.add_argument("--experiment", metavar="TOML", help="a user's kernel instead of the suite: an experiment file "
                   "(gpusim run format: ptx, kernel, grid, block, args) run on the GPU and in gpusim")
    p.add_argument("--hardware-only", action="store_true", help="collect the hardware bundle and stop")
    p.add_argument("--no-ncu", action="store_true", help="do not run Nsight Compute even where it exists")
    p.add_argument("--extra", nargs="*", default=(), metavar="CASE:N", help="extra GPU-only sizes to collect")
    p.add_argument("--tier", choices=("small", "scale", "all"), default="all",
                   help="which sizes to collect on the GPU and to simulate: small (the timing sizes, timed in "
                        "detail), scale (GPU-filling sizes, gpusim.suite.SCALE_SIZES, timed with the sampled "
                        "engine) or all (default)")
    p.add_argument("--gpu", default="h100", help="gpusim configuration of the simulator side (default h100)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE",
                   help="configuration override of the simulator side (repeatable)")
    p.add_argument("--config-overrides", metavar="TOML", help="an override file from 'gpusim calibrate'")
    p.add_argument("--max-threads", type=positive_int, default=1 << 17,
                   help="runs with a launch of more than this many threads belong to the scale tier (default 131072)")
    p.add_argument("--jobs", type=positive_int, default=1, help="simulator processes in parallel (default 1)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="simulate on the Dask cluster whose scheduler is at "
                   "tcp://HOST:PORT instead of --jobs local processes (needs the dist extra; same runner as "
                   "gpusim sweep)")
    p.add_argument("--force", action="store_true", help="replace existing report files in --out")
    p.set_defaults(func=run)


def _progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _is_report(path: str) -> bool:
    p = pathlib.Path(path)
    return p.is_file() and p.name.startswith("validation_") and p.suffix == ".json"


def run(args: argparse.Namespace) -> int:
    """Collect (GPU) or load (--from) the hardware side, simulate, score, write the report; 0 on success."""
    from gpusim import config as gpu_config
    from gpusim.config.loader import parse_override
    from validation import hardware, sweeps

    if args.jobs < 1:
        raise GpusimError(f"--jobs {args.jobs}: must be at least 1")
    if args.max_threads < 1:
        raise GpusimError(f"--max-threads {args.max_threads}: must be at least 1")
    if args.half is not None and not args.corpus:
        raise GpusimError(f"--half {args.half}: picks a half of the generalization corpus; it needs --corpus")
    overrides: dict = {}
    base = args.gpu
    if args.config_overrides:
        from validation.calibrate import read_overrides

        base, overrides = read_overrides(args.config_overrides)
    overrides.update(dict(parse_override(o) for o in args.overrides))
    gpu_config.load(base).with_overrides(overrides)  # fail on a bad config before any work
    if args.corpus:
        return _run_corpus(args, base, overrides)
    selected_sweeps = sweeps.select(args.sweeps)
    cases = sweeps.cases_for(args.cases, args.sweeps)
    out = pathlib.Path(args.out)
    if out.exists() and not out.is_dir():
        raise GpusimError(f"--out {out}: exists and is not a folder")
    from validation import report

    if not args.hardware_only:
        report.check_out(out, args.force)  # before any GPU or simulator work, not after an hour of it
    if args.from_ and len(args.from_) == 1 and _is_report(args.from_[0]):
        # a report JSON: re-score the sweeps and re-render, no simulation
        result = report.rescore(report.load_result(args.from_[0]), selected_sweeps)
        paths = report.write(result, out, force=args.force)
        print(f"report: {paths['html']}\nraw JSON: {paths['json']}\n{report.headline(result['summary'])}")
        return 0
    if args.from_ and args.experiment:
        raise GpusimError("--experiment runs a kernel on the GPU; --from reads data collected earlier: give one")
    if args.from_:
        if args.hardware_only:
            raise GpusimError("--hardware-only collects on a GPU; it cannot be combined with --from")
        hw = hardware.load_many(args.from_)
        _progress(f"hardware data: {hw.path} ({len(hw['launches'])} launches on "
                  f"{hw['provenance'].get('gpu_name')})")
    else:
        from validation.gpu import require_cupy

        require_cupy()  # GpuUnavailable -> "gpusim validate: error: ..." and status 2
        existing = sorted(out.glob("hardware_*.json")) if out.is_dir() else []
        if existing and not args.force:
            raise GpusimError(f"--out {out}: holds {existing[0].name} already; pass --force to replace it, or "
                              "another --out")
        if args.experiment:
            from gpusim.experiment import load_experiment
            from validation import experiment

            load_experiment(args.experiment)  # a bad file fails before the GPU is touched
            path = experiment.collect(args.experiment, out, use_ncu=not args.no_ncu, progress=_progress)
        else:
            path = hardware.collect(out, cases, extra=list(args.extra), use_ncu=not args.no_ncu, progress=_progress,
                                    tier=args.tier)
        if args.hardware_only:
            print(f"hardware data written to {path}")
            return 0
        hw = hardware.load(path)
    result = report.build(hw, cases=cases if (args.cases or args.sweeps) else None, sweep_names=selected_sweeps,
                          config=base, overrides=overrides, max_threads=args.max_threads, jobs=args.jobs,
                          progress=_progress, tiers=report.TIERS if args.tier == "all" else (args.tier,),
                          scheduler=args.scheduler)
    paths = report.write(result, out, force=args.force)
    s = result["summary"]
    print(f"report: {paths['html']}\nraw JSON: {paths['json']}")
    print(report.headline(s))
    return 0


#: options of the suite's path that mean nothing to the corpus's: (attribute, flag, its default)
_SUITE_ONLY = (("sweeps", "--sweeps", None), ("experiment", "--experiment", None), ("extra", "--extra", ()),
               ("no_ncu", "--no-ncu", False), ("scheduler", "--scheduler", None), ("tier", "--tier", "all"),
               ("max_threads", "--max-threads", 1 << 17))


def _run_corpus(args: argparse.Namespace, base: str, overrides: dict) -> int:
    """``--corpus``: read (``--from``) or collect (GPU, ncu) the corpus's hardware side, simulate the chosen
    cases, score them per half and write ``corpus_score.md`` / ``.json`` into ``--out``."""
    from validation.corpus import on_gpu
    from validation.corpus import validate as corpus

    for attr, flag, default in _SUITE_ONLY:
        if getattr(args, attr) not in (default, [], ()):
            raise GpusimError(f"{flag}: applies to the suite's kernels, not to --corpus")
    out = pathlib.Path(args.out)
    if args.from_:
        if len(args.from_) != 1:
            raise GpusimError(f"--from {' '.join(args.from_)}: with --corpus, give one folder (corpus.csv and "
                              "corpus_digests.json)")
        if args.hardware_only:
            raise GpusimError("--hardware-only collects on a GPU; it cannot be combined with --from")
        corpus.check_out(out, args.force)
        hw = corpus.load_hardware(args.from_[0])
        names = corpus.choose(hw, args.cases, args.half)
    else:
        from validation.corpus.simulate import select

        names = select(args.cases, args.half)  # a bad name fails before the GPU is touched
        corpus.check_out(out, args.force, (on_gpu.CSV_NAME, on_gpu.DIGESTS_NAME, on_gpu.LOG_NAME)
                         + (() if args.hardware_only else (*corpus.REPORT_FILES, corpus.SIM_FILE)))
        on_gpu.collect(out, names, progress=_progress)
        if args.hardware_only:
            print(f"hardware data written to {out / on_gpu.CSV_NAME} and {out / on_gpu.DIGESTS_NAME}")
            return 0
        hw = corpus.load_hardware(out)
    _progress(f"hardware data: {hw['folder']} ({len(hw['rows'])} cases measured on {hw['digests'].get('gpu')})")
    doc = corpus.run(hw, names, out, jobs=args.jobs, gpu=base, overrides=overrides, progress=_progress)
    print(f"report: {out / corpus.REPORT_FILES[0]}\nraw JSON: {out / corpus.REPORT_FILES[1]}")
    print(corpus.headline(doc["summary"]))
    if doc["missing"]:
        print(f"not scored: {', '.join(doc['missing'])}")
    return 0
