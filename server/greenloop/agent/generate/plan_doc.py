"""plan.md: a ProjectPlan as Markdown a person can edit, and back (`--from-plan`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

PLAN_FILE = ".greenloop/plan.md"
_SECTIONS = ("Request", "Summary", "Interfaces", "Components", "Packages", "Files")
_FILE_HEADING = re.compile(r"^###\s+`?([^`\n]+?)`?\s*$", re.M)
_FIELD = re.compile(r"^\s*[-*]\s*(component|test|depends on|purpose)\s*:\s*(.*)$", re.I)
_TEMPLATE = re.compile(r"^Template:\s*`?(\w+)`?\s*$", re.M)
_TITLE = re.compile(r"^#\s+Plan:\s*(.+?)\s*$", re.M)


@dataclass
class PlanDocument:
    """What plan.md holds: the plan's fields (a dict for ProjectPlan), the template and the request."""

    plan: dict[str, Any]
    template: str | None
    request: str


def render_plan(plan: dict[str, Any], template: str, request: str) -> str:
    """Markdown for a plan dump (`ProjectPlan.model_dump()`)."""
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
    return PlanDocument(
        plan=plan, template=template.group(1) if template else None, request=sections.get("Request", "")
    )


def _split_sections(text: str) -> dict[str, str]:
    """Known `## ` sections. Interfaces may hold its own headings: later sections are found last-first."""
    starts: dict[str, re.Match[str]] = {}
    for name in _SECTIONS:
        found = list(re.finditer(rf"^##\s+{name}\s*$", text, re.M | re.I))
        if found:
            starts[name] = found[0] if name in ("Request", "Summary", "Interfaces") else found[-1]
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
