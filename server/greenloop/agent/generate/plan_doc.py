"""plan.md: a ProjectPlan as Markdown a person can edit, and back (`--from-plan`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

PLAN_FILE = ".greenloop/plan.md"
_SECTIONS = ("Request", "Acceptance", "Summary", "Interfaces", "Components", "Packages", "Files")
_FILE_HEADING = re.compile(r"^###\s+`?([^`\n]+?)`?\s*$", re.M)
_FIELD = re.compile(r"^\s*[-*]\s*(component|test|depends on|purpose)\s*:\s*(.*)$", re.I)
_TEMPLATE = re.compile(r"^Template:\s*`?(\w+)`?\s*$", re.M)
_TITLE = re.compile(r"^#\s+Plan:\s*(.+?)\s*$", re.M)
_ACCEPTANCE_MODULE = re.compile(r"^Module:\s*`?([\w.]+)`?\s*$", re.M)
ACCEPTANCE_NOTE = (
    "The examples the request states. greenloop writes them as tests ({path}) that the fix loop never changes. "
    "Edit, add or remove lines, one example each: `call == value`, or `call` raises `Error`."
)


@dataclass
class PlanDocument:
    """What plan.md holds: the plan's fields (a dict for ProjectPlan), the template and the request."""

    plan: dict[str, Any]
    template: str | None
    request: str
    examples: list[str] | None = None  # the Acceptance section's example lines (None: no such section)
    module: str = ""  # the module the examples' names come from, when the request names one


@dataclass
class AcceptanceSection:
    """What plan.md shows of the acceptance tests: the example lines, the module, what was dropped, the file."""

    examples: list[str]
    module: str = ""
    dropped: list[str] | None = None
    path: str = "tests/test_acceptance.py"


def render_plan(plan: dict[str, Any], template: str, request: str, acceptance: AcceptanceSection | None = None) -> str:
    """Markdown for a plan dump (`ProjectPlan.model_dump()`), with the acceptance examples when given."""
    out = [
        f"# Plan: {plan['name']}",
        "",
        "<!-- Edit this plan and re-run: greenloop generate --from-plan .greenloop/plan.md --out DIR --force -->",
        "",
        f"Template: {template}",
        "",
        "## Request",
        "",
        request.strip(),
        "",
        *_acceptance_lines(acceptance),
        "## Summary",
        "",
        plan.get("summary", "").strip(),
        "",
        "## Interfaces",
        "",
        plan["interfaces"].strip(),
        "",
        "## Components",
        "",
        *[f"{i}. {name}" for i, name in enumerate(plan.get("components", []), 1)],
        "",
        "## Packages",
        "",
        *([f"- {p}" for p in plan.get("packages", [])] or ["(none)"]),
        "",
        "## Files",
        "",
    ]
    for f in plan["files"]:
        deps = ", ".join(f"`{d}`" for d in f.get("depends_on", [])) or "(none)"
        out += [
            f"### `{f['path']}`",
            "",
            f"- component: {f.get('component', 'main')}",
            f"- test: {'yes' if f.get('test') else 'no'}",
            f"- depends on: {deps}",
            f"- purpose: {f.get('purpose', '').strip()}",
            "",
        ]
    return "\n".join(out).rstrip() + "\n"


def _acceptance_lines(section: AcceptanceSection | None) -> list[str]:
    if section is None:
        return []
    out = ["## Acceptance", "", ACCEPTANCE_NOTE.format(path=section.path), ""]
    if section.module:
        out += [f"Module: `{section.module}`", ""]
    out += [*(section.examples or ["(none: the request states no example)"]), ""]
    if section.dropped:
        out += ["Not tested (the model listed them, the request does not state them):", ""]
        out += [f"Dropped: {line}" for line in section.dropped] + [""]
    return out


def parse_plan(text: str) -> PlanDocument:
    """The plan fields from plan.md; ValueError naming what is missing."""
    sections = _split_sections(text)
    if "Interfaces" not in sections or "Files" not in sections:
        raise ValueError("plan.md needs a '## Interfaces' and a '## Files' section")
    title = _TITLE.search(text)
    template = _TEMPLATE.search(text)
    plan: dict[str, Any] = {
        "name": title.group(1).strip() if title else "app",
        "summary": sections.get("Summary", ""),
        "interfaces": sections["Interfaces"],
        "components": _list_items(sections.get("Components", "")),
        "packages": [p for p in _list_items(sections.get("Packages", "")) if p != "(none)"],
        "files": _parse_files(sections["Files"]),
    }
    acceptance = sections.get("Acceptance")
    module = _ACCEPTANCE_MODULE.search(acceptance or "")
    return PlanDocument(
        plan=plan, template=template.group(1) if template else None, request=sections.get("Request", ""),
        examples=None if acceptance is None else [row for row in acceptance.splitlines() if re.match(r"^\s*[-*]\s", row)],
        module=module.group(1) if module else "",
    )


def _split_sections(text: str) -> dict[str, str]:
    """Known `## ` sections. Interfaces may hold its own headings: later sections are found last-first."""
    starts: dict[str, re.Match[str]] = {}
    for name in _SECTIONS:
        found = list(re.finditer(rf"^##\s+{name}\s*$", text, re.M | re.I))
        if found:
            starts[name] = found[0] if name in ("Request", "Acceptance", "Summary", "Interfaces") else found[-1]
    ordered = sorted(starts.items(), key=lambda item: item[1].start())
    out: dict[str, str] = {}
    for i, (name, match) in enumerate(ordered):
        end = ordered[i + 1][1].start() if i + 1 < len(ordered) else len(text)
        out[name] = text[match.end() : end].strip()
    return out


def _list_items(body: str) -> list[str]:
    items = []
    for line in body.splitlines():
        m = re.match(r"^\s*(?:[-*]|\d+[.)])\s+(.+?)\s*$", line)
        if m:
            items.append(m.group(1).strip("`"))
    return items


def _parse_files(body: str) -> list[dict[str, Any]]:
    heads = list(_FILE_HEADING.finditer(body))
    files = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(body)
        entry: dict[str, Any] = {"path": head.group(1).strip()}
        key = ""
        for line in body[head.end() : end].splitlines():
            m = _FIELD.match(line)
            if m:
                key, value = m.group(1).lower(), m.group(2).strip()
                entry[key] = value
            elif key == "purpose" and line.strip():
                entry["purpose"] += "\n" + line.strip()
        files.append(_file_fields(entry))
    return files


def _file_fields(entry: dict[str, Any]) -> dict[str, Any]:
    deps = entry.get("depends on", "")
    return {
        "path": entry["path"],
        "component": entry.get("component", "main") or "main",
        "test": entry.get("test", "no").lower() in ("yes", "true", "1", "y"),
        "depends_on": []
        if deps in ("", "(none)")
        else [d.strip(" `") for d in deps.split(",") if d.strip(" `")],
        "purpose": entry.get("purpose", ""),
    }
