"""The sweep experiment file: a TOML file read into strict pydantic models.

Owns: the schema of a sweep experiment (:class:`SweepSpec`: kernels, fixed parameters, the
swept axes, ``zip`` groups, explicit points, metrics), the parameter vocabulary
(:data:`PARAMS`), the default metrics (:data:`DEFAULT_METRICS`), and turning every mistake
into a :class:`gpusim.errors.GpusimError` that names the file and the field path
(``sweep.block[2]: ...``). Checks that need other parts of gpusim (suite case names, PTX
files, configuration names and override paths, argument strings) are done here too, before
any point runs.

Must not import: simpy, cupy, gpusim.timing, gpusim.functional, dask, pyarrow. It may import
gpusim.config, gpusim.errors, gpusim.experiment (the ``gpusim run`` argument language) and,
inside functions, gpusim.suite.

File layout (every table but ``[[kernels]]`` optional)::

    name = "occupancy what-if"
    metrics = ["sm__cycles_elapsed.avg", "dram__bytes.sum.per_second"]   # default: DEFAULT_METRICS

    [[kernels]]                  # a suite case ...
    case = "copy_vec4"
    n = 65536
    [[kernels]]                  # ... or a PTX kernel in gpusim run's experiment format
    name = "copy"                #     (label; default: the case or kernel name)
    ptx = "../gpusim/suite/ptx/memory.ptx"      # relative to this file
    kernel = "copy_vec4"
    threads = 16384              # grid = ceil(threads / block); or grid = 64
    block = 256
    args = ["f32[{n}]:random", "f32[{n}]", "u32={threads}"]   # {param} is replaced by its value
    [[kernels]]                  # ... or gpusim run's experiment TOML itself
    experiment = "../validation/experiments/copy_offset.toml"

    [fixed]                      # every point (defaults: gpu "h100", mode "timing", sampling true)
    gpu = "h100"
    [sweep]                      # the cross product: one list per parameter
    block = [64, 128, 256]
    "set.sm.scheduler.policy" = ["gto", "lrr"]      # or set = { "sm.scheduler.policy" = [...] }
    [[zip]]                      # parameters that move together: one axis of the product
    gpu = ["h100", "a100"]
    "set.l2.size_bytes" = [25165824, 20971520]
    [[points]]                   # explicit points, run after the product (kernel = "..." picks one)
    block = 1024
"""

from __future__ import annotations

import hashlib
import math
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError, create_model, field_validator

from gpusim.errors import GpusimError

__all__ = ["SweepSpec", "KernelSpec", "Params", "PARAMS", "DEFAULT_METRICS", "DERIVED_METRICS", "load_spec",
           "parse_spec", "SpecError"]


class SpecError(GpusimError):
    """A sweep experiment file is invalid (the message names the file and the field path)."""


PosInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]


def _check_dims(v: Any) -> Any:
    ok = (isinstance(v, int) and not isinstance(v, bool) and v >= 1) or (
        isinstance(v, list) and 1 <= len(v) <= 3 and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1
                                                         for x in v))
    if not ok:
        raise ValueError("must be a positive integer or a list of 1 to 3 positive integers")
    return v


#: A launch dimension: ``256`` or ``[16, 16]`` (1 to 3 positive integers).
Dims = Annotated[Union[int, list[int]], PlainValidator(_check_dims)]

#: Metrics kept when the file names none: cycles, time, theoretical and achieved occupancy, hit
#: rates, DRAM bytes and bandwidth, instructions, and the three most frequent stall reasons
#: (``stall_1``..``stall_3`` with ``stall_1_pct``..: Nsight's short reason names, 'selected' excluded).
DEFAULT_METRICS = (
    "sm__cycles_elapsed.avg", "gpu__time_duration.sum", "sm__maximum_warps_per_active_cycle_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "l1tex__t_sector_hit_rate.pct",
    "lts__t_sector_op_read_hit_rate.pct", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "dram__bytes.sum.per_second", "smsp__inst_executed.sum", "top_stalls",
)
#: Metrics computed from a launch's own: DRAM bytes read + written, that per second of
#: ``gpu__time_duration.sum``, the launch shape in Nsight's ``launch__*`` names, and ``top_stalls``.
DERIVED_METRICS = ("dram__bytes.sum", "dram__bytes.sum.per_second", "launch__block_size", "launch__grid_size",
                   "launch__registers_per_thread", "launch__shared_mem_per_block_dynamic",
                   "launch__occupancy_limit_blocks", "launch__occupancy_limit_registers",
                   "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps", "top_stalls")
_METRIC = re.compile(r"^[a-z0-9]+__[A-Za-z0-9_.*?\[\]]+$")


class Params(BaseModel):
    """The parameters of one point; ``None`` means 'not set here'.

    ``block``/``grid``: launch shape (int or 1-3 ints); ``threads``: total threads in x, the grid
    then being ``ceil(threads / block.x)``; ``shared_mem``: dynamic shared memory per block,
    bytes; ``n``: a suite case's problem size (and ``{n}`` in PTX argument strings); ``seed``:
    input seed; ``gpu``: configuration name or TOML path; ``mode``: ``functional`` or
    ``timing``; ``sampling``: time large grids from a sample (timing mode); ``regs_per_thread``:
    registers per thread for occupancy (default: ptxas's answer); ``set``: configuration
    overrides by the dotted paths ``--set`` takes."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    block: Dims | None = None
    grid: Dims | None = None
    threads: PosInt | None = None
    shared_mem: NonNegInt | None = None
    n: PosInt | None = None
    seed: NonNegInt | None = None
    gpu: str | None = None
    mode: Literal["functional", "timing"] | None = None
    sampling: bool | None = None
    regs_per_thread: Annotated[int, Field(ge=1, le=255)] | None = None
    set: dict[str, Any] = Field(default_factory=dict)


#: The parameter names (besides ``set.<dotted path>``), in the order the results table lists them.
PARAMS = tuple(n for n in Params.model_fields if n != "set")

# The same vocabulary with one non-empty list of values per parameter: [sweep] and [[zip]].
_axis_fields: dict[str, Any] = {
    name: (Annotated[list[f.annotation.__args__[0]], Field(min_length=1)] | None, None)  # type: ignore[union-attr]
    for name, f in Params.model_fields.items() if name != "set"}
_axis_fields["set"] = (dict[str, Annotated[list[Any], Field(min_length=1)]], Field(default_factory=dict))
Axes = create_model("Axes", __config__=ConfigDict(extra="forbid", frozen=True, strict=True), **_axis_fields)
Axes.__doc__ = "Swept parameters: one non-empty list of values per parameter (see :class:`Params`)."


class PointSpec(Params):
    """An explicit point: parameters, and optionally the ``kernel`` (label) it is for."""

    kernel: str | None = None


class KernelSpec(BaseModel):
    """One kernel of the sweep: a suite ``case``, a ``ptx`` file with its launch, or an ``experiment``
    TOML of ``gpusim run``. ``args`` use ``gpusim run``'s argument language, with ``{param}``
    replaced by the point's value of that parameter."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: str | None = None
    case: str | None = None
    ptx: str | None = None
    experiment: str | None = None
    kernel: str | None = None
    args: list[str] | None = None
    block: Dims | None = None
    grid: Dims | None = None
    threads: PosInt | None = None
    shared_mem: NonNegInt | None = None
    n: PosInt | None = None
    seed: NonNegInt | None = None
    set: dict[str, Any] = Field(default_factory=dict)


class SweepSpec(BaseModel):
    """A whole sweep experiment file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: str = ""
    description: str = ""
    kernels: Annotated[list[KernelSpec], Field(min_length=1)]
    metrics: Annotated[list[str], Field(min_length=1)] = list(DEFAULT_METRICS)
    fixed: Params = Field(default_factory=Params)
    sweep: Axes = Field(default_factory=Axes)  # type: ignore[valid-type]
    zip: list[Axes] = Field(default_factory=list)  # type: ignore[valid-type]
    points: list[PointSpec] = Field(default_factory=list)

    @field_validator("metrics")
    @classmethod
    def _metric_names(cls, v: list[str]) -> list[str]:
        for i, m in enumerate(v):
            if m not in DERIVED_METRICS and not _METRIC.match(m):
                raise ValueError(f"[{i}] {m!r} is not an Nsight Compute metric name (unit__counter.rollup, e.g. "
                                 f"sm__cycles_elapsed.avg; '*' patterns allowed) nor one of "
                                 f"{', '.join(DERIVED_METRICS)}")
        if len(set(v)) != len(v):
            raise ValueError("a metric is named twice")
        return v


# --------------------------------------------------------------------------- reading


def _flatten_set(node: Any, prefix: str, out: dict[str, Any]) -> None:
    """``{"sm": {"scheduler": {"policy": v}}}`` -> ``{"sm.scheduler.policy": v}`` (a table-valued
    override is written by its dotted leaf paths)."""
    if isinstance(node, dict) and node:
        for k, v in node.items():
            _flatten_set(v, f"{prefix}.{k}" if prefix else str(k), out)
    else:
        out[prefix] = node


def _normalise_params(raw: Any) -> Any:
    """Move ``"set.a.b" = v`` keys and nested ``set`` tables into one flat ``set`` dict."""
    if not isinstance(raw, dict):
        return raw
    out = {k: v for k, v in raw.items() if k != "set" and not str(k).startswith("set.")}
    flat: dict[str, Any] = {}
    if "set" in raw:
        if not isinstance(raw["set"], dict):
            out["set"] = raw["set"]  # pydantic reports the type error
        else:
            _flatten_set(raw["set"], "", flat)
    for k, v in raw.items():
        if str(k).startswith("set."):
            if isinstance(v, dict):
                _flatten_set(v, str(k)[4:], flat)
            else:
                flat[str(k)[4:]] = v
    if flat or "set" not in out:
        out["set"] = flat
    return out


def _normalise(data: dict) -> dict:
    data = dict(data)
    for key in ("fixed", "sweep"):
        if key in data:
            data[key] = _normalise_params(data[key])
    for key in ("zip", "points", "kernels"):
        if isinstance(data.get(key), list):
            data[key] = [_normalise_params(x) for x in data[key]]
    return data


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("int", "list[int]", "constrained-int", "list[constrained-int]", "function-after[]"):
            continue  # pydantic's union-branch labels
        else:
            out += ("." if out else "") + str(part)
    return out


def _format(exc: ValidationError, where: str) -> SpecError:
    lines, seen = [], set()
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p.startswith(("constrained",
                                                                                                    "function")))))
        path = _loc(loc)
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
            if len(loc) >= 1 and loc[0] in ("fixed", "sweep", "zip", "points"):
                msg += f" (parameters: {', '.join(PARAMS)}, set.<dotted config path>)"
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif "input" in err and not isinstance(err["input"], dict) and len(repr(err["input"])) <= 60:
            msg = f"{msg} (got {err['input']!r})"
        if (path, msg) in seen:
            continue
        seen.add((path, msg))
        lines.append(f"{path}: {msg}" if path else msg)
    if len(lines) == 1:
        return SpecError(f"{where}: {lines[0]}")
    return SpecError(f"{where}: {len(lines)} errors:\n  " + "\n  ".join(lines))


def parse_spec(data: dict, where: str = "<experiment>", base: Path | None = None) -> "Experiment":
    """Validate an already-parsed TOML document; ``base`` is the folder relative paths start from.
    Raises :class:`SpecError` naming ``where`` and the field path of every mistake."""
    try:
        spec = SweepSpec.model_validate(_normalise(data))
    except ValidationError as exc:
        raise _format(exc, where) from None
    return Experiment(spec, where, base or Path.cwd())


def load_spec(path: str | Path) -> "Experiment":
    """Read and validate a sweep experiment TOML file (see the module docstring).

    Returns an :class:`Experiment` whose kernels are resolved (PTX text read, suite cases looked
    up) and whose parameters were checked against gpusim (configurations, override paths,
    argument strings). Raises :class:`SpecError` naming the file and the field path."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise SpecError(f"{path}: no such experiment file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: invalid TOML: {exc}") from None
    exp = parse_spec(data, str(path), path.resolve().parent)
    exp.text = path.read_text()
    return exp


class ResolvedKernel:
    """A kernel ready to ship to a worker: label, and either a suite ``case`` or PTX ``text``.

    Attributes: name, case, kernel (entry name), ptx_text, ptx_name, args (list of str),
    defaults (the launch fields and ``set`` the kernel definition gives, as a params dict),
    digest (sha256 of what defines it, for point ids)."""

    def __init__(self, name: str, case: str | None, kernel: str | None, ptx_text: str | None, ptx_name: str | None,
                 args: list[str], defaults: dict[str, Any]):
        self.name, self.case, self.kernel = name, case, kernel
        self.ptx_text, self.ptx_name, self.args, self.defaults = ptx_text, ptx_name, list(args), defaults
        h = hashlib.sha256(repr((name, case, kernel, args, sorted(defaults.items(), key=str))).encode())
        h.update((ptx_text or "").encode())
        self.digest = h.hexdigest()

    def payload(self) -> dict[str, Any]:
        """A plain picklable dict for :func:`gpusim.sweep.runner.run_point`."""
        return {"name": self.name, "case": self.case, "kernel": self.kernel, "ptx_text": self.ptx_text,
                "ptx_name": self.ptx_name, "args": self.args}


class Experiment:
    """A validated sweep experiment: :class:`SweepSpec` plus resolved kernels.

    Attributes: spec, where (file name for messages), base (folder of relative paths),
    kernels (list of :class:`ResolvedKernel`), metrics (list of str), text (the TOML text, or '')."""

    def __init__(self, spec: SweepSpec, where: str, base: Path):
        self.spec, self.where, self.base, self.text = spec, where, base, ""
        self.metrics = list(spec.metrics)
        self.kernels = [self._resolve(i, k) for i, k in enumerate(spec.kernels)]
        names = [k.name for k in self.kernels]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise SpecError(f"{where}: kernels: the label {dup[0]!r} is used twice; give each kernel its own 'name'")
        for i, p in enumerate(spec.points):
            if p.kernel is not None and p.kernel not in names:
                raise SpecError(f"{where}: points[{i}].kernel: no kernel is labelled {p.kernel!r} "
                                f"(labels: {', '.join(names)})")
        for i, z in enumerate(spec.zip):
            lengths = {k: len(v) for k, v in _axis_items(z)}
            if len(set(lengths.values())) > 1:
                raise SpecError(f"{where}: zip[{i}]: the lists must have one length, got "
                                + ", ".join(f"{k}: {n}" for k, n in lengths.items()))
            if not lengths:
                raise SpecError(f"{where}: zip[{i}]: empty group; give at least one parameter list")
        seen: dict[str, str] = {}
        for label, axes in [("sweep", spec.sweep)] + [(f"zip[{i}]", z) for i, z in enumerate(spec.zip)]:
            for key, _ in _axis_items(axes):
                if key in seen:
                    raise SpecError(f"{where}: {label}.{key}: already swept in {seen[key]}; a parameter may "
                                    "vary on one axis only (put parameters that move together in one [[zip]])")
                seen[key] = label

    def _resolve(self, i: int, k: KernelSpec) -> ResolvedKernel:
        where = f"{self.where}: kernels[{i}]"
        given = [f for f in ("case", "ptx", "experiment") if getattr(k, f) is not None]
        if len(given) != 1:
            raise SpecError(f"{where}: give exactly one of 'case' (a suite case), 'ptx' (with kernel, block, "
                            f"args) or 'experiment' (a gpusim run TOML file); got {', '.join(given) or 'none'}")
        launch = {f: getattr(k, f) for f in ("block", "grid", "threads", "shared_mem", "n", "seed")
                  if getattr(k, f) is not None}
        if k.set:
            launch["set"] = dict(k.set)
        if k.case is not None:
            from gpusim.suite import CASES

            if k.case not in CASES:
                import difflib

                close = difflib.get_close_matches(k.case, list(CASES), n=1)
                raise SpecError(f"{where}.case: no suite case {k.case!r}"
                                + (f"; did you mean {close[0]!r}?" if close else "") + " ('gpusim run --list')")
            bad = [f for f in ("kernel", "args", "block", "grid", "threads", "shared_mem") if getattr(k, f) is not None]
            if bad:
                raise SpecError(f"{where}.{bad[0]}: a suite case has its own launches and inputs; only n, seed and "
                                "set apply (use 'ptx' to sweep a launch shape)")
            return ResolvedKernel(k.name or k.case, k.case, None, None, None, [], launch)
        if k.experiment is not None:
            from gpusim.experiment import load_experiment

            bad = [f for f in ("kernel", "args", "block", "grid", "threads") if getattr(k, f) is not None]
            if bad:
                raise SpecError(f"{where}.{bad[0]}: comes from the experiment file; sweep it in [sweep] instead")
            path = self.base / k.experiment
            if not path.is_file():
                raise SpecError(f"{where}.experiment: no such file {path}")
            e = load_experiment(path)
            if e.ptx is None:
                raise SpecError(f"{where}.experiment: {path} runs a {e.frontend} kernel from a 'python' file; sweeps "
                                "take PTX/.cu experiments only (use 'gpusim run' for this one)")
            defaults = {"grid": list(e.grid), "block": list(e.block), "shared_mem": e.shared_mem, "seed": e.seed}
            if "gpu" in tomllib.loads(path.read_text()):
                defaults["gpu"] = e.gpu
            defaults.update(launch)
            if e.overrides:
                defaults["set"] = {**e.overrides, **launch.get("set", {})}
            return self._ptx_kernel(where, k.name or e.kernel, Path(e.ptx), e.kernel, [a.text for a in e.args],
                                    defaults)
        if k.kernel is None or k.args is None:
            raise SpecError(f"{where}: a 'ptx' kernel needs 'kernel' (the .entry name) and 'args' (gpusim run's "
                            "argument strings, one per parameter)")
        return self._ptx_kernel(where, k.name or k.kernel, self.base / k.ptx, k.kernel, k.args, launch)

    def _ptx_kernel(self, where: str, name: str, path: Path, kernel: str, args: list[str],
                    defaults: dict) -> ResolvedKernel:
        try:
            text = path.read_text()
        except OSError as exc:
            raise SpecError(f"{where}.ptx: cannot read {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise SpecError(f"{where}.ptx: {path} is not a text file ({exc})") from None
        if path.suffix == ".cu":  # CUDA C: the kernel's name (a template's before '<') must appear in it
            if not re.search(rf"\b{re.escape(kernel.split('<')[0].strip())}\s*[(<]", text):
                raise SpecError(f"{where}.kernel: {path.name} has no kernel named {kernel!r}")
        elif not re.search(rf"\.entry\s+{re.escape(kernel)}\s*\(", text):
            entries = re.findall(r"\.entry\s+(\w+)", text)
            raise SpecError(f"{where}.kernel: {path.name} has no .entry {kernel!r} (entries: {', '.join(entries)})")
        return ResolvedKernel(name, None, kernel, text, path.name, args, defaults)


def _axis_items(axes: Any) -> list[tuple[str, list]]:
    """(parameter, values) of an :data:`Axes` model in file order; ``set`` paths as ``set.<path>``."""
    items = [(n, getattr(axes, n)) for n in PARAMS if getattr(axes, n) is not None]
    return items + [(f"set.{k}", v) for k, v in axes.set.items()]


def grid_for(threads: int, block: tuple[int, ...]) -> tuple[int, ...]:
    """The 1-D grid that covers ``threads`` threads with blocks of ``block``: ``ceil(threads / block.x)``."""
    return (math.ceil(threads / block[0]),)
