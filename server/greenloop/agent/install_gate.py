"""Whether a package may be installed: declared by the project, well known, or consented to; else refused.

A missing module or a model's install action names a package. It is installed when the project
declares it (declared.py), when the language's import-name table names it (`yaml` -> PyYAML, the
pipreqs mapping and the template's own entries), or with consent: `sandbox.install_undeclared =
"always"`, `sandbox.allow_install` (`greenloop fix --allow-install NAME`), or, with "ask", the
person's yes to the question a front end puts (`ask_user`, set by the editor for its runs; where
nobody can be asked, as in the CLI, "ask" is "never"). A refusal is a reason the loop passes on to
the model, and the run goes on with what it can do.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

from greenloop_sandbox.languages import Language
from greenloop_sandbox.packages import normal_name, package_name

Origin = Literal["declared", "mapped", "consented"]
AskUser = Callable[[str], Awaitable[bool]]  # the package's name -> the person's yes or no
# The front end's way to ask, for the run it drives (the editor sets it; the CLI asks nobody).
ask_user: ContextVar[AskUser | None] = ContextVar("greenloop_install_ask", default=None)
QUESTION = "install `{name}`, which this project does not declare?"


@dataclass
class GateDecision:
    """The specs to install, each with its origin, and the refused ones with the reason."""

    allowed: dict[str, Origin] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)


@dataclass
class InstallGate:
    """One run's rule for undeclared packages; answers are remembered for the run (asked once per name)."""

    policy: Literal["ask", "never", "always"] = "ask"
    allowed_names: frozenset[str] = frozenset()
    answers: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def of(cls, policy: Literal["ask", "never", "always"], allow: Sequence[str]) -> InstallGate:
        return cls(policy, frozenset(normal_name(n) for n in allow))

    async def decide(self, specs: Sequence[str], declared: Sequence[str], language: Language | None) -> GateDecision:
        decision = GateDecision()
        declared_names = {package_name(d) for d in declared}
        for spec in specs:
            name = package_name(spec)
            if name in declared_names:
                decision.allowed[spec] = "declared"
            elif language is not None and language.well_known(name):
                decision.allowed[spec] = "mapped"
            elif await self._consented(spec, name):
                decision.allowed[spec] = "consented"
            else:
                decision.refused[spec] = self._reason(spec)
        return decision

    async def _consented(self, spec: str, name: str) -> bool:
        if self.policy == "always" or name in self.allowed_names:
            return True
        ask = ask_user.get()
        if self.policy == "never" or ask is None:
            return False
        if name not in self.answers:
            self.answers[name] = await ask(spec)
        return self.answers[name]

    def _reason(self, spec: str) -> str:
        name = package_name(spec)
        asked = " (you said no)" if self.answers.get(name) is False else ""
        return (f"`{spec}` is not installed{asked}: the project does not declare it and it is no well-known "
                "package for a missing import (a typo, or a name registered to catch one?). Declare it in the "
                f"project's requirements, or allow it: `greenloop fix --allow-install {name}`, or "
                "sandbox.install_undeclared = \"ask\" (in the editor) or \"always\".")
