"""Code actions: a quickfix per failing test in range, fix-all while anything fails, `only` respected."""

from __future__ import annotations

from lsprotocol import types

from greenloop.lsp.actions import FIX_ALL_TITLE, FIX_ONE_TITLE, code_actions

URI = "file:///w/tests/test_calc.py"


def diagnostic(test_id: str, line: int, source: str = "greenloop") -> types.Diagnostic:
    rng = types.Range(types.Position(line, 4), types.Position(line, 20))
    return types.Diagnostic(range=rng, message="boom", source=source, code=test_id, data={"testId": test_id})


def params(line: int, sent: list[types.Diagnostic], only: list[str] | None = None) -> types.CodeActionParams:
    return types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI),
        range=types.Range(types.Position(line, 0), types.Position(line, 0)),
        context=types.CodeActionContext(diagnostics=sent, only=only),
    )


def test_quickfix_for_the_failing_test_under_the_cursor_and_fix_all() -> None:
    known = [diagnostic("t::a", 5), diagnostic("t::b", 9)]
    actions = code_actions(params(5, []), known, any_failing=True)
    assert [a.title for a in actions] == [FIX_ONE_TITLE, FIX_ALL_TITLE]
    fix_one, fix_all = actions
    assert fix_one.kind == types.CodeActionKind.QuickFix and fix_one.diagnostics == [known[0]]
    assert fix_one.command is not None and fix_one.command.command == "greenloop.fixFailingTests"
    assert fix_one.command.arguments == [{"testIds": ["t::a"]}]
    assert fix_all.kind == "source.fixAll.greenloop"
    assert fix_all.command is not None and fix_all.command.arguments == [{}]


def test_client_sent_diagnostics_are_linked_and_others_ignored() -> None:
    sent = [diagnostic("t::a", 5), diagnostic("E501", 5, source="ruff")]
    actions = code_actions(params(5, sent), [], any_failing=True)
    assert actions[0].diagnostics == [sent[0]]
    assert len(actions) == 2


def test_nothing_failing_no_actions() -> None:
    assert code_actions(params(5, []), [], any_failing=False) == []


def test_only_filters_by_kind_prefix() -> None:
    known = [diagnostic("t::a", 5)]
    assert [a.title for a in code_actions(params(5, [], ["source"]), known, any_failing=True)] == [
        FIX_ALL_TITLE
    ]
    assert [a.title for a in code_actions(params(5, [], ["quickfix"]), known, any_failing=True)] == [
        FIX_ONE_TITLE
    ]
    assert code_actions(params(5, [], ["refactor"]), known, any_failing=True) == []
