"""Model servers already running on this machine (Ollama, LM Studio), found before the embedded one starts.

`probe_all` asks every `local_model.discover_urls` entry for `GET {url}/models` at once, each
given `PROBE_SECONDS` in all (connect and read), so a machine with nothing listening pays
about nothing and one that hangs costs that much. The first URL (in the listed order) whose
reply lists a model is used; `pick_model` says which model and why.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

PROBE_SECONDS = 0.5
NAMES_BY_PORT = {11434: "Ollama", 1234: "LM Studio"}


@dataclass(frozen=True)
class Probe:
    """One probed URL: what answered, the models it lists, or why it was skipped."""

    url: str
    name: str  # "Ollama", "LM Studio", or "server"
    models: tuple[str, ...] = ()
    note: str = ""  # why it is not usable: "nothing listening", "no answer in 0.5s", "not a model list", ...
    seconds: float = 0.0

    @property
    def usable(self) -> bool:
        return bool(self.models)

    def describe(self) -> str:
        if self.usable:
            shown = ", ".join(self.models[:5]) + (f" (+{len(self.models) - 5})" if len(self.models) > 5 else "")
            return f"{self.name} at {self.url}: {shown}"
        return f"{self.name} at {self.url}: {self.note}"


def server_name(url: str, owners: set[str] | None = None) -> str:
    """Ollama or LM Studio by the reply's `owned_by` ("library" is Ollama's), else by port."""
    if owners and "library" in owners:
        return "Ollama"
    try:
        port = urlsplit(url).port
    except ValueError:
        port = None
    return NAMES_BY_PORT.get(port or 0, "server")


async def _probe(http: httpx.AsyncClient, url: str, seconds: float) -> Probe:
    started = time.perf_counter()
    name = server_name(url)

    def done(note: str = "", models: tuple[str, ...] = (), who: str = name) -> Probe:
        return Probe(url, who, models, note, time.perf_counter() - started)

    try:
        response = await asyncio.wait_for(http.get(f"{url.rstrip('/')}/models"), seconds)
    except (TimeoutError, httpx.TimeoutException):
        return done(f"no answer in {seconds:g}s")
    except httpx.ConnectError:
        return done("nothing listening")
    except (httpx.HTTPError, ValueError) as exc:  # ValueError: a malformed URL
        return done(f"{type(exc).__name__}: {exc}")
    if response.status_code != 200:
        return done(f"HTTP {response.status_code} for /models")
    try:
        entries = response.json().get("data")
        listed = [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str) and e["id"]]
    except (ValueError, AttributeError, TypeError):
        return done("answered, but not with an OpenAI model list")
    if not listed:
        return done("answered, but lists no model")
    owners = {str(e.get("owned_by")) for e in listed}
    return done(models=tuple(e["id"] for e in listed), who=server_name(url, owners))


async def probe_all(urls: list[str], seconds: float = PROBE_SECONDS) -> list[Probe]:
    """Every URL probed concurrently; results in the order given. No environment proxies."""
    if not urls:
        return []
    timeout = httpx.Timeout(seconds)
    async with httpx.AsyncClient(timeout=timeout, trust_env=False, follow_redirects=False) as http:
        return list(await asyncio.gather(*(_probe(http, url, seconds) for url in urls)))


def pick_model(models: tuple[str, ...], wanted: str) -> tuple[str, str]:
    """`wanted` (llm.model) when listed, else the first with "coder" in its name, else the first; and why."""
    if wanted in models:
        return wanted, "llm.model is served there"
    coder = next((m for m in models if "coder" in m.lower()), None)
    if coder is not None:
        return coder, f"llm.model {wanted!r} is not served there; the first code model listed"
    return models[0], f"llm.model {wanted!r} is not served there and no listed model is a coder; the first listed"
