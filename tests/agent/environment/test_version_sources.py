"""Versions from the project, in order (lock file, pinned requirements, the editor's interpreter, declared ranges),
installed by the environment step in the real Docker sandbox; and a src layout that imports itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import EnvironmentReady
from tests.agent.conftest import collect, write_project

pytestmark = pytest.mark.docker

PYPROJECT = '[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["six"]\n'


def six_test(version: str) -> dict[str, str]:
    return {"test_six.py": f"import six\n\n\ndef test_version():\n    assert six.__version__ == {version!r}\n"}


UV_LOCK = '''version = 1
requires-python = ">=3.8"

[[package]]
name = "demo"
version = "0.1.0"
source = { editable = "." }
dependencies = [{ name = "six" }]

[[package]]
name = "six"
version = "1.16.0"
source = { registry = "https://pypi.org/simple" }
'''

POETRY_LOCK = '''[[package]]
name = "six"
version = "1.15.0"
description = "Python 2 and 3 compatibility utilities"
optional = false
python-versions = ">=2.7, !=3.0.*, !=3.1.*, !=3.2.*"

[[package]]
name = "pywin32"
version = "306"
description = "Python for Window Extensions"
optional = false
python-versions = "*"
markers = "sys_platform == \\"win32\\""

[metadata]
lock-version = "2.0"
python-versions = "^3.8"
'''


async def ready_of(ws: Path, make_settings: Any, **request: Any) -> tuple[EnvironmentReady, str]:
    events, done = await collect(fix(FixRequest(ws, **request), make_settings(ws)))
    return next(e for e in events if isinstance(e, EnvironmentReady)), done.outcome


async def test_a_uv_lock_gives_the_locked_versions(tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {"pyproject.toml": PYPROJECT, "uv.lock": UV_LOCK, **six_test("1.16.0")})
    ready, outcome = await ready_of(ws, make_settings)
    assert outcome == "already_green", ready
    assert ready.source == "uv.lock" and ready.packages == ["six==1.16.0"]
    assert ready.summary.startswith("environment: 1 package(s) from uv.lock; pytest 7.2.1")
    assert scripted_llm.requests == []


async def test_a_poetry_lock_gives_the_locked_versions_for_this_platform(tmp_path: Path, scripted_llm: Any,
                                                                          make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {"pyproject.toml": PYPROJECT, "poetry.lock": POETRY_LOCK,
                                         **six_test("1.15.0")})
    ready, outcome = await ready_of(ws, make_settings)
    assert outcome == "already_green", ready
    assert ready.source == "poetry.lock" and ready.packages == ["six==1.15.0"]  # pywin32 is for Windows


async def test_a_lock_that_does_not_parse_falls_back_to_the_declared_range(tmp_path: Path, scripted_llm: Any,
                                                                           make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {"pyproject.toml": PYPROJECT, "uv.lock": "[[package]\nname = ",
                                         "test_six.py": "import six\n\n\ndef test_imports():\n    assert six\n"})
    ready, outcome = await ready_of(ws, make_settings)
    assert outcome == "already_green"
    assert any(line.startswith("uv.lock: not used, uv.lock does not parse") for line in ready.lines), ready.lines
    assert ready.source == "declared ranges"


async def test_the_editors_interpreter_pins_the_declared_packages(tmp_path: Path, scripted_llm: Any,
                                                                  make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {"pyproject.toml": PYPROJECT, **six_test("1.14.0")})
    ready, outcome = await ready_of(ws, make_settings, interpreter={"six": "1.14.0", "numpy": "1.26.0"})
    assert outcome == "already_green", ready
    assert ready.source == "the editor's interpreter" and ready.packages == ["six==1.14.0"]  # no numpy: not declared


async def test_a_src_layout_project_imports_itself(tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
                          '[project]\nname = "wordy"\nversion = "0.1.0"\n',
        "src/wordy/__init__.py": "def count(text):\n    return len(text.split())\n",
        "tests/test_wordy.py": "from wordy import count\n\n\ndef test_count():\n    assert count('a b') == 2\n"})
    ready, outcome = await ready_of(ws, make_settings)
    assert outcome == "already_green", ready
    assert "the project's import roots on the path: src" in ready.lines
