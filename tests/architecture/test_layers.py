"""The import rules of docs/design.md ("Layers"), read from the source: which layer may import which."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# a package folder -> the module prefixes it must not import, and why (docs/design.md, "Rules")
RULES: dict[str, tuple[tuple[str, ...], str]] = {
    "sandbox/greenloop_sandbox": (("greenloop",), "the sandbox library is usable alone"),
    "server/greenloop/agent": (("greenloop.lsp", "greenloop.cli", "greenloop.bench"), "the agent knows no front end"),
    "server/greenloop/retrieval": (("greenloop.agent", "greenloop.llm", "greenloop.lsp", "greenloop.cli",
                                    "greenloop.bench"), "retrieval stands below the agent"),
    "server/greenloop/llm": (("greenloop.agent", "greenloop.retrieval", "greenloop.lsp", "greenloop.cli",
                              "greenloop.bench"), "the model client stands below the agent"),
    "server/greenloop/run_records": (("greenloop.agent", "greenloop.lsp", "greenloop.cli", "greenloop.bench"),
                              "run records know no front end"),
}


def imported_modules(path: Path, top: Path) -> list[tuple[int, str]]:
    """Every module `path` imports, absolute (relative imports resolved against its package)."""
    package = list(path.relative_to(top).with_suffix("").parts[:-1])
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.append((node.lineno, module))
            if node.module is None:  # from . import x: x may be a module
                found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def breaches(root: Path = ROOT) -> list[str]:
    lines = []
    for folder, (banned, why) in RULES.items():
        top = root / folder.split("/")[0]
        for path in sorted((root / folder).rglob("*.py")):
            for lineno, module in imported_modules(path, top):
                if any(module == b or module.startswith(b + ".") for b in banned):
                    lines.append(f"{path.relative_to(root)}:{lineno}: imports {module} ({why})")
    return lines


def test_no_layer_imports_upward() -> None:
    assert breaches() == []


def test_an_upward_import_is_found(tmp_path: Path) -> None:
    """The check itself: a relative import from the agent into the LSP front end, and the sandbox importing greenloop."""
    agent = tmp_path / "server" / "greenloop" / "agent" / "orchestration"
    agent.mkdir(parents=True)
    (agent / "bad.py").write_text("from ...lsp import server\nimport json\n")
    sandbox = tmp_path / "sandbox" / "greenloop_sandbox"
    sandbox.mkdir(parents=True)
    (sandbox / "worse.py").write_text("def f():\n    from greenloop.settings import Settings\n")
    for folder in RULES:
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    assert breaches(tmp_path) == [
        "sandbox/greenloop_sandbox/worse.py:2: imports greenloop.settings (the sandbox library is usable alone)",
        "server/greenloop/agent/orchestration/bad.py:1: imports greenloop.lsp (the agent knows no front end)",
    ]


@pytest.mark.parametrize("folder", sorted(RULES))
def test_every_ruled_folder_exists(folder: str) -> None:
    assert (ROOT / folder).is_dir(), f"{folder}: a layer of docs/design.md that is not in the tree"
