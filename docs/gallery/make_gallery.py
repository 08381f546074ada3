"""Regenerate the gallery of docs/visualizations.md: every picture is made by ONE ``gpusim`` command (listed in
:data:`COMMANDS`; docs/visualizations.md shows the same commands).

Usage::

    python3 docs/gallery/make_gallery.py            # rewrites docs/gallery/*.png (this script owns them)
    python3 docs/gallery/make_gallery.py --out DIR  # somewhere else (tests use a temporary folder)
    python3 docs/gallery/make_gallery.py --quick    # only the fast pictures (tests)

Small launches (the suite cases' test sizes) keep it to about a minute on one core.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: (file name, gpusim command line without the output option, part of --quick)
COMMANDS = [
    ("banks_transpose.png", "diagram banks transpose_conflict transpose_padded transpose_swizzled --warp 1", True),
    ("coalescing_copy_offset.png", "diagram coalescing copy_offset --warp 1", True),
    ("coalescing_aos.png", "diagram coalescing aos_update", False),
    ("warps_reduce_v1.png", "diagram warps reduce_v1 --sm 0 --cycles 4400:4640", True),
    ("roofline_reductions.png", "diagram roofline reduce_v0 reduce_v3 reduce_v6 matmul_naive matmul_tiled", False),
    ("stalls_reductions.png", "diagram stalls reduce_v0 reduce_v1 reduce_v2 reduce_v3 reduce_v4 reduce_v5 reduce_v6",
     False),
]


def main(argv: list[str] | None = None) -> int:
    from gpusim.cli import main as gpusim_main

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent), help="output folder")
    ap.add_argument("--quick", action="store_true", help="only the fast pictures")
    ap.add_argument("--regs", type=int, default=None, help="registers per thread for every launch (skips ptxas)")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, cmd, quick in COMMANDS:
        if a.quick and not quick:
            continue
        args = cmd.split() + ["-o", str(out / name), "--force"]
        if a.regs:
            args += ["--regs", str(a.regs)]
        print("gpusim", " ".join(args), flush=True)
        rc = gpusim_main(args)
        if rc:
            return rc
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
