"""DockerSandbox specifics against the real engine: limits, labels, layers, reaper, clean shutdown."""

from __future__ import annotations

import asyncio
import os
import time
import uuid

import pytest

from greenloop_sandbox import DockerSandbox, Limits, SandboxError, load_template, open_sandbox
from greenloop_sandbox import engine as engine_mod
from greenloop_sandbox.docker_container import remove_container
from greenloop_sandbox.engine import docker_client
from greenloop_sandbox.reaper import reap_containers
from tests.sandbox.conftest import sandbox_containers

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("docker_images")]


async def test_container_is_locked_down_and_labelled() -> None:
    async with DockerSandbox(load_template("python"), limits=Limits(memory="256m", pids=64), label="t") as sb:
        assert sb._container is not None
        attrs = docker_client().containers.get(sb._container.id).attrs
        host = attrs["HostConfig"]
        assert host["NetworkMode"] == "none"
        assert host["Memory"] == 256 * 1024 * 1024 and host["PidsLimit"] == 64
        assert host["CapDrop"] == ["ALL"] and not host["Privileged"]
        assert not any("docker.sock" in (m.get("Source") or "") for m in attrs["Mounts"])
        labels = attrs["Config"]["Labels"]
        assert labels["greenloop.sandbox"] == "1" and labels["greenloop.label"] == "t"
        who = await sb.exec("id -u; touch /etc/evil 2>&1; echo rc=$?")
        assert who.stdout.splitlines()[0] == "1000" and "rc=1" in who.stdout


async def test_memory_and_pids_limits_hold() -> None:
    async with DockerSandbox(load_template("python"), limits=Limits(memory="128m", pids=64)) as sb:
        mem = await sb.exec(["python3", "-c", "b = bytearray(400 * 1024 * 1024); print('allocated')"])
        assert "allocated" not in mem.stdout and mem.exit_code != 0
        forks = await sb.exec("for i in $(seq 1 200); do sleep 5 & done 2>&1; echo done", timeout=30)
        assert "fork" in (forks.stdout + forks.stderr).lower() or "resource" in (forks.stdout + forks.stderr).lower()
        after = await sb.exec("echo alive")
        assert after.ok and after.stdout.strip() == "alive"


async def test_install_is_cached_by_hash_and_survives_a_restart() -> None:
    async with DockerSandbox(load_template("python")) as sb:
        await sb.sync({"test_six.py": b"import six\n\ndef test_six():\n    assert six.PY3\n"})
        first = await sb.install(["six==1.16.0"])
        assert first.ok, first
        image = sb.image
        setup = await sb.run_setup("echo built > generated.txt")
        assert setup.ok, setup
        assert sb.image != image
        res = await sb.exec("cat generated.txt; python3 -c 'import six; print(six.__version__)'")
        assert res.stdout.split() == ["built", "1.16.0"]
        assert (await sb.run_tests()).green
    async with DockerSandbox(load_template("python")) as sb:
        start = time.monotonic()
        again = await sb.install(["six==1.16.0"])
        assert again.ok and "cached layer" in again.stdout
        assert sb.image == image
        assert time.monotonic() - start < 10


async def test_a_hung_or_flooding_setup_command_is_stopped_and_capped() -> None:
    # a `run` action of the 0.5B model (`python3 -m pytest tests/test_from_roman.py`) spun for 20
    # minutes in a build container that had no time or memory limit, and cancelling could not stop it
    client = docker_client()
    before = {c.id for c in client.containers.list(all=True)}
    limits = Limits(exec_timeout=3, output_limit=100_000, memory="256m")
    async with DockerSandbox(load_template("python"), limits=limits) as sb:
        image = sb.image
        start = time.monotonic()
        hung = await sb.run_setup("sleep 300")
        assert not hung.ok and hung.timed_out and "longer than 3s" in hung.stderr
        assert time.monotonic() - start < 60
        assert sb.image == image  # no layer from a failed step; the session goes on
        assert (await sb.exec("echo alive")).stdout.strip() == "alive"
        flood = await sb.run_setup("yes 0123456789abcdef | head -c 4000000; exit 3")
        assert not flood.ok and not flood.timed_out and flood.truncated
        assert len(flood.stdout) < 120_000 and "non-zero code: 3" in flood.stdout
        fresh = uuid.uuid4().hex  # never a cached layer: a build that once passed would be reused
        big = await sb.run_setup(f"python3 -c 'b = bytearray(1 << 30); print(len(b))' # {fresh}")
        assert not big.ok, big.stdout  # the sandbox's memory limit holds in a build step too
    # build containers too; the engine may be shared (another run's sandboxes carry their owner's pid)
    left = [c for c in client.containers.list(all=True) if c.id not in before]
    assert [c.name for c in left if c.labels.get("greenloop.owner_pid") in (None, str(os.getpid()))] == []


async def test_node_packages_resolve_on_the_host() -> None:
    async with DockerSandbox(load_template("node")) as sb:
        res = await sb.install(["is-number@7.0.0"])
        assert res.ok, res
        await sb.sync({"x.mjs": b"import isNumber from 'is-number';\nconsole.log(isNumber(5));\n"})
        out = await sb.exec("node x.mjs")
        assert out.stdout.strip() == "true", out


async def test_twenty_sandboxes_some_cancelled_leave_nothing() -> None:
    before = set(sandbox_containers(os.getpid()))

    async def one(i: int, running: asyncio.Event) -> None:
        async with open_sandbox("python", backend="docker", label=f"many-{i}") as sb:
            if i % 3 == 0:
                running.set()
                await sb.exec("sleep 60")
            await sb.exec("echo hi")

    cancelled = 0
    for batch in range(4):
        ids = range(batch * 5, batch * 5 + 5)
        events = {i: asyncio.Event() for i in ids}
        tasks = {i: asyncio.create_task(one(i, events[i])) for i in ids}
        victims = [i for i in ids if i % 3 == 0]
        await asyncio.wait_for(asyncio.gather(*(events[i].wait() for i in victims)), 60)
        await asyncio.sleep(0.3)  # mid-run: inside `sleep 60`
        for i in victims:
            tasks[i].cancel()
        results = await asyncio.gather(*tasks.values(), return_exceptions=True)
        assert all(r is None or isinstance(r, asyncio.CancelledError) for r in results), results
        cancelled += sum(isinstance(r, asyncio.CancelledError) for r in results)
    assert cancelled == 7
    assert set(sandbox_containers(os.getpid())) == before


async def test_reaper_removes_containers_of_dead_owners() -> None:
    proc = await asyncio.create_subprocess_exec("true")
    await proc.wait()
    client = docker_client()
    sb = DockerSandbox(load_template("python"))
    await sb.start()
    assert sb._container is not None
    name = sb._container.name
    # Pretend the owner crashed: a copy of the container labelled with a pid that is gone.
    labels = dict(sb._container.labels, **{"greenloop.owner_pid": str(proc.pid), "greenloop.session": "dead"})
    orphan = client.containers.create(sb.image, ["sleep", "infinity"], labels=labels, network_mode="none")
    try:
        removed = reap_containers(client)
        assert orphan.name in removed and name not in removed
    finally:
        await sb.close()
    assert name not in sandbox_containers()


async def test_a_container_closed_while_the_reaper_reads_the_list_is_not_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine lists ids, then each is read: a sandbox closed by its run in between is just gone."""
    client = docker_client()
    async with DockerSandbox(load_template("python")) as mine:
        other = DockerSandbox(load_template("python"))
        await other.start()
        assert other._container is not None and mine._container is not None
        closed, other._container = other._container, None
        listed = client.api.containers

        def closes_one_in_between(*args: object, **kwargs: object) -> object:
            found = listed(*args, **kwargs)
            remove_container(closed)  # what the other run's close does, after the engine listed its container
            return found

        monkeypatch.setattr(client.api, "containers", closes_one_in_between)
        assert reap_containers(client) == []
        assert mine._container.name in sandbox_containers()


async def test_no_engine_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    monkeypatch.setattr(engine_mod, "_state", {"checked": 0.0, "ok": False, "client": None, "error": ""})
    with pytest.raises(SandboxError, match="--sandbox local"):
        await DockerSandbox(load_template("python")).start()
    assert open_sandbox("python").name == "local"
