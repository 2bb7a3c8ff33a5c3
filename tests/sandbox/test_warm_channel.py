"""A warm Docker sandbox's channel (docker_channel.py) and the rewrite cache (warm_child.py) change no result."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from greenloop_sandbox import DockerSandbox, Limits, load_template
from greenloop_sandbox.engine import docker_client
from greenloop_sandbox.images import build_template_image
from tests.sandbox.test_warm_runs import outcomes

pytestmark = pytest.mark.docker
LIMITS = Limits(test_case_timeout=20, case_timeout_factor=0, test_timeout=120, cpus=0.5)  # a fixed per-test limit
PASSING = {"test_ok.py": b"def test_ok():\n    assert 1 + 1 == 2\n"}
LISTING = "cd /workspace && find . -mindepth 1 -printf '%p %m %T@ %s %u\\n' | sort"
AGENTS = ("python3 -c \"import os; print(sum(b'channel_' b'agent' in open(f'/proc/{p}/cmdline', 'rb').read() "
          "for p in os.listdir('/proc') if p.isdigit()))\"")


@pytest.fixture
async def pair() -> AsyncIterator[tuple[DockerSandbox, DockerSandbox]]:
    """A cold Docker sandbox and a warm one."""
    build_template_image(docker_client(), load_template("python"))
    async with DockerSandbox(load_template("python"), limits=LIMITS) as cold, \
            DockerSandbox(load_template("python"), limits=LIMITS, warm_runs=True) as warm:
        yield cold, warm


async def both(pair: tuple[DockerSandbox, DockerSandbox], files: dict[str, bytes]) -> None:
    """`files` synced and run in both sandboxes: the same outcomes."""
    cold, warm = pair
    await cold.sync(files)
    await warm.sync(files)
    want, got = await cold.run_tests(), await warm.run_tests()
    assert outcomes(got) == outcomes(want), got.raw[-3000:]


async def test_a_sync_over_the_channel_leaves_the_files_as_put_archive_does(
        pair: tuple[DockerSandbox, DockerSandbox]) -> None:
    cold, warm = pair
    await both(pair, PASSING)  # the warm one's first test run opens its channel
    assert warm._channel.channel is not None
    changed = {**PASSING, "pkg/sub/mod.py": b"X = 1\n", "run.sh": b"#!/bin/sh\necho hi\n",
               "test_ok.py": b"def test_ok():\n    assert 2 + 2 == 4\n"}
    await both(pair, changed)
    assert warm._channel.channel is not None  # the files went over it
    want, got = (await cold.exec(LISTING)).stdout, (await warm.exec(LISTING)).stdout
    assert got == want and "./run.sh 755 0.0000000000 " in got and "./pkg/sub 755 0.0000000000 " in got


async def test_a_test_that_kills_every_process_breaks_the_channel_and_the_run_gives_the_cold_result(
        pair: tuple[DockerSandbox, DockerSandbox]) -> None:
    _, warm = pair
    await both(pair, PASSING)
    first = warm._channel.channel
    assert first is not None
    kills = {**PASSING, "test_kill.py": b"import os, signal\n\n\ndef test_kill():\n    os.kill(-1, signal.SIGKILL)\n"}
    await both(pair, kills)  # the agent, the worker and the run all go: the run is run again the usual way
    assert warm._channel.channel is None and warm.warm.pgid is None
    await both(pair, PASSING)  # a new worker and channel
    assert warm._channel.channel not in (None, first) and warm.warm.warm >= 2
    assert (await warm.exec(AGENTS)).stdout.strip() == "1"  # the first agent is gone


async def test_a_kept_rewrite_is_of_the_same_source_and_a_rewrite_that_warned_is_not_kept(
        pair: tuple[DockerSandbox, DockerSandbox]) -> None:
    _, warm = pair
    # conftest records the warnings pytest reports; a rewrite warns of an assert that is always true
    files = {"conftest.py": b"SEEN = []\n\n\ndef pytest_warning_recorded(warning_message):\n"
                            b"    SEEN.append(str(warning_message.message))\n",
             "test_a.py": b"def test_tuple():\n    assert (1, 'always true')\n",
             "test_b.py": b"def test_value():\n    assert 1 == 1\n",
             "test_c.py": b"import conftest\n\n\ndef test_warned():\n"
                          b"    assert any('always true' in s for s in conftest.SEEN)\n"}
    for _ in range(3):
        await both(pair, files)
    same_size = {**files, "test_b.py": files["test_b.py"].replace(b"1 == 1", b"1 == 2")}
    await both(pair, same_size)
    report = await warm.run_tests()
    assert report.passed == 2 and report.failed == 1 and "test_value" in str(report.failures)
    kept = (await warm.exec("ls /tmp/greenloop-warm-run/rewritten | wc -l")).stdout.strip()
    assert kept == "4"  # conftest.py, test_b.py twice (two sources), test_c.py; not test_a.py


async def test_a_run_over_the_channel_sees_the_environment_and_stdio_a_cold_run_sees(
        pair: tuple[DockerSandbox, DockerSandbox]) -> None:
    cold, warm = pair
    dump = {"test_env.py": b"import json, os, re\n\n\ndef test_env():\n"
                           b"    fds = [re.sub('[0-9]+', 'N', os.readlink(f'/proc/self/fd/{fd}')) for fd in (0, 1, 2)]\n"
                           b"    seen = {'env': dict(os.environ), 'cwd': os.getcwd(), 'fds': fds,\n"
                           b"            'umask': os.umask(0o022), 'groups': os.getgroups()}\n"
                           b"    json.dump(seen, open('/tmp/seen.json', 'w'), sort_keys=True)\n"}
    await both(pair, dump)
    await both(pair, dump)  # the second warm run is forked and goes over the channel
    assert warm._channel.channel is not None and warm.warm.warm == 2
    seen = [json.loads((await box.exec("cat /tmp/seen.json")).stdout) for box in (cold, warm)]
    assert seen[0]["fds"][0] == "/dev/null" and seen[0]["env"]["HOME"] == "/home/sandbox"
    for one in seen:
        for key in ("HOSTNAME", "GREENLOOP_SPARE"):  # the container's own name; the groups the cleanup spares
            one["env"].pop(key, None)
    assert seen[0] == seen[1]


async def test_a_run_cancelled_over_the_channel_leaves_nothing_and_the_next_run_is_as_cold(
        pair: tuple[DockerSandbox, DockerSandbox]) -> None:
    _, warm = pair
    await both(pair, PASSING)
    slow = {**PASSING, "test_slow.py": b"import time\n\n\ndef test_slow():\n    time.sleep(60)\n"}
    await warm.sync(slow)
    run = asyncio.ensure_future(warm.run_tests(["test_slow.py"]))
    await asyncio.sleep(4)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert warm._channel.channel is None and warm.warm.pgid is None
    assert (await warm.exec(AGENTS)).stdout.strip() == "0"  # the agent, the worker and the run are gone
    await both(pair, PASSING)
    assert warm._channel.channel is not None and (await warm.exec(AGENTS)).stdout.strip() == "1"
