"""The definition/reference graph of an index and personalized PageRank over it.

Edges: a definition -> the definitions its body names (resolved by name,
same file first), weaker edges back to the definitions that name it, and
parent <-> child containment. PageRank is computed locally by the push
method, so its cost depends on the seeds' neighbourhood, not the repo size.
"""

from __future__ import annotations

from collections import deque

from greenloop.retrieval.index import RepoIndex
from greenloop.retrieval.model import Definition

_BACK = 0.3  # weight of a caller edge relative to a callee edge
_CONTAIN = 0.5  # weight of a parent/child edge
_MAX_CANDIDATES = 8  # names defined more often than this are too generic to follow
_MAX_CALLERS = 64  # back edges followed per definition (a hub's callers say little about it)


def resolve(index: RepoIndex, name: str, where: Definition | None, *, strict: bool = False) -> list[Definition]:
    """Definitions a reference to `name` from `where` most likely means.

    Same file first, then the modules `where`'s file imports; a name defined in
    more than `_MAX_CANDIDATES` places resolves only through those two. `strict`:
    only through those two (and the files of a package it imports), never by the
    name alone: `params.get` in utils.py is not the `get` an unrelated module defines.
    """
    candidates = index.named(name)
    if not candidates:
        return []
    if where is not None:
        candidates = [d for d in candidates if d.key != where.key]
        same_file = [d for d in candidates if d.path == where.path]
        if same_file:
            return same_file
        symbols = index.symbols(where.path)
        imported = set(symbols.imports) if symbols else set()
        from_imports = [d for d in candidates if module_name(d.path) in imported]
        if from_imports and len(from_imports) <= _MAX_CANDIDATES:
            return from_imports
        if strict:
            return [d for d in candidates if _package(d.path) in imported][:_MAX_CANDIDATES]
    return [] if strict else candidates if len(candidates) <= _MAX_CANDIDATES else []


def _package(path: str) -> str:
    """The folder a file sits in, as a package name ("" at the top)."""
    parts = path.rsplit("/", 2)
    return parts[-2] if len(parts) > 1 else ""


def module_name(path: str) -> str:
    """The name a file is imported by: its stem, or its folder's name for __init__/index/mod/lib."""
    parts = path.rsplit("/", 2)
    stem = parts[-1].split(".", 1)[0]
    if stem in ("__init__", "index", "mod", "lib", "main") and len(parts) > 1:
        return parts[-2]
    return stem


class DefinitionGraph:
    """Weighted neighbours of definitions, computed on demand for one index version."""

    def __init__(self, index: RepoIndex) -> None:
        self.index = index
        self.version = index.version
        self._edges: dict[str, list[tuple[Definition, float]]] = {}

    def neighbours(self, node: Definition) -> list[tuple[Definition, float]]:
        cached = self._edges.get(node.key)
        if cached is not None:
            return cached
        weights: dict[str, tuple[Definition, float]] = {}

        def add(target: Definition, weight: float) -> None:
            old = weights.get(target.key)
            weights[target.key] = (target, weight + (old[1] if old else 0.0))

        for name in node.refs:
            targets = resolve(self.index, name, node)
            for target in targets:
                add(target, 1.0 / len(targets))
        namesakes = len(self.index.named(node.name))
        callers = self.index.referrers(node.name) if namesakes <= _MAX_CANDIDATES else []
        for caller in callers[:_MAX_CALLERS]:
            if caller.key != node.key:
                add(caller, _BACK / max(1, namesakes))
        for other in self.index.definitions(node.path):
            if other.parent == node.symbol or (node.parent is not None and other.symbol == node.parent):
                add(other, _CONTAIN)
        edges = list(weights.values())
        self._edges[node.key] = edges
        return edges


def personalized_pagerank(
    graph: DefinitionGraph,
    seeds: dict[str, tuple[Definition, float]],
    *,
    alpha: float = 0.15,
    epsilon: float = 1e-3,
    max_pushes: int = 3_000,
) -> dict[str, tuple[Definition, float]]:
    """Approximate PPR (Andersen-Chung-Lang push) from weighted seeds; key -> (definition, rank)."""
    total = sum(weight for _, weight in seeds.values()) or 1.0
    residual: dict[str, float] = {key: weight / total for key, (_, weight) in seeds.items()}
    nodes: dict[str, Definition] = {key: node for key, (node, _) in seeds.items()}
    rank: dict[str, float] = {}
    queue = deque(residual)
    queued = set(residual)
    pushes = 0
    while queue and pushes < max_pushes:
        key = queue.popleft()
        queued.discard(key)
        mass = residual.pop(key, 0.0)
        if mass <= 0.0:
            continue
        pushes += 1
        edges = graph.neighbours(nodes[key])
        out = sum(weight for _, weight in edges)
        if out <= 0.0:
            rank[key] = rank.get(key, 0.0) + mass
            continue
        rank[key] = rank.get(key, 0.0) + alpha * mass
        spread = (1.0 - alpha) * mass / out
        for target, weight in edges:
            nodes.setdefault(target.key, target)
            value = residual.get(target.key, 0.0) + spread * weight
            residual[target.key] = value
            if value > epsilon and target.key not in queued:
                queue.append(target.key)
                queued.add(target.key)
    return {key: (nodes[key], value) for key, value in rank.items()}
