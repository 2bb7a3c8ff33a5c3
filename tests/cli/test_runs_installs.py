"""`greenloop runs show` lists what a run installed: package, version, origin, where it was built, hash."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from greenloop.agent.events import EnvironmentChanged, InstalledPackage
from greenloop.cli import main
from greenloop.run_records import RunStore


def test_runs_show_lists_every_install_with_its_origin_and_hash(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # the table's cells unwrapped
    store_path = tmp_path / "runs.sqlite3"
    built = InstalledPackage(name="glmarker", version="1.0", filename="glmarker-1.0.tar.gz", sha256="ab" * 32,
                             origin="consented", built="sandbox")
    wheel = InstalledPackage(name="six", version="1.16.0", filename="six-1.16.0-py2.py3-none-any.whl",
                             sha256="cd" * 32, origin="declared")
    event = EnvironmentChanged(run_id="r1", iteration=1, action="install", detail="glmarker six", ok=True,
                               installed=[built, wheel])
    with RunStore.open(store_path) as store:
        store.start_run("r1", mode="fix", workspace=str(tmp_path), config={}, seed=1, model="m", started_at=time.time())
        store.add_event("r1", event.model_dump(mode="json"))
    capsys.readouterr()
    assert main(["runs", "-C", str(tmp_path), "--store", str(store_path), "show", "r1"]) == 0
    out = capsys.readouterr().out
    assert "installs" in out and "consented" in out and "declared" in out
    assert "in the sandbox, from its sdist" in out and "wheel from the index" in out and "abab" in out
