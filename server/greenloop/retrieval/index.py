"""The repository index: every file's definitions and references, updated incrementally.

Files are re-parsed only when their content changes (results are cached by
content hash, process-wide). Small updates parse in a worker thread, a cold
index of many files in worker processes; the caller's event loop never runs
the parsing itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any, TypeVar

from greenloop.retrieval.model import Definition, FileSymbols
from greenloop.retrieval.pool import parse_in_workers
from greenloop.retrieval.tags import extract

log = logging.getLogger(__name__)
_T = TypeVar("_T")
DEFAULT_MAX_FILE_BYTES = 1_000_000
_PROCESS_POOL_BYTES = 2_000_000  # below this much changed source, one thread beats starting worker processes
_CACHE_LIMIT = 100_000
_cache: dict[tuple[str, bytes], FileSymbols] = {}  # (path, content digest) -> symbols, process-wide


def normalize_path(path: str) -> str:
    """Workspace-relative posix form: no leading "./", forward slashes."""
    if "\\" not in path and not path.startswith("./") and "//" not in path and "/./" not in path:
        return path.rstrip("/")
    text = path.replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return str(PurePosixPath(text)) if text else text


@lru_cache(maxsize=65_536)
def is_test_path(path: str) -> bool:
    """Whether a path is test code by the usual conventions of Python, JS/TS and Rust."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    stem = name.split(".", 1)[0]
    if any(part in ("tests", "test", "__tests__", "spec", "testing") for part in parts[:-1]):
        return True
    if stem == "conftest" or stem.startswith(("test_", "tests_")) or stem.endswith(("_test", "_tests")):
        return True
    return ".test." in name or ".spec." in name


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _skip_reason(data: bytes, limit: int) -> str:
    if len(data) > limit:
        return f"skipped: {len(data):,} bytes is over the {limit:,}-byte limit"
    if b"\0" in data[:8192]:
        return "skipped: binary file"
    return ""


def _extract_many(items: Sequence[tuple[str, bytes]]) -> list[FileSymbols]:
    return [extract(path, data) for path, data in items]


class RepoIndex:
    """Definitions and references of a workspace's files, keyed by workspace-relative path."""

    def __init__(self, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, workers: int | None = None) -> None:
        self.max_file_bytes = max_file_bytes
        self.workers = workers or min(os.cpu_count() or 1, 4)
        self.version = 0  # bumps on every change; caches derived from the index compare it
        self._content: dict[str, bytes] = {}
        self._files: dict[str, FileSymbols] = {}
        # name -> path -> definitions: removing one file's entries never scans other files'
        self._by_name: dict[str, dict[str, list[Definition]]] = {}
        self._referrers: dict[str, dict[str, list[Definition]]] = {}  # name -> whose bodies name it
        self._lock = asyncio.Lock()
        self._derived: dict[str, Any] = {}  # per-version memo (graphs, path resolvers)
        self._derived_version = -1

    # ---- updating -------------------------------------------------------------------------
    async def update(
        self, files: Mapping[str, bytes], deleted: Iterable[str] = (), *, complete: bool = False
    ) -> None:
        """Add or replace `files`, drop `deleted`; with `complete`, also drop paths not in `files`.

        Only files whose content changed are parsed again.
        """
        async with self._lock:
            incoming = {normalize_path(p): data for p, data in files.items()}
            gone = {normalize_path(p) for p in deleted}
            if complete:
                gone |= self._content.keys() - incoming.keys()
            changed = [(p, d) for p, d in incoming.items() if not self._same(p, d)]
            for path in gone:
                self._remove(path)
            if changed:
                results = await self._symbols_for(changed)
                for count, ((path, data), symbols) in enumerate(zip(changed, results, strict=True), 1):
                    self._store(path, data, symbols)
                    if count % 200 == 0:
                        await asyncio.sleep(0)  # a cold index stores thousands of files: let others run
            if changed or gone:
                self.version += 1

    def _same(self, path: str, data: bytes) -> bool:
        old = self._content.get(path)
        return old is not None and (old is data or old == data)

    async def _symbols_for(self, changed: list[tuple[str, bytes]]) -> list[FileSymbols]:
        results, misses = await asyncio.to_thread(self._lookup, changed)
        if misses:
            parsed = await self._parse([(path, data) for _, path, data, _ in misses])
            if len(_cache) + len(parsed) > _CACHE_LIMIT:
                _cache.clear()
            for (position, path, _data, digest), symbols in zip(misses, parsed, strict=True):
                _cache[(path, digest)] = symbols
                results[position] = symbols
        return [r for r in results if r is not None]

    def _lookup(
        self, changed: list[tuple[str, bytes]]
    ) -> tuple[list[FileSymbols | None], list[tuple[int, str, bytes, bytes]]]:
        """Cached or skipped symbols per changed file; the rest (position, path, data, digest) to parse."""
        results: list[FileSymbols | None] = []
        misses: list[tuple[int, str, bytes, bytes]] = []
        for position, (path, data) in enumerate(changed):
            reason = _skip_reason(data, self.max_file_bytes)
            if reason:
                results.append(FileSymbols(path=path, language=None, line_count=0, note=reason))
                continue
            digest = _digest(data)
            cached = _cache.get((path, digest))
            results.append(cached)
            if cached is None:
                misses.append((position, path, data, digest))
        return results, misses

    async def _parse(self, items: list[tuple[str, bytes]]) -> list[FileSymbols]:
        total = sum(len(data) for _, data in items)
        if self.workers < 2 or total < _PROCESS_POOL_BYTES:
            return await asyncio.to_thread(_extract_many, items)
        return await parse_in_workers(items, self.workers, _extract_many)

    def _store(self, path: str, data: bytes, symbols: FileSymbols) -> None:
        self._remove(path)
        self._content[path] = data
        self._files[path] = symbols
        for definition in symbols.definitions:
            self._by_name.setdefault(definition.name, {}).setdefault(path, []).append(definition)
            for name in definition.refs:
                self._referrers.setdefault(name, {}).setdefault(path, []).append(definition)

    def _remove(self, path: str) -> None:
        old = self._files.pop(path, None)
        self._content.pop(path, None)
        if old is None:
            return
        for definition in old.definitions:
            _drop(self._by_name, definition.name, path)
            for name in definition.refs:
                _drop(self._referrers, name, path)

    @property
    def lock(self) -> asyncio.Lock:
        """Held while updating; hold it to read a consistent index from another thread."""
        return self._lock

    def derived(self, name: str, build: Callable[[], _T]) -> _T:
        """A value computed from this version of the index, memoized until the next change."""
        if self._derived_version != self.version:
            self._derived = {}
            self._derived_version = self.version
        if name not in self._derived:
            self._derived[name] = build()
        value: _T = self._derived[name]
        return value

    # ---- reading ----------------------------------------------------------------------------
    @property
    def paths(self) -> list[str]:
        return sorted(self._files)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and normalize_path(path) in self._files

    def __len__(self) -> int:
        return len(self._files)

    def definitions(self, path: str | None = None) -> list[Definition]:
        """All definitions (of one file when `path` is given), in file order."""
        if path is not None:
            symbols = self._files.get(normalize_path(path))
            return list(symbols.definitions) if symbols else []
        return [d for p in sorted(self._files) for d in self._files[p].definitions]

    def symbols(self, path: str) -> FileSymbols | None:
        return self._files.get(normalize_path(path))

    def named(self, name: str) -> list[Definition]:
        """Definitions whose short name is `name`."""
        return [d for defs in self._by_name.get(name, {}).values() for d in defs]

    def referrers(self, name: str) -> list[Definition]:
        """Definitions whose bodies name `name`."""
        return [d for defs in self._referrers.get(name, {}).values() for d in defs]

    def enclosing(self, path: str, line: int) -> Definition | None:
        """The innermost definition whose range holds `line`."""
        best: Definition | None = None
        for definition in self.definitions(path):
            if definition.contains(line) and (best is None or definition.start_line >= best.start_line):
                best = definition
        return best

    def lines(self, path: str) -> list[str]:
        """A file's text as lines (empty for unknown, binary or skipped files)."""
        data = self._content.get(normalize_path(path))
        symbols = self._files.get(normalize_path(path))
        if data is None or (symbols is not None and symbols.note.startswith("skipped")):
            return []
        return data.decode("utf-8", "replace").splitlines()

    @property
    def notes(self) -> dict[str, str]:
        """Files that were skipped or only partly indexed, and why."""
        return {p: s.note for p, s in sorted(self._files.items()) if s.note}


def _drop(table: dict[str, dict[str, list[Definition]]], name: str, path: str) -> None:
    by_path = table.get(name)
    if by_path is not None:
        by_path.pop(path, None)
        if not by_path:
            del table[name]
