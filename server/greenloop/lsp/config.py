"""The editor's `greenloop` configuration section -> overrides of the one Settings model."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from greenloop.settings import OLD_LOOP_NAMES, Settings

# Keys of the editor section that are not Settings fields.
CLIENT_ONLY = {"server"}  # e.g. server.path: how the extension starts us
NEVER_FROM_EDITOR = {("llm", "api_key")}  # the key travels in the environment, never in settings.json


@dataclass
class EditorConfig:
    """What the editor's configuration means for the server."""

    overrides: dict[str, Any] = field(default_factory=dict)
    run_tests_on_save: bool = False
    ignored: list[str] = field(default_factory=list)  # keys we do not know, for a log line


def snake(name: str) -> str:
    """`maxIterations` -> `max_iterations` (already snake stays snake)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def read_editor_config(section: Any) -> EditorConfig:
    """Map the `greenloop` section (camelCase, nested like Settings) onto settings overrides.

    Null and empty values mean "not set" and are dropped; `server.*` is the client's;
    unknown keys are reported in `ignored` rather than failing the whole configuration.
    """
    config = EditorConfig()
    if not isinstance(section, dict):
        return config
    for key, value in section.items():
        if key == "runTestsOnSave":
            config.run_tests_on_save = value is True
        elif key in CLIENT_ONLY:
            continue
        else:
            _put(config, Settings, (), key, value)
    return config


def _put(config: EditorConfig, model: type[BaseModel], path: tuple[str, ...], key: str, value: Any) -> None:
    name = snake(key)
    dotted = ".".join((*path, key))
    if _empty(value):
        return
    fields = model.model_fields
    if path == ("loop",) and name in OLD_LOOP_NAMES:  # an old name: the new one, unless that is set too
        name = OLD_LOOP_NAMES[name]
        if name in config.overrides.get("loop", {}):
            return
    if name not in fields or (*path, name) in NEVER_FROM_EDITOR:
        config.ignored.append(dotted)
        return
    annotation = fields[name].annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if not isinstance(value, dict):
            config.ignored.append(dotted)
            return
        for sub_key, sub_value in value.items():
            _put(config, annotation, (*path, name), sub_key, sub_value)
        return
    target = config.overrides
    for part in path:
        target = target.setdefault(part, {})
    target[name] = value


def _empty(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, dict) and not value)
