"""Where settings come from: the layers (user file, workspace file, environment, flags) and which set what.

Lowest to highest: the user's `config.toml` (platformdirs' config dir), the workspace's
`greenloop.toml` (else `[tool.greenloop]` of its `pyproject.toml`) or the file named by
`--config`, `GREENLOOP_*` variables, then flags. `settings.load_settings` merges them;
this module names the file and line (or variable, or flag) behind a value or an error.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource

from greenloop.errors import GreenloopError

Key = tuple[str, ...]
_WORKSPACE_FILES: tuple[tuple[str, Key], ...] = (("greenloop.toml", ()), ("pyproject.toml", ("tool", "greenloop")))


def user_config_path() -> Path:
    """The user-level config file, e.g. ~/.config/greenloop/config.toml (XDG_CONFIG_HOME is honoured)."""
    return platformdirs.user_config_path("greenloop") / "config.toml"


@dataclass(frozen=True)
class Layer:
    """One source of values, as nested dicts like the settings model's."""

    name: str  # "user file" | "workspace file" | "--config" | "environment" | "command line" | ...
    values: dict[str, Any]
    path: Path | None = None
    text: str = field(default="", repr=False)  # the file's text, for line numbers
    table: Key = ()  # where greenloop's table starts in the file ("tool", "greenloop" in pyproject.toml)

    def holds(self, key: Key) -> bool:
        node: Any = self.values
        for part in key:
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    def where(self, key: Key) -> str:
        """`file:line`, the variable's name, or the layer's name."""
        if self.path is not None:
            line = line_of(self.text, self.table + key)
            return f"{self.path}:{line}" if line else str(self.path)
        if self.name == "environment":
            for depth in range(len(key), 0, -1):
                var = "GREENLOOP_" + "__".join(key[:depth]).upper()
                if var in os.environ:
                    return var
        return self.name


def read_toml(path: Path, name: str, table: Key = ()) -> Layer:
    """One config file as a layer; a file that is not TOML is a clear error naming it."""
    try:
        text = path.read_text(encoding="utf-8")
        data: Any = tomllib.loads(text)
    except OSError as exc:
        raise GreenloopError(f"{path}: cannot read the config file ({exc.strerror or exc}).") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise GreenloopError(f"{path}: not valid TOML ({exc}); fix or remove it.") from exc
    for part in table:
        data = data.get(part, {}) if isinstance(data, dict) else {}
    return Layer(name, data if isinstance(data, dict) else {}, path, text, table)


def workspace_layer(workspace: Path | None) -> Layer | None:
    """`greenloop.toml`, else a `pyproject.toml` with a `[tool.greenloop]` table, else None."""
    if workspace is None:
        return None
    for name, table in _WORKSPACE_FILES:
        path = workspace / name
        if path.is_file():
            layer = read_toml(path, "workspace file", table)
            if layer.values or not table:
                return layer
    return None


def file_layers(workspace: Path | None, config_file: Path | None = None) -> list[Layer]:
    """The user file, then the workspace's file, or `config_file` in its place (`--config`)."""
    layers: list[Layer] = []
    user = user_config_path()
    if user.is_file():
        layers.append(read_toml(user, "user file"))
    if config_file is not None:
        if not config_file.is_file():
            raise GreenloopError(f"--config {config_file}: no such file.")
        layers.append(read_toml(config_file, "--config"))
    elif (found := workspace_layer(workspace)) is not None:
        layers.append(found)
    return layers


def env_layer(settings_cls: type[BaseSettings]) -> Layer:
    """The `GREENLOOP_*` variables, as pydantic-settings reads them."""
    return Layer("environment", EnvSettingsSource(settings_cls)())


def merged(layers: list[Layer]) -> dict[str, Any]:
    """Deep merge, later layers winning key by key."""
    out: dict[str, Any] = {}
    for layer in layers:
        _merge_into(out, layer.values)
    return out


def _merge_into(target: dict[str, Any], values: dict[str, Any]) -> None:
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge_into(target[key], value)
        else:
            target[key] = dict(value) if isinstance(value, dict) else value


def origin(layers: list[Layer], key: Key, *, nearest: bool = True) -> Layer | None:
    """The highest layer that sets `key`; else (`nearest`) the one that sets the nearest table holding it."""
    for depth in range(len(key), 0 if nearest else len(key) - 1, -1):
        for layer in reversed(layers):
            if layer.holds(key[:depth]):
                return layer
    return None


def explain(error: ValidationError, layers: list[Layer]) -> str:
    """One line per problem: where the value came from, its key, and what is wrong with it."""
    lines = []
    for problem in error.errors():
        key = tuple(str(part) for part in problem["loc"])
        layer = origin(layers, key)
        where = f"{layer.where(key)}: " if layer is not None else ""
        what = "unknown key (see docs/configuration.md for the keys)" if problem["type"] == "extra_forbidden" \
            else f"{problem['msg']} (got {problem.get('input')!r})"
        lines.append(f"{where}{'.'.join(key)}: {what}")
    return "Invalid greenloop settings:\n  " + "\n  ".join(lines)


_HEADER = re.compile(r"^\[\[?\s*(?P<keys>[^\]]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"^(?P<keys>(?:\"[^\"]*\"|'[^']*'|[A-Za-z0-9_\-]+)(?:\s*\.\s*(?:\"[^\"]*\"|'[^']*'|[A-Za-z0-9_\-]+))*)\s*=")
_PART = re.compile(r"\"([^\"]*)\"|'([^']*)'|([A-Za-z0-9_\-]+)")


def _dotted(text: str) -> Key:
    return tuple(next(g for g in m.groups() if g is not None) for m in _PART.finditer(text))


def line_of(text: str, key: Key) -> int | None:
    """The line that sets `key` (or opens its table) in TOML `text`; None when not found."""
    table: Key = ()
    header_line = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if (head := _HEADER.match(line)) is not None:
            table = _dotted(head["keys"])
            if header_line is None and key[: len(table)] == table and len(table) == len(key):
                header_line = number
            continue
        if (assign := _ASSIGN.match(line)) is not None:
            full = table + _dotted(assign["keys"])
            if key[: len(full)] == full:  # the key itself, or an inline table holding it
                return number
            if full[: len(key)] == key:  # a key inside the table `key` names
                return header_line or number
    return header_line
