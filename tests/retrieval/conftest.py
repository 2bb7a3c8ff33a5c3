"""Fixtures for retrieval tests: real code (stdlib, HumanEvalFix packed into a repo) and real runner output."""

from __future__ import annotations

import importlib.util
import sys
import sysconfig
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from greenloop.retrieval import RepoIndex
from greenloop_sandbox.parsers import ParseInput, parse_report
from greenloop_sandbox.report import TestReport

ROOT = Path(__file__).resolve().parents[2]
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def load_humanevalfix() -> ModuleType:
    """benchmarks/humanevalfix_repo.py (the packer the benchmark uses too)."""
    name = "humanevalfix_repo"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "humanevalfix_repo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def read_files(root: Path, pattern: str = "*") -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob(pattern)) if p.is_file()}


class HumanEvalFixRepo:
    """The 164 buggy HumanEvalFix modules plus tests, and pytest's real output on them."""

    def __init__(self, root: Path) -> None:
        self.module = load_humanevalfix()
        self.root = root
        self.tasks = self.module.write_repo(root)
        junit = root.parent / f"{root.name}-junit.xml"
        self.output = self.module.run_pytest(root, f"--junitxml={junit}", "-o", "junit_family=xunit1")
        self.junit = junit.read_text("utf-8")
        self.files = read_files(root, "*.py") | read_files(root, "*.toml")

    def report(self) -> TestReport:
        """The run as the sandbox's own JUnit parser reports it (what the fix loop hands to `locate`)."""
        return parse_report("junit", ParseInput(output=self.output, report=self.junit, root=str(self.root)))

    def task_for(self, test_file: str | None) -> Any:
        return next(t for t in self.tasks if t.test_file == test_file)

    def sections(self) -> list[tuple[object, str]]:
        """(task, pytest failure section) pairs."""
        out = []
        for _name, text in self.module.split_failures(self.output):
            task = self.module.task_of(text, self.tasks)
            if task is not None:
                out.append((task, text))
        return out


@pytest.fixture(scope="session")
def hef_repo(tmp_path_factory: pytest.TempPathFactory) -> HumanEvalFixRepo:
    return HumanEvalFixRepo(tmp_path_factory.mktemp("humanevalfix"))


@pytest.fixture
async def hef_index(hef_repo: HumanEvalFixRepo) -> RepoIndex:
    index = RepoIndex()
    await index.update(hef_repo.files)
    return index
