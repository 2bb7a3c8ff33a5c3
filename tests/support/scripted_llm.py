"""A scripted OpenAI-compatible chat server on 127.0.0.1: the test double for a hosted model.

Real HTTP (stdlib `http.server` in a thread), so the real `openai` client talks
to it. Each test scripts the replies:

    llm.script('{"answer": 42}', step="debug_plan")          # by step / schema name
    llm.script("it is the off-by-one", contains="diagnose")   # by message content
    llm.script(lambda req: Reply.text("..."))                 # an oracle for every request
    llm.script(rate_limited(0.1), server_error(), "ok")       # a queue, consumed in order

A rule's last reply repeats unless `repeat=False`. Rules are tried in the order
they were added; a reply may be a `str` (the content), a dict/list (sent as
JSON text), a `Reply` (faults: status, delay, cut-off stream, ...) or a
callable `(request_json) -> reply`. Every request is recorded in `.requests`.

Standalone (for the editor's end-to-end tests):
    python tests/support/scripted_llm.py --port 0 --script rules.py
prints `READY <base_url>` once listening. `rules.py` runs with `llm` (the
server), `Reply` and the fault helpers in its globals, and may define
`setup(llm)`. `GET /_scripted/requests` returns the recorded requests as JSON.

This module uses only the standard library so it runs without greenloop.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import runpy
import select
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JsonDict = dict[str, Any]


@dataclass
class Reply:
    """One scripted answer, including the faults it should show."""

    content: str = ""
    status: int = 200
    error: str = ""  # error message when status != 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before anything is sent
    chunk_delay: float = 0.0  # seconds between streamed chunks
    chunk_size: int = 16  # characters per streamed chunk
    cut_after: int | None = None  # stream: drop the connection after N chunks; else after N body bytes
    usage: bool = True  # report `usage`
    raw: bytes | None = None  # send exactly this body (status 200), e.g. broken HTTP JSON
    finish_reason: str = "stop"

    @classmethod
    def text(cls, content: str, **kw: Any) -> Reply:
        return cls(content=content, **kw)

    @classmethod
    def json(cls, value: Any, **kw: Any) -> Reply:
        return cls(content=json.dumps(value), **kw)


ReplyLike = str | dict | list | Reply | Callable[[JsonDict], Any]


def rate_limited(retry_after: float = 0.05, message: str = "Rate limit reached; slow down.") -> Reply:
    return Reply(status=429, error=message, headers={"Retry-After": f"{retry_after:g}"})


def server_error(status: int = 500, message: str = "Internal server error (scripted).") -> Reply:
    return Reply(status=status, error=message)


def slow(seconds: float, content: str = "slow reply") -> Reply:
    return Reply(content=content, delay=seconds)


def cut_stream(content: str, after_chunks: int = 2) -> Reply:
    return Reply(content=content, cut_after=after_chunks, chunk_size=4)


def huge(n_chars: int = 2_000_000) -> Reply:
    return Reply(content="x" * n_chars)


def count_tokens(text: str) -> int:
    """The server's deterministic token count: ceil(chars / 4), at least 1."""
    return max(1, (len(text) + 3) // 4)


@dataclass
class RecordedRequest:
    """What the server got, and what it did about it."""

    path: str
    body: JsonDict
    headers: dict[str, str]  # names lower-cased
    step: str | None
    stream: bool
    status: int = 0
    usage: JsonDict | None = None
    aborted: bool = False  # the client went away before the reply was complete
    at: float = 0.0

    @property
    def messages(self) -> list[JsonDict]:
        return list(self.body.get("messages") or [])

    @property
    def response_format(self) -> JsonDict | None:
        rf = self.body.get("response_format")
        return rf if isinstance(rf, dict) else None


@dataclass
class Rule:
    replies: list[ReplyLike]
    step: str | None = None
    contains: str | None = None
    regex: re.Pattern[str] | None = None
    when: Callable[[JsonDict], bool] | None = None
    repeat: bool = True
    hits: int = 0

    def matches(self, req: RecordedRequest) -> bool:
        if not self.replies:
            return False
        if self.step is not None and req.step != self.step:
            return False
        text = "\n".join(str(m.get("content") or "") for m in req.messages)
        if self.contains is not None and self.contains not in text:
            return False
        if self.regex is not None and not self.regex.search(text):
            return False
        return self.when is None or bool(self.when(req.body))

    def take(self) -> ReplyLike:
        self.hits += 1
        if len(self.replies) == 1 and self.repeat:
            return self.replies[0]
        return self.replies.pop(0)


def step_of(headers: dict[str, str], body: JsonDict) -> str | None:
    """The X-Greenloop-Step header, else the json_schema name."""
    for key, value in headers.items():
        if key.lower() == "x-greenloop-step":
            return value
    rf = body.get("response_format")
    if isinstance(rf, dict) and isinstance(rf.get("json_schema"), dict):
        name = rf["json_schema"].get("name")
        return str(name) if name else None
    return None


def to_reply(value: Any, body: JsonDict) -> Reply:
    while callable(value) and not isinstance(value, Reply):
        value = value(body)
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(content=value)
    if hasattr(value, "model_dump_json"):
        return Reply(content=value.model_dump_json())
    return Reply(content=json.dumps(value))


class ScriptedLLM:
    """The server. `start()` / `stop()`, or use it as a context manager."""

    def __init__(self, port: int = 0, models: tuple[str, ...] = ("local", "scripted")) -> None:
        self.models = list(models)
        self.owned_by = "scripted"  # GET /v1/models' owned_by ("library": what Ollama sends)
        self.models_raw: bytes | None = None  # set: GET /v1/models answers exactly this body (a broken server)
        self.rules: list[Rule] = []
        self.requests: list[RecordedRequest] = []
        self.default: ReplyLike | None = None
        self.tokenize: Callable[[str], int] | None = None  # set: POST /tokenize answers as llama.cpp's does
        self._reject: tuple[int, tuple[str, ...]] | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    # -- scripting -----------------------------------------------------------
    def script(
        self,
        *replies: ReplyLike,
        step: str | None = None,
        contains: str | None = None,
        regex: str | None = None,
        when: Callable[[JsonDict], bool] | None = None,
        repeat: bool = True,
    ) -> Rule:
        """Add a rule; returns it (its `.hits` counts the requests it answered)."""
        if not replies:
            raise ValueError("script() needs at least one reply")
        rule = Rule(list(replies), step, contains, re.compile(regex) if regex else None, when, repeat)
        with self._lock:
            self.rules.append(rule)
        return rule

    def oracle(self, fn: Callable[[JsonDict], Any]) -> Rule:
        """Answer every request (not matched by an earlier rule) with `fn(request_json)`."""
        return self.script(fn)

    def reject_response_format(self, status: int = 500, types: tuple[str, ...] = ("json_schema",)) -> None:
        """Reject requests whose response_format type is in `types` (llama-cpp answers 500)."""
        self._reject = (status, types)

    def reset(self) -> None:
        with self._lock:
            self.rules.clear()
            self.requests.clear()
            self.default = None
            self._reject = None

    def requests_for(self, step: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.step == step]

    # -- lifecycle -----------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> ScriptedLLM:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        with self._lock:
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- answering -----------------------------------------------------------
    def choose(self, req: RecordedRequest) -> Reply:
        if self._reject is not None:
            status, types = self._reject
            rf = req.response_format
            if rf is not None and rf.get("type") in types:
                return Reply(status=status, error=f"response_format type {rf.get('type')!r} is not supported")
        with self._lock:
            rule = next((r for r in self.rules if r.matches(req)), None)
            value = rule.take() if rule else self.default
        if value is None:
            last = req.messages[-1].get("content", "") if req.messages else ""
            return Reply(
                status=400,
                error=f"scripted_llm: no scripted reply for step={req.step!r}; last message: {str(last)[:200]!r}",
            )
        return to_reply(value, req.body)

    def usage_for(self, req: RecordedRequest, content: str) -> JsonDict:
        prompt = sum(count_tokens(str(m.get("content") or "")) + 4 for m in req.messages)
        completion = count_tokens(content) if content else 0
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def wait_or_abort(self, conn: socket.socket, seconds: float) -> bool:
        """Sleep `seconds`; False as soon as the client hangs up or the server stops."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            if self._stopping.is_set():
                return False
            readable, _, _ = select.select([conn], [], [], min(left, 0.02))
            if readable:
                try:
                    if conn.recv(1, socket.MSG_PEEK) == b"":
                        return False
                except OSError:
                    return False
        return True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    owner: ScriptedLLM


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        with self.server.owner._lock:
            self.server.owner._connections.add(self.connection)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        with self.server.owner._lock:
            self.server.owner._connections.discard(self.connection)

    # -- routes ----------------------------------------------------------------
    def do_GET(self) -> None:
        owner = self.server.owner
        if self.path.rstrip("/") in ("/v1/models", "/models") and owner.models_raw is not None:
            self._send_bytes(200, owner.models_raw, "application/json", {}, None)
        elif self.path.rstrip("/") in ("/v1/models", "/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": owner.owned_by} for m in owner.models]
            self._send_json(200, {"object": "list", "data": data})
        elif self.path == "/_scripted/requests":
            self._send_json(200, [asdict(r) for r in owner.requests])
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path == "/tokenize" and owner.tokenize is not None:
            content = json.loads(raw or b"{}").get("content", "")
            self._send_json(200, {"tokens": list(range(owner.tokenize(content)))})
            return
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._send_json(400, {"error": {"message": f"request is not JSON: {exc}", "type": "invalid"}})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}  # keys lower-cased
        req = RecordedRequest(
            path=self.path, body=body, headers=headers, step=step_of(headers, body),
            stream=bool(body.get("stream")), at=time.time(),
        )
        with owner._lock:
            owner.requests.append(req)
        try:
            reply = owner.choose(req)
        except Exception as exc:  # an oracle that raised: tell the client, loudly
            reply = Reply(status=500, error=f"scripted_llm oracle raised {type(exc).__name__}: {exc}")
        req.status = reply.status
        if reply.delay and not owner.wait_or_abort(self.connection, reply.delay):
            req.aborted = True
            self.close_connection = True
            return
        try:
            self._answer(req, reply)
        except (BrokenPipeError, ConnectionResetError):
            req.aborted = True
            self.close_connection = True

    # -- replies -----------------------------------------------------------------
    def _answer(self, req: RecordedRequest, reply: Reply) -> None:
        if reply.status != 200:
            kind = "rate_limit_error" if reply.status == 429 else "server_error"
            err = {"error": {"message": reply.error or f"HTTP {reply.status}", "type": kind, "code": None}}
            self._send_json(reply.status, err, reply.headers)
            return
        if reply.raw is not None:
            self._send_bytes(200, reply.raw, "application/json", reply.headers, reply.cut_after)
            return
        usage = self.server.owner.usage_for(req, reply.content) if reply.usage else None
        req.usage = usage
        if req.stream:
            self._stream(req, reply, usage)
            return
        completion = {
            "id": f"chatcmpl-scripted-{len(self.server.owner.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.body.get("model", "scripted"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
            }],
        }
        if usage is not None:
            completion["usage"] = usage
        self._send_bytes(200, json.dumps(completion).encode(), "application/json", reply.headers, reply.cut_after)

    def _stream(self, req: RecordedRequest, reply: Reply, usage: JsonDict | None) -> None:
        owner = self.server.owner
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": req.body.get("model", "scripted")}
        size = max(1, reply.chunk_size)
        pieces = [reply.content[i:i + size] for i in range(0, len(reply.content), size)]
        events: list[JsonDict] = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                       "finish_reason": None}]}]
        events += [{**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
                   for p in pieces]
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]})
        include_usage = bool((req.body.get("stream_options") or {}).get("include_usage"))
        if usage is not None and include_usage:
            events.append({**base, "choices": [], "usage": usage})
        for n, event in enumerate(events):
            if reply.cut_after is not None and n > reply.cut_after:
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            if n and reply.chunk_delay and not owner.wait_or_abort(self.connection, reply.chunk_delay):
                req.aborted = True
                self.close_connection = True
                return
            self._chunk(f"data: {json.dumps(event)}\n\n".encode())
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send_json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(value).encode(), "application/json", headers or {}, None)

    def _send_bytes(
        self, status: int, data: bytes, ctype: str, headers: dict[str, str], cut_after: int | None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if cut_after is not None:
            self.wfile.write(data[:cut_after])
            self.wfile.flush()
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(data)
        self.wfile.flush()


@contextlib.contextmanager
def running(port: int = 0) -> Iterator[ScriptedLLM]:
    """A started server, stopped on exit."""
    server = ScriptedLLM(port).start()
    try:
        yield server
    finally:
        server.stop()


def load_script(server: ScriptedLLM, path: str) -> None:
    """Run a rules file with the server and helpers in its globals."""
    helpers = {
        "llm": server, "Reply": Reply, "rate_limited": rate_limited, "server_error": server_error,
        "slow": slow, "cut_stream": cut_stream, "huge": huge,
    }
    namespace = runpy.run_path(path, init_globals=helpers)
    setup = namespace.get("setup")
    if callable(setup):
        setup(server)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A scripted OpenAI-compatible server on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="a Python file that scripts the replies (see the module doc)")
    args = parser.parse_args(argv)
    server = ScriptedLLM(args.port)
    if args.script:
        load_script(server, args.script)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    server.start()
    print(f"READY {server.base_url}", flush=True)
    done.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
