"""The generate suite judged by its prompts: hidden acceptance tests run on what a cell wrote, and the bare one-shot baseline.

A generate cell is "green" when the project passes the tests it wrote itself. The suite's rows
name hidden tests written by hand from each prompt (`hidden_tests`, next to the suite file; never
shown to the loop); they run in a sandbox of their own on the cell's source files, its own tests
left out. A config with `[bench] generate = "bare"` asks the same model once for the module the
row names (`module`), with no plan, no tests and no loop: the baseline a pipeline must beat.
"""

from __future__ import annotations

import ast
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from greenloop.agent.ports import open_sandbox_for
from greenloop.agent.prompting.code_reply import extract_code
from greenloop.retrieval.index import is_test_path
from greenloop.settings import Settings

HIDDEN_FILE = "test_hidden_acceptance.py"  # where the hidden tests go in the judged tree
HIDDEN_TIMEOUT = 120.0
BARE_PROMPT = (
    "Write the Python module `{module}` for this request. Reply with the whole module in one ```python "
    "code block and nothing else.\n\n## Request\n{prompt}\n"
)


def hidden_count(hidden: str) -> int:
    """How many tests the hidden file holds: its top-level `test_` functions (they are written unparametrized)."""
    tree = ast.parse(hidden)
    return sum(1 for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
               and n.name.startswith("test"))


def judged_tree(files: Mapping[str, str], hidden: str) -> dict[str, str]:
    """The cell's files without its own tests (or any conftest), with the hidden tests at the root."""
    kept = {p: t for p, t in files.items() if not is_test_path(p) and not p.endswith("conftest.py")}
    return {**kept, HIDDEN_FILE: hidden}


async def acceptance_of(files: Mapping[str, str], hidden: str, settings: Settings) -> dict[str, Any]:
    """The hidden tests run on `files` in a fresh sandbox: passed, total, whether all passed, seconds taken."""
    begun = time.monotonic()
    total = hidden_count(hidden)
    tree = judged_tree(files, hidden)
    passed = 0
    if any(p.endswith(".py") and p != HIDDEN_FILE for p in tree):
        async with open_sandbox_for(settings, "python", label="bench-acceptance") as sandbox:
            await sandbox.sync({p: t.encode("utf-8") for p, t in tree.items()})
            report = await sandbox.run_tests([HIDDEN_FILE], timeout=HIDDEN_TIMEOUT)
            passed = min(report.passed, total)
    return {"passed": passed, "total": total, "all": total > 0 and passed == total,
            "seconds": round(time.monotonic() - begun, 3)}


async def bare_generate(prompt: str, module: str, settings: Settings, seen: dict[str, Any]) -> dict[str, Any]:
    """The bare one-shot: the model asked once (greedy) for `module`; a Done-like dict with the files it gave."""
    from greenloop.llm import open_llm

    messages = [{"role": "user", "content": BARE_PROMPT.format(module=module, prompt=prompt.strip())}]
    async with open_llm(settings) as llm:
        reply = await llm.complete(messages, step="bench_bare", temperature=0.0)
        usage = llm.usage
    code = extract_code(reply, module)
    seen.update(prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens, cost=usage.cost,
                iterations=0, served_seconds=usage.served_seconds)  # a memo bench charges the bare its model seconds too
    files = {module: code.text} if code.text.strip() else {}
    return {"outcome": "no_tests", "files": files, "extra": {"bare": True}, "evidence": code.problem}


def files_of(done: Mapping[str, Any]) -> dict[str, str]:
    """The files a cell's Done wrote (the bare one-shot's, or a change set's new texts)."""
    if isinstance(done.get("files"), dict):
        return dict(done["files"])
    changes = done.get("changes")
    return {c.path: c.after for c in getattr(changes, "files", []) if c.after is not None}


def hidden_text(row: Mapping[str, Any], folder: Path) -> str:
    """The hidden tests a generate row names (`hidden_tests`, relative to the suite file); ValueError when unusable."""
    name = row.get("hidden_tests")
    if name is None:
        return ""
    path = (folder / str(name)).resolve()
    try:
        text = path.read_text(encoding="utf-8")
        count = hidden_count(text)
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise ValueError(f"hidden tests {name}: {exc}") from exc
    if not count:
        raise ValueError(f"hidden tests {name} hold no test function")
    return text


def acceptance_summary(rows: list[Any]) -> dict[str, Any]:
    """Per config: runs judged, projects passing all hidden tests, hidden tests passed of total, self-green."""
    judged = [r for r in rows if isinstance(r.extra.get("acceptance"), dict)]
    if not judged:
        return {}
    return {
        "runs": len(judged),
        "projects_all": sum(1 for r in judged if r.extra["acceptance"].get("all")),
        "tests_passed": sum(int(r.extra["acceptance"].get("passed", 0)) for r in judged),
        "tests_total": sum(int(r.extra["acceptance"].get("total", 0)) for r in judged),
        "self_green": sum(1 for r in judged if r.outcome == "green"),
        "bare": any(r.extra.get("bare") for r in judged),
    }


def acceptance_lines(summaries: list[Any]) -> list[str]:
    """The report's table: acceptance beside self-green, per config (the bare one-shot says so)."""
    rows = [s for s in summaries if getattr(s, "acceptance", None)]
    if not rows:
        return []
    lines = ["", "Acceptance (hidden tests written by hand from each prompt, never shown to the loop; "
             "bench/acceptance.py):", "",
             "| config | runs | projects passing all hidden tests | hidden tests passed | self-green | median wall s |",
             "|---|---:|---:|---:|---:|---:|"]
    for s in rows:
        a = s.acceptance
        runs = a["runs"]
        green = "— (bare one-shot: no tests)" if a["bare"] else f"{a['self_green']} ({a['self_green'] / runs:.0%})"
        lines.append(f"| {s.config} | {runs} | {a['projects_all']} ({a['projects_all'] / runs:.0%}) "
                     f"| {a['tests_passed']} / {a['tests_total']} | {green} | {s.median_seconds:.1f} |")
    return lines
