"""Bad input is refused before any model call: prompts, output folders, templates, edited plans."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.agent.generate import GenerateRequest, generate
from greenloop.errors import GreenloopError
from greenloop.settings import load_settings


def settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load_settings(tmp_path, {"runs": {"enabled": False}, "generate": {"max_prompt_chars": 200}})


@pytest.mark.parametrize(
    ("prompt", "message"),
    [("", "prompt is empty"), ("   \n", "prompt is empty"), ("x" * 201, "limit is 200")],
)
def test_empty_or_huge_prompts(tmp_path: Path, prompt: str, message: str) -> None:
    with pytest.raises(GreenloopError, match=message):
        generate(GenerateRequest(prompt=prompt, out_dir=tmp_path / "out"), settings(tmp_path))


def test_a_non_empty_folder_needs_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(GreenloopError, match=r"not empty \(keep.txt\).*--force"):
        generate(GenerateRequest(prompt="a word counter", out_dir=out), settings(tmp_path))
    generate(GenerateRequest(prompt="a word counter", out_dir=out, force=True), settings(tmp_path))
    (out / "keep.txt").unlink()
    (out / ".greenloop").mkdir()  # a folder holding only greenloop's own data counts as empty
    generate(GenerateRequest(prompt="a word counter", out_dir=out), settings(tmp_path))
    assert not (out / "keep.txt").exists() and sorted(p.name for p in out.iterdir()) == [".greenloop"]


def test_a_file_as_output_and_an_unknown_template(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(GreenloopError, match="not a folder"):
        generate(GenerateRequest(prompt="p", out_dir=tmp_path / "file"), settings(tmp_path))
    with pytest.raises(GreenloopError, match="Unknown template 'cobol'; use one of: python, node, rust"):
        generate(GenerateRequest(prompt="p", out_dir=tmp_path / "o", template="cobol"), settings(tmp_path))


def test_an_unusable_edited_plan_says_what_to_fix(tmp_path: Path) -> None:
    plan = tmp_path / "plan.md"
    with pytest.raises(GreenloopError, match="no such plan file"):
        generate(GenerateRequest(prompt="", out_dir=tmp_path / "o", from_plan=plan), settings(tmp_path))
    plan.write_text(
        "# Plan: x\n\nTemplate: python\n\n## Interfaces\n\n- f()\n\n## Files\n\n"
        "### `../x.py`\n\n- purpose: f\n\n### `test_x.py`\n\n- test: yes\n"
    )
    with pytest.raises(
        GreenloopError, match=r"plan.md: the plan is not usable: .*escapes the project folder"
    ):
        generate(GenerateRequest(prompt="", out_dir=tmp_path / "o", from_plan=plan), settings(tmp_path))
