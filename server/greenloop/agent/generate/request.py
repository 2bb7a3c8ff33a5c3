"""GenerateRequest: what a front end asks to generate, and the checks it must pass before any model call."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from greenloop.agent.generate.layouts import Layout
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


# `roman-numerals.py`, `utils/2d.py`: a module's file name; `to-roman(`: a function's name with a hyphen;
# "a function named to-roman", "module called my.mod-x": a name the request gives as such
_MODULE_FILE = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+)\.py\b")
_HYPHEN_CALL = re.compile(r"(?<![\w.-])([A-Za-z_][\w]*(?:-[\w]+)+)\(")
_NAMED = re.compile(r"\b(?:module|function|class|method)\s+(?:named|called)\s+`?([^\s`,;:()]+?)`?(?=[\s,;:()]|$)", re.I)


def check_names(prompt: str, layout: Layout) -> None:
    """GreenloopError when a python request names a module or function that cannot be a Python name
    (`roman-numerals.py`, `to-roman(n)`, `class.py`): its code could not be imported under that name."""
    if layout.name != "python":
        return
    bad: list[str] = []
    for match in _MODULE_FILE.finditer(prompt):
        parts = match.group(1).split("/")
        if not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
            bad.append(f"the module `{match.group(0)}`")
    bad += [f"the function `{m.group(1)}`" for m in _HYPHEN_CALL.finditer(prompt)]
    for match in _NAMED.finditer(prompt):
        name = match.group(1).removesuffix(".py").rstrip(".")
        if not all(p.isidentifier() and not keyword.iskeyword(p) for p in name.split(".")):
            bad.append(f"`{match.group(1)}`")
    if bad:
        names = ", ".join(dict.fromkeys(bad))
        raise GreenloopError(
            f"The request names {names}, which cannot be a Python name (letters, digits and underscores, "
            "not starting with a digit, not a keyword such as `class`): Python could not import it. "
            "Rename it in the request (e.g. use `_` for `-`) and run again."
        )


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
