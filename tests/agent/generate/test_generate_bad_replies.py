"""Bad model replies during generation: broken plans are repaired or refused, prose is re-asked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent.generate import GenerateRequest, generate
from tests.agent.conftest import collect, plan
from tests.agent.generate.conftest import (
    WC_FILES,
    WC_INTERFACES,
    WC_PLAN,
    asked_path,
    file_oracle,
    plan_json,
    planned,
    tree,
)
from tests.support.scripted_llm import Reply, server_error


@pytest.fixture
def make_settings(plan_strategy: Any) -> Any:
    """These tests script the fix loop's plan strategy (one JSON DebugPlan per iteration)."""
    return plan_strategy


PROSE = "Sure! This module defines count_words, which splits the text and counts the parts."
BROKEN = "```python\ndef count_words(text: str) -> int:\n    return len(text.split()\n```\n"  # cut off
GOOD = {**WC_FILES, "wordcount/core.py": "def count_words(text: str) -> int:\n    return len(text.split())\n"}


def local(make_settings: Any, tmp_path: Path, **sections: dict[str, Any]) -> Any:
    sections["loop"] = {"diagnosis": False, **sections.get("loop", {})}
    return make_settings(tmp_path, backend="local", **sections)


def script_steps(scripted_llm: Any, interfaces: Any, plan: Any, files: Any) -> None:
    """Script the three generation steps' replies: interfaces, plan, each file."""
    scripted_llm.script(interfaces, step="generate_interfaces")
    scripted_llm.script(plan, step="generate_plan")
    scripted_llm.script(files, step="generate_file")


def script_odd_files(scripted_llm: Any, odd: dict[str, list[str]]) -> None:
    """The word counter's interfaces and plan, and its files with the `odd` replies first, per path."""
    script_steps(scripted_llm, WC_INTERFACES, WC_PLAN, file_oracle(GOOD, first=odd))


async def generated_green(scripted_llm: Any, make_settings: Any, tmp_path: Path, odd: dict[str, list[str]]) -> Path:
    """The word counter generated through the `odd` replies; it must end green. The output folder."""
    script_odd_files(scripted_llm, odd)
    out = tmp_path / "out"
    _, done = await collect(generate(GenerateRequest("a word counter", out), local(make_settings, tmp_path)))
    assert done.outcome == "green", done.summary + done.evidence
    return out


def asks_for(scripted_llm: Any, path: str) -> list[Any]:
    """The requests for one file, in order."""
    return [r for r in scripted_llm.requests_for("generate_file") if asked_path(r.body) == path]


async def test_escaping_and_placeholder_paths_go_back_to_the_model(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    placeholder = plan_json(planned("<package>/core.py"), planned("tests/test_core.py", test=True))
    escaping = plan_json(planned("../outside.py"), planned("tests/test_core.py", test=True))
    scripted_llm.script(WC_INTERFACES, step="generate_interfaces")
    scripted_llm.script(placeholder, escaping, WC_PLAN, step="generate_plan", repeat=False)
    scripted_llm.script(file_oracle(GOOD), step="generate_file")
    out = tmp_path / "out"
    settings = local(make_settings, tmp_path, llm={"repair_attempts": 2})
    _, done = await collect(generate(GenerateRequest("a word counter", out), settings))

    assert done.outcome == "green", done.summary + done.evidence
    asks = scripted_llm.requests_for("generate_plan")
    assert len(asks) == 3
    assert "is a placeholder; name the real file" in json.dumps(asks[1].messages)
    assert "escapes the project folder" in json.dumps(asks[2].messages)
    assert not (tmp_path / "outside.py").exists()


async def test_a_plan_for_another_language_is_refused_and_nothing_is_written(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    rust = plan_json(planned("src/lib.rs"), planned("tests/it.rs", test=True))
    scripted_llm.script(WC_INTERFACES, step="generate_interfaces")
    scripted_llm.script(rust, step="generate_plan")
    out = tmp_path / "out"
    settings = local(make_settings, tmp_path, llm={"repair_attempts": 1})
    _, done = await collect(generate(GenerateRequest("a rust crate that counts words", out), settings))

    assert done.outcome == "error"
    assert "template is python" in done.summary and "src/lib.rs (rust)" in done.summary
    assert "Nothing was written" in done.summary
    assert tree(out) == {}
    assert not scripted_llm.requests_for("generate_file")


async def test_looping_fenced_interfaces_are_cleaned_and_empty_ones_refused(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    loop_line = "- `count_words(text: str) -> int`: number of words in text"
    looping = f"```markdown\n## wordcount/core.py\n{loop_line}\n" + f"{loop_line}\n" * 40 + "```"
    empty = "```markdown\n\n```"
    scripted_llm.script(looping, empty, "## wordcount/core.py\n", step="generate_interfaces", repeat=False)
    scripted_llm.script(WC_PLAN, step="generate_plan")
    scripted_llm.script(file_oracle(GOOD), step="generate_file")
    out = tmp_path / "out"
    _, done = await collect(generate(GenerateRequest("a word counter", out), local(make_settings, tmp_path)))

    assert done.outcome == "green", done.summary + done.evidence
    plan_prompt = scripted_llm.requests_for("generate_plan")[0].messages[-1]["content"]
    assert plan_prompt.count(loop_line) == 1 and "```" not in plan_prompt.split("## Interfaces")[1][:40]
    assert tree(out)[".greenloop/plan.md"].count(loop_line) == 1

    again = tmp_path / "again"
    _, done = await collect(generate(GenerateRequest("a word counter", again), local(make_settings, tmp_path)))
    assert done.outcome == "error" and "wrote no interfaces" in done.summary
    assert len(scripted_llm.requests_for("generate_plan")) == 1  # no file list without interfaces
    assert tree(again) == {}


async def test_prose_is_re_asked_and_fenced_code_extracted(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    out = await generated_green(scripted_llm, make_settings, tmp_path, {"wordcount/core.py": [PROSE]})
    core_asks = asks_for(scripted_llm, "wordcount/core.py")
    assert len(core_asks) == 2
    assert "was prose, not the file's code" in core_asks[1].messages[-1]["content"]
    assert tree(out)["wordcount/core.py"] == GOOD["wordcount/core.py"]


async def test_code_that_does_not_parse_is_asked_again_and_kept_only_as_a_last_resort(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # a manifest where a module was asked for (the 0.5B model, for fizzbuzz.py), then a cut-off module
    manifest = '```python\n[tool.poetry]\nname = "app"\npytest-cov = "^2.18.1"\n```\n'
    out = await generated_green(scripted_llm, make_settings, tmp_path, {"wordcount/core.py": [manifest, BROKEN]})
    core_asks = asks_for(scripted_llm, "wordcount/core.py")
    assert len(core_asks) == 3
    assert "it does not parse (a syntax error at line 3)" in core_asks[1].messages[-1]["content"]
    assert [m["role"] for m in core_asks[2].messages] == ["system", "user"]
    assert tree(out)["wordcount/core.py"] == GOOD["wordcount/core.py"]


async def test_a_test_file_cut_off_at_the_limit_keeps_its_whole_part_without_asking_again(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the 1.5B model's slugify test wrote asserts until the token limit, twice (bf93d33): asking again
    # cost 585 s; the whole tests above the cut are a test file
    cut = GOOD["tests/test_core.py"] + '\n\ndef test_more():\n    assert count_words("a b") == 2\n    assert count_words("x y'
    out = await generated_green(scripted_llm, make_settings, tmp_path, {"tests/test_core.py": [f"```python\n{cut}"]})
    assert len(asks_for(scripted_llm, "tests/test_core.py")) == 1
    assert tree(out)["tests/test_core.py"] == cut.rsplit("\n", 1)[0] + "\n"
    # a test file broken in its first half is asked again, as before
    early = 'from wordcount.core import count_words\n\n\ndef test_a(:\n    pass\n' + GOOD["tests/test_core.py"]
    scripted_llm.reset()
    again = await generated_green(scripted_llm, make_settings, tmp_path / "again",
                                  {"tests/test_core.py": [f"```python\n{early}\n```\n"]})
    assert len(asks_for(scripted_llm, "tests/test_core.py")) == 2
    assert tree(again)["tests/test_core.py"] == GOOD["tests/test_core.py"]


async def test_a_test_file_cut_after_a_block_opener_keeps_its_whole_part(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the 1.5B model's bank test repeated `with pytest.raises(...)` blocks until the limit (2026-12-07); the cut
    # fell after a `with ...:` line, which tree-sitter takes without an error and Python refuses: the file was
    # kept whole and did not collect, and three rounds went to it
    head = GOOD["tests/test_core.py"] + "\n\ndef test_more():\n    with pytest.raises(AttributeError):\n        count_words(1)\n"
    cut = "import pytest\n" + head + "    with pytest.raises(AttributeError):\n"
    out = await generated_green(scripted_llm, make_settings, tmp_path, {"tests/test_core.py": [f"```python\n{cut}"]})
    assert len(asks_for(scripted_llm, "tests/test_core.py")) == 1
    assert tree(out)["tests/test_core.py"] == "import pytest\n" + head


async def test_example_code_at_the_end_of_a_module_does_not_run_when_the_tests_import_it(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the 0.5B model ended word-count's module with example calls that failed on import, so every
    # test errored at collection; the mend needs no model call (no debug plan is scripted)
    example = "\n\n# Example usage\nprint(count_words(None))\n"
    reply = f"```python\n{GOOD['wordcount/core.py']}{example}```\n"
    out = await generated_green(scripted_llm, make_settings, tmp_path, {"wordcount/core.py": [reply]})
    core = tree(out)["wordcount/core.py"]
    assert core.startswith(GOOD["wordcount/core.py"])
    assert core.endswith('if __name__ == "__main__":\n    # Example usage\n    print(count_words(None))\n')
    assert not scripted_llm.requests_for("debug_plan")


async def test_the_file_list_names_the_manifest_last_as_greenloops_own(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # listed first, `pyproject.toml: Project manifest` primed the 0.5B model to write it as fizzbuzz.py
    await generated_green(scripted_llm, make_settings, tmp_path, {})
    for path in ("wordcount/core.py", "tests/test_core.py"):
        files = asks_for(scripted_llm, path)[0].messages[-1]["content"].split("### Files\n", 1)[1].split("\n\n", 1)[0]
        listed = [line.split("`")[1] for line in files.splitlines() if line.startswith("- `")]
        assert listed == ["wordcount/__init__.py", "wordcount/core.py", "tests/test_core.py", "pyproject.toml"], files
        assert "- `pyproject.toml`: written by greenloop, not by you." in files


async def test_the_last_reply_that_only_fails_to_parse_goes_to_the_fix_loop(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    close = {"kind": "edit", "path": "wordcount/core.py", "search": "text.split()\n", "replace": "text.split())\n"}
    scripted_llm.script(plan(close, diagnosis="a parenthesis is missing"), step="debug_plan")
    # better than no project at all: the files are written and the fix loop repairs the syntax error
    out = await generated_green(scripted_llm, make_settings, tmp_path, {"wordcount/core.py": [BROKEN, PROSE, PROSE]})
    (fix_ask,) = scripted_llm.requests_for("debug_plan")
    assert "SyntaxError" in fix_ask.messages[-1]["content"]
    assert tree(out)["wordcount/core.py"] == GOOD["wordcount/core.py"]


async def test_a_model_server_failing_in_the_fix_loop_leaves_the_generated_files(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the embedded server dropped a request over its context window: "Nothing was written" lost the project
    script_steps(scripted_llm, WC_INTERFACES, WC_PLAN, file_oracle(WC_FILES))
    scripted_llm.script(server_error(500), step="debug_plan")
    out = tmp_path / "out"
    _, done = await collect(generate(GenerateRequest("a word counter", out), local(make_settings, tmp_path)))

    assert done.outcome == "error"
    assert tree(out)["wordcount/core.py"] == WC_FILES["wordcount/core.py"]
    assert set(WC_FILES) <= set(tree(out))
    assert "the model call failed" in done.summary and f"greenloop fix {out}" in done.summary


async def test_a_test_file_that_does_not_test_the_code_is_asked_again_or_mended(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # Qwen2.5-Coder 0.5B, asked for a test file, answered with the module under test again, then
    # with its own copy of the functions and tests of that copy (green, whatever the real code does)
    code_again = f"```python\n{GOOD['wordcount/core.py']}```\n"
    test = "def test_counts():\n    assert count_words('a b') == 2\n"
    own_copy = f"```python\nimport pytest\n\n\n{GOOD['wordcount/core.py']}\n\n{test}```"
    odd = {"tests/test_core.py": [code_again, own_copy]}
    out = await generated_green(scripted_llm, make_settings, tmp_path, odd)
    test_asks = asks_for(scripted_llm, "tests/test_core.py")
    assert len(test_asks) == 2
    # a repair is asked afresh, without the unusable reply (shown it, the 0.5B model sent it back)
    assert [m["role"] for m in test_asks[1].messages] == ["system", "user"]
    assert "holds no test; write pytest functions named `test_...`" in str(test_asks[1].messages[-1]["content"])
    # and with the next seed: the same prompt and seed got the same reply from llama.cpp
    assert test_asks[1].body["seed"] == test_asks[0].body["seed"] + 1
    # the copy is removed by greenloop and the real code imported: the test tests wordcount/core.py
    assert tree(out)["tests/test_core.py"] == f"import pytest\nfrom wordcount.core import count_words\n\n\n{test}"


async def test_a_test_file_missing_only_its_import_gets_it_from_greenloop(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the 0.5B model wrote sound tests of the code without importing it, and repeated that on every repair
    no_import = "# tests of the counter\nimport pytest\n\n\ndef test_counts():\n    assert count_words('a b') == 2\n"
    plan = plan_json(
        planned("wordcount/core.py"),
        planned("tests/test_core.py", depends_on=("wordcount/core.py", "pyproject.toml"), test=True),
    )
    script_steps(scripted_llm, WC_INTERFACES, plan, file_oracle({**GOOD, "tests/test_core.py": no_import}))
    out = tmp_path / "out"
    _, done = await collect(generate(GenerateRequest("a word counter", out), local(make_settings, tmp_path)))

    assert done.outcome == "green", done.summary + done.evidence
    assert tree(out)["tests/test_core.py"] == (
        "# tests of the counter\nimport pytest\nfrom wordcount.core import count_words\n\n\n"
        "def test_counts():\n    assert count_words('a b') == 2\n"
    )
    test_asks = asks_for(scripted_llm, "tests/test_core.py")
    assert len(test_asks) == 1
    assert "```toml" not in str(test_asks[0].messages)  # the manifest greenloop writes is not shown


async def test_interfaces_with_headings_only_are_asked_for_once_more(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    headings_only = "## wordcount/core.py\n```\n\n## Data\n```\n"
    scripted_llm.script(headings_only, WC_INTERFACES, step="generate_interfaces", repeat=False)
    scripted_llm.script(WC_PLAN, step="generate_plan")
    scripted_llm.script(file_oracle(GOOD), step="generate_file")
    out = tmp_path / "out"
    _, done = await collect(generate(GenerateRequest("a word counter", out), local(make_settings, tmp_path)))

    assert done.outcome == "green", done.summary + done.evidence
    asks = scripted_llm.requests_for("generate_interfaces")
    assert len(asks) == 2 and "held headings but no signatures" in asks[1].messages[-1]["content"]
    assert WC_INTERFACES in tree(out)[".greenloop/plan.md"]


async def test_a_file_the_model_never_returns_ends_with_a_clear_error(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    script_odd_files(scripted_llm, {"tests/test_core.py": ["", "  ", "\n"]})
    out = tmp_path / "out"
    settings = local(make_settings, tmp_path, generate={"file_attempts": 3})
    _, done = await collect(generate(GenerateRequest("a word counter", out), settings))

    assert done.outcome == "error"
    assert "never returned the content of tests/test_core.py" in done.summary
    assert "except the plan (.greenloop/plan.md" in done.summary
    assert sorted(tree(out)) == [".greenloop/plan.md"]  # no half-written project
    assert done.changes.files == []


async def test_files_are_generated_a_bounded_number_at_a_time_dependencies_first(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    files = {f"m{i}.py": f"def f{i}() -> int:\n    return {i}\n" for i in range(4)}
    files["test_m.py"] = "from m0 import f0\n\n\ndef test_f0():\n    assert f0() == 0\n"
    specs = [
        planned(p, test=p.startswith("test_"), depends_on=("m0.py",) if p == "m3.py" else ()) for p in files
    ]
    scripted_llm.script(WC_INTERFACES, step="generate_interfaces")
    scripted_llm.script(plan_json(*specs), step="generate_plan")
    oracle = file_oracle(files)
    scripted_llm.script(lambda body: Reply(content=oracle(body), delay=0.3), step="generate_file")
    out = tmp_path / "out"
    settings = local(make_settings, tmp_path, generate={"parallel_files": 2})
    _, done = await collect(generate(GenerateRequest("four modules", out), settings))

    assert done.outcome == "green", done.summary + done.evidence
    asks = scripted_llm.requests_for("generate_file")
    starts = sorted(r.at for r in asks)
    most = max(sum(1 for s in starts if s <= t < s + 0.29) for t in starts)
    assert most == 2
    at = {r.messages[-1]["content"].split("`")[1]: r.at for r in asks}
    assert at["m3.py"] >= at["m0.py"] + 0.29  # m3 waited for m0, which it depends on


async def wait_for_request(scripted_llm: Any, step: str) -> None:
    for _ in range(200):
        if scripted_llm.requests_for(step):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {step} request arrived")


async def test_cancelling_a_run_writes_nothing(tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    scripted_llm.script(WC_INTERFACES, step="generate_interfaces")
    scripted_llm.script(WC_PLAN, step="generate_plan")
    oracle = file_oracle(GOOD)
    scripted_llm.script(lambda body: Reply(content=oracle(body), delay=30), step="generate_file")
    out = tmp_path / "out"
    events = generate(GenerateRequest("a word counter", out), local(make_settings, tmp_path))

    async def consume() -> None:
        async for _ in events:
            pass

    task = asyncio.create_task(consume())
    await wait_for_request(scripted_llm, "generate_file")
    task.cancel()
    started = asyncio.get_running_loop().time()
    await asyncio.gather(task, return_exceptions=True)
    assert asyncio.get_running_loop().time() - started < 5
    assert sorted(tree(out)) == [".greenloop/plan.md"]


async def test_a_budget_used_up_while_writing_files_stops_before_the_next_batch(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    scripted_llm.script(WC_INTERFACES, step="generate_interfaces")
    scripted_llm.script(WC_PLAN, step="generate_plan")
    oracle = file_oracle(GOOD)
    scripted_llm.script(lambda body: Reply(content=oracle(body), delay=1.2), step="generate_file")
    out = tmp_path / "out"
    settings = local(make_settings, tmp_path, loop={"max_seconds": 1.0})
    _, done = await collect(generate(GenerateRequest("a word counter", out), settings))

    assert done.outcome == "budget"
    assert "time budget used up" in done.summary and "Nothing was written" in done.summary
    assert len(scripted_llm.requests_for("generate_file")) == 2  # the sources; the tests were never asked for
    assert sorted(tree(out)) == [".greenloop/plan.md"]


async def test_test_code_where_the_code_belongs_stays_out_of_the_code(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the replies of a Qwen2.5-Coder 0.5B bench cell (slugify), which ended in an error at 3cf3714:
    # tests in the interfaces, a module reply holding the tests too, a test reply without its import
    test_fn = "def test_slugify():\n    assert slugify('Hello World') == 'hello-world'\n"
    module = "def slugify(title: str) -> str:\n    return '-'.join(title.lower().split())\n"
    interfaces = (
        f"## slug.py\n- `slugify(title: str) -> str`: lower case, words joined by hyphens\n```python\n{module}```\n"
        f"## Tests\n```python\nimport pytest\n\n{test_fn}```\n## tests/test_slug.py\n```python\n{test_fn}```\n"
    )
    plan = plan_json(
        planned("slug.py", component="slug"),
        planned("tests/test_slug.py", component="slug", depends_on=("slug.py",), test=True),
        name="app",
    )
    files = {"slug.py": f"# slug.py\n\n{module}\n# tests/test_slug.py\n\nimport pytest\n\n{test_fn}", "tests/test_slug.py": test_fn}
    script_steps(scripted_llm, interfaces, plan, file_oracle(files))
    out = tmp_path / "out"
    _, done = await collect(generate(GenerateRequest("a slugify function", out), local(make_settings, tmp_path)))

    assert done.outcome == "green", done.summary + done.evidence
    written = tree(out)
    assert written["slug.py"] == module
    assert written["tests/test_slug.py"] == f"from slug import slugify\n{test_fn}"
    asks = scripted_llm.requests_for("generate_file")
    assert len(asks) == 2  # no repairs
    assert all("assert slugify" not in str(r.messages) for r in asks)  # the interfaces' tests were dropped
    # the module the interfaces hold is shown whole to the source file, as an outline to the test
    by_path = {asked_path(r.body): str(r.messages) for r in asks}
    assert "'-'.join" in by_path["slug.py"] and "'-'.join" not in by_path["tests/test_slug.py"]
    assert "- `def slugify(title: str) -> str`" in by_path["tests/test_slug.py"]


async def test_a_file_list_of_tests_alone_gets_the_modules_of_the_interfaces(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # the 0.5B model's csv-stats plans listed tests only, through every repair (error at cefb39e)
    tests_only = plan_json(planned("tests/test_core.py", depends_on=("tests/test_main.py",), test=True))
    script_steps(scripted_llm, WC_INTERFACES, tests_only, file_oracle(GOOD))
    out = tmp_path / "out"
    _, done = await collect(generate(GenerateRequest("a word counter", out), local(make_settings, tmp_path)))

    assert done.outcome == "green", done.summary + done.evidence
    assert len(scripted_llm.requests_for("generate_plan")) == 1  # no repair request
    assert {"wordcount/core.py", "tests/test_core.py"} <= set(tree(out))
