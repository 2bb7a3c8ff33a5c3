"""Command arguments and custom params: strict parsing with clear messages, camelCase JSON with nulls kept."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from greenloop.lsp import protocol as p
from greenloop.lsp import wire

RANGE = {"start": {"line": 1, "character": 0}, "end": {"line": 3, "character": 4}}


def test_fix_args() -> None:
    assert wire.parse_command_args(p.FixArgs, p.CMD_FIX, [{}]).test_ids is None
    assert wire.parse_command_args(p.FixArgs, p.CMD_FIX, []).test_ids is None
    assert wire.parse_command_args(p.FixArgs, p.CMD_FIX, [{"testIds": ["t.py::a"]}]).test_ids == ["t.py::a"]


@pytest.mark.parametrize(
    ("kind", "args", "needle"),
    [
        (p.FixArgs, [{"testIds": "t.py::a"}], "testIds: expected list[string]"),
        (p.FixArgs, [{"testIds": [1]}], "testIds"),
        (p.FixArgs, [{}, {}], "expected one argument"),
        (p.FixArgs, ["x"], "expected a JSON object, got a string"),
        (p.ImproveArgs, [{"uri": "file:///a.py", "range": RANGE}], "instruction: required field missing"),
        (p.ImproveArgs, [{"uri": 3, "range": RANGE, "instruction": "x"}], "uri: expected string"),
        (p.ImproveArgs, [{"uri": "f", "range": {"start": {}}, "instruction": "x"}], "range.start.line"),
        (p.GenerateArgs, [{"prompt": "p", "template": "java", "outDir": "/x"}], "one of python, node, rust"),
        (p.GenerateArgs, [{"prompt": "p", "template": "node"}], "outDir: required field missing"),
    ],
)
def test_bad_arguments_say_what_is_wrong(kind: type, args: list[object], needle: str) -> None:
    with pytest.raises(JsonRpcInvalidParams) as caught:
        wire.parse_command_args(kind, "greenloop.x", args)
    assert needle in caught.value.message
    assert caught.value.message.startswith("greenloop.x: ")


def test_improve_args_structure_a_real_range() -> None:
    args = wire.parse_command_args(
        p.ImproveArgs, p.CMD_IMPROVE, [{"uri": "file:///a.py", "range": RANGE, "instruction": "faster"}]
    )
    assert args.range == types.Range(types.Position(1, 0), types.Position(3, 4))


def test_results_are_camel_case_and_keep_nulls() -> None:
    event = wire.to_json(p.LoopEventParams(run_id="r1", kind="tests_ran", text="t", passed=1, failed=2))
    assert event["runId"] == "r1" and event["maxIterations"] is None and event["promptTokens"] is None
    assert wire.to_json(p.LoopResult("r", "green", "ok", True)) == {
        "runId": "r",
        "outcome": "green",
        "summary": "ok",
        "applied": True,
    }
    feedback = wire.to_json(p.FeedbackResult(thread_id="t", status="no_change", message="m"))
    assert feedback == {"threadId": "t", "status": "no_change", "message": "m", "edit": None}


def test_custom_messages_round_trip_through_the_server_converter() -> None:
    converter = wire.make_converter()
    raw = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": p.FEEDBACK,
        "params": {"uri": "file:///a.py", "range": RANGE, "text": "x", "threadId": "th"},
    }
    message = converter.structure(raw, p.FeedbackRequest)
    assert message.params == p.FeedbackParams(
        "file:///a.py", types.Range(types.Position(1, 0), types.Position(3, 4)), "x", "th"
    )
    edit = types.WorkspaceEdit(
        changes={"file:///a.py": [types.TextEdit(range=message.params.range, new_text="y")]}
    )
    out = converter.unstructure(
        p.FeedbackResponse(id=4, result=p.FeedbackResult("th", "applied", "done", edit))
    )
    assert out["result"]["edit"]["changes"]["file:///a.py"][0]["newText"] == "y"
