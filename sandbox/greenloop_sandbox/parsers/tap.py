"""node's TAP reporter (node 18 nests tests under a per-file subtest, node 20+ does not) -> TestReport."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from greenloop_sandbox.parsers.common import ParseInput, first_location, no_report, relpath
from greenloop_sandbox.report import TestCase, TestFailure, TestReport

_TEST = re.compile(r"^(?P<indent> *)(?P<ok>ok|not ok) \d+(?: - (?P<name>.*?))?(?: # (?P<directive>SKIP|TODO)\b.*)?$",
                   re.IGNORECASE)


@dataclass
class _Tap:
    depth: int
    ok: bool
    name: str
    directive: str
    yaml: dict[str, str] = field(default_factory=dict)
    is_parent: bool = False


def parse_tap(data: ParseInput) -> TestReport:
    text = data.report if data.report and data.report.strip() else data.output
    tests = _read_tests(text.splitlines())
    if not tests:
        return no_report(data, f"the test run produced no TAP results (exit code {data.exit_code})")
    report = TestReport(exit_code=data.exit_code)
    for t, parents in _with_parents(tests):
        _add(report, t, parents, data.root)
    report.duration = sum(c.duration for c in report.cases)
    return report


def _with_parents(tests: list[_Tap]) -> list[tuple[_Tap, list[str]]]:
    """The results that are not parents (describe blocks, file wrappers), each with its parents' names.

    TAP prints a parent's own result line after its children (indented one level more, the
    `# Subtest:` comments before them), so the chain is read from the end: a parent's line
    closes the deeper lines before it. In report order.
    """
    out: list[tuple[_Tap, list[str]]] = []
    parents: dict[int, str] = {}
    for t in reversed(tests):
        parents = {d: n for d, n in parents.items() if d < t.depth}
        if t.is_parent:
            parents[t.depth] = t.name
            continue
        out.append((t, [parents[d] for d in sorted(parents)]))
    return out[::-1]


def _read_tests(lines: list[str]) -> list[_Tap]:
    tests: list[_Tap] = []
    children_at: dict[int, int] = {}
    i = 0
    while i < len(lines):
        m = _TEST.match(lines[i])
        i += 1
        if not m:
            continue
        depth = len(m["indent"]) // 4
        t = _Tap(depth, m["ok"].lower() == "ok", (m["name"] or "").strip(), (m["directive"] or "").upper())
        t.is_parent = children_at.get(depth + 1, 0) > 0
        children_at[depth + 1] = 0
        children_at[depth] = children_at.get(depth, 0) + 1
        if i < len(lines) and lines[i].strip() == "---":
            t.yaml, i = _read_yaml(lines, i + 1)
        tests.append(t)
    return tests


def _read_yaml(lines: list[str], i: int) -> tuple[dict[str, str], int]:
    """The flat YAML diagnostic block node writes (scalars and `|-` blocks) up to its `...`."""
    out: dict[str, str] = {}
    key: str | None = None
    block: list[str] = []
    key_indent = 0
    while i < len(lines) and lines[i].strip() != "...":
        line = lines[i]
        i += 1
        indent = len(line) - len(line.lstrip())
        if key is not None and (indent > key_indent or not line.strip()):
            block.append(line.strip())
            continue
        if key is not None:
            out[key], key = "\n".join(block).strip(), None
        k, sep, v = line.strip().partition(":")
        if not sep:
            continue
        v = v.strip()
        if v in ("|-", "|", ">-", ">"):
            key, block, key_indent = k, [], indent
        else:
            out[k] = v.strip("'\"")
    if key is not None:
        out[key] = "\n".join(block).strip()
    return out, i + 1


def _add(report: TestReport, t: _Tap, parents: list[str], root: str) -> None:
    file = _file_of(t, parents, root)
    # Ids are the name chain without file-level wrappers: node 18 and 20 give the same ids.
    # A file-level result (node 20's `--test-timeout` ending a file) is named by its relative path.
    own = relpath(t.name, root) if t.name.startswith(("/", "file://")) else t.name
    names = [p for p in parents if not p.startswith(("/", "file://"))] + [own]
    test_id = " > ".join(names)
    duration = float(t.yaml.get("duration_ms", "0") or 0) / 1000
    if t.directive in ("SKIP", "TODO"):
        report.skipped += 1
        report.cases.append(TestCase(test_id=test_id, outcome="skipped", duration=duration))
        return
    if t.ok:
        report.passed += 1
        report.cases.append(TestCase(test_id=test_id, outcome="passed", duration=duration))
        return
    error = t.yaml.get("error", "")
    stack = t.yaml.get("stack", "")
    kind = "failure" if t.yaml.get("failureType", "testCodeFailure") == "testCodeFailure" else "error"
    path, line = first_location(stack, root, prefer=file)
    if path is None or (file is not None and path != file):
        path, line = first_location(t.yaml.get("location", ""), root) if t.yaml.get("location") else (path, line)
    report.failures.append(TestFailure(
        test_id=test_id, file=file or path, line=line, message=error.strip()[:2000] if error else t.name,
        traceback="\n".join(x for x in (error, stack) if x), kind=kind,
        expected=t.yaml.get("expected"), actual=t.yaml.get("actual"),
    ))
    if kind == "failure":
        report.failed += 1
    else:
        report.errors += 1
    report.cases.append(TestCase(test_id=test_id, outcome="failed" if kind == "failure" else "error",
                                 duration=duration))


def _file_of(t: _Tap, parents: list[str], root: str) -> str | None:
    location = t.yaml.get("location")
    if location:
        path, _ = first_location(location, root)
        if path:
            return path
    for p in parents:
        if p.startswith(("/", "file://")):
            return relpath(p, root)
    return None
