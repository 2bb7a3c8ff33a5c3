"""Over stdio: test diagnostics appear and clear, code actions offer the fix, bad input gets errors."""

from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import Future
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCRequestMessage
from pytest_lsp import LanguageClient

from tests.lsp.conftest import copy_project, initialize

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")


async def run_tests(client: LanguageClient) -> dict[str, int]:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="greenloop.runTests", arguments=[{}])
    )


async def test_diagnostics_for_failing_tests_then_cleared(
    local_client: LanguageClient, tmp_path: Path
) -> None:
    root = copy_project("python-fail", tmp_path)
    await initialize(local_client, root)
    result = await run_tests(local_client)
    assert (result["failed"] + result["errors"], result["skipped"]) == (2, 1), result
    test_uri = (root / "tests/test_calc.py").as_uri()
    diags = local_client.diagnostics[test_uri]
    assert sorted(d.code for d in diags) == [
        "tests/test_calc.py::TestDiv::test_div_by_zero_message",
        "tests/test_calc.py::test_sub",
    ]
    sub = next(d for d in diags if d.code == "tests/test_calc.py::test_sub")
    lines = (root / "tests/test_calc.py").read_text().splitlines()
    assert lines[sub.range.start.line].strip() == "assert result == 2"
    assert sub.source == "greenloop" and sub.severity == types.DiagnosticSeverity.Error
    assert (
        sub.related_information
        and lines[sub.related_information[0].location.range.start.line] == "def test_sub():"
    )

    # Code actions on the failing line: the quickfix for that test plus fix-all.
    actions = await local_client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=test_uri),
            range=sub.range,
            context=types.CodeActionContext(diagnostics=[sub]),
        )
    )
    assert actions is not None
    titles = {a.title: a for a in actions if isinstance(a, types.CodeAction)}
    assert set(titles) == {"Fix this failing test", "Fix all failing tests"}
    quick = titles["Fix this failing test"]
    assert quick.kind == types.CodeActionKind.QuickFix and quick.command is not None
    assert quick.command.command == "greenloop.fixFailingTests"
    assert list(quick.command.arguments or []) == [{"testIds": ["tests/test_calc.py::test_sub"]}]
    assert titles["Fix all failing tests"].kind == "source.fixAll.greenloop"

    # Fix the code by hand in an unsaved buffer (incremental changes): the next run sees the buffer.
    calc = root / "calc.py"
    text = calc.read_text()
    local_client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=calc.as_uri(), language_id="python", version=1, text=text)
        )
    )
    changes = []
    for old, new in (
        ("return a + b  # bug: should subtract", "return a - b"),
        ("return a / b", "return a / b if b else 0"),
    ):
        line = next(i for i, t in enumerate(text.splitlines()) if t.strip() == old)
        start = text.splitlines()[line].index(old)
        rng = types.Range(types.Position(line, start), types.Position(line, start + len(old)))
        changes.append(types.TextDocumentContentChangePartial(range=rng, text=new))
    local_client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=calc.as_uri(), version=2),
            content_changes=changes,
        )
    )
    result = await run_tests(local_client)
    assert (result["failed"], result["errors"]) == (0, 0), result
    assert list(local_client.diagnostics[test_uri]) == []
    assert "bug" in calc.read_text()  # the disk was not touched


async def test_bad_requests_get_errors_and_the_server_keeps_serving(
    local_client: LanguageClient, tmp_path: Path
) -> None:
    root = copy_project("python-pass", tmp_path)
    await initialize(local_client, root)
    cases: list[tuple[str, list[object] | None, str]] = [
        ("greenloop.nope", [{}], "not defined"),
        ("greenloop.fixFailingTests", [{"testIds": "tests/x.py::t"}], "testIds"),
        ("greenloop.fixFailingTests", [{}, {}], "expected one argument"),
        ("greenloop.improve", [{"uri": (root / "calc.py").as_uri()}], "instruction"),
        (
            "greenloop.improve",
            [{"uri": "file:///elsewhere/x.py", "range": _range(0, 1), "instruction": "x"}],
            "outside",
        ),
        (
            "greenloop.improve",
            [{"uri": (root / "nope.py").as_uri(), "range": _range(0, 1), "instruction": "x"}],
            "no such file",
        ),
        (
            "greenloop.generateProject",
            [{"prompt": "p", "template": "java", "outDir": "/tmp/x"}],
            "python, node, rust",
        ),
        (
            "greenloop.generateProject",
            [{"prompt": "p", "template": "python", "outDir": "rel/dir"}],
            "absolute",
        ),
    ]
    for command, arguments, needle in cases:
        with pytest.raises(JsonRpcException) as caught:
            await local_client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=command, arguments=arguments)
            )
        assert caught.value.code == -32602, (command, caught.value)
        assert needle in caught.value.message, (command, caught.value.message)
    # Malformed params of a standard request and of a custom one are answered, not dropped.
    with pytest.raises(JsonRpcException) as caught:
        await send_raw(local_client, "textDocument/codeAction", {"textDocument": {}})
    assert caught.value.code == -32602
    with pytest.raises(JsonRpcException) as caught:
        await local_client.protocol.send_request_async("greenloop/feedback", {"uri": 1})
    assert caught.value.code == -32602 and "greenloop/feedback" in caught.value.message
    with pytest.raises(JsonRpcException) as caught:
        await local_client.protocol.send_request_async("greenloop/nope", {})
    assert caught.value.code == -32601
    # Code actions on a document that was never opened: nothing failing, no actions, no error.
    actions = await local_client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=(root / "never_opened.py").as_uri()),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert list(actions or []) == []
    # ... and the server still answers.
    result = await run_tests(local_client)
    assert result["failed"] == 0 and result["passed"] > 0
    runs = await local_client.protocol.send_request_async("greenloop/runs", {"limit": 5})
    assert runs.runs == []


async def send_raw(client: LanguageClient, method: str, params: object) -> object:
    """A request exactly as given (the typed client would refuse to send malformed params)."""
    msg_id = f"raw-{uuid.uuid4()}"
    future: Future[object] = Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._send_data(JsonRPCRequestMessage(id=msg_id, method=method, jsonrpc="2.0", params=params))
    return await asyncio.wait_for(asyncio.wrap_future(future), 10)


def _range(first: int, last: int) -> dict[str, dict[str, int]]:
    return {"start": {"line": first, "character": 0}, "end": {"line": last, "character": 0}}
