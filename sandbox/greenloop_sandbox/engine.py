"""The Docker engine connection: a shared client and a cheap, briefly cached reachability check."""

from __future__ import annotations

import threading
import time
from typing import Any

from greenloop_sandbox.base import SandboxError

_CACHE_SECONDS = 5.0
_lock = threading.Lock()
_state: dict[str, Any] = {"checked": 0.0, "ok": False, "client": None, "error": ""}

NO_ENGINE = ("No Docker engine answers ({error}). Start Docker (e.g. `dockerd --bridge=none --iptables=false &`, "
             "or `systemctl start docker`), or use --sandbox local (weaker isolation).")


def _connect() -> Any:
    import docker

    client = docker.from_env(timeout=120)
    client.ping()
    return client


def docker_available() -> bool:
    """True when a Docker engine answers; the answer is cached for a few seconds."""
    with _lock:
        if time.monotonic() - _state["checked"] < _CACHE_SECONDS:
            return bool(_state["ok"])
        try:
            client = _state["client"] or _connect()
            client.ping()
            _state.update(ok=True, client=client, error="")
        except Exception as exc:
            _state.update(ok=False, client=None, error=str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__)
        _state["checked"] = time.monotonic()
        return bool(_state["ok"])


def docker_client() -> Any:
    """The shared docker SDK client; SandboxError naming the fix when no engine answers."""
    if not docker_available():
        raise SandboxError(NO_ENGINE.format(error=_state["error"] or "unreachable"))
    return _state["client"]


def engine_version() -> str | None:
    if not docker_available():
        return None
    try:
        return str(docker_client().version().get("Version"))
    except Exception:
        return None


def last_error() -> str:
    return str(_state["error"])
