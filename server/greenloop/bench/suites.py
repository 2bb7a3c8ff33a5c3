"""Benchmark suites: HumanEvalFix rows, real bugs and generation prompts, read into tasks; bad rows are reported."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import greenloop
from greenloop.bench.realbugs import realbugs_task
from greenloop.bench.sampling import sample_tasks
from greenloop.bench.tasks import Task, text_field
from greenloop.errors import GreenloopError
from greenloop_sandbox.languages import template_names

SUITES = ("humanevalfix", "realbugs", "generate")


@dataclass
class Suite:
    name: str
    source: Path
    tasks: list[Task]
    skipped: list[str]  # "line N: why", one per bad row


def repo_root() -> Path:
    """The checkout that holds `server/greenloop` (benchmarks/ and its data live relative to it)."""
    return Path(greenloop.__file__).resolve().parents[2]


def default_suite_file(name: str) -> Path:
    if name == "humanevalfix":
        return repo_root() / "benchmarks" / "data" / "humanevalfix" / "humanevalfix-python.jsonl"
    if name == "realbugs":
        return repo_root() / "benchmarks" / "data" / "realbugs" / "cases.jsonl"
    if name == "generate":
        return repo_root() / "benchmarks" / "suites" / "generate_acceptance.jsonl"
    raise GreenloopError(f"unknown suite {name!r}; choose one of {', '.join(SUITES)}")


def load_suite(
    name: str, path: Path | None = None, *, limit: int | None = None, sample: int | None = None, sample_seed: int = 0,
    stratify: str | None = None,
) -> Suite:
    """Read a suite file (JSONL); each bad row is skipped and named in `Suite.skipped`.

    `sample` takes a fixed, seeded subset (`sample_seed`) in the file's order, before `limit`;
    `stratify` names a task field (realbugs: `project`) whose values share the sample by size.
    """
    if name not in SUITES:
        raise GreenloopError(f"unknown suite {name!r}; choose one of {', '.join(SUITES)}")
    source = path or default_suite_file(name)
    if not source.is_file():
        raise GreenloopError(f"suite file {source} not found; pass --suite-file PATH")
    parse = row_parser(name, source)
    tasks: list[Task] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(source.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("not a JSON object")
            task = parse(row)
            if task.id in seen:
                raise ValueError(f"duplicate task id {task.id!r}")
        except (ValueError, KeyError, TypeError) as exc:
            skipped.append(f"line {number}: {exc}")
            continue
        seen.add(task.id)
        tasks.append(task)
    if sample is not None:
        tasks = sample_tasks(tasks, sample, sample_seed, stratify)
    if limit is not None:
        tasks = tasks[:limit]
    if not tasks:
        raise GreenloopError(f"suite file {source} has no usable tasks ({len(skipped)} bad rows)")
    return Suite(name=name, source=source, tasks=tasks, skipped=skipped)


def row_parser(name: str, source: Path) -> Callable[[dict[str, Any]], Task]:
    """How a row of suite `name` becomes a task (realbugs rows name tarballs next to the file)."""
    if name == "realbugs":
        return functools.partial(realbugs_task, folder=source.parent)
    if name == "generate":
        return functools.partial(generate_task, folder=source.parent)
    return humanevalfix_task


def humanevalfix_task(row: dict[str, Any]) -> Task:
    """A HumanEvalFix row -> a tiny python workspace: the buggy function and a pytest file calling check()."""
    entry = text_field(row, "entry_point")
    if not entry.isidentifier():
        raise ValueError(f"entry_point {entry!r} is not a Python name")
    declaration, buggy, test = text_field(row, "declaration"), text_field(row, "buggy_solution"), text_field(row, "test")
    canonical = row.get("canonical_solution")
    module = declaration + buggy
    checks = "\n".join(line for line in test.splitlines() if not line.startswith(f"check({entry})"))
    test_file = (
        f"from {entry} import *  # noqa: F403\n\n{checks.strip()}\n\n\n"
        f"def test_{entry}():\n    check({entry})  # noqa: F405\n"
    )
    return Task(
        id=text_field(row, "task_id"),
        kind="fix",
        files={f"{entry}.py": module, f"test_{entry}.py": test_file},
        extra={
            "entry_point": entry,
            "buggy": module,
            "fixed": declaration + canonical if isinstance(canonical, str) else None,
            "buggy_solution": buggy,
            "canonical_solution": canonical,
            "bug_type": row.get("bug_type"),
        },
    )


def generate_task(row: dict[str, Any], folder: Path | None = None) -> Task:
    """A generation prompt row: {"id", "prompt", "template"}, and optionally "module" (the file the prompt names,
    for the bare one-shot) and "hidden_tests" (a file of hand-written acceptance tests, relative to `folder`)."""
    from greenloop.bench.acceptance import hidden_text

    template = row.get("template", "python")
    if template not in template_names():
        raise ValueError(f"template {template!r} is not one of {', '.join(template_names())}")
    extra: dict[str, Any] = {}
    if isinstance(row.get("module"), str) and row["module"].strip():
        extra["module"] = row["module"].strip()
    if folder is not None and (hidden := hidden_text(row, folder)):
        extra["hidden_tests"] = hidden
    return Task(id=text_field(row, "id"), kind="generate", prompt=text_field(row, "prompt"), template=template,
                extra=extra)
