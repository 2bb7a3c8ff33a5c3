"""Runner output or parsed reports -> one `Failure` per failing test (id, text, file, line).

Raw pytest output is cut to its FAILURES/ERRORS blocks first: the warnings
summary, coverage tables and the session header name files and lines that
are not where anything failed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from greenloop_sandbox.report import TestFailure


@dataclass
class Failure:
    """One failing test as retrieval sees it."""

    test_id: str
    text: str
    file: str | None = None
    line: int | None = None


_TEST_HEADERS = (
    re.compile(r"^(?:FAILED|ERROR) (?P<id>\S+)", re.M),  # pytest summary
    re.compile(r"^_{3,} (?P<id>\S.*?) _{3,}\s*$", re.M),  # pytest section
    re.compile(r"^---- (?P<id>\S+) stdout ----", re.M),  # cargo test
    re.compile(r"^test (?P<id>\S+) \.\.\. FAILED", re.M),  # cargo test
    re.compile(r"^\s*(?:not ok \d+ - |✖ )(?P<id>.+?)(?: \(\d[\d.]*m?s\))?\s*$", re.M),  # node --test
)
_SECTIONS = re.compile(r"^(?:_{3,} |---- )(\S.*?)(?: _{3,}| stdout ----)\s*$", re.M)
# pytest's top-level banners: "==== FAILURES ====", "==== warnings summary ====", ...
_BANNER = re.compile(r"^={3,} (?P<title>.*?) ={3,}\s*$", re.M)
_FAILURE_BANNERS = ("FAILURES", "ERRORS")
_TAP_SUBTEST = re.compile(r"^\s*# Subtest: (.+)$", re.M)
_TAP_NOT_OK = re.compile(r"^\s*not ok \d+ - ", re.M)


def from_reports(failures: Sequence[TestFailure]) -> list[Failure]:
    return [Failure(f.test_id, "\n".join(p for p in (f.message, f.traceback) if p), f.file, f.line) for f in failures]


def from_text(text: str) -> list[Failure]:
    """Raw runner output -> one failure per pytest/cargo section, or one for the whole text."""
    ids: list[str] = []
    for pattern in _TEST_HEADERS:
        ids.extend(m["id"] for m in pattern.finditer(text) if m["id"] not in ids)
    body = failure_blocks(text)
    tap = _tap_failures(body)
    if len(tap) > 1:
        return tap
    parts = _SECTIONS.split(body)
    if len(parts) < 5:  # fewer than two sections: keep the output whole
        named = [i for i in ids if not any(o != i and o.endswith(("::" + i, "." + i)) for o in ids)]
        return [Failure(" ".join(named[:20]), body)]
    short = [i.rsplit("::", 1)[-1] for i in ids]
    full_ids = {i.rsplit("::", 1)[-1]: i for i in ids if "::" in i and short.count(i.rsplit("::", 1)[-1]) == 1}
    failures = []
    for header, section in zip(parts[1::2], parts[2::2], strict=True):
        name = header.split()[0]
        failures.append(Failure(full_ids.get(name, name), section))
    return failures


def _tap_failures(text: str) -> list[Failure]:
    """node --test's TAP output -> one failure per `# Subtest:` block that is `not ok`."""
    parts = _TAP_SUBTEST.split(text)
    return [
        Failure(name.strip(), block)
        for name, block in zip(parts[1::2], parts[2::2], strict=True)
        if _TAP_NOT_OK.search(block)
    ]


def failure_blocks(text: str) -> str:
    """pytest output -> its FAILURES and ERRORS blocks (plus the summary lines); other text unchanged."""
    banners = list(_BANNER.finditer(text))
    if not any(m["title"].strip() in _FAILURE_BANNERS for m in banners):
        return text
    kept: list[str] = []
    for number, banner in enumerate(banners):
        end = banners[number + 1].start() if number + 1 < len(banners) else len(text)
        title = banner["title"].strip()
        if title in _FAILURE_BANNERS:
            kept.append(text[banner.start() : end])
        elif title == "short test summary info":
            kept.append("\n".join(line for line in text[banner.start() : end].splitlines() if line[:6] in ("FAILED", "ERROR ")))
    return "\n".join(kept)
