"""Language templates as data: `templates/<name>/template.toml` + `Dockerfile` -> EnvTemplate."""

from __future__ import annotations

import hashlib
import shlex
import tomllib
from dataclasses import dataclass, field

from greenloop_sandbox.languages import TEMPLATES_DIR, Language, load_language, template_names
from greenloop_sandbox.values import SandboxError

__all__ = ["SUPPORT_DIR", "TEMPLATES_DIR", "EnvTemplate", "load_template", "template_names"]

SUPPORT_DIR = "/opt/greenloop"  # where an image holds its template's support files
_RECIPE = ("template.toml", "Dockerfile")


@dataclass(frozen=True)
class EnvTemplate:
    """One language's environment: image recipe, test command, report parser, package manager."""

    name: str
    language: Language  # what is known of the language itself (its `[language]` table; not in the hash)
    description: str
    base: str
    dockerfile: str
    test_command: str
    parser: str
    package_manager: str
    report: str = ""
    setup: tuple[str, ...] = ()
    toolchain: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()  # packages the image has already (`pytest`), that an install must not replace
    case_timeout: str = ""  # test-command arguments for a per-test timeout ({seconds}, {ms}); "" if none
    case_timeout_probe: str = ""  # a command that succeeds where `case_timeout` works (the local backend's host)
    case_limits: bool = False  # the runner reads per-test limits and the early stop (GREENLOOP_CASES)
    selects_tests: bool = False  # {tests} takes the test ids of a report: just those tests run
    workspace_report: str = ""  # a report the command writes in the workspace (a project's `test_report`)
    own_command: str = ""  # the project's own test command as written ("": the template's; project.py)
    spectrum_command: str = ""  # chosen tests under coverage, per test (spectrum.py); "" if none
    collect_command: str = ""  # lists the test ids without running them (collect.py); "" if none
    # The folder's other files (a test runner): in the image under SUPPORT_DIR, `{support}` in commands
    support: tuple[tuple[str, bytes], ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @property
    def provided(self) -> frozenset[str]:
        """Names that are no package to install here: the template's tools and the built-in modules."""
        return frozenset(self.tools) | self.language.builtin_modules

    @property
    def recipe_hash(self) -> str:
        """Short hash of everything that shapes this template's image."""
        text = "\n".join([self.name, self.base, self.dockerfile, *self.setup, repr(sorted(self.env.items()))])
        digest = hashlib.sha256(text.encode())
        for name, data in self.support:
            digest.update(name.encode() + b"\0" + data)
        return digest.hexdigest()[:12]

    def report_path(self, report_dir: str, workspace: str) -> str:
        """Where the test command's report is read from: `report` in `report_dir`, the workspace's
        `workspace_report`, or "" when the output is the report."""
        if self.workspace_report:
            return f"{workspace.rstrip('/')}/{self.workspace_report}"
        return f"{report_dir}/{self.report}" if self.report else ""

    def test_argv(self, report_path: str, test_ids: list[str] | None = None, case_timeout: float = 0,
                  support: str = SUPPORT_DIR) -> str:
        """The shell command that runs the tests, writing the report (if any) to `report_path`.

        `case_timeout` > 0 ends any one test after that many seconds, where the template has a way to;
        `support` is where the template's support files are (the image's SUPPORT_DIR by default).
        """
        tests = " ".join(shlex.quote(t) for t in test_ids or [])
        per_test = ""
        if case_timeout > 0 and self.case_timeout:
            per_test = self.case_timeout.format(seconds=f"{case_timeout:g}", ms=str(round(case_timeout * 1000)))
        return self.test_command.format(report=shlex.quote(report_path), tests=tests, case_timeout=per_test,
                                        support=shlex.quote(support)).strip()

    def spectrum_argv(self, focus: list[str], *, max_tests: int, seconds: float, case_timeout: float = 0,
                      support: str = SUPPORT_DIR) -> str:
        """The shell command that runs `focus` (and their files' other tests) under coverage; "" if none."""
        if not self.spectrum_command:
            return ""
        per_test = ""
        if case_timeout > 0 and self.case_timeout:
            per_test = self.case_timeout.format(seconds=f"{case_timeout:g}", ms=str(round(case_timeout * 1000)))
        return self.spectrum_command.format(
            focus=" ".join(f"--focus {shlex.quote(t)}" for t in focus), max_tests=max_tests,
            seconds=f"{seconds:g}", case_timeout=per_test, support=shlex.quote(support)).strip()


def load_template(name: str) -> EnvTemplate:
    """The template called `name`; SandboxError listing the known ones otherwise."""
    language = load_language(name)  # SandboxError listing the known ones for an unknown name
    folder = TEMPLATES_DIR / name
    try:
        data = tomllib.loads((folder / "template.toml").read_text(encoding="utf-8"))
        dockerfile = (folder / "Dockerfile").read_text(encoding="utf-8")
        return EnvTemplate(
            name=data["name"],
            language=language,
            description=data.get("description", ""),
            base=data["base"],
            dockerfile=dockerfile,
            test_command=data["test_command"],
            parser=data["parser"],
            package_manager=data["package_manager"],
            report=data.get("report", ""),
            setup=tuple(data.get("setup", [])),
            toolchain=tuple(data.get("toolchain", [])),
            tools=tuple(data.get("tools", [])),
            case_timeout=data.get("case_timeout", ""),
            case_timeout_probe=data.get("case_timeout_probe", ""),
            selects_tests=bool(data.get("selects_tests", False)),
            case_limits=bool(data.get("case_limits", False)),
            spectrum_command=data.get("spectrum_command", ""),
            collect_command=data.get("collect_command", ""),
            support=tuple((p.name, p.read_bytes()) for p in sorted(folder.iterdir())
                          if p.is_file() and p.name not in _RECIPE),
            env={str(k): str(v) for k, v in data.get("env", {}).items()},
        )
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise SandboxError(f"Template {name!r} in {folder} is broken ({exc!r}); reinstall greenloop.") from exc
