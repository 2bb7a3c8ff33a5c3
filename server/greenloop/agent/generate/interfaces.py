"""The interfaces step: the plan's shared-interfaces document, asked for as plain Markdown and cleaned.

It is its own call, before the file list, because models (small ones most of all) write Markdown
far better than Markdown escaped inside a JSON string: Qwen2.5-Coder 0.5B, asked for both in one
JSON object, closed strings with `\\"` and looped on one line until the token limit.
"""

from __future__ import annotations

import re
from pathlib import Path

from greenloop.agent.generate.layouts import Layout
from greenloop.agent.generate.planning import step_messages
from greenloop.agent.generate.project_plan import interface_modules
from greenloop.errors import GreenloopError
from greenloop.llm import LLMClient
from greenloop.retrieval import outline
from greenloop_sandbox.languages import fence_suffixes

_FENCED = re.compile(r"^```[\w+-]*[ \t]*\n((?:(?!```).)*?)\n?```$", re.S)
_OPEN_MD = re.compile(r"^```(?:markdown|md)[ \t]*\n")
_HEADING = re.compile(r"^#{1,6}\s")
_LEVEL_TITLE = re.compile(r"^(#{1,6})\s+(.*)$")
_INFO = re.compile(r"^```[\w+-]+[ \t]*$")  # an opening fence that names its language: never a closing one
_CODE_BLOCK = re.compile(r"^```(?P<info>[\w+-]*)[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
_TESTS_TITLE = re.compile(r"^(unit\s+|example\s+)?(tests?|testing)(\s+cases?)?$", re.I)


_NO_CONTENT = (
    "\n\nAn earlier reply held headings but no signatures. Under each `## <path>` heading, list "
    "its functions and classes, one line each, with their signatures in backticks."
)


async def write_interfaces(llm: LLMClient, layout: Layout, request: str, workspace: Path) -> str:
    """The cleaned interfaces document, asked for twice at most; GreenloopError when it holds no content."""
    messages = step_messages("generate_interfaces", layout, request, workspace)
    text = clean_interfaces(await llm.complete(messages, step="generate_interfaces"), layout)
    if not has_content(text):  # the 0.5B model looped on bare headings and empty fences
        messages[-1] = {**messages[-1], "content": str(messages[-1]["content"]) + _NO_CONTENT}
        text = clean_interfaces(await llm.complete(messages, step="generate_interfaces", attempt=1), layout)
    if not has_content(text):
        raise GreenloopError(
            "The model wrote no interfaces for the plan. Run again, use a stronger model (--model), "
            "or describe the program more plainly."
        )
    return text


def clean_interfaces(reply: str, layout: Layout | None = None) -> str:
    """The reply without a wrapping code fence, repeated sections or lines repeated within a section,
    and (given the layout) without sections about tests or manifests.

    A small model that starts looping repeats a line (or a whole `## module` section) until the
    token limit; the repeats carry nothing, and the file step would read every one of them. Inside
    a code block only a line repeated at once goes: code repeats lines by design, and dropping the
    second triple quote of each docstring left the 1.5B model's matrix.py docstrings unclosed, and
    every file written from the document copied that (it never parsed).
    """
    text = reply.strip()
    if _OPEN_MD.match(text):  # ```markdown around the document (fences inside it, or cut off)
        text = _OPEN_MD.sub("", text, count=1)
        if text.endswith("```") and text.count("```") % 2:
            text = text[:-3]
        text = text.strip()
    elif fenced := _FENCED.match(text):  # one fenced block and nothing else
        text = fenced.group(1).strip()
    out: list[str] = []
    headings: set[tuple[str, ...]] = set()
    trail: list[tuple[int, str]] = []  # the headings above the line: (level, heading)
    section: set[str] = set()
    skipping = False
    in_code = False
    for line in text.splitlines():
        key = line.strip()
        if key.startswith("```"):
            in_code = bool(_INFO.match(key)) or not in_code  # "```python" opens even where a block was left open
        elif _HEADING.match(key):
            # a heading repeats only when its whole trail does
            # (docs/decisions/2026-11-generation-interfaces-markdown.md)
            level = len(key) - len(key.lstrip("#"))
            trail = [*(h for h in trail if h[0] < level), (level, key)]
            path = tuple(h for _, h in trail)
            skipping = path in headings
            headings.add(path)
            section = set()
        if skipping or (key and not in_code and key in section and not key.startswith("```")):
            continue
        if in_code and key and out and line.rstrip() == out[-1]:
            continue  # code repeats lines (a docstring's closing quotes, `return x`); a loop repeats one at once
        if not key and (not out or not out[-1].strip()):
            continue  # no leading or doubled blank lines
        section.add(key)
        out.append(line.rstrip())
    lines = _balanced_fences(out)
    return "\n".join(_without_sections(lines, layout) if layout else lines).strip()


def _without_sections(lines: list[str], layout: Layout) -> list[str]:
    """Lines without the sections (and their sub-sections) that are about tests or manifests.

    The document is for the code's interfaces; the prompt says to list no test files. Qwen2.5-Coder
    0.5B still wrote `## Tests` and `## tests/test_slug.py` with whole test files (and once a
    `## pyproject.toml`), and every later request copied them: the source file got the tests, and
    a test file with fixtures but no test was sent back through every repair.
    """
    out: list[str] = []
    skip_level = 0  # the level of the heading being dropped; 0: keeping
    in_fence = False
    for line in lines:
        if line.strip().startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else _LEVEL_TITLE.match(line.strip())
        if heading:
            level = len(heading.group(1))
            if skip_level and level <= skip_level:
                skip_level = 0
            if not skip_level and _not_interfaces(heading.group(2), layout):
                skip_level = level
        if not skip_level:
            out.append(line)
    return out


def _not_interfaces(title: str, layout: Layout) -> bool:
    """Whether a heading names tests or a manifest greenloop writes (`## Tests`, `## tests/test_a.py`)."""
    name = title.strip(" `*:").removeprefix("File: ").strip(" `*")
    managed = {m.lower() for m in layout.managed}
    return bool(_TESTS_TITLE.match(name)) or layout.is_test(name) or name.lower() in managed


def outline_code_blocks(interfaces: str, layout: Layout) -> str:
    """The document with each code block that defines something shown as an outline (signatures, no bodies).

    Test files are written from the interfaces, not from an implementation. The 0.5B model wrote
    the whole module into the interfaces, and a test request that showed it got the module back
    as the "test" on every repair. Blocks with no definitions (examples) stay as they are.
    """

    def shown(block: re.Match[str]) -> str:
        suffix = fence_suffixes().get(block.group("info").lower() or layout.fence)
        bullets = outline(f"interfaces{suffix}", block.group("body")) if suffix else ""
        return bullets if bullets else block.group(0)

    return _CODE_BLOCK.sub(shown, interfaces)


def has_content(interfaces: str) -> bool:
    """Whether the document says anything beyond headings and fences."""
    return any(
        line.strip() and not _HEADING.match(line.strip()) and not line.strip().startswith("```")
        for line in interfaces.splitlines()
    )


def _balanced_fences(lines: list[str]) -> list[str]:
    """Lines with every code block closed, and without empty ones: a stray fence turns the rest of every
    prompt into code, and a block left open takes the next one's heading in (or, at the end, the prose)."""
    out: list[str] = []
    opened: int | None = None  # index in `out` of the fence that opened the current block
    for line in lines:
        if not line.strip().startswith("```"):
            out.append(line)
            continue
        if opened is not None and _INFO.match(line.strip()):  # a block left open where the next one starts
            at = len(out)
            while at > opened + 1 and (not out[at - 1].strip() or _HEADING.match(out[at - 1].strip())):
                at -= 1  # its closing fence goes above the headings that name the next block
            if any(x.strip() for x in out[opened + 1 : at]):
                out.insert(at, "```")
            else:
                del out[opened]
            opened = None
        if opened is None:
            opened = len(out)
            out.append(line)
        elif any(x.strip() and not _HEADING.match(x.strip()) for x in out[opened + 1 :]):
            out.append(line)
            opened = None
        else:  # a block with nothing (or only headings) in it: both fences go, the headings stay
            del out[opened]
            opened = None
    if opened is not None:  # never closed (cut off, or a looping reply): closed where it holds code
        if any(x.strip() and not _HEADING.match(x.strip()) for x in out[opened + 1 :]):
            out.append("```")
        else:
            del out[opened]
    return out


def count_modules(interfaces: str) -> int:
    """How many distinct `## <path>` headings the document has (the model's own sub-headings are not modules)."""
    return len(interface_modules(interfaces))
