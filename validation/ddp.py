"""The multi-GPU model (gpusim.multigpu) against ``validation/probes/ddp_step.py``'s measurements.

Reads a machine's ``collectives.json`` and ``ddp.json`` (``validation/reports/<machine>/ddp/``) and prints
Markdown tables: per collective, world and size the measured and modelled time and the relative error;
the mean absolute relative error (MAE) per collective and world; the DDP steps (worlds 1, 2, 4; buckets
1/25/100 MB). ``--fit`` fits the topology's fitted constants on the FIT machine only (Nelder-Mead on the
MAE) and prints them for the TOML; the TEST machine is only ever scored.

Usage::

    python3 -m validation.ddp                      # score the H200 hosts (hgx_h200_nvswitch.toml) and the H100 pair
    python3 -m validation.ddp --fit                # fit on the fit machine, print the constants, score both

Imports gpusim.multigpu, numpy, scipy (the fit); never cupy or torch.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gpusim.multigpu import collective_time, ddp_step, load_topology
from gpusim.multigpu.ddp import layers_from_probe

ROOT = Path(__file__).resolve().parent / "reports"
#: the machines: the fit one (constants are fitted here only) and the held-back test pair
FIT, TEST = "h200x4", "h200x2"
TOPOLOGY = "hgx_h200_nvswitch"
#: machines only scored, with their own topology: (machine, topology, role)
OTHERS = (("h100x2", "hgx_h100_nvswitch", "test (held back, H100 pair)"),)
#: sizes from here on are bandwidth-bound; below, the framework's per-call floor dominates
BIG = 4 << 20
#: collective constants fitted: dotted topology path -> (start, low, high)
COLL_PARAMS = {
    "link.bw_efficiency": (0.8, 0.3, 1.0),
    "nccl.call_overhead_us": (30.0, 0.0, 100.0),
    "nccl.launch_us": (10.0, 0.0, 100.0),
    "nccl.bw_factor.reduce_scatter": (1.0, 0.3, 2.0),
    "nccl.bw_factor.all_gather": (1.0, 0.3, 2.0),
    "nccl.bw_factor.broadcast": (1.0, 0.3, 2.0),
}
DDP_PARAMS = {
    "ddp.overlap_slowdown": (1.5, 1.0, 3.0),
}


def load(machine: str, what: str) -> dict:
    """The probe's JSON ``what`` (``collectives`` or ``ddp``) of ``machine``."""
    with open(ROOT / machine / "ddp" / f"{what}.json") as f:
        return json.load(f)


def _set(topo, params: dict, values) -> object:
    over = {}
    for (path, _), v in zip(params.items(), values):
        if path.startswith("nccl.bw_factor."):
            bf = dict(over.get("nccl.bw_factor", topo.nccl.bw_factor))
            bf[path.rsplit(".", 1)[1]] = float(v)
            over["nccl.bw_factor"] = bf
        else:
            over[path] = float(v)
    return topo.with_overrides(over)


def coll_errors(topo, machine: str) -> list[dict]:
    """Per measured row: the model's time and the relative error ``model / measured - 1``."""
    out = []
    for r in load(machine, "collectives")["rows"]:
        m = collective_time(topo, r["collective"], r["bytes"], r["world"])
        out.append({**r, "model_s": m.seconds, "err": m.seconds / r["seconds"] - 1, "proto": m.protocol,
                    "algo": m.algorithm, "channels": m.channels})
    return out


def mae(rows) -> float:
    """Mean absolute relative error of ``rows`` (0 for none)."""
    return sum(abs(r["err"]) for r in rows) / len(rows) if rows else 0.0


def ddp_errors(topo, machine: str) -> list[dict]:
    """Per measured DDP step: the model's step (layers from the probe's one-GPU per-layer times)."""
    rows = load(machine, "ddp")["rows"]
    timed = next(r["layers_timed"] for r in rows if "layers_timed" in r)
    layers = layers_from_probe(timed, topo)
    out = []
    for r in rows:
        if "step_s" not in r:
            continue
        m = ddp_step(topo, layers, r["world"], bucket_cap_mb=r["bucket_cap_mb"] or 25.0)
        out.append({**r, "model_s": m.seconds, "err": m.seconds / r["step_s"] - 1, "exposed_s": m.exposed_comm_s,
                    "buckets": len(m.buckets)})
    return out


def fit(topo0):
    """Fit COLL_PARAMS on the FIT machine's collectives, then DDP_PARAMS on its DDP steps; returns the topology."""
    import numpy as np
    from scipy.optimize import minimize

    def run(params, base, score):
        keys = list(params)
        lo = np.array([params[k][1] for k in keys])
        hi = np.array([params[k][2] for k in keys])
        x0 = np.array([params[k][0] for k in keys])

        def f(x):
            x = np.clip(x, lo, hi)
            return score(_set(base, params, x))
        res = minimize(f, x0, method="Nelder-Mead", options={"maxfev": 250, "xatol": 1e-3, "fatol": 1e-4})
        return _set(base, params, np.clip(res.x, lo, hi))

    topo = run(COLL_PARAMS, topo0, lambda t: mae(coll_errors(t, FIT)))
    # hook_time_scale: the one-GPU step (no communication) is the layers' scaled times and the optimizer
    rows = load(FIT, "ddp")["rows"]
    timed = next(r["layers_timed"] for r in rows if "layers_timed" in r)
    step1 = next(r["step_s"] for r in rows if r.get("world") == 1 and "step_s" in r)
    raw = layers_from_probe(timed, topo.with_overrides({"ddp.hook_time_scale": 1.0}))
    opt = ddp_step(topo, raw, 1).optimizer_s
    work = sum(ly.forward_s + ly.backward_s for ly in raw)
    topo = topo.with_overrides({"ddp.hook_time_scale": (step1 - topo.ddp.step_overhead_us * 1e-6 - opt) / work})
    topo = run(DDP_PARAMS, topo, lambda t: mae([r for r in ddp_errors(t, FIT) if r["world"] > 1]))
    return topo


def machines(topo) -> list[tuple[str, object, str]]:
    """``(machine, topology, role)`` of every machine scored: the fit and test H200 hosts with ``topo``, and each
    of :data:`OTHERS` whose measurements are committed, with its own topology (which carries the H200 fit)."""
    out = [(FIT, topo, "fit"), (TEST, topo, "test (held back)")]
    return out + [(m, load_topology(t), role) for m, t, role in OTHERS if (ROOT / m / "ddp").is_dir()]


def report(topo, out=sys.stdout) -> dict:
    """Print the Markdown tables for every machine of :func:`machines`; returns the MAEs
    ``{(machine, collective, world): mae}``."""
    scores = {}
    for machine, mtopo, role in machines(topo):
        rows = coll_errors(mtopo, machine)
        print(f"\n### Collectives, {machine} ({role})\n", file=out)
        print("| collective | W | bytes | measured us | model us | error | model algo/proto/channels |", file=out)
        print("|---|---|---|---|---|---|---|", file=out)
        for r in rows:
            print(f"| {r['collective']} | {r['world']} | {r['bytes']:,} | {r['seconds'] * 1e6:.1f} | "
                  f"{r['model_s'] * 1e6:.1f} | {r['err'] * 100:+.1f} % | {r['algo']}/{r['proto']}/{r['channels']} |",
                  file=out)
        print(f"\n| {machine} | W | MAE, all sizes | MAE < {BIG >> 20} MiB (host floor) | MAE >= {BIG >> 20} MiB | sizes |"
              "\n|---|---|---|---|---|---|", file=out)

        def line(name, w, sel):
            small = [r for r in sel if r["bytes"] < BIG]
            big = [r for r in sel if r["bytes"] >= BIG]
            print(f"| {name} | {w} | {mae(sel) * 100:.1f} % | {mae(small) * 100:.1f} % | {mae(big) * 100:.1f} % | "
                  f"{len(sel)} |", file=out)
            return mae(sel), mae(small), mae(big)
        for coll in ("all_reduce", "reduce_scatter", "all_gather", "broadcast"):
            for w in sorted({r["world"] for r in rows}):
                sel = [r for r in rows if r["collective"] == coll and r["world"] == w]
                if sel:
                    scores[(machine, coll, w)] = line(coll, w, sel)
        scores[(machine, "all", 0)] = line("all", "-", rows)
        d = ddp_errors(mtopo, machine)
        print(f"\n### DDP steps, {machine} ({role})\n", file=out)
        print("| W | bucket_cap_mb | measured ms | model ms | error | buckets | exposed comm ms |", file=out)
        print("|---|---|---|---|---|---|---|", file=out)
        for r in d:
            print(f"| {r['world']} | {r['bucket_cap_mb']} | {r['step_s'] * 1e3:.3f} | {r['model_s'] * 1e3:.3f} | "
                  f"{r['err'] * 100:+.1f} % | {r['buckets']} | {r['exposed_s'] * 1e3:.3f} |", file=out)
        scores[(machine, "ddp", 0)] = mae(d)
        print(f"\nDDP step MAE {machine}: {mae(d) * 100:.1f} % ({len(d)} steps)", file=out)
    return scores


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m validation.ddp", description=__doc__.split("\n\n")[0])
    p.add_argument("--topology", default=TOPOLOGY)
    p.add_argument("--fit", action="store_true", help="fit the constants on the fit machine and print them")
    a = p.parse_args(argv)
    topo = load_topology(a.topology)
    if a.fit:
        topo = fit(topo)
        print("Fitted constants (put them into the topology TOML):")
        for path in list(COLL_PARAMS) + ["ddp.hook_time_scale"] + list(DDP_PARAMS):
            node = topo
            for part in path.split("."):
                node = node[part] if isinstance(node, dict) else getattr(node, part)
            print(f"  {path} = {node:.4g}")
    report(topo)
    return 0


if __name__ == "__main__":
    sys.exit(main())
