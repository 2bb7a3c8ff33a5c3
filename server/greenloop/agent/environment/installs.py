"""One version source installed as far as it goes: together, then past what failed, each step a line.

A source whose specs do not install together is not thrown away at once. First the specs with no wheel
for the sandbox's Python move to the nearest release that has one (wheels.py): before the first install
for a source of pins (a lock, pinned requirements: an old pin's failed sdist build costs a minute, the index
a few seconds), after it fails for the declared ranges (pip picks a release with a wheel within a range
itself). Then, at most `MAX_DROPS` times, the one package pip's output names as the failure (an sdist that
does not build, no matching distribution, a conflict) is left out and the rest installed again. What still
fails falls back to the next source, except the declared ranges, the last source, which are then installed
in halves, a half that fails halved again down to the one spec that does not install (at most
`MAX_PART_INSTALLS` installs, in `MAX_PART_SECONDS`; one by one stopped at 20 and left luigi's last 10). Every spec moved or left out is a line of the environment step.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.utils import InvalidSdistFilename, parse_sdist_filename

from greenloop.agent.environment.wheels import nearest_wheels
from greenloop.agent.ports import Refused, SandboxPort
from greenloop_sandbox.packages import normal_name, package_name
from greenloop_sandbox.values import ExecResult

MAX_DROPS = 3
MAX_PART_INSTALLS, MAX_PART_SECONDS = 40, 420.0  # declared ranges installed in parts when they do not install together
_BUILT = re.compile(r"building (\S+?\.(?:tar\.gz|zip|tar\.bz2)) (?:from source|needs)")
_FAILED = (re.compile(r"Failed building wheel for ([\w.\-]+)"), re.compile(r"No matching distribution found for "
           r"([\w.\-]+)"), re.compile(r"Cannot install ([\w.\-]+)=="), re.compile(r"^([\w.\-]+)\S*: no wheel for "
           r"this Python", re.MULTILINE))
_VERSIONS = re.compile(r"Cannot install ((?:[\w.\-\[\]]+==[^\s,]+,? (?:and )?)+)")


@dataclass
class Installer:
    """Installs for one environment step: its sandbox and Python, the project's declared range per name, and
    the step's lines and names with no wheel (both appended to)."""

    sandbox: SandboxPort
    python: str
    ranges: Mapping[str, SpecifierSet]
    lines: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)

    async def install_source(self, source: str, specs: list[str], last: bool) -> list[str] | None:
        """The specs of `source` that are installed now; None when it falls back to the next source."""
        if not last:  # pins (a lock's): asked first, as a failed build of an old pin costs more than the index
            specs = await self._nearest(specs)
        result = await self.sandbox.install(specs)
        if _ok(result):
            return specs
        why = _why(result)
        if last and (moved := await self._nearest(specs)) != specs:
            specs = moved
            result = await self.sandbox.install(specs)
            if _ok(result):
                return specs
            why = _why(result)
        for _ in range(MAX_DROPS):
            name = failing_package(_text(result))
            dropped = [s for s in specs if package_name(s) == name]
            if not dropped or len(dropped) == len(specs):
                break
            self.lines.append(f"{dropped[0]}: left out, the rest installed without it ({why})")
            specs = [s for s in specs if package_name(s) != name]
            result = await self.sandbox.install(specs)
            if _ok(result):
                return specs
            why = _why(result)
        if not last:
            self.lines.append(f"{source}: not installed, falling back to the next source ({why})")
            return None
        self.lines.append(f"{source}: not installed together ({why}); in parts instead")
        return await self._in_parts(specs)

    async def _nearest(self, specs: list[str]) -> list[str]:
        moved = await nearest_wheels(specs, self.python, self.ranges)
        self.lines.extend(moved.lines)
        self.unavailable.extend(moved.unavailable)
        return moved.specs

    async def _in_parts(self, specs: list[str]) -> list[str]:
        """The specs that install in halves, each half that fails halved again down to one spec (at most
        `MAX_PART_INSTALLS` installs in `MAX_PART_SECONDS`): a conflict, or a package that cannot be installed here,
        costs that one, not its half; more builds from source than one install allows are split up."""
        kept: list[str] = []
        start, installs = time.monotonic(), 0
        parts = [specs[: len(specs) // 2], specs[len(specs) // 2:]]
        while parts:
            part = parts.pop(0)
            if not part:
                continue
            if installs >= MAX_PART_INSTALLS or time.monotonic() - start > MAX_PART_SECONDS:
                rest = [s for p in [part, *parts] for s in p]
                self.lines.append(f"stopped installing in parts after {installs} installs, "
                                  f"{time.monotonic() - start:.0f}s; not tried: {', '.join(rest)}")
                break
            installs += 1
            result = await self.sandbox.install(part)
            if _ok(result):
                kept.extend(part)
            elif len(part) == 1:
                self.lines.append(f"{part[0]}: not installed ({_why(result)})")
            else:
                parts[:0] = [part[: len(part) // 2], part[len(part) // 2:]]
        return kept


def failing_package(text: str) -> str:
    """The normal name of the package pip's output (or the sdist build's) says did not install; "" when none."""
    built = _BUILT.search(text)
    if built is not None:
        try:
            return normal_name(str(parse_sdist_filename(built[1])[0]))
        except InvalidSdistFilename:
            pass
    for pattern in _FAILED:
        if (found := pattern.search(text)) is not None:
            return package_name(found[1])
    return ""


def _ok(result: ExecResult | Refused) -> bool:
    return not isinstance(result, Refused) and result.ok


def _text(result: ExecResult | Refused) -> str:
    return result.reason if isinstance(result, Refused) else result.stderr + result.stdout


def _why(result: ExecResult | Refused) -> str:
    return result.reason if isinstance(result, Refused) else tail(result.stderr + result.stdout)


def tail(text: str) -> str:
    """The line of an install's output that says why: the sdist that did not build, pip's missing distribution or
    conflict, else its error; a conflict's long list of versions tried is cut to a count."""
    lines = [_short(line.strip()) for line in text.strip().splitlines() if line.strip()]
    built = [line for line in lines if _BUILT.search(line)]
    for key in ("No matching distribution", "Cannot install", "depends on", "requires", "conflict", "ERROR:"):
        said = [line for line in lines if key in line and "pip.pypa.io" not in line]
        if said:
            return " ".join([*built[:1], *said[:2]])[:300]
    return " ".join([*built[:1], *lines[-1:]])[:300] if lines else "no output"


def _short(line: str) -> str:
    """`Cannot install a==1, a==2, ... and a==9 because ...` as `Cannot install a (9 versions) because ...`."""
    found = _VERSIONS.search(line)
    if found is None:
        return line
    names = dict.fromkeys(re.findall(r"([\w.\-\[\]]+)==", found[1]))
    count = len(re.findall(r"==", found[1]))
    return line.replace(found[1], f"{', '.join(names)} (any of {count} versions) ", 1)
