"""The generate suite judged by hidden acceptance tests, beside self-green, with the bare one-shot as the baseline."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.agent.generate.conftest import asked_path, plan_json, planned
from tests.support.scripted_llm import Reply

from greenloop.bench import BenchOptions, load_configs, run_bench, write_reports
from greenloop.bench.acceptance import acceptance_of, hidden_count
from greenloop.bench.suites import load_suite, repo_root
from greenloop.settings import Settings

SUITE = load_suite("generate")
REFERENCE = repo_root() / "benchmarks" / "suites" / "acceptance" / "reference"


def local(scripted_llm: Any) -> Settings:
    return Settings(
        llm={"base_url": scripted_llm.base_url, "api_key": "test-key", "model": "scripted", "max_retries": 0},
        local_model={"enabled": False}, sandbox={"backend": "local"}, loop={"max_iterations": 1},
    )


def test_the_suite_has_ten_prompts_each_naming_its_module_with_five_to_ten_hidden_tests() -> None:
    assert len(SUITE.tasks) == 10 and SUITE.skipped == []
    for task in SUITE.tasks:
        module = task.extra["module"]
        assert module in task.prompt and 5 <= hidden_count(task.extra["hidden_tests"]) <= 10
        assert f"from {module.removesuffix('.py')} import" in task.extra["hidden_tests"]


@pytest.mark.parametrize("task", SUITE.tasks, ids=[t.id for t in SUITE.tasks])
async def test_each_prompt_s_hidden_tests_pass_on_a_reference_solution(task: Any, scripted_llm: Any) -> None:
    module = task.extra["module"]
    files = {module: (REFERENCE / module).read_text(), "tests/test_own.py": "def test_own():\n    assert False\n"}
    found = await acceptance_of(files, task.extra["hidden_tests"], local(scripted_llm))
    total = hidden_count(task.extra["hidden_tests"])
    assert found["all"] and found["passed"] == found["total"] == total, found  # the cell's own tests left out


async def test_code_that_misses_what_the_prompt_states_fails_some_hidden_tests(scripted_llm: Any) -> None:
    task = next(t for t in SUITE.tasks if t.id == "binary-search")
    wrong = (REFERENCE / "bsearch.py").read_text().replace("return bisect.bisect_left(items, target)",
                                                           "return bisect.bisect_right(items, target)")
    found = await acceptance_of({"bsearch.py": wrong}, task.extra["hidden_tests"], local(scripted_llm))
    assert not found["all"] and 0 < found["passed"] < found["total"]
    nothing = await acceptance_of({}, task.extra["hidden_tests"], local(scripted_llm))
    assert nothing == {**nothing, "passed": 0, "all": False, "total": found["total"]}


def _module(body: dict[str, Any]) -> str:
    text = "\n".join(str(m.get("content") or "") for m in body["messages"])
    match = re.search(r"module (\w+)\.py", text)
    assert match, text[:300]
    return match.group(1)


def _script(llm: Any) -> None:
    """The pipeline writes each module the prompt names: rle right, bsearch with a bug its own test misses;
    the bare one-shot gives rle wrong and bsearch right."""
    right = {m: (REFERENCE / f"{m}.py").read_text() for m in ("rle", "bsearch")}
    buggy = {**right, "bsearch": right["bsearch"].replace("bisect_left", "bisect_right")}
    own = {"rle": "from rle import encode\n\n\ndef test_empty():\n    assert encode('') == ''\n",
           "bsearch": "from bsearch import find\n\n\ndef test_empty():\n    assert find([], 1) == -1\n"}
    bare = {"rle": "def encode(text):\n    return text\n\n\ndef decode(data):\n    return data\n",
            "bsearch": right["bsearch"]}
    llm.script({"module": "", "examples": []}, step="generate_acceptance")
    llm.script(lambda b: f"## {_module(b)}.py\n- the functions the request names", step="generate_interfaces")
    llm.script(lambda b: plan_json(planned(f"{_module(b)}.py"), planned(f"tests/test_{_module(b)}.py", test=True,
                                   depends_on=(f"{_module(b)}.py",)), name=_module(b)), step="generate_plan")

    def file(body: dict[str, Any]) -> str:
        path, module = asked_path(body), _module(body)
        return f"```python\n{own[module] if path.startswith('tests/') else buggy[module]}```\n"

    llm.script(file, step="generate_file")
    llm.script(lambda b: f"```python\n{bare[_module(b)]}```\n", step="bench_bare")


async def test_the_generate_bench_reports_acceptance_beside_self_green_with_the_bare_baseline(
    tmp_path: Path, scripted_llm: Any
) -> None:
    _script(scripted_llm)
    suite_file = tmp_path / "suite.jsonl"
    rows = [json.loads(line) for line in (repo_root() / "benchmarks" / "suites" / "generate_acceptance.jsonl")
            .read_text().splitlines() if line.strip()]
    picked = [r for r in rows if r["id"] in ("rle", "binary-search")]
    for row in picked:
        row["hidden_tests"] = str(repo_root() / "benchmarks" / "suites" / row["hidden_tests"])
    suite_file.write_text("".join(json.dumps(r) + "\n" for r in picked))
    (tmp_path / "pipeline.toml").write_text("")
    (tmp_path / "bare.toml").write_text('[bench]\ngenerate = "bare"\n')
    options = BenchOptions(suite="generate", out_dir=tmp_path / "out", suite_file=suite_file,
                           configs=load_configs([tmp_path / "pipeline.toml", tmp_path / "bare.toml"]))
    run = await run_bench(options, local(scripted_llm))
    by = {(r.config, r.task): r for r in run.results}
    assert by[("pipeline", "binary-search")].outcome == "green"  # self-green: its own test passes
    assert by[("pipeline", "binary-search")].extra["acceptance"]["all"] is False  # the hidden tests see the bug
    assert by[("pipeline", "rle")].extra["acceptance"] == {**by[("pipeline", "rle")].extra["acceptance"],
                                                           "all": True, "passed": 7, "total": 7}
    assert by[("bare", "rle")].extra["acceptance"]["all"] is False
    assert by[("bare", "binary-search")].extra["acceptance"]["all"] is True
    assert len(scripted_llm.requests_for("bench_bare")) == 2  # once per task, no loop
    md = write_reports(run).markdown.read_text()
    assert "| pipeline | 2 | 1 (50%) |" in md and "| 2 (100%) |" in md
    assert "| bare | 2 | 1 (50%) |" in md and "— (bare one-shot: no tests)" in md


async def test_a_memo_served_bare_one_shot_is_charged_the_model_seconds_it_took(
    tmp_path: Path, scripted_llm: Any
) -> None:
    # a memo bench compares configs by the model seconds a served reply took when recorded; the bare
    # baseline was charged nothing (its median showed 0.0 s beside the pipeline's 443 s, 2026-12-07)
    reply = "```python\ndef find(items, x):\n    return -1\n```\n"
    scripted_llm.script(lambda b: Reply(content=reply, delay=1.5), step="bench_bare")
    suite_file = tmp_path / "suite.jsonl"
    row = next(json.loads(line) for line in (repo_root() / "benchmarks" / "suites" / "generate_acceptance.jsonl")
               .read_text().splitlines() if line.strip() and '"binary-search"' in line)
    row["hidden_tests"] = str(repo_root() / "benchmarks" / "suites" / row["hidden_tests"])
    suite_file.write_text(json.dumps(row) + "\n")
    (tmp_path / "bare.toml").write_text('[bench]\ngenerate = "bare"\n')
    settings = local(scripted_llm).model_copy(deep=True)
    settings.llm.cassette, settings.llm.cassette_mode = str(tmp_path / "memo.jsonl"), "memo"
    seconds = []
    for out in ("first", "served"):
        options = BenchOptions(suite="generate", out_dir=tmp_path / out, suite_file=suite_file,
                               configs=load_configs([tmp_path / "bare.toml"]))
        run = await run_bench(options, settings)
        seconds.append(run.results[0].seconds)
    assert len(scripted_llm.requests_for("bench_bare")) == 1  # the second came from the memo
    assert run.results[0].extra["served_seconds"] >= 1.0
    assert seconds[1] >= 1.0 and seconds[0] >= 1.0
