"""Doctor's "Installation" section: the package found its data files (prompts, queries, templates, prices).

A wheel that left a data file out fails here, at `greenloop doctor`, instead of in the
middle of a run; CI runs doctor from a pipx install of the built wheel (.ci/wheel-check).
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

import greenloop
from greenloop.llm.prices import shipped_prices
from greenloop.retrieval.languages import tags_query
from greenloop_sandbox.doctor import Check, Section
from greenloop_sandbox.templates import load_template, template_names

_GRAMMARS = ("python", "javascript", "typescript", "tsx", "rust")


def installation_section() -> Section:
    """Where greenloop runs from, and one row per kind of data file."""
    rows = [Check("package", True, f"greenloop {greenloop.__version__} at {resources.files('greenloop')}")]
    checks = (("prompts", _prompts), ("tree-sitter queries", _queries), ("sandbox templates", _templates),
              ("price table", _prices))
    for name, check in checks:
        try:
            rows.append(Check(name, True, check()))
        except Exception as exc:  # a missing file must be reported, not crash doctor
            rows.append(Check(name, False, f"{type(exc).__name__}: {exc}",
                              "reinstall greenloop; a wheel without its data files is broken"))
    return Section("Installation", rows)


def _prompts() -> str:
    found = [f for folder in _prompt_folders(resources.files("greenloop")) for f in folder.iterdir()
             if f.name.endswith(".md") and f.read_text(encoding="utf-8").strip()]
    if not found:
        raise FileNotFoundError("no prompt files (prompts/*.md) in the package")
    return f"{len(found)} prompt files readable"


def _prompt_folders(root: Traversable) -> list[Traversable]:
    """Every `prompts` folder inside the package (wherever the agent keeps them)."""
    out: list[Traversable] = []
    for entry in root.iterdir():
        if entry.is_dir() and entry.name != "__pycache__":
            out += [entry] if entry.name == "prompts" else _prompt_folders(entry)
    return out


def _queries() -> str:
    for grammar in _GRAMMARS:
        tags_query(grammar)
    return f"{len(_GRAMMARS)} grammars' tag queries compile"


def _templates() -> str:
    names = template_names()
    for name in names:
        load_template(name)
    if not names:
        raise FileNotFoundError("no sandbox templates in greenloop_sandbox/templates")
    return f"{', '.join(names)} load"


def _prices() -> str:
    return f"{len(shipped_prices())} hosted models priced"
