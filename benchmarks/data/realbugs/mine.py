#!/usr/bin/env python3
"""Mine bug-fix commits from the projects' own git history into mined.jsonl, build.py's second source of bugs.

A commit is a candidate when, with its parent as the buggy commit:
- its message says it fixes something (fix, bug, regression, crash, wrong, incorrect), and its
  subject is not about docs, typing, lint, CI, refactoring or dependencies;
- it changes one or two existing non-test Python files, at most MAX_CODE_LINES lines of them,
  and those changes give one or two defs of def-level truth (build.py's rules);
- it adds or changes test functions (`test*` defs) in test files; those are the bug's tests
  (at most MAX_TESTS). Whether they fail before and pass after is build.py's check, not this one's.

Reads only the git mirrors ($REALBUGS_MIRRORS); runs no project code. Deterministic for given
mirrors and arguments: `python3 mine.py` rewrites mined.jsonl.

Usage: python3 mine.py [--projects tqdm,cookiecutter] [--out mined.jsonl]
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

import build

MAX_CODE_LINES = 40
MAX_TESTS = 5
MAX_PER_PROJECT = 60  # newest first
FIX = re.compile(r"\b(fix(e[sd])?|bug|regression|crash(es)?|wrong|incorrect(ly)?)\b", re.I)
NOT_A_FIX = re.compile(r"\b(docs?|documentation|typo|typing|types|mypy|lint|flake8|ruff|ci|"
                       r"refactor|deprecat\w*|bump|dependabot|pre-commit|release|changelog|"
                       r"readme|test(s|ing)? only|revert)\b", re.I)


def commits(repo: Path, since: str, until: str) -> list[tuple[str, str, str]]:
    """(sha, date, subject) of non-merge commits (branch commits too) in the window, newest first."""
    out = build.git(repo, "log", "--no-merges", f"--since={since}",
                    f"--until={until}", "--format=%H%x00%cs%x00%s%x00%b%x01", "HEAD").decode(
                        "utf-8", errors="replace")
    rows = []
    for rec in out.split("\x01"):
        parts = rec.strip("\n").split("\x00")
        if len(parts) < 4:
            continue
        sha, date, subject, body = parts[:4]
        if FIX.search(subject + "\n" + body) and not NOT_A_FIX.search(subject):
            rows.append((sha, date, subject))
    return rows


def blob(repo: Path, commit: str, path: str) -> str | None:
    proc = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True)
    return proc.stdout.decode("utf-8", errors="replace") if proc.returncode == 0 else None


def changed_tests(repo: Path, parent: str, sha: str, files: list[str]) -> list[str]:
    """Node ids of the `test*` defs the commit adds or changes (outermost test def of each + line)."""
    ids: list[str] = []
    for path in files:
        src = blob(repo, sha, path)
        if src is None:
            continue
        try:
            defs = build.defs_of(src, path)
        except SyntaxError:
            continue
        diff = build.git(repo, "diff", "-U0", parent, sha, "--", path).decode("utf-8", errors="replace")
        plus = build.patch_lines(diff).get(path, {}).get("+", [])
        for line, _ in plus:
            chain = [d for d in build.enclosing_chain(defs, line) if d.symbol.split(".")[-1].startswith("test")]
            if not chain:
                continue
            outer = chain[-1]  # enclosing_chain is innermost first
            parts = outer.symbol.split(".")
            if not all(p[:1].isupper() for p in parts[:-1]):
                continue  # a test def nested in a function, not a collected test
            node = "::".join([path, *parts])
            if node not in ids:
                ids.append(node)
    return ids


def candidate(project: str, repo: Path, sha: str) -> dict | None:
    parent = build.git(repo, "rev-parse", f"{sha}^").decode().strip()
    names = build.git(repo, "diff", "--name-status", "--no-renames", parent, sha).decode().splitlines()
    status = {line.split("\t")[-1]: line.split("\t")[0] for line in names}
    code = [p for p in status if p.endswith(".py") and not build.is_test_path(p)]
    tests = [p for p in status if p.endswith(".py") and build.is_test_path(p) and status[p] != "D"]
    if not (1 <= len(code) <= 2) or not tests or any(status[p] != "M" for p in code):
        return None
    patch = build.git(repo, "diff", "--no-renames", parent, sha, "--", *code).decode("utf-8", errors="replace")
    changed = sum(1 for line in patch.splitlines()
                  if line[:1] in "+-" and not line.startswith(("+++", "---")))
    if changed > MAX_CODE_LINES:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        buggy, fixed = Path(tmp, "b"), Path(tmp, "f")
        for tree, commit in ((buggy, parent), (fixed, sha)):
            for path in code:
                text = blob(repo, commit, path)
                if text is not None:
                    (tree / path).parent.mkdir(parents=True, exist_ok=True)
                    (tree / path).write_text(text)
        try:
            truth, _ = build.truth_of(patch, buggy, fixed)
        except SyntaxError:
            return None
    if not (1 <= len(truth) <= 2):
        return None
    ids = changed_tests(repo, parent, sha, tests)
    if not ids or len(ids) > MAX_TESTS:
        return None
    return {"project": project, "id": f"{project}-git-{sha[:8]}", "buggy_commit": parent,
            "fixed_commit": sha, "tests": ids, "test_files": tests}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", default="", help="comma-separated (default: every project with a 'mine' window)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "mined.jsonl")
    args = ap.parse_args()
    names = [x for x in args.projects.split(",") if x] or list(build.MINE)
    rows = [r for r in build.read_jsonl(args.out) if r["project"] not in names]
    for project in names:
        spec = build.PROJECTS[project]
        repo = build.MIRRORS / spec["mirror"] / "repo"
        window = build.MINE[project]
        found = []
        for sha, date, subject in commits(repo, window["since"], window["until"]):
            row = candidate(project, repo, sha)
            if row:
                row.update(date=date, subject=subject)
                found.append(row)
                if len(found) >= MAX_PER_PROJECT:
                    break
        print(f"{project}: {len(found)} candidates", flush=True)
        rows += found
    order = list(build.PROJECTS)
    rows.sort(key=lambda r: (order.index(r["project"]), r["date"], r["fixed_commit"]))
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))


if __name__ == "__main__":
    main()
