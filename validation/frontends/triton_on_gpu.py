"""Triton's tutorial kernels on a GPU (torch + Triton 3.6) and the same kernels on gpusim, bit for bit.

The kernels, their launch rules and their seeded inputs are those of
``validation/frontends/triton_kernels.py`` (one source for both sides).

GPU side (the H100 machine; torch, triton, numpy; gpusim not needed)::

    python3 validation/frontends/triton_on_gpu.py gpu --out $OUT             # small + GPU-filling cases
    python3 validation/frontends/triton_on_gpu.py gpu --out $OUT --small     # the small cases only

writes ``$OUT/triton_gpu.tar.gz`` holding ``triton_h100.npz`` (``CASE/OUTPUT`` arrays of the small cases;
for the GPU-filling cases ``CASE/OUTPUT.sha256``, a uint8 array of the SHA-256 of the output's bytes,
and its first 4096 elements as ``CASE/OUTPUT.head``; ``--save-large`` stores them whole),
``device.json`` (GPU name, cc, torch/triton versions) and ``ptx/CASE.ptx`` + ``ptx/CASE.json`` (Triton's
PTX and metadata of each case).

Timing (one launch per GPU-filling kernel, compiled beforehand by ``warmup`` so ncu sees only them;
``launch LABEL`` is printed before each, in ncu's row order)::

    ncu --clock-control none --metrics sm__cycles_elapsed.avg,gpu__time_duration.sum --csv --page raw \\
        --print-units base --log-file $OUT/triton_ncu.csv \\
        python3 validation/frontends/triton_on_gpu.py ncu

gpusim side (any machine with gpusim and triton)::

    python3 validation/frontends/triton_on_gpu.py compare triton_h100.npz [--gpu h100] [--large]

runs every case of the npz on gpusim (functional mode; the GPU-filling ones only with ``--large``:
they take long) and prints, per output, whether it equals the GPU's bit for bit (and how many
elements differ otherwise); exit status 1 if any differs.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import tarfile
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: the repository root first on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.frontends import triton_kernels as tk  # noqa: E402

HEAD = 4096


def _digest(a: np.ndarray) -> np.ndarray:
    return np.frombuffer(hashlib.sha256(np.ascontiguousarray(a).tobytes()).digest(), np.uint8)


def _torch_inputs(torch, name: str) -> dict:
    return {k: torch.from_numpy(v).cuda() for k, v in tk.inputs(name).items()}


def _torch_outputs(torch, name: str) -> dict:
    return tk.empty_outputs(name, torch, device="cuda")


def gpu(out: Path, small_only: bool, save_large: bool) -> None:
    """Run the cases on the current CUDA GPU and pack the results into ``out/triton_gpu.tar.gz``."""
    import torch
    import triton

    arrays: dict[str, np.ndarray] = {}
    files: dict[str, bytes] = {}
    names = tk.SMALL + ([] if small_only else tk.LARGE)
    for name in names:
        family = tk.CASES[name][0]
        ins, outs = _torch_inputs(torch, name), _torch_outputs(torch, name)
        t = time.time()
        compiled = tk.run_case(tk.KERNELS, name, ins, outs)
        torch.cuda.synchronize()
        print(f"{name}: {time.time() - t:.2f} s (first launch, compile included)", flush=True)
        for key in tk.OUTPUTS[family]:
            host = outs[key].cpu().numpy()
            if name in tk.SMALL or save_large:
                arrays[f"{name}/{key}"] = host
            else:
                arrays[f"{name}/{key}.sha256"] = _digest(host)
                arrays[f"{name}/{key}.head"] = host.reshape(-1)[:HEAD].copy()
        md = compiled.metadata
        files[f"ptx/{name}.ptx"] = compiled.asm["ptx"].encode()
        files[f"ptx/{name}.json"] = json.dumps(md._asdict(), default=str, indent=1).encode()
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    files["triton_h100.npz"] = buf.getvalue()
    props = torch.cuda.get_device_properties(0)
    files["device.json"] = json.dumps({"name": props.name, "cc": list(torch.cuda.get_device_capability(0)),
                                       "torch": torch.__version__, "triton": triton.__version__,
                                       "cases": names}, indent=1).encode()
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out / "triton_gpu.tar.gz", "w:gz") as tar:
        for fname, data in files.items():
            info = tarfile.TarInfo(fname)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    print(f"wrote {out / 'triton_gpu.tar.gz'} ({len(arrays)} arrays, {len(names)} cases)")


class _Warmup:
    """``kernel[grid](...)`` that compiles without launching (``JITFunction.warmup``)."""

    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.fn.warmup(*args, grid=grid, **kwargs)


def launches() -> list[str]:
    """The labels of the ncu mode's launches, in order."""
    return list(tk.LARGE)


def ncu() -> None:
    """One launch per GPU-filling case (all compiled first), for ncu."""
    import torch

    data = {name: (_torch_inputs(torch, name), _torch_outputs(torch, name)) for name in launches()}
    warm = {f: _Warmup(fn) for f, fn in tk.KERNELS.items()}
    for name, (ins, outs) in data.items():
        tk.run_case(warm, name, ins, outs)
    torch.cuda.synchronize()
    for name, (ins, outs) in data.items():
        print(f"launch {name}", flush=True)
        tk.run_case(tk.KERNELS, name, ins, outs)
        torch.cuda.synchronize()


def compare(npz: Path, gpu_name: str, large: bool) -> int:
    """Run the npz's cases on gpusim and compare bit for bit; returns the number of differing outputs."""
    import gpusim
    from gpusim.frontends.triton import jit

    ref = np.load(npz)
    cases = sorted({k.split("/")[0] for k in ref.files}, key=list(tk.CASES).index)
    kernels = {f: jit(fn) for f, fn in tk.KERNELS.items()}
    bad = 0
    with gpusim.Device(gpu_name):
        for name in cases:
            if name in tk.LARGE and not large:
                print(f"{name}: skipped (GPU-filling; pass --large)")
                continue
            family = tk.CASES[name][0]
            ins = {k: gpusim.asarray(v) for k, v in tk.inputs(name).items()}
            outs = tk.empty_outputs(name, gpusim)
            t = time.time()
            try:
                tk.run_case(kernels, name, ins, outs)
            except gpusim.GpusimError as exc:
                print(f"{name}: gpusim cannot run it: {exc}")
                bad += len(tk.OUTPUTS[family])
                continue
            for key in tk.OUTPUTS[family]:
                got = outs[key].get()
                if f"{name}/{key}" in ref.files:
                    want = ref[f"{name}/{key}"]
                    same = got.tobytes() == want.tobytes()
                    ndiff = int((got.view(f"u{got.itemsize}") != want.view(f"u{want.itemsize}")).sum())
                else:
                    same = bytes(_digest(got)) == bytes(ref[f"{name}/{key}.sha256"])
                    head = ref[f"{name}/{key}.head"]
                    ndiff = int((got.reshape(-1)[:head.size].view(f"u{got.itemsize}") != head.view(f"u{head.itemsize}")).sum())
                    ndiff = ndiff if not same else 0
                bad += not same
                print(f"{name}/{key}: {'bit-exact' if same else f'DIFFERS ({ndiff} elements)'} "
                      f"({time.time() - t:.1f} s on gpusim)")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gpu", help="run on the CUDA GPU and save outputs, PTX and metadata")
    g.add_argument("--out", type=Path, required=True)
    g.add_argument("--small", action="store_true", help="the small cases only")
    g.add_argument("--save-large", action="store_true", help="store the GPU-filling outputs whole")
    sub.add_parser("ncu", help="one launch per GPU-filling kernel (wrap in ncu)")
    c = sub.add_parser("compare", help="run the npz's cases on gpusim and compare bit for bit")
    c.add_argument("npz", type=Path)
    c.add_argument("--gpu", default="h100")
    c.add_argument("--large", action="store_true", help="also the GPU-filling cases (slow)")
    args = ap.parse_args(argv)
    if args.cmd == "gpu":
        gpu(args.out, args.small, args.save_large)
        return 0
    if args.cmd == "ncu":
        ncu()
        return 0
    return 1 if compare(args.npz, args.gpu, args.large) else 0


if __name__ == "__main__":
    sys.exit(main())
