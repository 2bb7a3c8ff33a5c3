"""The test tool refusing the project's own configuration: an option (`addopts`) of a plugin that is not installed.

pytest exits with a usage error and runs no test (`error: unrecognized arguments: --cov=pkg`, `inifile:
tox.ini`) when the project's configuration passes an option of a plugin the sandbox lacks. `read` finds that
in the first run (the language record's `unknown_option`) with the configuration file and the line that
passes the option; `plugins` names the plugin of each option (`[language.options]`: the option itself, or
one that begins with it and "-"). The step installs a plugin the project declares somewhere (a requirements
file, tox.ini deps, a dependency group, Pipfile) and runs the tests again; an undeclared one needs the user's
consent, so the run stops with the plugin to declare. No file of the user's changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import EnvironmentIssue
from greenloop_sandbox.languages import Language
from greenloop_sandbox.packages import normal_name
from greenloop_sandbox.parsers.common import runner_message
from greenloop_sandbox.report import TestReport

_CONFIG = re.compile(r"(?:inifile|configfile):\s*(\S+)")
_DECLARING = ("tox.ini", "pyproject.toml", "setup.cfg", "setup.py", "Pipfile", "environment.yml")


@dataclass(frozen=True)
class OptionsRefused:
    """The options the test tool did not know, the configuration file passing them (workspace path) and its line."""

    options: tuple[str, ...]
    message: str
    file: str | None = None
    line: int | None = None

    def issue(self, fix: str) -> EnvironmentIssue:
        return EnvironmentIssue(problem="test_config", file=self.file, line=self.line, message=self.message, fix=fix)


def read(report: TestReport, language: Language, copy: WorkingCopy) -> OptionsRefused | None:
    """The test tool's refusal of options when no test ran; None otherwise."""
    if not language.unknown_option or report.cases:
        return None
    for failure in report.failures:
        text = f"{failure.message}\n{failure.traceback}\n{report.raw}"
        found = re.search(language.unknown_option, text)
        if found is None:
            continue
        options = tuple(found[1].split())
        said = runner_message(text) or found[0]
        config = _CONFIG.search(text)
        file = config[1].removeprefix("/workspace/") if config else None
        if file is not None and copy.read(file) is None:
            file = None
        return OptionsRefused(options, said if found[0] in said else found[0], file, _line(copy, file, options))
    return None


def plugins(options: tuple[str, ...], language: Language) -> dict[str, str]:
    """Option -> the plugin giving it, for the options the language record knows."""
    found: dict[str, str] = {}
    for option in options:
        flag = option.split("=", 1)[0]
        keys = [k for k in language.options if flag == k or flag.startswith(k + "-")]
        if keys:
            found[option] = language.options[max(keys, key=len)]
    return found


def declaring_file(copy: WorkingCopy, plugin: str) -> str:
    """The project file that names `plugin` as a requirement (its test requirements, tox.ini deps, a dependency
    group...); "" when none does."""
    pattern = re.compile(rf"(?<![\w.-]){normal_name(plugin).replace('_', '[-_.]')}(?![\w.-])", re.I)
    for path in sorted(copy.paths()):
        name = PurePosixPath(path).name
        listed = (name.endswith(".txt") and "requirements" in path.lower()) or name in _DECLARING
        if listed and pattern.search(copy.read(path) or ""):
            return path
    return ""


def spec_in(copy: WorkingCopy, path: str, plugin: str) -> str:
    """The plugin's requirement as `path` writes it (`pytest-cov>=2.0,<3.0`), else its bare name."""
    pattern = rf"(?<![\w.-]){normal_name(plugin).replace('_', '[-_.]')}(?![\w.])[^\s'\";#]*"
    for found in re.finditer(pattern, copy.read(path) or "", re.I):
        try:
            return str(Requirement(found[0].rstrip(",")))
        except InvalidRequirement:
            continue
    return plugin


def _line(copy: WorkingCopy, file: str | None, options: tuple[str, ...]) -> int | None:
    if file is None or not options:
        return None
    flag = options[0].split("=", 1)[0]
    for number, text in enumerate((copy.read(file) or "").splitlines(), 1):
        if flag in text:
            return number
    return None
