"""The real embedded model (opt-in: `pytest -m real_llm`). Asserts structure, not text.

The served fixture runs xllamacpp's server (the `[local]` extra, the default); tests/llm/test_real_llama_server.py
covers the llama-server executable, the fallback. The start/stop tests use whichever the default picks.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from greenloop.llm import CallRecord, ContextOverflow, open_llm
from greenloop.llm.local_model import ready_model
from greenloop.settings import LocalModelSettings, Settings

pytestmark = [pytest.mark.real_llm, pytest.mark.timeout(600)]


class Function(BaseModel):
    name: str
    arguments: list[str]
    test_names: list[str]


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """`greenloop model serve` on xllamacpp in the foreground, as a user would run it."""
    if ready_model(LocalModelSettings()) is None:
        pytest.fail("the embedded model is not fetched: run `greenloop model fetch` (CI's setup does)")
    proc = subprocess.Popen(
        [sys.executable, "-m", "greenloop", "model", "serve"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "GREENLOOP_LOCAL_MODEL__SERVER": "xllamacpp"},
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("READY "), (line, proc.stderr.read() if proc.poll() is not None else "")
        assert proc.stderr.readline().startswith("server: xllamacpp")
        yield line.split()[1]
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def settings_for(base_url: str) -> Settings:
    return Settings(llm={"base_url": base_url, "max_tokens": 120, "seed": 42, "temperature": 0.0},
                    local_model={"enabled": False})


ASK = [{"role": "user", "content": "Describe a Python function that adds two numbers: its name, "
        "argument names, and names for two pytest tests."}]


async def test_structured_output_validates_with_the_json_schema(served: str) -> None:
    records: list[CallRecord] = []
    async with open_llm(settings_for(served), sink=records.append) as llm:
        result = await llm.structured(ASK, Function, step="plan")
        assert llm.structured_mode == "json_schema"  # llama.cpp's server takes it (llama-cpp-python answered 500)
    assert result.name and isinstance(result.arguments, list)
    assert records[-1].outcome in ("ok", "repaired")
    assert records[-1].prompt_tokens > 0 and records[-1].completion_tokens > 0


async def test_streaming_arrives_in_pieces(served: str) -> None:
    records: list[CallRecord] = []
    async with open_llm(settings_for(served), sink=records.append) as llm:
        deltas = [d async for d in llm.stream([{"role": "user", "content": "Name three colors."}], step="s")]
    assert len(deltas) >= 2 and "".join(deltas).strip()
    (record,) = records
    assert record.outcome == "ok" and record.ttft is not None and record.completion_tokens > 0


async def test_concurrent_requests_both_finish(served: str) -> None:
    # generation writes files in parallel; by default llama-cpp-python ends a running stream when
    # another request arrives, and the generation bench's file calls cut each other off 5 times over
    settings = settings_for(served)
    settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"max_retries": 0})})
    records: list[CallRecord] = []
    asks = [[{"role": "user", "content": f"Name three {kind}."}] for kind in ("colors", "fruits", "rivers")]
    async with open_llm(settings, sink=records.append) as llm:
        texts = await asyncio.gather(*(llm.complete(ask, step="c", max_tokens=40) for ask in asks))
    assert all(text.strip() for text in texts)
    assert len(records) == 3 and all(r.outcome == "ok" and r.finish_reason in ("stop", "length") for r in records)


async def test_a_seeded_call_repeats_exactly(served: str) -> None:
    async with open_llm(settings_for(served)) as llm:
        ask = [{"role": "user", "content": "Write a short docstring for a function that reverses a list."}]
        first = await llm.complete(ask, step="c", max_tokens=48)
        second = await llm.complete(ask, step="c", max_tokens=48)
    assert first and first == second


async def test_open_llm_starts_the_embedded_model_and_stops_it() -> None:
    settings = Settings(llm={"max_tokens": 8}, local_model={"n_ctx": 1024})
    async with open_llm(settings) as llm:
        assert llm.base_url.startswith("http://127.0.0.1:")
        assert llm.context_window == 1024  # the server's --n_ctx: longer requests are not sent
        text = await llm.complete([{"role": "user", "content": "Say OK."}], step="ping")
        with pytest.raises(ContextOverflow, match="context window of 1024 tokens"):
            await llm.complete([{"role": "user", "content": "word " * 1500}], step="too long")
        port = int(llm.base_url.rsplit(":", 1)[1].split("/")[0])
    assert text.strip()
    assert not await asyncio.to_thread(server_left_on, port)


def server_left_on(port: int) -> bool:
    """Is anything still listening on `port`, or a llama server process started for it?"""
    listening = subprocess.run(["ss", "-ltn", f"sport = :{port}"], capture_output=True, text=True)
    leftover = subprocess.run(["pgrep", "-f", f"(llama_cpp.server|llama-server|xllamacpp_server.py).*--port {port}"],
                              capture_output=True)
    return f":{port}" in listening.stdout or leftover.returncode == 0


PARENT = """
import asyncio, sys
from greenloop.llm import open_llm
from greenloop.settings import Settings

async def main():
    settings = Settings(llm={"max_tokens": 1500, "temperature": 0.8}, local_model={"n_ctx": 2048})
    async with open_llm(settings) as llm:
        print("PORT", llm.base_url.rsplit(":", 1)[1].split("/")[0], flush=True)
        await llm.complete([{"role": "user", "content": "Write a very long story about a lighthouse."}], step="s")

asyncio.run(main())
"""


def test_the_model_server_dies_with_a_killed_parent_even_mid_generation() -> None:
    """SIGKILL leaves greenloop no chance to clean up: the kernel's parent-death signal must end the server,
    also while it is busy generating (a graceful SIGTERM would let it finish the request first)."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline().split()
        assert line[:1] == ["PORT"], line
        port = int(line[1])
        deadline = time.monotonic() + 30  # wait until the generation is under way
        while time.monotonic() < deadline and not _busy(port):
            time.sleep(0.5)
        assert _busy(port), "the server never started generating"
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and server_left_on(port):
        time.sleep(0.5)
    assert not server_left_on(port), "the embedded model server outlived its killed parent"


def _busy(port: int) -> bool:
    """A connection to the server is established (the request is in flight)."""
    out = subprocess.run(["ss", "-tn", "state", "established", f"sport = :{port}"], capture_output=True, text=True)
    return f":{port}" in out.stdout
