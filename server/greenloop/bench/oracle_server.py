"""The oracle as an OpenAI-compatible endpoint on 127.0.0.1, started by `greenloop bench --model oracle`.

One server for the bench; each cell's base URL names its case (`/case/<id>/v1`), so a request is
answered with that case's reference fix (oracle.py) and nothing else. The fix is read when its case
is first asked about: a realbugs case's `fix.patch` applied to the files it names in the case's
workspace, a HumanEvalFix task's canonical solution. A request for a case it does not know, or
whose fix cannot be read, gets prose: the loop, not the oracle, loses that case. Chat completions
stream as the loop asks (SSE), with usage counted as characters / 4.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import tarfile
import threading
import time
from collections.abc import AsyncIterator, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from greenloop.bench.oracle import ORACLE, answer
from greenloop.bench.oracle_fix import ReferenceFix
from greenloop.bench.suites import Task
from greenloop.errors import GreenloopError
from greenloop.settings import Settings

log = logging.getLogger(__name__)
_ROUTE = re.compile(r"^(?:/case/(?P<case>[^/]+))?/v1/(?P<what>chat/completions|models)/?$")
_PATCHED = re.compile(r"^(?:\+\+\+ b/|--- a/)(?P<path>\S+)", re.M)


def reference_of(task: Task) -> ReferenceFix | None:
    """The task's reference fix (its changed files only); None when the task has none the oracle can read."""
    if task.kind == "fix" and isinstance(task.extra.get("fixed"), str):
        entry = f"{task.extra['entry_point']}.py"
        return ReferenceFix.of({entry: str(task.extra["buggy"])}, {entry: str(task.extra["fixed"])})
    if task.kind == "realbugs":
        from greenloop.bench.correctness import patched

        archive = Path(str(task.extra["archive"]))
        patch = (archive.parent / "fix.patch").read_text(encoding="utf-8")
        names = {m["path"] for m in _PATCHED.finditer(patch)}
        files: dict[str, str] = {}
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                inside = member.name.split("/", 1)[1] if "/" in member.name else ""
                handle = tar.extractfile(member) if member.isfile() and inside in names else None
                if handle is not None:
                    files[inside] = handle.read().decode("utf-8", "surrogateescape")
        fixed = patched(files, patch)
        return ReferenceFix.of(files, {p: t for p, t in fixed.items() if p in names})
    return None


class OracleServer:
    """The oracle's HTTP server in a thread; `cases` are the tasks it may be asked about."""

    def __init__(self, tasks: Iterable[Task]) -> None:
        self.tasks = {t.id: t for t in tasks}
        self._fixes: dict[str, ReferenceFix | None] = {}
        self._lock = threading.Lock()
        self.asked = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.oracle = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> OracleServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def fix_for(self, case: str | None) -> ReferenceFix | None:
        """The case's reference fix, read once; None for no case, an unknown one, or one whose fix is unreadable."""
        if case is None or case not in self.tasks:
            return None
        with self._lock:
            if case not in self._fixes:
                try:
                    self._fixes[case] = reference_of(self.tasks[case])
                except (OSError, ValueError, tarfile.TarError, KeyError) as exc:
                    log.warning("oracle: no reference fix for %s: %s", case, exc)
                    self._fixes[case] = None
            return self._fixes[case]

    def reply(self, case: str | None, body: dict[str, Any]) -> str:
        with self._lock:
            self.asked += 1
        messages = body.get("messages")
        return answer(self.fix_for(case), messages if isinstance(messages, list) else [])


def case_url(base_url: str, case: str) -> str:
    """The endpoint of one case on the oracle at `base_url`."""
    return f"{base_url.removesuffix('/v1')}/case/{quote(case, safe='')}/v1"


def case_settings(settings: Settings, case: str) -> Settings:
    """A cell's settings: with the oracle, its endpoint is its own case's; otherwise `settings` as they are."""
    if settings.llm.model != ORACLE or not settings.llm.base_url:
        return settings
    return settings.model_copy(update={"llm": settings.llm.model_copy(
        update={"base_url": case_url(settings.llm.base_url, case)})})


@contextlib.asynccontextmanager
async def oracle_model(settings: Settings, tasks: Iterable[Task], *, needed: bool = True) -> AsyncIterator[Settings]:
    """With `llm.model = "oracle"`: the oracle served for the bench, and `settings` pointing at it."""
    if not needed:
        yield settings
        return
    server = OracleServer(tasks).start()
    try:
        yield settings.model_copy(update={
            "llm": settings.llm.model_copy(update={"base_url": server.base_url, "api_key": ORACLE}),
            "local_model": settings.local_model.model_copy(update={"enabled": False}),
        })
    finally:
        server.stop()


def refuse_cluster(settings: Settings, cluster: str | None) -> None:
    if cluster and settings.llm.model == ORACLE:
        raise GreenloopError("--model oracle serves on this machine's 127.0.0.1 only; run it without --cluster")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        route = _ROUTE.match(self.path)
        if route is None or route["what"] != "models":
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        self._json(200, {"object": "list", "data": [{"id": ORACLE, "object": "model", "created": 0,
                                                    "owned_by": "greenloop"}]})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        route = _ROUTE.match(self.path)
        if route is None or route["what"] != "chat/completions":
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError as exc:
            self._json(400, {"error": {"message": f"request is not JSON: {exc}", "type": "invalid"}})
            return
        oracle: OracleServer = self.server.oracle  # type: ignore[attr-defined]
        case = unquote(route["case"]) if route["case"] else None
        content = oracle.reply(case, body)
        prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages") or []) // 4 + 1
        usage = {"prompt_tokens": prompt, "completion_tokens": len(content) // 4 + 1,
                 "total_tokens": prompt + len(content) // 4 + 1}
        base = {"id": "chatcmpl-oracle", "created": int(time.time()), "model": ORACLE}
        if not body.get("stream"):
            self._json(200, {**base, "object": "chat.completion", "usage": usage, "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]})
            return
        chunk = {**base, "object": "chat.completion.chunk"}
        events = [{**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": content},
                                         "finish_reason": None}]},
                  {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**chunk, "choices": [], "usage": usage})
        data = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        self._send(200, data.encode(), "text/event-stream")

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _send(self, status: int, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
