"""Prompt files: every packaged prompt loads, and a project's own file overrides it."""

from importlib import resources
from pathlib import Path

import pytest

from greenloop.agent.prompting.files import load_prompt, render_prompt
from greenloop.errors import GreenloopError

PACKAGED = sorted(
    p.name.removesuffix(".md") for p in resources.files("greenloop.agent.prompting").joinpath("prompts").iterdir()
)


@pytest.mark.parametrize("name", PACKAGED)
def test_packaged_prompt_loads(name: str) -> None:
    assert load_prompt(name).strip()


def test_project_file_overrides_a_prompt(tmp_path: Path) -> None:
    own = tmp_path / ".greenloop" / "prompts"
    own.mkdir(parents=True)
    (own / "plan.md").write_text("Our plan for $what.", encoding="utf-8")
    assert render_prompt("plan", tmp_path, what="this") == "Our plan for this.\n"
    assert load_prompt("diagnose", tmp_path) == load_prompt("diagnose")


def test_generation_prompts_load_from_their_package() -> None:
    assert load_prompt("generate_system", package="greenloop.agent.generate").strip()


def test_unknown_prompt_is_an_error() -> None:
    with pytest.raises(GreenloopError, match="no prompt named"):
        load_prompt("no_such_prompt")
