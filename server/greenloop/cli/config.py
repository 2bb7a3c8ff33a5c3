"""`greenloop config show`: the effective settings, and where each value came from."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from greenloop.cli.common import overrides_from_args, settings_from_args
from greenloop.llm.endpoint import resolve_endpoint
from greenloop.settings import Settings
from greenloop.settings_sources import Layer, env_layer, file_layers, origin, user_config_path

ORDER = "flags > environment > workspace file (or --config) > user file > defaults"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("config", help="the effective settings and where each value came from",
                       description=__doc__)
    actions = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    show = actions.add_parser("show", parents=[common], help="print every setting with its source",
                              description=f"Every setting's value and its source ({ORDER}).")
    show.add_argument("--workspace", "-C", type=Path, default=Path("."), help="project whose settings to show")
    show.add_argument("--json", action="store_true", help="print the settings as JSON")
    show.set_defaults(func=run)


def rows(settings: Settings, layers: list[Layer]) -> list[dict[str, Any]]:
    """One row per setting: key, value (secrets masked), source layer and where in it."""
    out = []
    for section, values in settings.model_dump(mode="json").items():
        for key, value in values.items():
            path = (section, key)
            layer = origin(layers, path, nearest=False)
            out.append({"key": f"{section}.{key}", "value": value,
                        "source": layer.name if layer else "default",
                        "where": layer.where(path) if layer else ""})
    return out


def run(args: argparse.Namespace) -> int:
    workspace = args.workspace.expanduser().resolve()
    root = workspace if workspace.is_dir() else None
    settings = settings_from_args(args, root)
    files = file_layers(root, getattr(args, "config_file", None))
    layers = [*files, env_layer(Settings), Layer("flags", overrides_from_args(args))]
    table = rows(settings, layers)
    endpoint = resolve_endpoint(settings)
    if args.json:
        print(json.dumps({"files": [str(f.path) for f in files], "settings": table,
                          "endpoint": {"base_url": endpoint.base_url, "source": endpoint.source}}, indent=2))
        return 0
    user = user_config_path()
    print(f"Sources, highest first: {ORDER}.")
    print(f"user file: {user}{'' if user.is_file() else ' (none)'}")
    print(f"read: {', '.join(str(f.path) for f in files) or 'no config file'}")
    for row in table:
        source = "" if row["source"] == "default" else f"  <- {row['where']}"
        print(f"{row['key']} = {json.dumps(row['value'])}{source}")
    local = ("a running local server (local_model.discover_urls), else " if settings.local_model.discover
             and settings.local_model.discover_urls else "")
    where = {"embedded": f"{local}the embedded model (started per run)",
             "none": f"{local}none" if local else "none configured"}
    print(f"model endpoint: {endpoint.base_url} (from {endpoint.source})" if endpoint.base_url
          else f"model endpoint: {where.get(endpoint.source, endpoint.source)}")
    return 0
