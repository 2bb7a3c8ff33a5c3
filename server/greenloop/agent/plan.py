"""DebugPlan: the plan step's structured output (a public contract, see docs/design.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# Which field gives away an action's kind when a model leaves `kind` out.
_KIND_BY_FIELD = (("search", "edit"), ("replace", "edit"), ("content", "write"), ("packages", "install"),
                  ("command", "run"))


def _kind_is_required(schema: dict[str, Any]) -> None:
    """In the JSON schema `kind` is required, without a default: schema-constrained decoders must emit it.

    (In Python it keeps its default, so `EditAction(path=..., ...)` needs no kind.)
    """
    schema["properties"]["kind"].pop("default", None)
    schema["required"] = ["kind", *[r for r in schema.get("required", []) if r != "kind"]]


_ACTION_CONFIG = ConfigDict(extra="forbid", json_schema_extra=_kind_is_required)


class EditAction(BaseModel):
    """Replace `search` (text now in the file) with `replace`."""

    model_config = _ACTION_CONFIG
    kind: Literal["edit"] = "edit"
    path: str = Field(description="Workspace-relative path of an existing file.")
    search: str = Field(description="Exact text now in the file, a few lines with enough context to be unique.")
    replace: str = Field(description="The new text for those lines.")


class WriteAction(BaseModel):
    """Create or overwrite a whole file."""

    model_config = _ACTION_CONFIG
    kind: Literal["write"] = "write"
    path: str = Field(description="Workspace-relative path.")
    content: str = Field(description="The whole file.")


class InstallAction(BaseModel):
    """Add packages to the test environment."""

    model_config = _ACTION_CONFIG
    kind: Literal["install"] = "install"
    # no example package here: docs/decisions/2026-11-plan-json-schemas-and-examples.md
    packages: list[str] = Field(
        min_length=1, description="Packages the code imports that are not installed: `name` or `name==version`."
    )


class RunAction(BaseModel):
    """A shell command run when the environment is built."""

    model_config = _ACTION_CONFIG
    kind: Literal["run"] = "run"
    command: str = Field(min_length=1, description="Shell command.")


Action = Annotated[EditAction | WriteAction | InstallAction | RunAction, Field(discriminator="kind")]


class DebugPlan(BaseModel):
    """What is wrong, and the actions that fix it."""

    model_config = ConfigDict(extra="forbid")
    diagnosis: str = Field(description="One-paragraph summary of the cause.")
    actions: list[Action] = Field(description="Edits, writes, installs and commands, applied in order.")

    @field_validator("actions", mode="before")
    @classmethod
    def _infer_missing_kinds(cls, value: Any) -> Any:
        """An action without `kind` whose fields say what it is (small models drop it) gets that kind."""
        if not isinstance(value, list):
            return value
        return [_with_kind(item) for item in value]


def _with_kind(item: Any) -> Any:
    if not isinstance(item, dict) or "kind" in item:
        return item
    kind = next((k for name, k in _KIND_BY_FIELD if name in item), None)
    return {"kind": kind, **item} if kind else item
