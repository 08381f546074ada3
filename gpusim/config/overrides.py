"""Validating configuration data and applying dotted-path overrides.

Owns: :func:`apply_overrides` (the implementation of
:meth:`gpusim.config.models.GPUConfig.with_overrides`) and :func:`validate`
(pydantic validation whose failure becomes one :class:`gpusim.errors.ConfigError`
naming the file or override and every dotted field path). Both work on any
pydantic model class, so this module needs neither :mod:`gpusim.config.models`
nor :mod:`gpusim.config.loader`: both import it (this breaks the circle
models -> loader -> models that ``with_overrides`` used to make).

Must not import: simpy, cupy, or gpusim modules other than :mod:`gpusim.errors`.
"""

from __future__ import annotations

import copy
import difflib
from typing import Any, Mapping, TypeVar

from pydantic import BaseModel, ValidationError

from gpusim.errors import ConfigError

__all__ = ["apply_overrides", "validate"]

M = TypeVar("M", bound=BaseModel)


def _format_loc(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _format_validation_error(exc: ValidationError, where: str) -> ConfigError:
    lines = []
    for err in exc.errors():
        path = _format_loc(err["loc"])
        msg = err["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif "input" in err and not isinstance(err["input"], (dict, list, tuple)):
            msg = f"{msg} (got {err['input']!r})"
        lines.append(f"{path}: {msg}" if path else msg)
    if len(lines) == 1:
        return ConfigError(f"{where}: {lines[0]}")
    return ConfigError(f"{where}: {len(lines)} invalid fields:\n  " + "\n  ".join(lines))


def validate(model: type[M], data: Mapping[str, Any], where: str) -> M:
    """``model.model_validate(data)``, a failure raised as one :class:`ConfigError` naming ``where``."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _format_validation_error(exc, where) from None


def apply_overrides(cfg: M, overrides: Mapping[str, Any]) -> M:
    """Implementation of :meth:`GPUConfig.with_overrides` (dotted path -> value): a validated
    copy of ``cfg`` (of ``cfg``'s own model class) with the fields replaced."""
    if not overrides:
        return cfg
    data = cfg.model_dump(mode="python")
    for path, value in overrides.items():
        if not isinstance(path, str):
            raise ConfigError(f"override {path!r}: a field path is a str (e.g. 'sm.max_warps'), not a "
                              f"{type(path).__name__}")
        parts = path.split(".")
        if not path or any(not p for p in parts):
            raise ConfigError(f"override {path!r}: not a dotted field path (e.g. sm.max_warps)")
        node: Any = data
        for depth, part in enumerate(parts):
            here = ".".join(parts[: depth + 1])
            if not isinstance(node, dict):
                raise ConfigError(
                    f"override {path!r}: {'.'.join(parts[:depth])} is a value, not a section"
                )
            if part not in node:
                known = sorted(node)
                close = difflib.get_close_matches(part, known, n=1)
                prefix = ".".join(parts[:depth])
                hint = f"; did you mean {(prefix + '.' if prefix else '') + close[0]!r}?" if close else ""
                raise ConfigError(
                    f"override {path!r}: unknown field {here!r}{hint} (known here: {', '.join(known)})"
                )
            if depth == len(parts) - 1:
                node[part] = copy.deepcopy(value)
            else:
                node = node[part]
    where = "override " + ", ".join(f"{k}={v!r}" for k, v in overrides.items())
    return validate(type(cfg), data, where)
