"""Which model server a run talks to, and `open_llm`, which opens a client to it.

Resolution: `llm.base_url`, else `OPENAI_BASE_URL`, else (when `local_model.discover`) a
model server already running here that lists a model (`local_model.discover_urls`:
Ollama, LM Studio; `llm/discover.py`), else (when `local_model.enabled`) the embedded
llama.cpp server started for the duration. `resolve_endpoint` never touches the network;
`find_endpoint` adds the discovery.
The API key: `llm.api_key`, else `OPENAI_API_KEY`, else none (local servers; a
discovered server is never sent one).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from greenloop.errors import EnvironmentProblem
from greenloop.llm.cassette import Cassette
from greenloop.llm.client import LLMClient
from greenloop.llm.discover import Probe, pick_model, probe_all
from greenloop.llm.local_server import LocalModelServer
from greenloop.llm.records import CallRecord
from greenloop.settings import Settings

REPLAY_URL = "http://replay.invalid/v1"


@dataclass(frozen=True)
class Endpoint:
    base_url: str | None  # None: the embedded model
    api_key: str | None
    source: str  # "llm.base_url" | "OPENAI_BASE_URL" | "discovered: Ollama at <url>" | "embedded" | "none"
    model: str | None = None  # a discovered server's model, sent instead of llm.model
    why: str = ""  # why that model
    probes: tuple[Probe, ...] = ()  # what discovery found (empty: it did not run)

    @property
    def discovered(self) -> bool:
        return self.source.startswith("discovered")


def _configured_cassette(path: str, mode: Literal["record", "replay", "memo"]) -> Cassette:
    """`llm.cassette`: a recording appends, since one run opens several clients (each would truncate)."""
    return Cassette(Path(path).expanduser(), mode, append=True)


def resolve_endpoint(settings: Settings) -> Endpoint:
    """Where calls go; never starts anything."""
    key = settings.llm.api_key.get_secret_value() if settings.llm.api_key else os.environ.get("OPENAI_API_KEY")
    if settings.llm.base_url:
        return Endpoint(settings.llm.base_url, key or None, "llm.base_url")
    env_url = os.environ.get("OPENAI_BASE_URL")
    if env_url:
        return Endpoint(env_url, key or None, "OPENAI_BASE_URL")
    return Endpoint(None, key or None, "embedded" if settings.local_model.enabled else "none")


async def find_endpoint(settings: Settings, *, discover: bool = True) -> Endpoint:
    """`resolve_endpoint`, then, when nothing is configured, a running local server (`local_model.discover`)."""
    endpoint = resolve_endpoint(settings)
    local = settings.local_model
    if endpoint.base_url is not None or not (discover and local.discover and local.discover_urls):
        return endpoint
    probes = tuple(await probe_all(local.discover_urls))
    found = next((p for p in probes if p.usable), None)
    if found is None:
        return replace(endpoint, probes=probes)
    model, why = pick_model(found.models, settings.llm.model)
    return Endpoint(found.url, None, f"discovered: {found.name} at {found.url}", model, why, probes)


NO_ENDPOINT = (
    "No model endpoint is configured, no local model server was found (local_model.discover_urls) and the "
    "embedded model is off. Set llm.base_url (greenloop.toml, GREENLOOP_LLM__BASE_URL or --base-url) or "
    "OPENAI_BASE_URL, start Ollama or LM Studio, or set local_model.enabled = true."
)


@asynccontextmanager
async def open_llm(
    settings: Settings,
    *,
    sink: Callable[[CallRecord], None] | None = None,
    cassette: Cassette | None = None,
) -> AsyncIterator[LLMClient]:
    """A client for the run; starts (and finally stops) the embedded model when it is the endpoint."""
    if cassette is None and settings.llm.cassette:
        cassette = await asyncio.to_thread(_configured_cassette, settings.llm.cassette, settings.llm.cassette_mode)
    replaying = cassette is not None and cassette.replaying
    endpoint = await find_endpoint(settings, discover=not replaying)
    llm_settings = settings.llm
    if endpoint.model is not None:
        llm_settings = llm_settings.model_copy(update={"model": endpoint.model})
    async with AsyncExitStack() as stack:
        base_url, window = endpoint.base_url, settings.llm.context_window
        slots, slots_note = None, ""  # known for the embedded server only; elsewhere a 429 says it
        if base_url is None and cassette is not None and cassette.replaying:
            base_url = REPLAY_URL
        elif base_url is None:
            if endpoint.source == "none":
                raise EnvironmentProblem(NO_ENDPOINT)
            server = LocalModelServer(settings.local_model, alias=settings.llm.model)
            await stack.enter_async_context(server)
            base_url = server.base_url
            window = window or settings.local_model.n_ctx
            slots, slots_note = server.slots
        client = LLMClient(llm_settings, base_url=base_url, api_key=endpoint.api_key, sink=sink,
                           cassette=cassette, context_window=window, slots=slots, slots_note=slots_note)
        stack.push_async_callback(client.aclose)
        yield client
