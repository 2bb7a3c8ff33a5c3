"""GenerateRequest: what a front end asks to generate, and the checks it must pass before any model call."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from greenloop.agent.generate.plan_doc import PLAN_FILE
from greenloop.errors import GreenloopError
from greenloop.settings import GenerateSettings


@dataclass
class GenerateRequest:
    """One generation: a prompt (or an edited plan) and where the project goes."""

    prompt: str
    out_dir: Path
    template: str = "python"  # python | node | rust (the sandbox's templates)
    small_steps: bool = False
    force: bool = False  # allow a non-empty out_dir
    from_plan: Path | None = None  # re-run from an edited .greenloop/plan.md
    answers: dict[str, str] | None = None  # clarify answers (None = skip clarify)


def check_prompt(prompt: str, settings: GenerateSettings, *, from_plan: bool) -> str:
    """The stripped prompt; GreenloopError when it is empty (without a plan) or too long."""
    text = prompt.strip()
    if not text and not from_plan:
        raise GreenloopError("The prompt is empty: describe the program to generate (or pass --from-plan).")
    if len(text) > settings.max_prompt_chars:
        raise GreenloopError(
            f"The prompt is {len(text):,} characters; the limit is {settings.max_prompt_chars:,} "
            "(generate.max_prompt_chars). Describe the program more briefly, or raise the limit."
        )
    return text


def check_out_dir(out_dir: Path, *, force: bool) -> None:
    """Refuse a non-empty output folder unless forced; a folder holding only .greenloop/ counts as empty."""
    if out_dir.exists() and not out_dir.is_dir():
        raise GreenloopError(f"{out_dir} exists and is not a folder; choose another --out.")
    if not out_dir.exists() or force:
        return
    entries = [p.name for p in out_dir.iterdir() if p.name != ".greenloop"]
    if entries:
        shown = ", ".join(sorted(entries)[:5]) + (" ..." if len(entries) > 5 else "")
        raise GreenloopError(
            f"{out_dir} is not empty ({shown}); choose an empty or new folder, or pass --force to write into it."
        )


def plan_path(out_dir: Path) -> Path:
    """Where a generation saves its plan."""
    return out_dir / PLAN_FILE


def read_plan_file(path: Path) -> str:
    """The text of an edited plan; GreenloopError when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GreenloopError(
            f"{path}: no such plan file; a generation saves one as <out>/{PLAN_FILE}."
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GreenloopError(f"{path}: cannot read the plan ({exc}).") from exc
