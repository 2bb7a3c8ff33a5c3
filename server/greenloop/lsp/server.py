"""The greenloop language server: its state (settings, open buffers, diagnostics, the running loop)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from greenloop import __version__
from greenloop.errors import GreenloopError
from greenloop.lsp.config import EditorConfig, read_editor_config
from greenloop.lsp.diagnostics import DiagnosticsStore
from greenloop.lsp.loops import LoopRunner
from greenloop.lsp.protocol import CUSTOM_METHOD_TYPES
from greenloop.lsp.wire import make_converter
from greenloop.settings import Settings, load_settings

log = logging.getLogger(__name__)
CONFIG_WAIT = 5.0  # seconds a run waits for the editor's configuration after start-up


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


class GreenloopServer(LanguageServer):
    """State shared by the handlers; the handlers themselves live in the other lsp modules."""

    def __init__(self) -> None:
        super().__init__(
            "greenloop",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=GreenloopProtocol,
            converter_factory=make_converter,
        )
        self.editor = EditorConfig()
        self.diagnostics = DiagnosticsStore()
        self.background: set[asyncio.Task[Any]] = set()
        self.save_run: asyncio.Task[Any] | None = None
        self.configured = asyncio.Event()  # the first configuration pull is done (or impossible)
        self.loops = LoopRunner(self)
        self.interpreter_packages: dict[str, str] = {}  # the editor's interpreter (lsp/interpreter.py)
        self.interpreter_note = ""  # why the editor has no listing ("" when it has one or sent nothing)

    # ---- workspace ---------------------------------------------------------------------------

    @property
    def root(self) -> Path:
        """The workspace folder the loops work on (the first one when there are several)."""
        ws = self.workspace
        path = ws.root_path
        if not path and ws.folders:
            path = to_fs_path(next(iter(ws.folders.values())).uri)
        if not path:
            raise GreenloopError("no workspace folder is open; open the project folder first")
        return Path(path)

    def rel_path(self, uri: str) -> str:
        """Workspace-relative posix path of a file uri, or InvalidParams when it is outside."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path is None:
            raise JsonRpcInvalidParams(f"{uri}: not a file uri; greenloop works on files in the workspace")
        try:
            return Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            raise JsonRpcInvalidParams(f"{uri}: outside the workspace folder {self.root}") from None

    def overlays(self) -> dict[str, str]:
        """Open documents under the root: their (possibly unsaved) text overrides the disk."""
        root = self.root.resolve()
        out: dict[str, str] = {}
        for uri, doc in self.workspace.text_documents.items():
            path = to_fs_path(uri) if uri.startswith("file:") else None
            if path is None:
                continue
            try:
                out[Path(path).resolve().relative_to(root).as_posix()] = doc.source
            except ValueError:
                continue
        return out

    def version_of(self, rel: str) -> int | None:
        """The open document's version (so the client refuses an edit of a changed buffer)."""
        target = (self.root / rel).resolve()
        for uri, doc in self.workspace.text_documents.items():
            path = to_fs_path(uri) if uri.startswith("file:") else None
            if path is not None and Path(path).resolve() == target:
                return doc.version
        return None

    def text_of(self, rel: str, overlays: dict[str, str]) -> str | None:
        """A file's text as the editor sees it (blocking read: call from a thread)."""
        if rel in overlays:
            return overlays[rel]
        try:
            return (self.root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    async def settings(self, *, need_root: bool = True) -> Settings:
        """Settings for a run: workspace file, env, then the editor's configuration."""
        with contextlib.suppress(TimeoutError):  # a client that never answers gets the defaults
            await asyncio.wait_for(self.configured.wait(), CONFIG_WAIT)
        root = self.root if need_root or self._has_root() else None
        try:
            return await asyncio.to_thread(load_settings, root, self.editor.overrides)
        except GreenloopError as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc

    # ---- configuration -----------------------------------------------------------------------

    async def pull_configuration(self) -> None:
        """Ask the client for the `greenloop` section and map it onto settings overrides."""
        try:
            await self._pull_configuration()
        finally:
            self.configured.set()

    async def _pull_configuration(self) -> None:
        workspace = self.client_capabilities.workspace
        if not (workspace and workspace.configuration):
            return
        try:
            answer = await self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="greenloop")])
            )
        except Exception as exc:
            log.warning("workspace/configuration failed: %s", exc)
            return
        config = read_editor_config(answer[0] if answer else None)
        try:
            await asyncio.to_thread(load_settings, self.root if self._has_root() else None, config.overrides)
        except GreenloopError as exc:
            self.show(f"greenloop settings not applied: {exc}", types.MessageType.Warning)
            return
        if config.ignored:
            self.log_line(f"ignored unknown greenloop settings: {', '.join(config.ignored)}")
        self.editor = config

    def _has_root(self) -> bool:
        try:
            return bool(self.root)
        except GreenloopError:
            return False

    # ---- messages and tasks ------------------------------------------------------------------

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def log_line(self, message: str) -> None:
        self.window_log_message(types.LogMessageParams(type=types.MessageType.Log, message=message))

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """A background task the server keeps (and cancels on shutdown); errors are logged."""
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self._forget)
        return task

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self.background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    async def stop_everything(self, grace: float = 30.0) -> None:
        """Cancel the loop and background work and wait for their clean-up (containers closed)."""
        tasks = [t for t in (*self.background, *self.loops.tasks()) if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
