"""plan.md round trip: what a person edits is what the next run builds."""

from __future__ import annotations

import pytest

from greenloop.agent.generate.layouts import get_layout
from greenloop.agent.generate.plan_doc import parse_plan, render_plan
from greenloop.agent.generate.project_plan import plan_schema

PLAN = {
    "name": "word_count",
    "summary": "Counts words.",
    "interfaces": "## wc/core.py\n- `count_words(text: str) -> dict[str, int]`\n\n## Components\n(a heading inside)",
    "components": ["core", "cli"],
    "packages": ["rich==13.7.1"],
    "files": [
        {
            "path": "wc/core.py",
            "purpose": "count_words",
            "component": "core",
            "depends_on": [],
            "test": False,
        },
        {
            "path": "wc/cli.py",
            "purpose": "main()\nprints counts",
            "component": "cli",
            "depends_on": ["wc/core.py"],
            "test": False,
        },
        {
            "path": "tests/test_core.py",
            "purpose": "tests",
            "component": "core",
            "depends_on": ["wc/core.py"],
            "test": True,
        },
    ],
}


def test_render_then_parse_gives_the_same_plan() -> None:
    schema = plan_schema(get_layout("python"), 40)
    original = schema.model_validate(PLAN)
    text = render_plan(original.model_dump(), "python", "count the words of a file")
    doc = parse_plan(text)
    assert doc.template == "python"
    assert doc.request == "count the words of a file"
    assert schema.model_validate(doc.plan) == original


def test_an_edited_plan_is_read_as_edited() -> None:
    text = render_plan(PLAN, "python", "count words")
    edited = text.replace("- component: cli", "- component: core").replace(
        "### `wc/cli.py`", "### `wc/main.py`"
    )
    edited += "\n### `tests/test_main.py`\n\n- test: yes\n- depends on: `wc/main.py`\n- purpose: tests main\n"
    doc = parse_plan(edited)
    paths = [f["path"] for f in doc.plan["files"]]
    assert paths == ["wc/core.py", "wc/main.py", "tests/test_core.py", "tests/test_main.py"]
    assert doc.plan["files"][1]["component"] == "core"
    assert doc.plan["files"][1]["purpose"] == "main()\nprints counts"
    assert doc.plan["files"][3]["test"] is True and doc.plan["files"][3]["component"] == "main"


def test_a_plan_without_files_says_what_is_missing() -> None:
    with pytest.raises(ValueError, match="Files"):
        parse_plan("# Plan: x\n\n## Interfaces\n\nnothing\n")
