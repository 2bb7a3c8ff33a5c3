"""`greenloop model fetch | serve | path | server`: the embedded local model (Qwen2.5-Coder on llama.cpp's server)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from greenloop.cli.common import settings_from_args
from greenloop.cli.exit_codes import ENVIRONMENT
from greenloop.errors import GreenloopError
from greenloop.llm.local_binary import choose_server, find_llama_server
from greenloop.llm.local_build import BuildFailed, build_llama_server, install_prebuilt
from greenloop.llm.local_model import SPECS, fetch, model_path, ready_model
from greenloop.llm.local_server import LocalModelServer
from greenloop.settings import LocalModelSettings


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("model", parents=[common], help="the embedded local model: fetch, serve, path",
                       description=__doc__)
    p.add_argument("--workspace", "-C", type=Path, default=Path("."), help="project whose settings to use")
    actions = p.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    fetch_p = actions.add_parser("fetch", help="download, join and verify the model; build llama-server (cached)")
    serve_p = actions.add_parser("serve", help="run the model's OpenAI-compatible server in the foreground")
    path_p = actions.add_parser("path", help="print the model file's path (exit 1 when not fetched)")
    server_p = actions.add_parser("server", help="print which server would run and why")
    for action in (fetch_p, serve_p, path_p, server_p):
        action.add_argument("--size", choices=sorted(SPECS), help="model size (default: local_model.size)")
    fetch_p.add_argument("--no-server", action="store_true", help="only the model file: no llama-server build")
    fetch_p.add_argument("--build-server", action="store_true",
                         help="build llama-server even when xllamacpp (prebuilt) is installed")
    fetch_p.add_argument("--server-from", type=Path, metavar="FILE",
                         help="a llama-server built from the same source release: copied into the cache, no build")
    serve_p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    serve_p.add_argument("--deterministic", action="store_true", help="the same reply for the same request (llama-cpp-python: batch size 1)")
    p.set_defaults(func=run)


def _local_settings(args: argparse.Namespace) -> LocalModelSettings:
    workspace = args.workspace.expanduser().resolve()
    settings = settings_from_args(args, workspace if workspace.is_dir() else None).local_model
    if args.size:
        settings = settings.model_copy(update={"size": args.size})
    if getattr(args, "deterministic", False):
        settings = settings.model_copy(update={"deterministic": True})
    return settings


def run(args: argparse.Namespace) -> int:
    settings = _local_settings(args)
    if args.model_command == "path":
        ready = ready_model(settings)
        print(ready or model_path(settings))
        return 0 if ready else ENVIRONMENT
    if args.model_command == "server":
        choice = choose_server(settings)
        print(f"{choice.kind}: {choice.reason}")
        return 0 if choice.kind in ("llama-server", "xllamacpp") else ENVIRONMENT
    if args.model_command == "fetch":
        console = Console(stderr=True)
        path = fetch_with_progress(settings, console)
        if args.server_from:
            console.print(f"llama-server: {install_prebuilt(args.server_from)} (copied)", highlight=False)
        elif not args.no_server:
            ensure_llama_server(settings, console, force_build=args.build_server)
        print(path)
        return 0
    return asyncio.run(_serve(settings, args.port))


def ensure_llama_server(settings: LocalModelSettings, console: Console, force_build: bool = False) -> None:
    """xllamacpp or a llama-server found, or llama-server built now with a progress line; a failed build
    is shown, not fatal."""
    if settings.server == "llama-cpp-python":
        return
    choice = choose_server(settings)
    if choice.kind == "xllamacpp" and not force_build:
        console.print(f"model server: {choice.reason} (nothing to build)", highlight=False)
        return
    found = find_llama_server(settings)
    if found is not None:
        console.print(f"llama-server: {found[0]} ({found[1]})", highlight=False)
        return
    console.print("llama-server: building it once from llama-cpp-python's source "
                  "(about 7 minutes on 2 cores; cached)", highlight=False)
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"))
    try:
        with Progress(*columns, console=console, transient=False) as bar:
            task = bar.add_task("llama-server: download source", total=100)

            def progress(step: str, percent: int) -> None:
                bar.update(task, description=f"llama-server: {step}", completed=percent)

            path = build_llama_server(settings, progress)
    except BuildFailed as failed:
        console.print(str(failed), style="yellow", markup=False, highlight=False)
        if settings.server == "llama-server":
            raise GreenloopError("local_model.server is 'llama-server' and the build failed (see above).") from None
        return
    console.print(f"llama-server: {path} (built)", highlight=False)


def fetch_with_progress(settings: LocalModelSettings, console: Console) -> Path:
    """`fetch` with a rich progress bar (parts downloaded, bytes joined)."""
    ready = ready_model(settings)
    if ready is not None:
        console.print(f"model: {ready} (cached, verified)", highlight=False)
        return ready
    spec = SPECS[settings.size]
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(f"{spec.name}: part 1/{len(spec.packages)}", total=spec.bytes)

        def progress(phase: str, done: int, total: int) -> None:
            if phase == "download":
                part = min(done + 1, total)
                bar.update(task, description=f"{spec.name}: part {part}/{total}")
            else:
                bar.update(task, completed=done, total=total)

        path = fetch(settings, progress)
    console.print(f"model: {path} (sha256 verified)", highlight=False)
    return path


async def _serve(settings: LocalModelSettings, port: int) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with LocalModelServer(settings, port=port) as server:
        print(f"READY {server.base_url}", flush=True)
        if server.choice is not None:
            print(f"server: {server.choice.kind} ({server.choice.reason})", file=sys.stderr)
        print("serving the embedded model; Ctrl-C stops it", file=sys.stderr)
        await stop.wait()
    return 0
