"""The output folder: the saved plan, and the generated files written at the end through apply_changes."""

from __future__ import annotations

import os
from pathlib import Path

from greenloop.agent.events import ChangeSet, FileChange
from greenloop.agent.generate.plan_doc import PLAN_FILE, AcceptanceSection, render_plan
from greenloop.agent.generate.project_plan import ProjectPlan
from greenloop.agent.orchestration.session import apply_changes
from greenloop.errors import GreenloopError


def save_plan(out_dir: Path, plan: ProjectPlan, template: str, request: str, *, source: Path | None,
              acceptance: AcceptanceSection | None = None) -> str:
    """Write `<out>/.greenloop/plan.md` (not when re-running from that very file); return its relative path."""
    target = out_dir / PLAN_FILE
    if source is not None and target.exists() and source.resolve() == target.resolve():
        return PLAN_FILE
    text = render_plan(plan.model_dump(), template, request, acceptance)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.greenloop-tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise GreenloopError(f"Cannot write the plan to {target} ({exc}); check the --out folder.") from exc
    return PLAN_FILE


def write_output(out_dir: Path, changes: ChangeSet) -> ChangeSet:
    """Write every new file of `changes` into out_dir; the returned set has the real `before` texts.

    Files that exist already (only with --force) are overwritten; a binary one is refused up front.
    If the disk fails part way, the error says which files are there.
    """
    files = [FileChange(path=c.path, before=_current(out_dir / c.path), after=c.after) for c in changes.files]
    final = changes.model_copy(update={"files": files})
    written: list[str] = []
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for change in files:
            written += apply_changes(out_dir, ChangeSet(files=[change]))
    except (OSError, GreenloopError) as exc:
        there = ", ".join(written) if written else "none of them"
        raise GreenloopError(
            f"Writing the project to {out_dir} failed ({exc}); of {len(files)} files, written: {there}. "
            "Free the folder (or disk space) and run again with --from-plan."
        ) from exc
    return final


def _current(path: Path) -> str | None:
    if not path.exists():
        return None
    if not path.is_file():
        raise GreenloopError(f"{path} is in the way (not a file); remove it or choose another --out.")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise GreenloopError(
            f"{path} exists and is not a text file; greenloop will not overwrite it."
        ) from None
