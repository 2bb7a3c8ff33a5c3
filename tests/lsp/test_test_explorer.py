"""Over stdio: the Testing view's requests, test discovery and per-test runs, with the local sandbox."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.lsp.conftest import EditorSide, copy_project, initialize, open_client, server_env
from tests.support.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")
CALC = "tests/test_calc.py"


def plain(value: Any) -> Any:
    """pygls' client reads an unknown method's answer as named tuples; the tests read dicts."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


async def discover(client: LanguageClient) -> dict[str, Any]:
    result: dict[str, Any] = plain(await client.protocol.send_request_async("greenloop/discoverTests", {}))
    return result


async def run_items(client: LanguageClient, test_ids: list[str] | None) -> dict[str, Any]:
    params = {"testIds": test_ids} if test_ids is not None else {}
    result: dict[str, Any] = plain(await client.protocol.send_request_async("greenloop/runTestItems", params))
    return result


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


async def test_discovery_lists_tests_with_files_lines_and_classes(local_client: LanguageClient, tmp_path: Path) -> None:
    root = copy_project("python-fail", tmp_path)
    await initialize(local_client, root)
    found = await discover(local_client)
    by_id = {t["id"]: t for t in found["tests"]}
    assert set(by_id) == {f"{CALC}::test_add", f"{CALC}::test_sub", f"{CALC}::TestDiv::test_div",
                          f"{CALC}::TestDiv::test_div_by_zero_message", f"{CALC}::test_later"}
    lines = (root / CALC).read_text().splitlines()
    method = by_id[f"{CALC}::TestDiv::test_div"]
    assert method["label"] == "test_div" and method["uri"] == (root / CALC).as_uri()
    assert lines[method["line"]].strip() == "def test_div(self):"
    assert (found["problems"], found["message"]) == ([], "")
    assert found["folderUri"] == root.as_uri()


async def test_no_tests_and_a_collection_error_are_messages(local_client: LanguageClient, tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"pyproject.toml": "[project]\nname = 'x'\nversion = '0'\n", "x.py": "X = 1\n"})
    await initialize(local_client, root)
    empty = await discover(local_client)
    assert empty["tests"] == [] and empty["problems"] == []
    assert "found no tests" in empty["message"]

    write(root, {
        "tests/test_ok.py": "import pytest\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_n(n):\n    assert n\n",
        "tests/test_broken.py": "import not_a_module_here\n\ndef test_b():\n    pass\n",
    })
    found = await discover(local_client)
    assert [t["id"] for t in found["tests"]] == ["tests/test_ok.py::test_n[1]", "tests/test_ok.py::test_n[2]"]
    assert [t["label"] for t in found["tests"]] == ["test_n[1]", "test_n[2]"]
    assert found["tests"][0]["line"] == 3  # the parametrized function's def
    [broken] = found["problems"]
    assert broken["id"] == "tests/test_broken.py" and broken["uri"] == (root / "tests/test_broken.py").as_uri()
    assert "not_a_module_here" in broken["message"] and "not_a_module_here" in broken["text"]


async def test_run_gives_diffs_places_frames_and_matching_diagnostics(
    local_client: LanguageClient, tmp_path: Path
) -> None:
    root = copy_project("python-fail", tmp_path)
    await initialize(local_client, root)
    sub, gone = f"{CALC}::test_sub", f"{CALC}::test_was_renamed"
    answer = await run_items(local_client, [sub, f"{CALC}::test_add", gone])
    assert answer["missing"] == [gone] and answer["scope"] == [sub, f"{CALC}::test_add", gone]
    results = {r["id"]: r for r in answer["results"]}
    assert set(results) == {sub, f"{CALC}::test_add"}
    assert results[f"{CALC}::test_add"]["outcome"] == "passed"
    failed = results[sub]
    assert failed["outcome"] == "failed"
    assert (failed["expected"], failed["actual"]) == ("2", "8")
    lines = (root / CALC).read_text().splitlines()
    assert failed["uri"] == (root / CALC).as_uri() and lines[failed["line"]].strip() == "assert result == 2"
    frame_files = {Path(f["uri"]).name for f in failed["frames"]}
    assert "test_calc.py" in frame_files, failed["frames"]
    # The test's diagnostic is at the same place as its result.
    diags = local_client.diagnostics[(root / CALC).as_uri()]
    [diag] = [d for d in diags if d.code == sub]
    assert diag.range.start.line == failed["line"]


async def test_run_of_only_vanished_ids_runs_nothing(local_client: LanguageClient, tmp_path: Path) -> None:
    root = copy_project("python-fail", tmp_path)
    await initialize(local_client, root)
    answer = await run_items(local_client, [f"{CALC}::test_gone"])
    assert (answer["results"], answer["missing"]) == ([], [f"{CALC}::test_gone"])
    with pytest.raises(JsonRpcException, match="testIds is empty"):
        await run_items(local_client, [])


async def test_runtests_command_announces_results(local_client: LanguageClient, tmp_path: Path) -> None:
    root = copy_project("python-fail", tmp_path)
    seen: list[Any] = []

    @local_client.feature("greenloop/testResults")
    def results(params: Any) -> None:
        seen.append(params)

    await initialize(local_client, root)
    await local_client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="greenloop.runTests", arguments=[{}])
    )
    for _ in range(50):
        if seen:
            break
        await asyncio.sleep(0.1)
    [params] = seen
    outcomes = {r.id: r.outcome for r in params.results}
    assert outcomes[f"{CALC}::test_sub"] == "failed" and outcomes[f"{CALC}::test_add"] == "passed"
    assert params.scope is None


async def test_two_folders_with_the_same_test_file_stay_apart(scripted_llm: ScriptedLLM, tmp_path: Path) -> None:
    test = "def test_x():\n    assert {} == 1\n"
    roots = [write(tmp_path / name, {"pyproject.toml": "", "tests/test_x.py": test.format(n)})
             for n, name in ((1, "a"), (2, "b"))]
    answers = []
    for root in roots:  # the extension runs one server per folder
        client = await open_client(server_env(scripted_llm, tmp_path, "local"), EditorSide())
        try:
            await initialize(client, root)
            answers.append((await discover(client), await run_items(client, ["tests/test_x.py::test_x"])))
        finally:
            await client.shutdown_session()
            await client.stop()
    (found_a, ran_a), (found_b, ran_b) = answers
    assert [t["id"] for t in found_a["tests"]] == [t["id"] for t in found_b["tests"]] == ["tests/test_x.py::test_x"]
    assert found_a["tests"][0]["uri"] == (roots[0] / "tests/test_x.py").as_uri()
    assert found_b["tests"][0]["uri"] == (roots[1] / "tests/test_x.py").as_uri()
    assert (ran_a["results"][0]["outcome"], ran_b["results"][0]["outcome"]) == ("passed", "failed")
    assert ran_b["folderUri"] == roots[1].as_uri()


def _processes_in(folder: Path) -> list[int]:
    """Processes whose working directory is under `folder` (the local sandbox runs tests in its temp dir)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd.startswith(str(folder)):
            found.append(int(pid))
    return found


def _pytest_running(folder: Path) -> bool:
    return any("pytest" in Path(f"/proc/{pid}/cmdline").read_text() for pid in _processes_in(folder))


async def test_cancelled_run_leaves_nothing_behind(scripted_llm: ScriptedLLM, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = server_env(scripted_llm, tmp_path, "local") | {"TMPDIR": str(scratch)}
    client = await open_client(env, EditorSide())
    try:
        root = write(tmp_path / "ws", {"pyproject.toml": "",
                                       "tests/test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(60)\n"})
        await initialize(client, root)
        request_id = "slow-run"
        future = client.protocol.send_request(
            "greenloop/runTestItems", {"testIds": ["tests/test_slow.py::test_slow"]}, msg_id=request_id
        )
        for _ in range(100):  # until the test itself runs in the sandbox
            if _pytest_running(scratch):
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("the test never started")
        # The Testing view's Stop: VS Code sends $/cancelRequest for the request.
        client.protocol.notify("$/cancelRequest", types.CancelParams(id=request_id))
        with pytest.raises(JsonRpcException, match="cancel"):
            await asyncio.wait_for(asyncio.wrap_future(future), 30)
        for _ in range(100):
            if not _processes_in(scratch) and not any(scratch.iterdir()):
                break
            await asyncio.sleep(0.1)
        assert _processes_in(scratch) == [] and list(scratch.iterdir()) == []
        # The server keeps serving.
        assert (await discover(client))["tests"][0]["id"] == "tests/test_slow.py::test_slow"
    finally:
        await client.shutdown_session()
        await client.stop()
