"""DebugPlan: the plan step's structured output (a public contract, see docs/design.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class EditAction(BaseModel):
    """Replace `search` (text now in the file) with `replace`."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["edit"] = "edit"
    path: str = Field(description="Workspace-relative path of an existing file.")
    search: str = Field(description="Exact text now in the file, a few lines with enough context to be unique.")
    replace: str = Field(description="The new text for those lines.")


class WriteAction(BaseModel):
    """Create or overwrite a whole file."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["write"] = "write"
    path: str = Field(description="Workspace-relative path.")
    content: str = Field(description="The whole file.")


class InstallAction(BaseModel):
    """Add packages to the test environment."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["install"] = "install"
    packages: list[str] = Field(min_length=1, description="Package specs, e.g. 'requests==2.32.3'.")


class RunAction(BaseModel):
    """A shell command run when the environment is built."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["run"] = "run"
    command: str = Field(min_length=1, description="Shell command.")


Action = Annotated[EditAction | WriteAction | InstallAction | RunAction, Field(discriminator="kind")]


class DebugPlan(BaseModel):
    """What is wrong, and the actions that fix it."""

    model_config = ConfigDict(extra="forbid")
    diagnosis: str = Field(description="One-paragraph summary of the cause.")
    actions: list[Action] = Field(description="Edits, writes, installs and commands, applied in order.")
