"""Docker engine connections: a shared client per engine and a cheap, briefly cached reachability check.

The default engine is the environment's (`DOCKER_HOST`, else the local socket); any other engine is named
by its URL (`unix:///...`, `tcp://...`, `ssh://host`) and gets its own cached client.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from greenloop_sandbox.values import SandboxError

_CACHE_SECONDS = 5.0
_lock = threading.Lock()
_state: dict[str, Any] = {"checked": 0.0, "ok": False, "client": None, "error": ""}

NO_ENGINE = ("No Docker engine answers ({error}). Start Docker (e.g. `dockerd --bridge=none --iptables=false &`, "
             "or `systemctl start docker`), or use --sandbox local (weaker isolation).")


_engines: dict[str, dict[str, Any]] = {}  # URL -> the same fields as _state, for engines named explicitly


def _connect(url: str | None = None) -> Any:
    import docker

    client = docker.from_env(timeout=120) if url is None else docker.DockerClient(base_url=url, timeout=120)
    client.ping()
    return client


def _state_of(url: str | None) -> dict[str, Any]:
    if url is None:
        return _state
    return _engines.setdefault(url, {"checked": 0.0, "ok": False, "client": None, "error": ""})


def docker_available(url: str | None = None) -> bool:
    """True when the engine (default: the environment's) answers; the answer is cached for a few seconds."""
    with _lock:
        state = _state_of(url)
        if time.monotonic() - state["checked"] < _CACHE_SECONDS:
            return bool(state["ok"])
        try:
            client = state["client"] or _connect(url)
            client.ping()
            state.update(ok=True, client=client, error="")
        except Exception as exc:
            state.update(ok=False, client=None, error=str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__)
        state["checked"] = time.monotonic()
        return bool(state["ok"])


def docker_client(url: str | None = None) -> Any:
    """The shared docker SDK client of an engine; SandboxError naming the engine and the fix when it is down."""
    if not docker_available(url):
        error = _state_of(url)["error"] or "unreachable"
        if url is not None:
            raise SandboxError(f"The Docker engine {url} does not answer ({error}).")
        raise SandboxError(NO_ENGINE.format(error=error))
    return _state_of(url)["client"]


def engine_version() -> str | None:
    if not docker_available():
        return None
    try:
        return str(docker_client().version().get("Version"))
    except Exception:
        return None


def last_error() -> str:
    return str(_state["error"])
