"""The agent's ports: the model client and the sandbox, opened from settings or injected."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from greenloop.errors import GreenloopError
from greenloop.llm import LLMClient, open_llm
from greenloop.settings import Settings
from greenloop_sandbox import Limits, Sandbox, SandboxError, detect_template, open_sandbox


@dataclass
class Ports:
    llm: LLMClient
    sandbox: Sandbox


def limits_from(settings: Settings) -> Limits:
    s = settings.sandbox
    return Limits(
        memory=s.memory,
        cpus=s.cpus,
        pids=s.pids,
        exec_timeout=s.exec_timeout,
        test_timeout=s.test_timeout,
        test_case_timeout=s.test_case_timeout,
        output_limit=s.output_limit,
    )


def choose_template(settings: Settings, files: Mapping[str, bytes], template: str | None = None) -> str:
    """The template named (argument, then settings), else detected from the files."""
    name = template or (settings.sandbox.template if settings.sandbox.template != "auto" else None)
    if name:
        return name
    try:
        return detect_template(files)
    except SandboxError as exc:
        raise GreenloopError(str(exc)) from exc


@asynccontextmanager
async def open_sandbox_for(settings: Settings, template: str, *, label: str | None = None) -> AsyncIterator[Sandbox]:
    """A started sandbox that is closed (container/processes gone) however the block ends."""
    try:
        sandbox = open_sandbox(template, backend=settings.sandbox.backend, limits=limits_from(settings), label=label)
        await sandbox.start()
    except SandboxError as exc:
        raise GreenloopError(str(exc)) from exc
    try:
        yield sandbox
    finally:
        await sandbox.close()


@asynccontextmanager
async def open_ports(
    settings: Settings,
    template: str,
    *,
    sink: Callable[[Any], None] | None = None,
    label: str | None = None,
) -> AsyncIterator[Ports]:
    """Model client + sandbox for one run; both are closed however the run ends."""
    async with open_llm(settings, sink=sink) as llm, open_sandbox_for(settings, template, label=label) as sandbox:
        yield Ports(llm=llm, sandbox=sandbox)
