"""The extension's protocol.ts is generated from protocol.py, and the checked-in file is current."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from greenloop.lsp import protocol as p
from greenloop.lsp import protocol_ts, wire
from greenloop.lsp.protocol_ts import COMMAND, TS_PATH, main, render


def test_the_extension_protocol_mirrors_the_server() -> None:
    assert TS_PATH.read_text(encoding="utf-8") == render(), (
        f"vscode-extension/src/protocol.ts differs from server/greenloop/lsp/protocol.py: "
        f"run `{COMMAND}` in vscode-extension"
    )


def test_check_mode_fails_on_a_stale_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "protocol.ts"
    out.write_text("// old\n")
    assert main(["--check", "--out", str(out)]) == 1
    assert COMMAND in capsys.readouterr().err
    assert main(["--out", str(out)]) == 0
    assert main(["--check", "--out", str(out)]) == 0


def test_nulls_and_omissions_follow_who_writes_the_class() -> None:
    text = render()
    # The server writes every field (to_json keeps None), so nothing it sends is optional.
    assert wire.to_json(p.LoopEventParams(run_id="r", kind="k", text="t"))["iteration"] is None
    assert "  iteration: number | null;\n" in text
    assert "  edit: WorkspaceEdit | null;\n" in text
    # What only the server reads may leave out a field with a default, or send null where None is allowed.
    assert wire.parse(p.FixArgs, {"testIds": None}, what="x").test_ids is None
    assert "  testIds?: string[] | null;\n" in text
    assert "  limit?: number;\n" in text
    assert "export type Template = 'python' | 'node' | 'rust';\n" in text and "  template: Template;\n" in text
    assert "import type { Range, WorkspaceEdit } from 'vscode-languageclient';\n" in text
    assert "LoopEventNotification" not in text  # JSON-RPC envelopes stay on the server


def test_an_annotation_without_a_typescript_type_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    @attrs.define
    class Odd:
        when: complex

    attrs.resolve_types(Odd)
    Odd.__module__ = p.__name__
    monkeypatch.setattr(p, "Odd", Odd, raising=False)
    monkeypatch.setitem(p.COMMAND_TYPES, p.CMD_CANCEL, (Odd, p.CancelResult))
    with pytest.raises(TypeError, match="no TypeScript type"):
        protocol_ts.render()
