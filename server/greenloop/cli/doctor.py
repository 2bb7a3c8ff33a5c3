"""`greenloop doctor`: is everything greenloop needs here? Installation, engine, images, toolchains, model."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from greenloop.cli.common import settings_from_args
from greenloop.cli.installation import installation_section
from greenloop.llm import doctor as llm_doctor
from greenloop.settings import Settings
from greenloop_sandbox.doctor import Check, Section, sandbox_sections


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("doctor", parents=[common], help="check the Docker engine, images, toolchains, model",
                       description=__doc__)
    p.add_argument("--workspace", "-C", type=Path, default=Path("."), help="project whose settings to use")
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.set_defaults(func=run)


def sections(settings: Settings) -> list[Section]:
    """All doctor sections: the sandbox's, the model endpoint's (`greenloop.llm.doctor.checks`), then the
    installation's (the package's data files)."""
    out = sandbox_sections()
    try:
        rows: list[Check] = list(llm_doctor.checks(settings))
    except Exception as exc:  # a broken check must not hide the others
        rows = [Check("model endpoint", False, f"check failed: {exc}", "see the error above")]
    out.append(Section("Model endpoint", rows))
    out.append(installation_section())
    return out


def run(args: argparse.Namespace) -> int:
    workspace = args.workspace.expanduser().resolve()
    settings = settings_from_args(args, workspace if workspace.is_dir() else None)
    result = sections(settings)
    if args.json:
        print(json.dumps([{"title": s.title, "ok": s.ok, "checks": [c.to_dict() for c in s.checks]}
                          for s in result], indent=2))
    else:
        for section in result:
            print(f"\n{section.title}")
            for c in section.checks:
                print(f"  [{'ok' if c.ok else '!!'}] {c.name}: {c.detail}")
                if not c.ok and c.fix:
                    print(f"       fix: {c.fix}")
    sandbox_ok = result[0].ok or any(c.name.startswith("local isolation") and c.ok
                                     for s in result for c in s.checks)
    return 0 if sandbox_ok and result[-1].ok else 3
