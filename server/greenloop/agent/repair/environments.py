"""A round's candidates' environment changes (installs) tried apart: each on the state's environment, kept only
when the state moves to that candidate.

The files of a candidate are a fork of the working copy; its install goes into the warm sandbox, so
the sandbox's environment is marked before it (`SandboxPort.environment`: the image a Docker sandbox
runs, hard-linked folders for the local one) and put back before the next candidate is tested, and at
the round's end unless the state moves to the candidate; the best candidate's own environment is put
back for its whole-suite run.
"""

from __future__ import annotations

from greenloop.agent.ports import EnvironmentMark, SandboxPort


class CandidateEnvironments:
    """The state's environment mark, each changing candidate's, and which of them the sandbox has now."""

    def __init__(self, sandbox: SandboxPort) -> None:
        self.sandbox = sandbox
        self.state: EnvironmentMark | None = None  # the environment as the state has it
        self.marks: dict[int, EnvironmentMark] = {}  # a candidate's index -> its environment
        self.current: int | None = None  # the candidate whose environment the sandbox has (None: the state's)

    async def before(self, changes_environment: bool) -> None:
        """Before a candidate is applied: the state's environment marked (once) when it may change it, and
        put back when an earlier candidate changed it."""
        if changes_environment and self.state is None:
            self.state = await self.sandbox.environment()
        await self.to_state()

    async def applied(self, index: int, changed: bool) -> None:
        """After candidate `index` was applied: its environment marked when it changed it."""
        if changed:
            self.marks[index] = await self.sandbox.environment()
            self.current = index

    async def to_candidate(self, index: int) -> None:
        """The sandbox with candidate `index`'s environment (the state's, when it changed none)."""
        if index not in self.marks:
            await self.to_state()
        elif self.current != index:
            await self.sandbox.restore_environment(self.marks[index])
            self.current = index

    async def to_state(self) -> None:
        """The sandbox with the state's environment."""
        if self.current is not None and self.state is not None:
            await self.sandbox.restore_environment(self.state)
        self.current = None

    @property
    def changed(self) -> bool:
        """A candidate's environment is in the sandbox now (its tests must end before the next is applied)."""
        return self.current is not None
