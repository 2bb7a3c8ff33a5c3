"""The greenloop language server: the wire protocol with greenloop's methods, and the server with its loop runner.

The workspace state the handlers share (folder, buffers, settings, diagnostics, tasks) is `workspace_server.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import attrs
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

from greenloop.lsp.loops import LoopRunner
from greenloop.lsp.protocol import CUSTOM_METHOD_TYPES
from greenloop.lsp.workspace_server import WorkspaceServer


@attrs.define
class _Malformed:
    """A request whose params could not be read; answered with an error instead of dispatched."""

    id: int | str
    error: JsonRpcException
    jsonrpc: str = "malformed"


class GreenloopProtocol(LanguageServerProtocol):
    """pygls' protocol with greenloop's typed custom methods, and errors for unreadable requests."""

    # The parent caches these with lru_cache; ours are dict look-ups, cheap enough uncached.
    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        custom = CUSTOM_METHOD_TYPES.get(method)
        return custom[0] if custom else super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        custom = CUSTOM_METHOD_TYPES.get(method)
        return custom[1] if custom else super().get_result_type(method)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data:
                detail = exc.__cause__ or exc
                message = f"{data['method']}: malformed params ({str(detail).splitlines()[0]})"
                return _Malformed(id=data["id"], error=JsonRpcInvalidParams(message))
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Malformed):
            self._send_response(message.id, error=message.error.to_response_error())
            return
        super().handle_message(message)


@dataclass(frozen=True)
class EditorInterpreter:
    """The editor's interpreter listing as last sent (lsp/interpreter.py), read whole by a run when it starts: a newer
    listing replaces this object, so a run already going keeps the one it began with."""

    packages: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # name -> version
    note: str = ""  # the environment step's line about it: which interpreter, or why there is no listing


class GreenloopServer(WorkspaceServer):
    """The workspace server with its loop runner; the handlers themselves live in the other lsp modules."""

    def __init__(self) -> None:
        super().__init__(GreenloopProtocol)
        self.loops = LoopRunner(self)
        self.interpreter = EditorInterpreter()  # the editor's interpreter listing (lsp/interpreter.py)

    async def stop_everything(self, grace: float = 30.0) -> None:
        """Cancel the loop and background work and wait for their clean-up (containers closed)."""
        tasks = [t for t in (*self.background, *self.loops.tasks()) if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
