"""Code actions: "Fix this failing test" on a test diagnostic, "Fix all failing tests" as a source action."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types

from greenloop.lsp.protocol import CMD_FIX, FIX_ALL_KIND, SOURCE

FIX_ONE_TITLE = "Fix this failing test"
FIX_ALL_TITLE = "Fix all failing tests"
KINDS = [types.CodeActionKind.QuickFix, FIX_ALL_KIND]


def test_id_of(diagnostic: types.Diagnostic) -> str | None:
    """The test id a greenloop diagnostic is about (`data.testId`, else its code)."""
    if diagnostic.source != SOURCE:
        return None
    data: Any = diagnostic.data
    if isinstance(data, dict) and isinstance(data.get("testId"), str):
        return str(data["testId"])
    return diagnostic.code if isinstance(diagnostic.code, str) else None


def _overlaps(a: types.Range, b: types.Range) -> bool:
    """Line-wise: the cursor anywhere on a failing line offers its fix."""
    return a.start.line <= b.end.line and b.start.line <= a.end.line


def _wanted(kind: str, only: Sequence[str] | None) -> bool:
    """LSP `context.only` is a prefix filter: `source` admits `source.fixAll.greenloop`."""
    return not only or any(kind == want or kind.startswith(f"{want}.") for want in only)


def code_actions(
    params: types.CodeActionParams, known: list[types.Diagnostic], *, any_failing: bool
) -> list[types.CodeAction]:
    """Actions for the range: one quickfix per failing test there, plus fix-all while any test fails.

    `known` are the diagnostics the server published for this document; those the client
    sent in the context are preferred (same test id), so the action links its own object.
    `any_failing`: some test in the workspace fails (fix-all is offered everywhere then).
    """
    only = [str(kind) for kind in params.context.only] if params.context.only else None
    by_test: dict[str, types.Diagnostic] = {}
    for diagnostic in [*params.context.diagnostics, *known]:
        test_id = test_id_of(diagnostic)
        if test_id and test_id not in by_test and _overlaps(diagnostic.range, params.range):
            by_test[test_id] = diagnostic
    actions: list[types.CodeAction] = []
    if _wanted(types.CodeActionKind.QuickFix, only):
        for test_id, diagnostic in by_test.items():
            actions.append(
                types.CodeAction(
                    title=FIX_ONE_TITLE,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=True,
                    command=types.Command(
                        title=FIX_ONE_TITLE, command=CMD_FIX, arguments=[{"testIds": [test_id]}]
                    ),
                )
            )
    if any_failing and _wanted(FIX_ALL_KIND, only):
        actions.append(
            types.CodeAction(
                title=FIX_ALL_TITLE,
                kind=FIX_ALL_KIND,
                command=types.Command(title=FIX_ALL_TITLE, command=CMD_FIX, arguments=[{}]),
            )
        )
    return actions
