"""A spec no release of which has a wheel for the sandbox's Python, replaced by the nearest release that has one.

The sandbox has no compiler, so a compiled package's sdist cannot be built there (`Failed building wheel
for typed_ast`), and a lock or a pin from before this Python names such releases. `nearest_wheels` asks the
index (pip_index.releases) about each spec of a source that did not install, and moves a compiled package
whose allowed releases have no wheel to the release with a wheel nearest to what the project asked: the
oldest newer one its declared range allows, else the newest older one it allows; only when the range
allows none, the same outside the range, said so in the line. A pure-python package without a wheel keeps
its spec (its sdist builds in the no-network container), and a compiled one with no wheel in any release
is left out and named (`Unavailable`): the step stops on it when the tests need it. Nothing runs on the host.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field

from packaging.markers import InvalidMarker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from greenloop.agent.environment.locks import marker_environment
from greenloop_sandbox.packages import normal_name
from greenloop_sandbox.pip_index import Releases, index_urls, releases

MAX_ASKED = 8  # index pages read at once


@dataclass
class Moved:
    """The specs to install instead, a line per spec moved or left out, and the names left out."""

    specs: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)  # normal names: no release has a wheel for this Python


async def nearest_wheels(specs: list[str], python: str, ranges: Mapping[str, SpecifierSet]) -> Moved:
    """`specs` with each compiled package that has no wheel for `python` moved (see the module docstring);
    `ranges` is the project's declared range per normal name (a spec's own range when it has none)."""
    gate = asyncio.Semaphore(MAX_ASKED)
    indexes = await asyncio.to_thread(index_urls)  # once: it may ask pip's configuration

    async def ask(spec: str) -> tuple[str, Requirement | None, Releases | None]:
        try:
            req = Requirement(spec)
        except InvalidRequirement:
            return spec, None, None
        try:
            if req.marker is not None and not req.marker.evaluate(marker_environment(python)):
                return spec, None, None
        except InvalidMarker:
            pass
        async with gate:
            return spec, req, await releases(req.name, python, indexes)

    moved = Moved()
    for spec, req, listed in await asyncio.gather(*(ask(s) for s in specs)):
        if req is None or listed is None:
            moved.specs.append(spec)
            continue
        declared = ranges.get(normal_name(req.name), SpecifierSet())
        chosen = choose(req.specifier, declared, listed, python)
        if chosen is None:
            moved.specs.append(spec)
        elif isinstance(chosen, str):
            moved.lines.append(f"{spec}: not installed: {chosen}")
            moved.unavailable.append(normal_name(req.name))
        else:
            version, inside = chosen
            new = _spec(req, version)
            moved.specs.append(new)
            if inside:
                within = f" within the project's range ({declared})" if str(declared) else ""
                moved.lines.append(f"{spec}: no wheel for Python {python}; {req.name} {version} instead, the nearest "
                                   f"release{within} that has one")
            else:
                moved.lines.append(f"{spec}: no release the project allows ({declared or req.specifier}) has a wheel "
                                   f"for Python {python}; {req.name} {version} instead, OUTSIDE that range (the "
                                   "nearest release that has one)")
    return moved


def choose(asked: SpecifierSet, declared: SpecifierSet, listed: Releases, python: str) -> tuple[Version, bool] | str | None:
    """None: keep the spec (a release it allows has a wheel, or the package is pure python, or it names no
    listed release); (release, within the declared range) to install instead; or why nothing can be."""
    allowed = list(asked.filter(listed.versions, prereleases=True))
    if not allowed or any(v in listed.wheels for v in allowed) or not listed.compiled:
        return None
    if not listed.wheels:
        return (f"no release has a wheel for Python {python}, and building one from source needs a compiler, "
                "which the sandbox does not have")
    near, far = max(allowed), min(allowed)
    for pool, inside in (([v for v in listed.wheels if declared.contains(v, prereleases=True)], True),
                         (list(listed.wheels), False)):
        newer = [v for v in pool if v > near]
        older = [v for v in pool if v < far]
        if newer or older:
            return (min(newer) if newer else max(older)), inside
    return None


def _spec(req: Requirement, version: Version) -> str:
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    marker = f"; {req.marker}" if req.marker is not None else ""
    return f"{req.name}{extras}=={version}{marker}"


def declared_ranges(specs: list[str]) -> dict[str, SpecifierSet]:
    """Each name's range over all of `specs` together (the project's declared packages)."""
    found: dict[str, SpecifierSet] = {}
    for spec in specs:
        try:
            req = Requirement(spec)
        except InvalidRequirement:
            continue
        name = normal_name(req.name)
        found[name] = found.get(name, SpecifierSet()) & req.specifier
    return found
