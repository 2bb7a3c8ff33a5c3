"""A benchmark task (a workspace to fix or a prompt to generate from), and reading a suite row's text fields."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Task:
    """One benchmark task: a workspace to fix (files) or a prompt to generate from."""

    id: str
    kind: str  # "fix" | "realbugs" (a real workspace, in `extra`) | "generate"
    files: dict[str, str] = field(default_factory=dict)
    prompt: str = ""
    template: str = "python"
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. the canonical fix, for oracles and reports


def text_field(row: dict[str, Any], key: str) -> str:
    """A row's non-empty string `key`; ValueError naming it otherwise (the row is skipped and reported)."""
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"missing or empty {key!r}")
    return value
