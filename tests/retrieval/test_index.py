"""RepoIndex: cold indexing of a big real repo, cheap incremental updates, bad files."""

from __future__ import annotations

import asyncio
import time

from greenloop.retrieval import RepoIndex
from greenloop.retrieval.tags import extract
from tests.retrieval.conftest import STDLIB


def _stdlib_files() -> dict[str, bytes]:
    """The interpreter's standard library without its own test suites (~800 files, ~11 MB)."""
    files = {}
    for path in sorted(STDLIB.rglob("*.py")):
        rel = path.relative_to(STDLIB).as_posix()
        if rel.startswith(("site-packages/", "test/", "idlelib/idle_test/")) or "/tests/" in rel:
            continue
        files[rel] = path.read_bytes()
    return files


async def test_cold_index_of_the_stdlib_in_worker_processes_never_blocks_the_loop() -> None:
    files = _stdlib_files()
    assert len(files) > 500 and sum(map(len, files.values())) > 5_000_000  # large enough for the process pool
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    index = RepoIndex(workers=2)
    tick = asyncio.create_task(ticker())
    started = time.perf_counter()
    await index.update(files)
    took = time.perf_counter() - started
    done.set()
    await tick
    assert len(index) == len(files)
    # parsing on the loop would stall it for most of the run (the gap would be about `took`); on a
    # shared machine a scheduler hiccup of under a second is noise (0.54 s of 2.7 s while two model
    # servers and a bench shared the 2 cores), so the bound is half the run, at least a second
    assert max(gaps) < max(1.0, 0.5 * took), f"the event loop stalled for {max(gaps):.2f}s of {took:.1f}s"
    print(f"longest event-loop stall while indexing: {max(gaps) * 1000:.0f} ms")
    decoder = {d.symbol: d for d in index.definitions("json/decoder.py")}
    assert decoder["JSONDecoder.raw_decode"].kind == "method"
    for path in ("json/decoder.py", "asyncio/tasks.py", "collections/__init__.py"):
        assert index.symbols(path) == extract(path, files[path])  # workers give what the thread gives
    assert any(d.path == "json/decoder.py" for d in index.named("JSONDecoder"))


async def test_incremental_update_reparses_only_what_changed() -> None:
    files = {p: d for p, d in list(_stdlib_files().items())[:200]}
    index = RepoIndex()
    await index.update(files)
    before = {p: index.symbols(p) for p in files}
    version = index.version
    await index.update(dict(files))  # same content, new dict
    assert index.version == version
    path = "json/decoder.py" if "json/decoder.py" in files else next(iter(files))
    changed = files[path] + b"\n\ndef brand_new_function(x):\n    return x\n"
    await index.update({**files, path: changed})
    assert index.version == version + 1
    assert "brand_new_function" in {d.name for d in index.definitions(path)}
    assert all(index.symbols(p) is before[p] for p in files if p != path)
    assert index.named("brand_new_function")[0].path == path


async def test_deleted_and_complete_updates() -> None:
    index = RepoIndex()
    await index.update({"a.py": b"def alpha():\n    pass\n", "b.py": b"def beta():\n    pass\n"})
    await index.update({}, deleted=["./a.py"])
    assert index.paths == ["b.py"] and index.named("alpha") == []
    await index.update({"c.py": b"def gamma():\n    pass\n"}, complete=True)
    assert index.paths == ["c.py"] and index.named("beta") == []


async def test_binary_huge_and_broken_files_are_noted_not_fatal() -> None:
    index = RepoIndex(max_file_bytes=10_000)
    await index.update({
        "logo.png": b"\x89PNG\r\n\x1a\n\0\0\0" + bytes(range(256)),
        "data/big.py": b"x = 1\n" * 5_000,
        "broken.py": b"def ok():\n    return 1\n\ndef bad(:\n",
        "weird.py": "def caf\u00e9():\n    return '\u2603'\n".encode() + b"\xff\xfe\n",
        "README.md": b"# hello\n",
    })
    notes = index.notes
    assert notes["logo.png"] == "skipped: binary file"
    assert notes["data/big.py"].startswith("skipped: 30,000 bytes")
    assert "syntax errors" in notes["broken.py"]
    assert index.definitions("broken.py")[0].name == "ok"
    assert [d.name for d in index.definitions("weird.py")] == ["caf\u00e9"]
    assert index.lines("logo.png") == [] and index.lines("README.md") == ["# hello"]
