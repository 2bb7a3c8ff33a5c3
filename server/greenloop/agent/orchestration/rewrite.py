"""Whole-file rewrites: once an iteration's edits to a small file keep missing, the model writes it whole.

Off unless `loop.rewrite_lines` > 0; the result is applied like any `write` (syntax and no-op guards).
Why and the measurement: docs/decisions/2026-11-edits-search-replace.md.
"""

from __future__ import annotations

from pathlib import Path

from greenloop.agent.changes.actions import ApplyOutcome
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import EditRejected
from greenloop.agent.plan import WriteAction
from greenloop.agent.prompting.code_reply import extract_code
from greenloop.agent.prompting.files import render_prompt
from greenloop.llm import LLMClient
from greenloop.retrieval import language_of

MAX_FILES = 2  # rewrites per iteration: each is a whole file of output


def rewritable(outcome: ApplyOutcome, copy: WorkingCopy, max_lines: int) -> dict[str, str]:
    """The files whose edits were rejected and that are small enough to write whole: path -> the reasons."""
    reasons: dict[str, list[str]] = {}
    for event in outcome.events:
        if not isinstance(event, EditRejected):
            continue
        text = copy.read(event.path)
        if text is None or len(text.splitlines()) > max_lines:
            continue  # a path that was refused (escaping, binary, missing) or a file too long to rewrite
        reasons.setdefault(event.path, []).append(f"- {event.reason}")
    return {path: "\n".join(lines) for path, lines in list(reasons.items())[:MAX_FILES]}


async def rewrite(
    llm: LLMClient, copy: WorkingCopy, workspace: Path, path: str, problems: str, values: dict[str, str]
) -> WriteAction | str:
    """The model's whole new `path` as a write action, or why its reply holds none.

    `values` fill the prompt's `template`, `failures` and `diagnosis` (a section, or "").
    """
    content = copy.read(path) or ""
    fence = language_of(path) or ""
    prompt = render_prompt("rewrite", workspace, **values, path=path, fence=fence, content=content.rstrip("\n"),
                           problems=problems)
    messages = [{"role": "system", "content": render_prompt("system", workspace)},
                {"role": "user", "content": prompt}]
    reply = await llm.complete(messages, step="rewrite")
    code = extract_code(reply, path, [p for p in copy.paths() if p != path])
    if code.problem:
        return code.problem
    return WriteAction(kind="write", path=path, content=code.text)
