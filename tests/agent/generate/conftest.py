"""Scripted replies for generation: a plan, an oracle that answers each file request, and helpers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.scripted_llm import Reply

_ASKED = re.compile(r"`([^`]+)`")

WC_INIT = 'from wordcount.core import count_words\n\n__all__ = ["count_words"]\n'
WC_CORE_BUGGY = "def count_words(text: str) -> int:\n    return len(text)\n"
WC_TEST = (
    "from wordcount.core import count_words\n\n\n"
    'def test_counts_words():\n    assert count_words("a bb  ccc") == 3\n\n\n'
    'def test_empty():\n    assert count_words("") == 0\n'
)
WC_INTERFACES = "## wordcount/core.py\n- `count_words(text: str) -> int`: number of words in text"
WC_FIX = {
    "kind": "edit",
    "path": "wordcount/core.py",
    "search": "    return len(text)",
    "replace": "    return len(text.split())",
}


def planned(
    path: str,
    component: str = "core",
    depends_on: tuple[str, ...] = (),
    test: bool = False,
    purpose: str = "",
) -> dict[str, Any]:
    return {
        "path": path,
        "purpose": purpose or f"the {path} file",
        "component": component,
        "depends_on": list(depends_on),
        "test": test,
    }


def plan_json(
    *files: dict[str, Any],
    components: tuple[str, ...] = (),
    packages: tuple[str, ...] = (),
    name: str = "wordcount",
) -> str:
    return json.dumps(
        {
            "name": name,
            "summary": "A small test project.",
            "components": list(components),
            "files": list(files),
            "packages": list(packages),
        }
    )


WC_PLAN = plan_json(
    planned("wordcount/__init__.py", depends_on=("wordcount/core.py",)),
    planned("wordcount/core.py"),
    planned("tests/test_core.py", depends_on=("wordcount/core.py",), test=True),
)
WC_FILES = {
    "wordcount/__init__.py": WC_INIT,
    "wordcount/core.py": WC_CORE_BUGGY,
    "tests/test_core.py": WC_TEST,
}


def asked_path(body: dict[str, Any]) -> str:
    """The file a generate_file request asks for (first `quoted` name in its last message)."""
    last = str(body["messages"][-1]["content"])
    match = _ASKED.search(last)
    assert match, f"no file named in: {last[:200]}"
    return match.group(1)


def file_oracle(
    files: dict[str, str], fence: str = "python", first: dict[str, list[str]] | None = None
) -> Callable[[dict[str, Any]], Any]:
    """Answers each file request with that file's text in a fence; `first` queues odd replies per path."""
    queued = {path: list(replies) for path, replies in (first or {}).items()}

    def answer(body: dict[str, Any]) -> Any:
        path = asked_path(body)
        if queued.get(path):
            return queued[path].pop(0)
        if path not in files:
            return Reply(status=400, error=f"test oracle: no file {path}")
        return f"Here it is:\n\n```{fence}\n{files[path]}```\n"

    return answer


def tree(root: Path) -> dict[str, str]:
    """Every file under root (posix relative path -> text), runs store excluded."""
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "runs.sqlite3" not in p.name
    }
