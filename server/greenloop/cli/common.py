"""Options every subcommand shares, and how they become settings overrides."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from greenloop.settings import Settings, load_settings


def common_parser(*, settings_file: bool = True) -> argparse.ArgumentParser:
    """A parent parser with the options shared by all subcommands (`--config FILE` unless not `settings_file`)."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("shared options")
    if settings_file:
        group.add_argument("--config", dest="config_file", type=Path, metavar="FILE",
                           help="read settings from FILE instead of the workspace's greenloop.toml")
    group.add_argument("--model", help="model name sent to the endpoint")
    group.add_argument("--base-url", help="OpenAI-compatible endpoint (default: embedded local model)")
    group.add_argument("--sandbox", choices=["auto", "docker", "local"], help="sandbox backend")
    group.add_argument("--seed", type=int, help="seed sent with every model call")
    group.add_argument("--max-iterations", type=int, help="test-fix iterations before giving up")
    tape = group.add_mutually_exclusive_group()
    tape.add_argument("--record-llm", metavar="FILE", help="record every model exchange to FILE (JSONL)")
    tape.add_argument("--replay-llm", metavar="FILE", help="serve model replies from a recording, offline")
    return common


def overrides_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """CLI flags -> nested settings overrides (only the flags given)."""
    out: dict[str, dict[str, Any]] = {}

    def put(section: str, key: str, value: Any) -> None:
        if value is not None:
            out.setdefault(section, {})[key] = value

    put("llm", "model", getattr(args, "model", None))
    put("llm", "base_url", getattr(args, "base_url", None))
    put("llm", "seed", getattr(args, "seed", None))
    put("sandbox", "backend", getattr(args, "sandbox", None))
    put("loop", "max_iterations", getattr(args, "max_iterations", None))
    for flag, mode in (("record_llm", "record"), ("replay_llm", "replay")):
        if (path := getattr(args, flag, None)) is not None:
            put("llm", "cassette", str(Path(path).resolve()))
            put("llm", "cassette_mode", mode)
    return out


def settings_from_args(args: argparse.Namespace, workspace: Path | None) -> Settings:
    settings = load_settings(workspace, overrides_from_args(args), config_file=getattr(args, "config_file", None))
    if getattr(args, "record_llm", None) is not None and settings.llm.cassette:
        # `--record-llm FILE` is this command's session: start FILE fresh once (clients then append)
        Path(settings.llm.cassette).parent.mkdir(parents=True, exist_ok=True)
        Path(settings.llm.cassette).write_text("", encoding="utf-8")
    return settings
