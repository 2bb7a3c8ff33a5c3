"""The ledger: everything one run changes as it goes, changed only through its methods.

The run's frozen context (`RunContext`: settings, ports, ids) holds one. A round is handed what it
reads of the ledger (a mapping, a set) and returns what it found; the strategy records that here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from greenloop.agent.events import InstalledPackage
from greenloop.agent.orchestration.history import History
from greenloop.agent.repair.value_conflict import Judged, Side


@dataclass
class Ledger:
    """Packages and commands the state holds, seeds handed out, the plan loop's history, the changes tested
    and what they gave, value verdicts, functions the model stood by, small edits tried, the green chosen."""

    seed_base: int
    history: History = field(default_factory=History)
    _packages: list[str] = field(default_factory=list)
    _installs: list[InstalledPackage] = field(default_factory=list)  # what `packages` put in, file by file
    _commands: list[str] = field(default_factory=list)
    _tested: dict[int, str] = field(default_factory=dict)  # a change's fingerprint -> what its tests gave
    _judged: Judged = field(default_factory=dict)  # a value conflict -> the side the request is on (settle.py)
    _stood_by: set[str] = field(default_factory=set)  # functions the model gave back unchanged, told the tests fail
    _small_edits: set[tuple[int, str]] = field(default_factory=set)  # (state, function) whose small edits ran
    _chosen: tuple[str, str, str] = ("", "", "")  # the green change: its kind, why it is risky, why it was chosen
    _beside: tuple[str, str] = ("", "")  # the other green change, offered beside the chosen one: its kind, diff
    _whole_suite: float | None = None  # the last whole-suite run's seconds (gates.py); None: none yet
    _seeds: int = 0

    def new_loop(self) -> None:
        """A fix loop's rounds start afresh (generation runs one loop per step in one run): the changes tested,
        verdicts, functions stood by and small edits tried were the last loop's. What the state holds stays."""
        self._tested.clear()
        self._judged.clear()
        self._stood_by.clear()
        self._small_edits.clear()

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(self._packages)

    @property
    def installs(self) -> tuple[InstalledPackage, ...]:
        return tuple(self._installs)

    @property
    def commands(self) -> tuple[str, ...]:
        return tuple(self._commands)

    def environment_changed(self, packages: Iterable[str] = (), commands: Iterable[str] = (),
                            installs: Iterable[InstalledPackage] = ()) -> None:
        """The state now holds these packages (each once), commands and installed distributions."""
        self._packages.extend(p for p in dict.fromkeys(packages) if p not in self._packages)
        self._installs.extend(installs)
        self._commands.extend(commands)

    def next_seed(self) -> int:
        """A seed no other call of this run has used (candidates are sampled apart, and recorded)."""
        self._seeds += 1
        return self.seed_base + 1000 + self._seeds

    @property
    def tested(self) -> Mapping[int, str]:
        """The changes tested so far (by fingerprint) and what their tests gave."""
        return MappingProxyType(self._tested)

    def record_tested(self, tested: Mapping[int, str]) -> None:
        self._tested.update(tested)

    @property
    def judged(self) -> Mapping[tuple[str, str, str], Side | None]:
        return MappingProxyType(self._judged)

    def record_judged(self, judged: Judged) -> None:
        self._judged.update(judged)

    @property
    def stood_by(self) -> frozenset[str]:
        return frozenset(self._stood_by)

    def stand_by(self, key: str) -> None:
        self._stood_by.add(key)

    @property
    def small_edits_tried(self) -> frozenset[tuple[int, str]]:
        return frozenset(self._small_edits)

    def tried_small_edits(self, key: tuple[int, str]) -> None:
        self._small_edits.add(key)

    @property
    def chosen(self) -> tuple[str, str, str]:
        return self._chosen

    def chose(self, kind: str, risk: str, reason: str, beside: tuple[str, str] = ("", "")) -> None:
        """Keep what the change set says of the green change (risk.py, second_look.py), and the other green
        change offered beside it (its kind and diff; own_round.py)."""
        self._chosen, self._beside = (kind, risk, reason), beside

    @property
    def beside(self) -> tuple[str, str]:
        return self._beside

    @property
    def whole_suite_seconds(self) -> float | None:
        return self._whole_suite

    def whole_suite_took(self, seconds: float | None) -> None:
        """The last whole-suite run's time (inf: it did not end within the gate's limit)."""
        self._whole_suite = seconds
