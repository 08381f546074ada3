"""Expanding a sweep experiment into its points.

Owns: :class:`Point` (one run: a kernel and every parameter resolved), :func:`expand` (the
order of the points, which is the order of the results table), the precedence of parameter
sources, the launch shape a point resolves to, ``{param}`` substitution in PTX argument
strings, the point id (a digest of everything that defines the run, which ``--resume``
matches on) and the checks that need a whole point (launch fields on suite cases, unknown
configuration names or override paths, unreadable argument strings).

Order: for each kernel in file order, the cross product of the axes (``[sweep]`` parameters in
the order of :data:`~gpusim.sweep.spec.PARAMS`, then its ``set.*`` paths in file order, then each
``[[zip]]`` group as one axis; the last axis varies fastest), then the
explicit ``[[points]]`` in file order for every kernel they apply to. Precedence, lowest first:
built-in defaults (gpu ``h100``, mode ``timing``, sampling on, seed 0, no dynamic shared memory),
the kernel's own definition, ``[fixed]``, the axes, an explicit point.

Must not import: simpy, cupy, gpusim.timing, gpusim.functional, dask, pyarrow.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from gpusim.sweep.spec import PARAMS, Experiment, ResolvedKernel, SpecError, _axis_items, grid_for

__all__ = ["Point", "expand", "DEFAULTS"]

#: Parameter values of a point that sets nothing.
DEFAULTS: dict[str, Any] = {"gpu": "h100", "mode": "timing", "sampling": True, "seed": 0}
_LAUNCH = ("block", "grid", "threads", "shared_mem")


@dataclass(frozen=True)
class Point:
    """One run of a sweep.

    Attributes:
        index: position in the experiment's order (0-based; the results table is sorted by it).
        kernel: the :class:`~gpusim.sweep.spec.ResolvedKernel`.
        params: every parameter resolved: ``block``/``grid`` (tuples, ``None`` for suite cases),
            ``threads``, ``shared_mem``, ``n``, ``seed``, ``gpu``, ``mode``, ``sampling``,
            ``regs_per_thread`` (``None``: ptxas), ``set`` (dotted path -> value) and, for PTX
            kernels, ``args`` (the argument strings after ``{param}`` substitution).
        point_id: 16 hex digits of sha256 over the kernel's definition (PTX text included) and
            the parameters: equal ids mean the same run.
        config: the :class:`gpusim.config.GPUConfig` (``gpu`` with the ``set`` overrides), loaded
            here and shipped to the worker, so workers need no configuration files.
    """

    index: int
    kernel: ResolvedKernel
    params: dict
    point_id: str
    config: Any = field(default=None, compare=False, repr=False)

    def payload(self) -> dict[str, Any]:
        """A plain picklable dict for :func:`gpusim.sweep.runner.run_point` (ships the PTX text, so
        workers on other machines need no files)."""
        return {"index": self.index, "point_id": self.point_id, "kernel": self.kernel.payload(),
                "params": dict(self.params), "config": self.config}

    def columns(self) -> dict[str, Any]:
        """The point's parameter columns for the results table (``set.<path>`` flattened)."""
        p = self.params
        cols = {"kernel": self.kernel.name}
        for name in PARAMS:
            v = p.get(name)
            cols[name] = ",".join(map(str, v)) if isinstance(v, tuple) and len(v) > 1 else \
                (v[0] if isinstance(v, tuple) else v)
        for k, v in sorted(p["set"].items()):
            cols[f"set.{k}"] = v if isinstance(v, (int, float, str, bool)) else json.dumps(v, sort_keys=True)
        return cols


def _dims(v: Any) -> tuple[int, ...] | None:
    if v is None:
        return None
    return (v,) if isinstance(v, int) else tuple(v)


def _merge(into: dict, src: dict) -> None:
    for k, v in src.items():
        if k == "set":
            into["set"] = {**into.get("set", {}), **v}
        elif v is not None:
            into[k] = v


def _params_dict(model: Any) -> dict:
    d = {n: getattr(model, n) for n in PARAMS if getattr(model, n, None) is not None}
    if model.set:
        d["set"] = dict(model.set)
    return d


def _resolve(exp: Experiment, kernel: ResolvedKernel, layers: list[dict], where: str) -> dict:
    p: dict[str, Any] = {**DEFAULTS, "set": {}}
    for layer in [kernel.defaults] + layers:
        _merge(p, layer)
    for name in PARAMS:
        p.setdefault(name, None)
    if kernel.case is not None:
        bad = [f for f in _LAUNCH if p[f] not in (None, 0) or (f == "shared_mem" and p[f])]
        if bad:
            raise SpecError(f"{exp.where}: {where}: kernel {kernel.name!r} is the suite case {kernel.case!r}, whose "
                            f"launches are fixed; '{bad[0]}' applies to PTX kernels only")
        p["shared_mem"] = None
        return p
    p["block"], p["grid"] = _dims(p["block"]), _dims(p["grid"])
    p["shared_mem"] = p["shared_mem"] or 0
    if p["block"] is None:
        raise SpecError(f"{exp.where}: {where}: kernel {kernel.name!r} has no block size; set 'block' in the kernel, "
                        "[fixed], [sweep] or the point")
    if p["threads"] is not None and p["grid"] is not None and "grid" not in kernel.defaults:
        raise SpecError(f"{exp.where}: {where}: kernel {kernel.name!r}: both 'grid' and 'threads' are set; give one")
    if p["threads"] is not None:
        p["grid"] = grid_for(p["threads"], p["block"])
    if p["grid"] is None:
        raise SpecError(f"{exp.where}: {where}: kernel {kernel.name!r} has no grid; set 'grid' or 'threads'")
    from gpusim.experiment import parse_arg

    values = {k: (v[0] if isinstance(v, tuple) else v) for k, v in p.items() if k != "set" and v is not None}
    args = []
    for i, text in enumerate(kernel.args):
        try:
            text = text.format_map(values)
        except KeyError as exc:
            raise SpecError(f"{exp.where}: {where}: kernel {kernel.name!r} args[{i}] {text!r} uses {{{exc.args[0]}}}, "
                            "which this point does not set") from None
        except (ValueError, IndexError) as exc:
            raise SpecError(f"{exp.where}: {where}: kernel {kernel.name!r} args[{i}] {text!r}: {exc}") from None
        parse_arg(text, f"{exp.where}: {where}: kernel {kernel.name!r} args[{i}]")
        args.append(text)
    p["args"] = args
    return p


def _point_id(kernel: ResolvedKernel, params: dict) -> str:
    canon = json.dumps({k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()}, sort_keys=True,
                       default=str)
    return hashlib.sha256((kernel.digest + canon).encode()).hexdigest()[:16]


def expand(exp: Experiment) -> list[Point]:
    """Every point of ``exp`` in the experiment's order (see the module docstring).

    Each distinct configuration (``gpu`` with its ``set`` overrides) is loaded once, here, so
    that an unknown GPU or override path fails before any point runs, naming the point.
    Raises :class:`~gpusim.sweep.spec.SpecError`."""
    spec = exp.spec
    fixed = _params_dict(spec.fixed)
    axes: list[list[dict]] = []
    for key, values in _axis_items(spec.sweep):
        axes.append([_layer(key, v) for v in values])
    for z in spec.zip:
        items = _axis_items(z)
        axis = []
        for i in range(len(items[0][1])):
            merged: dict = {}
            for key, vals in items:
                _merge(merged, _layer(key, vals[i]))
            axis.append(merged)
        axes.append(axis)
    points: list[Point] = []
    seen: dict[str, Any] = {}
    for kernel in exp.kernels:
        for combo in itertools.product(*axes):
            layers = [fixed] + [dict(c) for c in combo]
            merged: dict = {}
            for layer in layers:
                _merge(merged, layer)
            _add(points, seen, exp, kernel, [merged], f"point {len(points)} ({_describe(merged)})")
    for i, ps in enumerate(spec.points):
        for kernel in exp.kernels:
            if ps.kernel is not None and ps.kernel != kernel.name:
                continue
            _add(points, seen, exp, kernel, [fixed, _params_dict(ps)], f"points[{i}]")
    return points


def _layer(key: str, value: Any) -> dict:
    if key.startswith("set."):
        return {"set": {key[4:]: value}}
    return {key: value}


def _describe(merged: dict) -> str:
    parts = [f"{k}={v}" for k, v in merged.items() if k != "set"]
    parts += [f"set.{k}={v}" for k, v in merged.get("set", {}).items()]
    return ", ".join(parts) or "no parameters"


def _add(points: list, seen: dict, exp: Experiment, kernel: ResolvedKernel, layers: list[dict], where: str) -> None:
    params = _resolve(exp, kernel, layers, where)
    pid = _point_id(kernel, params)
    if pid in seen:
        return  # an explicit point equal to one of the product: run once
    seen[pid] = len(points)
    points.append(Point(len(points), kernel, params, pid, _config(exp, seen, params, len(points), kernel.name)))


def _config(exp: Experiment, cache: dict, params: dict, index: int, kernel: str) -> Any:
    from gpusim import config as gpu_config
    from gpusim.errors import GpusimError

    gpu = params["gpu"]
    if str(gpu).endswith(".toml"):
        params["gpu"] = gpu = str((exp.base / gpu).resolve())
    key = ("config", gpu, json.dumps(params["set"], sort_keys=True, default=str))
    if key not in cache:
        try:
            cache[key] = gpu_config.load(gpu).with_overrides(params["set"])
        except GpusimError as exc:
            raise SpecError(f"{exp.where}: point {index} (kernel {kernel!r}, gpu {gpu!r}): {exc}") from None
    return cache[key]
