"""Step configs: partial settings files (TOML) merged over the base settings; named by the file stem."""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from greenloop.errors import GreenloopError
from greenloop.settings import OLD_LOOP_NAMES, Settings


@dataclass(frozen=True)
class StepConfig:
    name: str
    overrides: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    tasks: int | None = None  # `[bench] tasks = K`: this config runs on the first K tasks only (a slow one)
    bare: bool = False  # `[bench] generate = "bare"`: a generate cell asks the model once for the module, no loop

    @property
    def digest(self) -> str:
        """A short hash of the overrides: a changed file is a different config for resuming."""
        text = json.dumps(self.overrides if not self.bare else {**self.overrides, "bench.generate": "bare"},
                          sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:8]


DEFAULT_CONFIG = StepConfig(name="default")


def load_config(path: Path) -> StepConfig:
    """Read and check one config file; unknown keys and bad values are errors that name them."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GreenloopError(f"cannot read config {path}: {exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise GreenloopError(f"config {path} is not valid TOML ({exc})") from exc
    bench = data.pop("bench", {})
    tasks = bench.get("tasks") if isinstance(bench, dict) else None
    if tasks is not None and (not isinstance(tasks, int) or tasks < 1):
        raise GreenloopError(f"config {path}: [bench] tasks must be a positive whole number")
    mode = bench.get("generate", "pipeline") if isinstance(bench, dict) else "pipeline"
    if mode not in ("pipeline", "bare"):
        raise GreenloopError(f'config {path}: [bench] generate must be "pipeline" or "bare"')
    unknown = unknown_keys(data, Settings)
    if unknown:
        raise GreenloopError(
            f"config {path}: unknown setting(s) {', '.join(unknown)}; see docs/configuration.md"
        )
    config = StepConfig(name=path.stem, overrides=data, source=str(path), tasks=tasks, bare=mode == "bare")
    apply_config(Settings(), config)  # validates the values
    return config


def load_configs(paths: list[Path]) -> list[StepConfig]:
    configs = [load_config(p) for p in paths] if paths else [DEFAULT_CONFIG]
    names = [c.name for c in configs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise GreenloopError(f"two configs share the name {duplicates[0]!r}; configs are named by file stem")
    return configs


def unknown_keys(data: dict[str, Any], model: type[BaseModel], prefix: str = "") -> list[str]:
    out: list[str] = []
    for key, value in data.items():
        info = model.model_fields.get(key)
        if info is None and prefix == "loop." and key in OLD_LOOP_NAMES:  # read under its new name
            continue
        if info is None:
            out.append(prefix + key)
            continue
        sub = info.annotation
        if isinstance(value, dict) and isinstance(sub, type) and issubclass(sub, BaseModel):
            out.extend(unknown_keys(value, sub, f"{prefix}{key}."))
    return out


def deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def apply_config(base: Settings, config: StepConfig, extra: dict[str, Any] | None = None) -> Settings:
    """`base` with the config's overrides (then `extra`) merged in."""
    merged = deep_merge(base.model_dump(), config.overrides)
    merged = deep_merge(merged, extra or {})
    try:
        return Settings(**merged)
    except ValidationError as exc:
        where = f"config {config.source or config.name}"
        raise GreenloopError(
            f"{where}: invalid setting ({exc.errors()[0]['loc']}: {exc.errors()[0]['msg']})"
        ) from exc
