"""The command line that starts the embedded model server: llama-server, xllamacpp's, or llama-cpp-python's.

Flags beyond model, address, context and threads (`local_model.threads`, 1 by default: one
thread was fastest on a busy 2-core machine) were chosen by measurement on
2 cores (docs/decisions/llama-server-flags.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

from greenloop.llm.local_binary import ServerChoice
from greenloop.settings import LocalModelSettings

LLAMA_SERVER_FLAGS = ("--no-webui",)


def slot_flags(settings: LocalModelSettings) -> list[str]:
    """Context, threads and slots: `local_model.parallel` slots, each with `n_ctx` tokens (llama.cpp divides
    -c among its slots, so -c is their sum). With one slot, requests queue instead of cutting each other off and its
    prompt cache serves the candidates that share one prompt; with more, they are decoded together
    (continuous batching), each slot reading its prompt (docs/decisions/2026-12-parallel-slots.md)."""
    return ["-c", str(settings.n_ctx * settings.parallel), "-t", str(settings.threads),
            "--parallel", str(settings.parallel)]


def server_command(choice: ServerChoice, settings: LocalModelSettings, model: Path, port: int,
                   alias: str) -> list[str]:
    if choice.kind == "llama-server":
        assert choice.path is not None
        return llama_server_command(choice.path, settings, model, port, alias)
    if choice.kind == "xllamacpp":
        return xllamacpp_command(settings, model, port, alias)
    return llama_cpp_python_command(settings, model, port, alias)


def _llama_server_flags(settings: LocalModelSettings, model: Path, port: int, alias: str) -> list[str]:
    # `deterministic` adds nothing here (no `-b 1`): see docs/decisions/llama-server-flags.md
    return ["-m", str(model), "--alias", alias, "--host", "127.0.0.1", "--port", str(port),
            *slot_flags(settings), *LLAMA_SERVER_FLAGS]


def llama_server_command(binary: Path, settings: LocalModelSettings, model: Path, port: int,
                         alias: str) -> list[str]:
    return [str(binary), *_llama_server_flags(settings, model, port, alias), *settings.server_args]


def xllamacpp_command(settings: LocalModelSettings, model: Path, port: int, alias: str) -> list[str]:
    """The same flags, to xllamacpp_server.py run as a script: the child imports no greenloop module."""
    script = Path(__file__).with_name("xllamacpp_server.py")
    return [sys.executable, str(script), *_llama_server_flags(settings, model, port, alias)]


def llama_cpp_python_command(settings: LocalModelSettings, model: Path, port: int, alias: str) -> list[str]:
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", alias,
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(settings.n_ctx),
           "--n_threads", str(settings.threads),
           # by default llama-cpp-python ends a running stream when another request arrives: files
           # written in parallel cut each other off, retry, and cut each other off again
           "--interrupt_requests", "false"]
    if settings.deterministic:
        cmd += ["--n_batch", "1", "--n_ubatch", "1"]
    return cmd
