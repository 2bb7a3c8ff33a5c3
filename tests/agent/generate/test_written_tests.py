"""A generated test file must import the code it tests and not rewrite it, in each template's language."""

from __future__ import annotations

from typing import Any

import pytest

from greenloop.agent.generate.layouts import NODE, PYTHON, RUST
from greenloop.agent.generate.written_tests import add_missing_imports, check_test_file, without_copies

PY_CODE = {"wc/core.py": "def count_words(text):\n    return len(text.split())\n", "pyproject.toml": "[project]\n"}
JS_CODE = {"src/words.js": "function countWords(t) {\n  return t.split(' ').length;\n}\nmodule.exports = { countWords };\n"}
RS_CODE = {"src/lib.rs": "pub mod words;\n", "src/words.rs": "pub fn count_words(t: &str) -> usize { 0 }\n"}
JS_HEAD = "const test = require('node:test');\nconst assert = require('node:assert');\n"


@pytest.mark.parametrize(
    "text",
    [
        "from wc.core import count_words\n\ndef test_a():\n    assert count_words('a') == 1\n",
        "import wc.core\n\ndef test_a():\n    assert wc.core.count_words('a') == 1\n",
        "from wc import core\n\nclass TestCore:\n    def test_a(self):\n        assert core.count_words('a') == 1\n",
    ],
)
def test_python_tests_that_import_the_code_pass(text: str) -> None:
    assert check_test_file(PYTHON, "tests/test_core.py", text, PY_CODE, "wc") == ""


def test_python_problems_are_named_with_the_import_to_write() -> None:
    copy = "def count_words(text):\n    return 1\n\ndef test_a():\n    assert count_words('a') == 1\n"
    assert "holds no test" in check_test_file(PYTHON, "tests/test_core.py", PY_CODE["wc/core.py"], PY_CODE, "wc")
    problem = check_test_file(PYTHON, "tests/test_core.py", copy, PY_CODE, "wc")
    assert problem.startswith("it does not import the code it tests") and "`from wc.core import ...`" in problem
    shadowed = "from wc.core import count_words\n\n" + copy
    assert "defines `count_words` itself" in check_test_file(PYTHON, "tests/test_core.py", shadowed, PY_CODE, "wc")
    # helpers and tests with nothing shown to import are not held to it
    assert check_test_file(PYTHON, "tests/conftest.py", "import pytest\n", PY_CODE, "wc") == ""
    assert check_test_file(PYTHON, "tests/test_core.py", copy, {}, "wc") == ""


@pytest.mark.parametrize(
    "imports",
    [
        "const { countWords } = require('../src/words.js');",
        "const countWords = require('../src/words').countWords;",
        "const words = require(\"../src/words\");\nconst countWords = words.countWords;",
    ],
)
def test_node_tests_that_require_the_module_pass(imports: str) -> None:
    text = f"{JS_HEAD}{imports}\n\ntest('counts', () => {{\n  assert.strictEqual(countWords('a'), 1);\n}});\n"
    assert check_test_file(NODE, "test/words.test.js", text, JS_CODE, "wc") == ""


def test_node_copy_of_the_function_is_named() -> None:
    body = "test('counts', () => {\n  assert.strictEqual(countWords('a'), 1);\n});\n"
    copied = f"{JS_HEAD}const countWords = (t) => 1;\n{body}"
    problem = check_test_file(NODE, "test/words.test.js", copied, JS_CODE, "wc")
    assert "`const { ... } = require('../src/words');`" in problem
    both = f"{JS_HEAD}const {{ countWords }} = require('../src/words');\nfunction countWords(t) {{ return 1; }}\n{body}"
    assert "defines `countWords` itself" in check_test_file(NODE, "test/words.test.js", both, JS_CODE, "wc")


def test_rust_integration_tests_use_the_crate() -> None:
    good = "use word_count::words::count_words;\n\n#[test]\nfn counts() {\n    assert_eq!(count_words(\"a\"), 1);\n}\n"
    assert check_test_file(RUST, "tests/words.rs", good, RS_CODE, "word_count") == ""
    own = "fn count_words(t: &str) -> usize { 1 }\n\n#[test]\nfn counts() {\n    assert_eq!(count_words(\"a\"), 1);\n}\n"
    assert "`use word_count::...;`" in check_test_file(RUST, "tests/words.rs", own, RS_CODE, "word_count")


def test_a_forgotten_import_is_added_after_the_files_own_imports() -> None:
    text = '"""Tests."""\nimport pytest\n\n\ndef test_a():\n    assert count_words("a") == 1\n'
    fixed = add_missing_imports(PYTHON, "tests/test_core.py", text, PY_CODE, "wc")
    assert fixed == text.replace("import pytest\n", "import pytest\nfrom wc.core import count_words\n")
    assert check_test_file(PYTHON, "tests/test_core.py", fixed, PY_CODE, "wc") == ""
    bare = "# counting\ndef test_a():\n    assert count_words('a') == 1\n"
    assert add_missing_imports(PYTHON, "tests/test_core.py", bare, PY_CODE, "wc").startswith(
        "# counting\nfrom wc.core import count_words\ndef test_a():"
    )
    js = f"{JS_HEAD}\ntest('counts', () => {{\n  assert.strictEqual(countWords('a'), 1);\n}});\n"
    assert add_missing_imports(NODE, "test/words.test.js", js, JS_CODE, "wc") == js.replace(
        "require('node:assert');\n", "require('node:assert');\nconst { countWords } = require('../src/words');\n"
    )


@pytest.mark.parametrize(
    "text",
    [
        "from wc.core import count_words\n\ndef test_a():\n    assert count_words('a') == 1\n",  # imported already
        "def count_words(t):\n    return 1\n\ndef test_a():\n    assert count_words('a') == 1\n",  # its own copy
        "def test_a():\n    assert words('a') == 1\n",  # names nothing the code defines
    ],
)
def test_no_import_is_added_where_it_would_not_be_the_fix(text: str) -> None:
    assert add_missing_imports(PYTHON, "tests/test_core.py", text, PY_CODE, "wc") == text


def test_tests_the_model_left_in_the_module_are_not_its_api() -> None:
    # Qwen2.5-Coder 0.5B put `test_slugify` into slug.py as well; the test file's own test_slugify
    # was refused as "a copy of the code under test" through every repair
    code = {"slug.py": "def slugify(t):\n    return t\n\ndef test_slugify():\n    assert slugify('a') == 'a'\n"}
    test = "def test_slugify():\n    assert slugify('a b') == 'a-b'\n"
    fixed = add_missing_imports(PYTHON, "tests/test_slug.py", test, code, "app")
    assert fixed == "from slug import slugify\n" + test  # not `import slugify, test_slugify`
    assert check_test_file(PYTHON, "tests/test_slug.py", fixed, code, "app") == ""
    copied = "from slug import slugify\n\ndef slugify(t):\n    return t\n\n" + test
    assert "defines `slugify` itself" in check_test_file(PYTHON, "tests/test_slug.py", copied, code, "app")


def test_copies_of_the_tested_code_are_removed_so_the_real_code_is_imported() -> None:
    # Qwen2.5-Coder 0.5B wrote count_words into the test file and tested that copy, on every repair
    test = "def test_a():\n    assert count_words('a') == 1\n"
    copy = f"import pytest\n\n\n@decorated\ndef count_words(text):\n    return 1\n\n\n{test}"
    mended = add_missing_imports(PYTHON, "tests/test_core.py", without_copies(PYTHON, "tests/test_core.py", copy, PY_CODE, "wc"), PY_CODE, "wc")
    assert mended == f"import pytest\nfrom wc.core import count_words\n\n\n{test}"
    assert check_test_file(PYTHON, "tests/test_core.py", mended, PY_CODE, "wc") == ""
    # a copy that shadows the import goes too
    shadow = f"from wc.core import count_words\n\ndef count_words(text):\n    return 1\n\n{test}"
    assert without_copies(PYTHON, "tests/test_core.py", shadow, PY_CODE, "wc") == f"from wc.core import count_words\n\n\n{test}"
    # node: a function declaration and an arrow-function binding
    js = f"{JS_HEAD}const countWords = (t) => 1;\ntest('counts', () => {{\n  assert.strictEqual(countWords('a'), 1);\n}});\n"
    assert "countWords = (t)" not in without_copies(NODE, "test/words.test.js", js, JS_CODE, "wc")


@pytest.mark.parametrize(
    ("layout", "path", "text", "code"),
    [
        # nothing but the copy would be left: no test remains, so the repair request says so
        (PYTHON, "tests/test_core.py", "def count_words(text):\n    return 1\n", PY_CODE),
        # Rust: greenloop cannot write the `use` path, so the copy stays for the repair request
        (RUST, "tests/words.rs", "fn count_words(t: &str) -> usize { 1 }\n\n#[test]\nfn counts() {}\n", RS_CODE),
        # helpers of the test's own are not the code's names
        (PYTHON, "tests/test_core.py", "def helper():\n    return 2\n\ndef test_a():\n    assert helper() == 2\n", PY_CODE),
    ],
)
def test_no_copy_is_removed_where_removing_would_not_be_the_fix(layout: Any, path: str, text: str, code: dict[str, str]) -> None:
    assert without_copies(layout, path, text, code, "word_count") == text
