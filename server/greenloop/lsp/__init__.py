"""The editor front end: a pygls language server that maps LSP to agent calls and agent events to LSP."""

from __future__ import annotations

from greenloop.lsp.server import GreenloopServer


def create_server() -> GreenloopServer:
    """A server with every greenloop feature, command and custom method registered."""
    from greenloop.lsp import commands, features, feedback, interpreter, run_list, test_explorer

    server = GreenloopServer()
    for module in (features, commands, feedback, interpreter, run_list, test_explorer):
        module.register(server)
    return server


__all__ = ["GreenloopServer", "create_server"]
