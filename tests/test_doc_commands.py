"""Every README and doc command works as written (issue 21): see tests/support/doc_commands.py for the rule."""

from __future__ import annotations

import argparse

import pytest

from greenloop.cli import build_parser
from tests.support.doc_commands import Command, check_all, check_static, classify, extract

STATIC = "<!-- doc-check: static (a test snippet) -->\n"


@pytest.fixture(scope="module")
def parser() -> argparse.ArgumentParser:
    return build_parser()


def static_errors(doc: str, parser: argparse.ArgumentParser) -> list[str]:
    commands, errors = extract(doc, "snippet.md")
    for c in commands:
        action, reason, _ = classify(c)
        if action == "error":
            errors.append(reason)
        errors += check_static(c, parser)
    return errors


def test_every_documented_command_works_as_written() -> None:
    """Static checks of every command, and a run of the ones that need no model (about 20 s)."""
    errors = check_all(run=True)
    assert not errors, "\n".join(errors)


def test_a_nonexistent_flag_fails(parser: argparse.ArgumentParser) -> None:
    errors = static_errors(f"{STATIC}```bash\ngreenloop doctor --verbose\n```\n", parser)
    assert errors == ["`greenloop doctor` has no option --verbose"]
    errors = static_errors("Run `greenloop locate [DIR] (--test-output FILE | --rerun)`.\n", parser)
    assert errors == ["`greenloop locate` has no option --rerun"]


def test_a_nonexistent_subcommand_fails(parser: argparse.ArgumentParser) -> None:
    errors = static_errors("See `greenloop runs list|show|purge`.\n", parser)
    assert len(errors) == 1 and "has no subcommand purge" in errors[0]


def test_a_missing_path_fails(parser: argparse.ArgumentParser) -> None:
    errors = static_errors(f"{STATIC}```bash\ngreenloop sandbox run examples/no-such-project\n```\n", parser)
    assert errors == ["examples/no-such-project: no such path in the repository"]
    errors = static_errors("`python benchmarks/bench_nothing.py`\n", parser)
    assert errors == ["benchmarks/bench_nothing.py: no such path in the repository"]


def test_a_script_flag_it_does_not_define_fails(parser: argparse.ArgumentParser) -> None:
    errors = static_errors("`python benchmarks/bench_sandbox.py --no-such-flag`\n", parser)
    assert errors == ["benchmarks/bench_sandbox.py has no option --no-such-flag"]


def test_an_output_path_needs_only_its_folder(parser: argparse.ArgumentParser) -> None:
    ok = "```bash\ngreenloop bench --suite generate --out docs/benchmarks/not-yet\n```\n"
    assert static_errors(ok, parser) == []
    bad = "```bash\ngreenloop bench --suite generate --out nowhere/at/all\n```\n"
    assert static_errors(bad, parser) == ["nowhere/at/all: no folder nowhere/at"]


def test_a_settings_variable_must_name_a_setting(parser: argparse.ArgumentParser) -> None:
    ok = f"{STATIC}```bash\nGREENLOOP_LOCAL_MODEL__ENABLED=false greenloop doctor\n```\n"
    assert static_errors(ok, parser) == []
    bad = f"{STATIC}```bash\nGREENLOOP_LOCAL_MODEL__SIZ=1.5b greenloop doctor\n```\n"
    assert static_errors(bad, parser) == ["GREENLOOP_LOCAL_MODEL__SIZ: no setting local_model.siz"]


def test_a_built_wheel_must_carry_the_package_version(parser: argparse.ArgumentParser) -> None:
    errors = static_errors("```bash\npipx install ./dist/greenloop-9.9.9-py3-none-any.whl\n```\n", parser)
    assert len(errors) == 1 and "not 9.9.9" in errors[0]


def test_a_skip_marker_without_a_reason_is_refused() -> None:
    for marker in ("<!-- doc-check: static -->", "<!-- doc-check: static () -->", "<!-- doc-check: skip (x) -->"):
        _, errors = extract(f"{marker}\n```bash\ngreenloop fix\n```\n", "snippet.md")
        assert len(errors) == 1 and "with a reason" in errors[0], marker


def test_a_marker_must_precede_a_block() -> None:
    _, errors = extract("<!-- doc-check: static (needs a model) -->\nSome text.\n", "snippet.md")
    assert errors == ["snippet.md:1: doc-check marker not followed by a fenced block"]


def test_a_marker_makes_its_block_static_with_its_reason() -> None:
    commands, errors = extract("<!-- doc-check: static (needs a model) -->\n```sh\nmake everything\n```\n", "d.md")
    assert errors == []
    assert [(c.text, classify(c)[:2]) for c in commands] == [("make everything", ("static", "needs a model"))]


def test_an_unclassified_command_is_an_error_not_a_silent_skip() -> None:
    commands, _ = extract("```bash\nmake everything  # builds it\n```\n", "d.md")
    assert [c.text for c in commands] == ["make everything"]
    assert classify(commands[0])[0] == "error"


def test_a_run_marker_needs_a_run_rule() -> None:
    commands, _ = extract("<!-- doc-check: run (fast) -->\n```bash\nmake everything\n```\n", "d.md")
    assert classify(commands[0])[0] == "error"


def test_continuations_prompts_and_comments() -> None:
    commands, _ = extract("```console\n$ greenloop doctor \\\n    --json  # a comment\n# only a comment\n```\n", "d.md")
    assert [(c.line, c.text) for c in commands] == [(2, "greenloop doctor --json")]
    assert not commands[0].inline and isinstance(commands[0], Command)
