"""Prompt files: package defaults, overridable per project in `.greenloop/prompts/<name>.md`."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from string import Template

from greenloop.errors import GreenloopError


def load_prompt(name: str, workspace: Path | None = None, *, package: str = "greenloop.agent.prompting") -> str:
    """The text of prompt `name`: the project's override if present, else `package`'s default."""
    if workspace is not None:
        override = workspace / ".greenloop" / "prompts" / f"{name}.md"
        if override.is_file():
            return override.read_text(encoding="utf-8")
    try:
        return resources.files(package).joinpath("prompts", f"{name}.md").read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise GreenloopError(f"no prompt named {name!r}") from exc


def render_prompt(
    name: str, workspace: Path | None = None, *, package: str = "greenloop.agent.prompting", **values: str
) -> str:
    """Fill `$name` placeholders; unknown placeholders are left as they are."""
    return Template(load_prompt(name, workspace, package=package)).safe_substitute(values).strip() + "\n"
