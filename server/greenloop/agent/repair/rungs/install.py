"""Rung "install": a module the code imports that is not installed (and the project does not hold), asked of no model.

Its first candidate installs the package with the project's declared requirements (declared.py) that
are not installed yet; when that install is refused, the second installs the missing one alone. A
test fixture that a known test-runner plugin gives (pytest's `fixture 'mocker' not found`) is the
plugin's package. An undeclared package needs consent (install_gate.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import DebugPlan, InstallAction
from greenloop.agent.prompting.shows import RequestShows
from greenloop.agent.repair.approach import Approach, Form
from greenloop.agent.repair.ladder_rung import LadderState, Rung
from greenloop.agent.repair.rungs.blocks import BLOCKS
from greenloop.agent.repair.splice import Target
from greenloop.retrieval import RepoIndex
from greenloop_sandbox import TestReport
from greenloop_sandbox.languages import languages
from greenloop_sandbox.packages import package_name

if TYPE_CHECKING:
    from greenloop.agent.repair.tried import Tried


@dataclass(frozen=True)
class InstallForm(Form):
    """The package (and the declared ones) installed in the candidate's environment; no model is asked."""

    package: str = ""
    declared: tuple[str, ...] = ()  # the first candidate installs these too (declared.py)
    route = "install"
    asks_model = False
    changes_files = False  # an install changes no file: what it installed tells two installs apart
    changes_environment = True

    def label(self, approach: Approach) -> str:
        return f"install {self.package}" + (f" and the {len(self.declared)} declared" if self.declared else "")

    def kind_of(self, approach: Approach, index: int) -> str:
        return "install"

    def count(self, approach: Approach, asked: int) -> int:
        return 2 if self.declared else 1  # the declared packages with the missing one, then it alone

    def variant(self, approach: Approach, index: int, tried: Sequence[Tried]) -> Approach | None:
        if index == 1:
            return approach
        if not (tried and tried[-1].index == index - 1 and tried[-1].status == "rejected"):
            return None  # the declared packages installed: the missing one alone is no other candidate
        return replace(approach, form=replace(self, declared=()))

    def module(self, approach: Approach) -> str:
        return approach.target.name

    def prompt(self, approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
               values: dict[str, str], workspace: Path, *, shows: RequestShows | None = None) -> str:
        return BLOCKS.prompt(approach, copy, index, report, tests, values, workspace, shows=shows)  # measured, never sent

    def read(self, approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool]) -> DebugPlan:
        packages = [self.package, *self.declared]
        return DebugPlan(diagnosis=f"install {' '.join(packages)}", actions=[InstallAction(packages=packages)])


class Install(Rung):
    name = "install"

    def applies(self, state: LadderState) -> list[Approach]:
        missing, package, language = _missing_module(state.report, state.copy)
        if not missing:
            return []
        also = tuple(p for p in state.declared if package_name(p) != package_name(package)) \
            if language == "python" else ()
        return [Approach(InstallForm(package, also), Target("", missing, "module", 0, 0), "a module is not installed")]


def _own_modules(copy: WorkingCopy) -> set[str]:
    names: set[str] = set()
    for path in copy.paths():
        names.update(p.removesuffix(".py") for p in PurePosixPath(path).parts)
    return names


def _missing_module(report: TestReport, copy: WorkingCopy) -> tuple[str, str, str]:
    """(module, package, language) for the first module a failure says is not installed (by its
    language's message) and the project does not hold itself, or for a test fixture that a known
    test-runner plugin gives (pytest's `fixture 'mocker' not found` -> pytest-mock); ("", "", "")
    when there is none."""
    own = _own_modules(copy)
    for failure in report.failures:
        text = f"{failure.message}\n{failure.traceback}"
        for language in languages():
            match = re.search(language.missing_module, text) if language.missing_module else None
            module = match.group(1).split(".")[0] if match else ""
            if module and module not in own:
                return module, language.package_for(module), language.name
            fixture = re.search(language.missing_fixture, text) if language.missing_fixture else None
            if fixture and (plugin := language.fixtures.get(fixture.group(1))):
                return fixture.group(1), plugin, language.name
    return "", "", ""


RUNG = Install()
