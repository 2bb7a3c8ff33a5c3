"""LocalSandbox specifics: temp copy, planted symlinks, clean shutdown under cancellation."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

from greenloop_sandbox import LocalSandbox, load_template, open_sandbox
from greenloop_sandbox.local_backend import PREFIX
from greenloop_sandbox.local_env import filtered_env, probe_isolation
from tests.sandbox.test_backends import _host_processes_with


def _dirs() -> set[Path]:
    """This process's local sandbox dirs (named with its pid): another process's do not count."""
    return set(Path(tempfile.gettempdir()).glob(f"{PREFIX}{os.getpid()}-*"))


async def test_sync_never_writes_through_a_symlink_a_command_planted(tmp_path: Path) -> None:
    target = tmp_path / "host"
    target.mkdir()
    async with LocalSandbox(load_template("python")) as sb:
        await sb.sync({"a.txt": b"1"})
        await sb.exec(f"ln -s {target} sub && ln -s {target}/f.txt link.txt")
        await sb.sync({"a.txt": b"1", "sub/x.txt": b"inside", "link.txt": b"inside"})
        assert list(target.iterdir()) == []
        assert (sb.workspace / "sub" / "x.txt").read_bytes() == b"inside"
        assert sb.note


async def test_twenty_sandboxes_some_cancelled_leave_no_dirs_or_processes() -> None:
    before = _dirs()

    async def one(i: int) -> None:
        async with open_sandbox("python", backend="local") as sb:
            await sb.sync({"f.txt": b"x"})
            await sb.exec("sleep 271.5 & sleep 271.5" if i % 3 == 0 else "true")

    tasks = [asyncio.create_task(one(i)) for i in range(20)]
    await asyncio.sleep(1.0)
    for i, task in enumerate(tasks):
        if i % 3 == 0:
            task.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(r is None or isinstance(r, asyncio.CancelledError) for r in results), results
    assert sum(isinstance(r, asyncio.CancelledError) for r in results) == 7
    await asyncio.sleep(0.2)
    assert not _host_processes_with("271.5")
    assert _dirs() == before


def test_env_filter_drops_credentials() -> None:
    env = filtered_env({"PATH": "/bin", "OPENAI_API_KEY": "x", "GH_TOKEN": "y", "DB_PASSWORD": "z",
                        "AWS_REGION": "r", "LANG": "C"})
    assert env == {"PATH": "/bin", "LANG": "C"}


def test_isolation_probe_reports_what_it_found() -> None:
    iso = probe_isolation()
    assert iso.note.startswith("local sandbox:")
    assert iso.network == ("no network" in iso.note)
