"""Record/replay of model exchanges: a JSONL file keyed by a hash of the request.

`Cassette.record(path)` writes each final exchange (reply or error, after
transport retries) as one line; `Cassette.replay(path)` serves them back by
request hash without any network, so a real session reruns offline exactly.
Identical requests are served in recorded order; the last one repeats.
`memo` mode serves a request recorded before and asks the server otherwise,
recording its reply (not its errors): a bench whose configs send the same
requests (the same prompt and seed) asks the model once for them.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from greenloop.errors import GreenloopError


@dataclass
class Exchange:
    """The outcome of one request: a reply (status 200) or the error that ended it."""

    status: int = 200
    content: str = ""
    usage: dict[str, int] | None = None
    finish_reason: str | None = None
    model: str = ""
    error: str = ""
    response_bytes: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def request_key(body: dict[str, Any]) -> str:
    """sha256 of the canonical request JSON (model, messages, parameters, response_format)."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class Cassette:
    """A recording of exchanges, in `record`, `replay` or `memo` mode."""

    def __init__(self, path: Path, mode: Literal["record", "replay", "memo"], *, append: bool = False) -> None:
        self.path = path
        self.mode = mode
        self._lock = threading.Lock()
        self._served: dict[str, int] = {}
        self._entries: dict[str, list[Exchange]] = {}
        if mode == "replay" or (mode == "memo" and path.is_file()):
            self._load()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not append:
                path.write_text("", encoding="utf-8")

    @classmethod
    def record(cls, path: str | Path) -> Cassette:
        """Start a fresh recording at `path` (an existing file is replaced)."""
        return cls(Path(path), "record")

    @classmethod
    def replay(cls, path: str | Path) -> Cassette:
        """Serve the exchanges recorded at `path`."""
        return cls(Path(path), "replay")

    @property
    def replaying(self) -> bool:
        return self.mode == "replay"

    def serves(self, body: dict[str, Any]) -> bool:
        """Whether this request is answered from the recording: always in replay mode; in memo mode, once a
        reply to it was recorded."""
        if self.mode != "memo":
            return self.replaying
        with self._lock:
            return request_key(body) in self._entries

    def _load(self) -> None:
        if not self.path.is_file():
            raise GreenloopError(f"Cassette {self.path} does not exist; record one first.")
        for n, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                exchange = Exchange(**entry["exchange"])
                self._entries.setdefault(str(entry["key"]), []).append(exchange)
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise GreenloopError(f"Cassette {self.path} line {n} is broken ({exc}); re-record it.") from exc

    def lookup(self, body: dict[str, Any]) -> Exchange | None:
        """The recorded exchange for this request (None when it was never recorded)."""
        key = request_key(body)
        with self._lock:
            found = self._entries.get(key)
            if not found:
                return None
            index = self._served.get(key, 0)
            self._served[key] = index + 1
            return found[min(index, len(found) - 1)]

    def save(self, body: dict[str, Any], exchange: Exchange) -> None:
        """Append one exchange (record mode; memo mode keeps replies only, never an error)."""
        if self.mode == "memo" and (exchange.status != 200 or exchange.error):
            return
        key = request_key(body)
        line = json.dumps({"key": key, "request": body, "exchange": asdict(exchange)})
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
            if self.mode == "memo":
                self._entries.setdefault(key, []).append(exchange)
