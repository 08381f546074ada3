"""Reading GPU configurations from TOML and deriving what-if variants.

Owns: finding a named configuration in the top-level ``configs`` package, parsing
TOML with the stdlib :mod:`tomllib`, validating it into a
:class:`~gpusim.config.models.GPUConfig`, dotted-path overrides, and turning
every failure into a :class:`gpusim.errors.ConfigError` that names the file (or
override) and the dotted field path.

Must not import: simpy, cupy, or gpusim modules other than
:mod:`gpusim.config.models`, :mod:`gpusim.config.overrides` and :mod:`gpusim.errors`.
"""

from __future__ import annotations

import difflib
import importlib.resources
import os
import tomllib
from pathlib import Path
from typing import Any

from gpusim.config.models import GPUConfig
from gpusim.config.overrides import apply_overrides, validate
from gpusim.errors import ConfigError

__all__ = ["load", "available", "apply_overrides", "parse_override", "DEFAULT"]

#: The configuration used when none is named.
DEFAULT = "h100"

_PACKAGE = "configs"


def _configs_dir():
    return importlib.resources.files(_PACKAGE)


def available() -> list[str]:
    """Names of the shipped configurations (the ``configs/*.toml`` stems), sorted."""
    return sorted(
        entry.name[: -len(".toml")]
        for entry in _configs_dir().iterdir()
        if entry.name.endswith(".toml") and not entry.name.startswith("_")
    )


def _load_file(path: Path) -> GPUConfig:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    return validate(GPUConfig, data, str(path))


def load(name_or_path: str | os.PathLike[str] | GPUConfig = DEFAULT) -> GPUConfig:
    """Load a GPU configuration.

    ``name_or_path`` is a shipped configuration's name (``"h100"``, case-insensitive;
    see :func:`available`), a path to a user's TOML file (anything ending in
    ``.toml`` or naming an existing file), or an already-built :class:`GPUConfig`
    (returned unchanged). Errors raise :class:`gpusim.errors.ConfigError` naming the
    file and the dotted field path.
    """
    if isinstance(name_or_path, GPUConfig):
        return name_or_path
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise ConfigError(f"expected a GPU configuration name ({', '.join(available())}) or the path of a .toml "
                          f"file, got {type(name_or_path).__name__} {name_or_path!r}")
    text = os.fspath(name_or_path)
    if "\0" in str(text):
        raise ConfigError(f"{text!r}: a configuration name or path cannot contain a NUL character")
    candidate = Path(text).expanduser()
    if text.endswith(".toml") or os.sep in text or candidate.is_file():
        return _load_file(candidate)
    name = text.lower()
    names = available()
    if name not in names:
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"unknown GPU configuration {text!r}{hint} (available: {', '.join(names)}; "
            "or give the path of a .toml file)"
        )
    resource = _configs_dir() / f"{name}.toml"
    with importlib.resources.as_file(resource) as path:
        return _load_file(Path(path))


def parse_override(text: str) -> tuple[str, Any]:
    """Parse one ``path=value`` override as given on the command line.

    The value is read as a TOML value (``48``, ``2.5e9``, ``"gto"``, ``[0, 8, 16]``,
    ``{latency = 4, issue_interval = 1, count = 1}``); a bare word that is not valid
    TOML is taken as a string (``sm.scheduler.policy=lrr``).
    """
    path, sep, raw = text.partition("=")
    path, raw = path.strip(), raw.strip()
    if not sep or not path:
        raise ConfigError(f"override {text!r}: expected PATH=VALUE, e.g. sm.max_warps=48")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return path, value
