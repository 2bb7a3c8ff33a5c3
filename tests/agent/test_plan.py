"""DebugPlan: the JSON schema a model is held to, and the slips it forgives."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from greenloop.agent.plan import DebugPlan, EditAction


def test_every_action_requires_its_kind_in_the_schema() -> None:
    # schema-constrained decoders (llama.cpp's json_object + schema) may drop optional fields
    defs = DebugPlan.model_json_schema()["$defs"]
    for name in ("EditAction", "WriteAction", "InstallAction", "RunAction"):
        assert defs[name]["required"][0] == "kind", name
        assert "default" not in defs[name]["properties"]["kind"], name
    assert EditAction(path="a.py", search="x", replace="y").kind == "edit"  # Python keeps the default


def test_a_missing_kind_is_inferred_from_the_fields() -> None:
    plan = DebugPlan.model_validate(
        {"diagnosis": "d", "actions": [
            {"path": "a.py", "search": "x = 1", "replace": "x = 2"},
            {"path": "b.py", "content": "print()\n"},
            {"packages": ["requests==2.32.3"]},
            {"command": "make"},
        ]}
    )
    assert [a.kind for a in plan.actions] == ["edit", "write", "install", "run"]


def test_an_action_that_says_nothing_about_its_kind_is_still_refused() -> None:
    with pytest.raises(ValidationError, match="discriminator"):
        DebugPlan.model_validate({"diagnosis": "d", "actions": [{"path": "a.py"}]})
    with pytest.raises(ValidationError):
        DebugPlan.model_validate({"diagnosis": "d", "actions": [{"kind": "edit", "path": "a.py", "content": "x"}]})
