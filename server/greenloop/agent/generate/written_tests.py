"""What a generated test file must be: tests the runner collects, importing the code they test, not a copy of it.

Each check names the problem in words the repair request sends back. They
exist because Qwen2.5-Coder 0.5B, asked for a test file, returned the module
under test again, or wrote the functions into the test file and tested those.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from greenloop.agent.generate.layouts import Layout
from greenloop.retrieval import public_names, top_level

_IMPORT_LINE = re.compile(r"^(import|from)\s|^(const|let|var)\s.*\brequire\(")
_BODY_START = re.compile(r"^(def|class|async|function|test|describe)\b")


def check_test_file(layout: Layout, path: str, text: str, code: Mapping[str, str], crate: str) -> str:
    """Why `text` is not a usable test file at `path` ("" when it is); `code` is what it tests, path -> text."""
    if PurePosixPath(path).name in layout.test_helpers:
        return ""  # helpers (pytest's conftest.py): no tests, no imports required
    if not layout.has_test_case(path, text):
        return f"it is a test file but holds no test; write {layout.test_case_hint}"
    modules, imports = _modules(layout, path, code, crate)
    if not modules:
        return ""
    if not any(pattern.search(text) for pattern, _ in imports.values()):
        how = "; ".join(f"`{hint}` for {p}" for p, (_, hint) in imports.items())
        return f"it does not import the code it tests; import it ({how}) instead of writing that code again"
    copied = [n for p, t in modules.items() for n in _api(layout, p, t) if _defines(text, n)]
    if copied:
        names = ", ".join(f"`{n}`" for n in dict.fromkeys(copied))
        return f"it defines {names} itself; import them from the code under test and only test them"
    return ""


def add_missing_imports(layout: Layout, path: str, text: str, code: Mapping[str, str], crate: str) -> str:
    """`text` with the import a test forgot, when it uses the tested code's names and imports none of it.

    The 0.5B model wrote sound tests of `Stack` without `from stack import Stack`,
    and sent the same file back to every repair request. The import is mechanical:
    greenloop writes it (python and node; a Rust path needs the module tree).
    """
    modules, imports = _modules(layout, path, code, crate)
    if not imports or any(pattern.search(text) for pattern, _ in imports.values()):
        return text
    lines: list[str] = []
    for module, (_, hint) in imports.items():
        used = [n for n in _api(layout, module, modules[module]) if _uses(text, n) and not _defines(text, n)]
        if used and _writable(hint):
            lines.append(hint.replace("...", ", ".join(used)))
    if not lines:
        return text
    body = text.splitlines(keepends=True)
    at = _after_imports(body)
    return "".join([*body[:at], *(f"{line}\n" for line in lines), *body[at:]])


def without_copies(layout: Layout, path: str, text: str, code: Mapping[str, str], crate: str) -> str:
    """`text` without its own top-level definitions of the tested code's public names.

    Qwen2.5-Coder 0.5B wrote `count_words` and `top_words` into the test file and tested those
    copies, through every repair. Removing the copies is mechanical, and `add_missing_imports`
    then imports the real code. Left as it is where that import cannot be written (Rust) or no
    test would remain.
    """
    modules, imports = _modules(layout, path, code, crate)
    names = {n for p, t in modules.items() for n in _api(layout, p, t)}
    imported = any(pattern.search(text) for pattern, _ in imports.values())
    if not names or not (imported or all(_writable(hint) for _, hint in imports.values())):
        return text
    copies = [d for d in top_level(path, text) if d.name in names]
    if not copies:
        return text
    drop = {n for d in copies for n in range(d.start_line - 1, d.end_line)}
    kept = "".join(line for n, line in enumerate(text.splitlines(keepends=True)) if n not in drop)
    kept = re.sub(r"\n{4,}", "\n\n\n", kept)
    return kept if layout.has_test_case(path, kept) else text


def _writable(hint: str) -> bool:
    """Whether greenloop can write the import `hint` describes (python, node; not a Rust path)."""
    return "..." in hint and "::" not in hint


def _modules(
    layout: Layout, path: str, code: Mapping[str, str], crate: str
) -> tuple[dict[str, str], dict[str, tuple[re.Pattern[str], str]]]:
    """The source modules among `code`, and for each how the test at `path` imports it (pattern, hint)."""
    modules = {p: t for p, t in code.items() if layout.is_source(p)}
    return modules, {p: layout.module_import(path, p, crate) for p in modules}


def _api(layout: Layout, path: str, text: str) -> list[str]:
    """What a test imports from a module: its public names, less the tests the model put there.

    Qwen2.5-Coder 0.5B wrote `test_slugify` into slug.py too; the test file's own `test_slugify`
    was then refused as a copy of the code under test, three times over.
    """
    return [n for n in public_names(path, text) if not layout.is_test_name(n)]


def _uses(text: str, name: str) -> bool:
    return bool(re.search(rf"(?<![\w.]){re.escape(name)}\b", text))


def _after_imports(lines: list[str]) -> int:
    """Index after the last top-level import/require line, else after the leading comment lines."""
    last_import = None
    for index, line in enumerate(lines):
        if _IMPORT_LINE.match(line):
            last_import = index
        elif _BODY_START.match(line):
            break
    if last_import is not None:
        return last_import + 1
    at = 0
    while at < len(lines) and lines[at].lstrip().startswith(("#", "//")):
        at += 1
    return at


def import_hints(layout: Layout, path: str, code: Iterable[str], crate: str) -> list[str]:
    """How the test file at `path` imports each module in `code` (`from pkg.mod import ...`)."""
    return [layout.module_import(path, p, crate)[1] for p in code if layout.is_source(p)]


def _defines(text: str, name: str) -> bool:
    """Whether the text defines a function, class or binding called `name` (any of the templates' languages)."""
    word = re.escape(name)
    return bool(
        re.search(
            rf"^[ \t]*((pub[ \t]+)?(async[ \t]+)?(def|function|fn|class|struct)[ \t]+{word}\b"
            rf"|(const|let|var)[ \t]+{word}[ \t]*=[ \t]*(async[ \t]*)?(function\b|\([^)]*\)[ \t]*=>|\w+[ \t]*=>))",
            text,
            re.M,
        )
    )
