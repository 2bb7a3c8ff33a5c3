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
from greenloop.errors import GreenloopError
from greenloop.llm import LLMClient

_FENCED = re.compile(r"^```[\w+-]*[ \t]*\n((?:(?!```).)*?)\n?```$", re.S)
_OPEN_MD = re.compile(r"^```(?:markdown|md)[ \t]*\n")
_HEADING = re.compile(r"^#{1,6}\s")


async def write_interfaces(llm: LLMClient, layout: Layout, request: str, workspace: Path) -> str:
    """The cleaned interfaces document; GreenloopError when the reply holds none."""
    messages = step_messages("generate_interfaces", layout, request, workspace)
    text = clean_interfaces(await llm.complete(messages, step="generate_interfaces"))
    if not text:
        raise GreenloopError(
            "The model wrote no interfaces for the plan. Run again, use a stronger model (--model), "
            "or describe the program more plainly."
        )
    return text


def clean_interfaces(reply: str) -> str:
    """The reply without a wrapping code fence, repeated sections or lines repeated within a section.

    A small model that starts looping repeats a line (or a whole `## module` section) until the
    token limit; the repeats carry nothing, and the file step would read every one of them.
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
    headings: set[str] = set()
    section: set[str] = set()
    skipping = False
    for line in text.splitlines():
        key = line.strip()
        if _HEADING.match(key):
            skipping = key in headings
            headings.add(key)
            section = set()
        if skipping or (key and key in section):
            continue
        if not key and (not out or not out[-1].strip()):
            continue  # no leading or doubled blank lines
        section.add(key)
        out.append(line.rstrip())
    return "\n".join(out).strip()


def count_modules(interfaces: str) -> int:
    """How many `#` headings (one per module, as the prompt asks) the document has."""
    return sum(1 for line in interfaces.splitlines() if _HEADING.match(line.strip()))
