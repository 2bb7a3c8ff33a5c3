"""Acceptance tests: the request's stated examples, asked of the model as data, rendered into pytest by greenloop.

The model never writes these tests: it lists the examples (JSON), examples.py keeps those the request
states, and `render_acceptance` writes them from a template, one parametrized test per function and
kind (a value, an exception). The fix loop treats the file as the specification even where it may
edit the project's other tests (RunContext.spec_tests).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from greenloop.agent.generate.examples import (
    Acceptance,
    Example,
    StatedExamples,
    check_examples,
    is_builtin_exception,
)
from greenloop.agent.generate.layouts import Layout
from greenloop.agent.generate.planning import step_messages
from greenloop.llm import LLMClient, LLMError, StructuredOutputError
from greenloop.retrieval import public_names

ACCEPTANCE_PATHS = ("tests/test_acceptance.py", "tests/test_stated_examples.py")
# a literal (a number or a quoted string) or words that state a result: without any, there is no example to ask for
_MIGHT_STATE = re.compile(r"\d|'[^']*'|\"[^\"]*\"|`[^`]*`|\braises?\b", re.I)
_HEADER = '''"""Acceptance tests: the examples the request states, written by greenloop from the plan.

The fix loop never changes this file; edit the examples in .greenloop/plan.md and run again.
"""

import pytest

'''


async def ask_examples(llm: LLMClient, layout: Layout, request: str, workspace: Path) -> Acceptance:
    """The request's examples, checked against its text; none for a request that states none, or another language."""
    if layout.name != "python" or not _MIGHT_STATE.search(request):
        return Acceptance()
    messages = step_messages("generate_acceptance", layout, request, workspace)
    try:
        reply = await llm.structured(messages, StatedExamples, step="generate_acceptance")
    except (StructuredOutputError, LLMError) as exc:
        return Acceptance(dropped=(f"the model's list of examples was not usable ({exc}); none are tested",))
    return check_examples(reply, request)


def acceptance_path(planned: list[str]) -> str:
    """Where the acceptance tests go: a path the plan does not use."""
    return next(p for p in ACCEPTANCE_PATHS if p not in planned)


def render_acceptance(acceptance: Acceptance, code: Mapping[str, str]) -> str:
    """The pytest file for the examples ("" when there are none); `code` (path -> text) says which module
    defines each name the tests import."""
    examples = acceptance.examples
    if not examples:
        return ""
    imports: dict[str, list[str]] = {}
    for name in dict.fromkeys([*(e.function for e in examples),
                               *(e.raises for e in examples if e.raises and not is_builtin_exception(e.raises))]):
        imports.setdefault(_module_of(name, code, acceptance.module), []).append(name)
    out = [_HEADER]
    out += [f"from {module} import {', '.join(sorted(names))}\n" for module, names in sorted(imports.items())]
    groups: dict[tuple[str, str], list[Example]] = {}
    for example in examples:
        kind = "raises" if example.raises else "writes" if example.writes else "returns"
        groups.setdefault((example.function, kind), []).append(example)
    render = {"raises": _raising, "writes": _writing, "returns": _returning}
    for (function, kind), group in groups.items():
        out.append("\n\n" + render[kind](function, group))
    return "".join(out)


def _returning(function: str, group: list[Example]) -> str:
    cases = "".join(f"        pytest.param(lambda: {e.call}, {e.returns}, id={e.call!r}),\n" for e in group)
    return (
        f'@pytest.mark.parametrize(\n    ("call", "expected"),\n    [\n{cases}    ],\n)\n'
        f"def test_{function}_gives_the_stated_value(call, expected):\n    assert call() == expected\n"
    )


def _raising(function: str, group: list[Example]) -> str:
    cases = "".join(f"        pytest.param(lambda: {e.call}, {e.raises}, id={e.call!r}),\n" for e in group)
    return (
        f'@pytest.mark.parametrize(\n    ("call", "error"),\n    [\n{cases}    ],\n)\n'
        f"def test_{function}_raises_the_stated_error(call, error):\n    with pytest.raises(error):\n        call()\n"
    )


def _writing(function: str, group: list[Example]) -> str:
    cases = "".join(f"        pytest.param(lambda: {e.call}, {e.writes!r}, {e.content}, id={e.call!r}),\n"
                    for e in group)
    return (
        f'@pytest.mark.parametrize(\n    ("call", "path", "content"),\n    [\n{cases}    ],\n)\n'
        f"def test_{function}_writes_the_stated_file(call, path, content, tmp_path, monkeypatch):\n"
        "    monkeypatch.chdir(tmp_path)  # a relative path is written here\n"
        "    call()\n"
        '    assert (tmp_path / path).read_text(encoding="utf-8").rstrip("\\n") == content.rstrip("\\n")\n'
    )


def _module_of(name: str, code: Mapping[str, str], named: str) -> str:
    """The module that defines `name` among the written sources; else the one the request names; else the first."""
    sources = [p for p in code if p.endswith(".py") and not PurePosixPath(p).name.startswith("test")]
    for path in sources:
        if name in public_names(path, code[path]):
            return _dotted(path)
    if named:
        return named
    modules = [p for p in sources if PurePosixPath(p).name != "__init__.py"]
    return _dotted(modules[0]) if modules else "main"


def _dotted(path: str) -> str:
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if parts and parts[0] == "src":
        parts = parts[1:]
    return ".".join(parts)
