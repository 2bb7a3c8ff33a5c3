"""Output capping keeps head and tail; templates load from data and unknown names are explained."""

from __future__ import annotations

from dataclasses import replace

import pytest

from greenloop_sandbox import SandboxError, load_template, open_sandbox, template_names
from greenloop_sandbox.output import CappedOutput


def test_capped_output_keeps_head_and_tail_and_marks_the_cut() -> None:
    out = CappedOutput(1000)
    out.feed(b"HEAD" + b"x" * 5000)
    for _ in range(100):
        out.feed(b"y" * 1000)
    out.feed(b"TAIL")
    text = out.text()
    assert out.truncated
    assert text.startswith("HEAD") and text.endswith("TAIL")
    assert "bytes of output cut" in text
    assert len(text) < 1200


def test_small_output_is_untouched() -> None:
    out = CappedOutput(1000)
    out.feed(b"hello ")
    out.feed(b"world")
    assert out.text() == "hello world" and not out.truncated


def test_templates_are_data() -> None:
    assert template_names() == ["node", "python", "rust"]
    py = load_template("python")
    assert py.parser == "junit" and py.package_manager == "pip" and "{report}" in py.test_command
    assert "FROM ${BASE}" in py.dockerfile
    cmd = load_template("rust").test_argv("", ["tests::a b"])
    assert "'tests::a b'" in cmd


def test_unknown_template_lists_the_known_ones() -> None:
    with pytest.raises(SandboxError, match="known templates: node, python, rust"):
        load_template("cobol")
    with pytest.raises(SandboxError, match="backend"):
        open_sandbox("python", backend="vm")


def test_package_specs_are_compared_by_name_the_way_indexes_compare_them() -> None:
    from greenloop_sandbox.packages import without

    specs = ["Requests>=2", "word-count", "@scope/pkg@1", "lodash@4", "PyTest==1.2.0", "tomli_w[x]"]
    keep, dropped = without(specs, {"word_count", "pytest", "@scope/pkg", "tomli-w"})
    assert keep == ["Requests>=2", "lodash@4"]
    assert dropped == ["word-count", "@scope/pkg@1", "PyTest==1.2.0", "tomli_w[x]"]


def test_each_template_says_what_it_provides() -> None:
    python, node, rust = (load_template(n).provided for n in ("python", "node", "rust"))
    assert {"pytest", "python", "csv", "re"} <= python and "requests" not in python
    assert {"npm", "fs", "path"} <= node and "lodash" not in node
    assert {"cargo", "std"} <= rust and "serde" not in rust


def test_a_templates_support_files_are_part_of_its_image_hash() -> None:
    python = load_template("python")
    # baked into the image: the test runner, and the coverage runner (retrieval.coverage)
    assert [name for name, _ in python.support] == ["run_pytest.py", "run_spectrum.py"]
    changed = replace(python, support=(("run_pytest.py", python.support[0][1] + b"\n# changed\n"), python.support[1]))
    assert changed.recipe_hash != python.recipe_hash  # a changed runner builds a new image


def test_only_the_templates_own_test_runner_has_a_coverage_runner() -> None:
    from greenloop_sandbox import ProjectEnv

    python = load_template("python")
    assert "run_spectrum.py" in python.spectrum_argv(["t.py::test_a"], max_tests=5, seconds=3)
    node = load_template("node")
    argv = node.spectrum_argv(["adds > it's ok"], max_tests=5, seconds=3, case_timeout=2)
    assert argv == ("node /opt/greenloop/run_spectrum.js --focus 'adds > it'\"'\"'s ok' --max-tests 5 --seconds 3 "
                    "-- --test-timeout=2000")
    assert [name for name, _ in node.support] == ["run_spectrum.js"]  # in the image, part of its hash
    assert not load_template("rust").spectrum_command
    # a project's own test command may not be the template's runner: no coverage pass (a note says so)
    assert ProjectEnv(test_command="make check").apply(python).spectrum_command == ""
    assert ProjectEnv(test_command="npx jest").apply(node).spectrum_command == ""
