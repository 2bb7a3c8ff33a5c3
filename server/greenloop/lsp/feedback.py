"""`greenloop/feedback`: a comment thread's text on a range -> an improve run -> a reviewable edit."""

from __future__ import annotations

from greenloop.agent import improve
from greenloop.lsp import protocol as p
from greenloop.lsp.commands import improve_request
from greenloop.lsp.loops import RunResult
from greenloop.lsp.server import GreenloopServer


def register(server: GreenloopServer) -> None:
    server.feature(p.FEEDBACK)(feedback)


async def feedback(ls: GreenloopServer, params: p.FeedbackParams) -> p.FeedbackResult:
    if not params.text.strip():
        from pygls.exceptions import JsonRpcInvalidParams

        raise JsonRpcInvalidParams(f"{p.FEEDBACK}: text is empty; write what should change")
    request = improve_request(ls, params.uri, params.range.start.line, params.range.end.line, params.text)
    result = await ls.loops.run("improve", "greenloop: applying your feedback", lambda s: improve(request, s))
    return p.FeedbackResult(
        thread_id=params.thread_id, status=feedback_status(result), message=result.summary, edit=result.edit
    )


def feedback_status(result: RunResult) -> p.FeedbackStatus:
    if result.outcome == "cancelled":
        return "cancelled"
    if result.edit is not None:
        return "applied" if result.applied else "declined"
    if result.outcome in ("green", "no_tests", "already_green"):
        return "no_change"
    return "failed"
