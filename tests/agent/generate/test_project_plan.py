"""ProjectPlan validation: paths, duplicates, template contradictions, and the repairs it makes itself."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from greenloop.agent.generate.layouts import get_layout
from greenloop.agent.generate.planning import manifests, with_manifest
from greenloop.agent.generate.project_plan import normalize_path, plan_schema, validate_plan
from greenloop.errors import GreenloopError


def plan_data(*files: dict[str, Any], **extra: Any) -> dict[str, Any]:
    default = [
        {"path": "wc/core.py", "purpose": "count_words", "component": "core"},
        {"path": "tests/test_core.py", "purpose": "tests", "component": "core", "depends_on": ["wc/core.py"]},
    ]
    return {
        "name": "word count",
        "interfaces": "- `count_words(text: str) -> int`",
        "files": list(files) or default,
        **extra,
    }


def python_plan(data: dict[str, Any]) -> Any:
    return plan_schema(get_layout("python"), 40).model_validate(data)


def test_paths_are_normalized_and_tests_recognized() -> None:
    plan = python_plan(
        plan_data(
            {"path": "./wc\\core.py", "component": "core"},
            {
                "path": "tests/test_core.py",
                "component": "core",
                "depends_on": ["./wc/core.py", "missing.py", "os"],
            },
        )
    )
    assert [f.path for f in plan.files] == ["wc/core.py", "tests/test_core.py"]
    assert plan.files[1].test is True  # named like a pytest file, so it is one
    assert plan.files[1].depends_on == ["wc/core.py"]  # unknown dependencies are dropped
    assert plan.components == ["core"]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("../evil.py", "escapes"),
        ("/etc/passwd.py", "absolute"),
        ("C:/x.py", "absolute"),
        ("a/../../b.py", "escapes"),
        ("<package>/<module>.py", "placeholder"),
        (".git/config", ".git"),
        ("", "empty"),
    ],
)
def test_escaping_paths_are_refused(path: str, expected: str) -> None:
    with pytest.raises(ValidationError, match=expected):
        python_plan(plan_data({"path": "a.py"}, {"path": "test_a.py"}, {"path": path}))


def test_a_file_listed_twice_is_one_file_even_when_spelled_differently() -> None:
    # the 0.5B model listed tests/test_stack.py twice and sent the same list back to every repair
    plan = python_plan(
        plan_data(
            {"path": "a.py", "purpose": "the code"},
            {"path": "tests/test_a.py", "depends_on": ["a.py"]},
            {"path": "./a.py", "purpose": "again", "component": "other"},
            {"path": "tests//test_a.py", "depends_on": ["b.py"]},
            {"path": "b.py"},
        )
    )
    assert [(f.path, f.component, f.depends_on) for f in plan.files] == [
        ("a.py", "main", []), ("tests/test_a.py", "main", ["a.py", "b.py"]), ("b.py", "main", [])
    ]
    assert plan.file("a.py").purpose == "the code"


def test_a_plan_contradicting_the_template_names_the_files() -> None:
    with pytest.raises(ValidationError, match=r"template is python .* src/lib\.rs \(rust\)"):
        python_plan(plan_data({"path": "a.py"}, {"path": "test_a.py"}, {"path": "src/lib.rs"}))
    node = plan_schema(get_layout("node"), 40)
    with pytest.raises(ValidationError, match=r"pyproject\.toml \(python\)"):
        node.model_validate(
            plan_data({"path": "src/a.js"}, {"path": "test/a.test.js"}, {"path": "pyproject.toml"})
        )


def test_a_plan_without_tests_gets_a_test_file_and_one_without_sources_is_refused() -> None:
    plan = python_plan(plan_data({"path": "wc/core.py"}, {"path": "README.md"}, {"path": "pyproject.toml"}))
    added = plan.files[-1]
    assert (added.path, added.test, added.depends_on) == ("tests/test_word_count.py", True, ["wc/core.py"])
    with pytest.raises(ValidationError, match="only test files"):
        python_plan(plan_data({"path": "tests/test_a.py"}))


def test_a_plan_of_tests_alone_gets_the_source_files_they_depend_on() -> None:
    # the 0.5B model listed only test files, each depending on csvstats.py, through every repair
    plan = python_plan(
        plan_data(
            {"path": "tests/test_stats.py", "component": "stats", "depends_on": ["csvstats.py", "python"]},
            {"path": "tests/test_more.py", "component": "stats", "depends_on": ["./csvstats.py", "tests/test_x.py"]},
        )
    )
    added = plan.file("csvstats.py")
    assert (added.test, added.component) == (False, "stats") and "added by greenloop" in added.purpose
    assert [f.depends_on for f in plan.files if f.test] == [["csvstats.py"], ["csvstats.py"]]
    assert [f.path for f in plan.files].count("csvstats.py") == 1
    # what is not a source file of the template is dropped as before: other languages, tests, manifests
    only_tests = plan_data({"path": "tests/test_a.py", "depends_on": ["src/a.js", "test_b.py", "pyproject.toml"]})
    with pytest.raises(ValidationError, match="only test files"):
        python_plan(only_tests)
    # with no source file named anywhere in the list, the interfaces' modules are the sources
    # (the 0.5B model's tests depended on another test; its interfaces had `## csvstats.py`)
    tests_only = {"path": "tests/test_csv.py", "depends_on": ["tests/test_main.py"]}
    files = plan_schema(get_layout("python"), 40, interfaces=False, modules=("csvstats.py", "tests/test_x.py"))
    assert [(f.path, f.depends_on) for f in files.model_validate(plan_data(tests_only)).files] == [
        ("tests/test_csv.py", ["csvstats.py"]), ("csvstats.py", [])
    ]
    doc = "## `csvstats.py`\n- `column_stats(path: str, column: str) -> dict`\n## Data\n- rows"
    full = python_plan(plan_data(tests_only, interfaces=doc))
    assert [f.path for f in full.files] == ["tests/test_csv.py", "csvstats.py"]


def test_an_empty_file_list_is_refused_and_the_schema_says_so() -> None:
    with pytest.raises(GreenloopError, match=r"files: List should have at least 1 item"):
        validate_plan(plan_data(files=[]), get_layout("python"), 40, source="plan.md")
    # grammar-constrained decoding reads minItems, so a small model cannot close the list empty
    assert plan_schema(get_layout("python"), 40).model_json_schema()["properties"]["files"]["minItems"] == 1


def test_rust_needs_a_crate_root_and_too_many_files_are_refused() -> None:
    rust = plan_schema(get_layout("rust"), 40)
    with pytest.raises(ValidationError, match=r"src/lib\.rs"):
        rust.model_validate(plan_data({"path": "src/util.rs"}, {"path": "tests/util.rs"}))
    small = plan_schema(get_layout("python"), 3)
    many = [{"path": f"m{i}.py"} for i in range(3)] + [{"path": "test_m.py"}]
    with pytest.raises(ValidationError, match="at most 3"):
        small.model_validate(plan_data(*many))


def test_components_follow_the_plan_order_and_cover_every_file() -> None:
    plan = python_plan(
        plan_data(
            {"path": "a.py", "component": "second"},
            {"path": "b.py", "component": "first"},
            {"path": "test_b.py", "component": "first"},
            {"path": "c.py", "component": "third"},
            components=["first", "ghost", "second"],
        )
    )
    assert plan.components == ["first", "second", "third"]


def test_bad_package_specs_are_refused() -> None:
    plan = python_plan(plan_data(packages=["requests==2.32.3", " requests==2.32.3 ", ""]))
    assert plan.packages == ["requests==2.32.3"]
    with pytest.raises(ValidationError, match="not a plain package spec"):
        python_plan(plan_data(packages=["requests; rm -rf /"]))


def test_manifest_is_added_once_and_rendered_from_the_packages() -> None:
    layout = get_layout("node")
    plan = plan_schema(layout, 40).model_validate(
        plan_data({"path": "src/wc.js"}, {"path": "test/wc.test.js"}, packages=["lodash@4.17.21"])
    )
    plan = with_manifest(with_manifest(plan, layout), layout)
    assert [f.path for f in plan.files].count("package.json") == 1
    text = manifests(plan, layout)["package.json"]
    assert (
        '"lodash": "4.17.21"' in text and '"test": "node --test"' in text and '"name": "word-count"' in text
    )


def test_the_toolchain_built_ins_and_the_project_itself_are_no_packages_to_install() -> None:
    # the 0.5B model's plans listed these; each install failed and cost a host `pip download`
    python = get_layout("python")
    listed = ["python", "pytest", "csv", "Dataclasses", "word_count", "wordcount", "rich[jupyter]>=13", "attrs"]
    data = plan_data({"path": "wordcount/core.py"}, {"path": "tests/test_core.py"}, packages=listed)
    plan = with_manifest(python_plan(data), python)
    assert plan.packages == ["rich[jupyter]>=13", "attrs"]
    assert '"python"' not in manifests(plan, python)["pyproject.toml"]
    node = get_layout("node")
    listed = ["test", "assert", "fs", "lodash@4.17.21", "@scope/tool@1.0.0"]
    data = plan_data({"path": "src/wc.js"}, {"path": "test/wc.test.js"}, packages=listed)
    assert with_manifest(plan_schema(node, 40).model_validate(data), node).packages == listed[3:]


def test_validate_plan_gives_a_clear_error() -> None:
    with pytest.raises(
        GreenloopError, match=r"plan.md: the plan is not usable: .*escapes the project folder"
    ):
        validate_plan(
            plan_data({"path": "../x.py"}, {"path": "test_x.py"}), get_layout("python"), 40, source="plan.md"
        )


def test_normalize_path_keeps_clean_paths() -> None:
    assert normalize_path("`pkg/mod.py`") == "pkg/mod.py"
    with pytest.raises(ValueError, match="folder"):
        normalize_path("pkg/")


def test_small_steps_join_a_component_without_tests_to_the_next() -> None:
    from greenloop.agent.generate.pipeline import small_steps

    plan = python_plan(
        plan_data(
            {"path": "models.py", "component": "models"},
            {"path": "store.py", "component": "store"},
            {"path": "test_store.py", "component": "store"},
            {"path": "cli.py", "component": "cli"},
            {"path": "test_cli.py", "component": "cli"},
            {"path": "docs.md", "component": "docs"},
        )
    )
    assert small_steps(plan) == [["models", "store"], ["cli", "docs"]]


def test_the_path_decides_what_a_test_is_not_the_models_flag() -> None:
    # Qwen2.5-Coder 0.5B marked its only source file "test": true; pytest would never collect it
    plan = python_plan(plan_data({"path": "wordcount.py", "test": True}, {"path": "tests/test_wc.py"}))
    assert [(f.path, f.test) for f in plan.files] == [("wordcount.py", False), ("tests/test_wc.py", True)]


def test_each_template_recognizes_a_test_case_in_a_test_file() -> None:
    python, node, rust = (get_layout(t) for t in ("python", "node", "rust"))
    assert python.has_test_case("tests/test_a.py", "import a\n\nasync def test_a():\n    assert a.f()\n")
    assert not python.has_test_case("tests/test_a.py", "def f(x):\n    return x  # test_f is elsewhere\n")
    assert python.has_test_case("tests/conftest.py", "import pytest\n")
    assert node.has_test_case("test/a.test.js", "test('adds', () => { assert.equal(add(1, 2), 3); });\n")
    assert not node.has_test_case("test/a.test.js", "const test = require('node:test');\nmodule.exports = {};\n")
    assert rust.has_test_case("tests/a.rs", "#[test]\nfn adds() { assert_eq!(a::add(1, 2), 3); }\n")
    assert not rust.has_test_case("tests/a.rs", "pub fn add(a: i32, b: i32) -> i32 { a + b }\n")
