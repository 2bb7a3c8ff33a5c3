"""Real-shaped small projects: shared types every test uses, one module and one test file per feature.

Python, Node and Rust versions of the same command-fixing tool. `bug` picks
where the defect is: in a feature module ("push", the test's module under
test), or in the shared type ("hub", a crash inside it that the traceback
ends in).
"""

from __future__ import annotations

PUSH_OK = "    return command.script.replace('push', 'push --force-with-lease')\n"
PUSH_BUG = "    return command.script.replace('push', 'pull --force-with-lease')\n"
PARTS_OK = "        return self.script.split()\n"
PARTS_BUG = "        return self.script.split()[self.missing]\n"


def fill(template: str, **values: str) -> str:
    """`template` with each `{key}` replaced (the code's own braces stay, unlike str.format)."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def python_files(bug: str) -> dict[str, str]:
    rule = (
        "from tool.types import Command\n"
        "from tool.utils import for_app\n"
        "from tool.logs import debug\n"
        "\n"
        "\n"
        "@for_app('git')\n"
        "def match(command):\n"
        "    debug('push?')\n"
        "    return 'push' in command.parts() and 'rejected' in command.output\n"
        "\n"
        "\n"
        "def get_new_command(command):\n"
        "    debug('fixing push')\n"
        + (PUSH_BUG if bug == "push" else PUSH_OK)
    )
    other_rule = (
        "from tool.types import Command\n"
        "from tool.utils import for_app\n"
        "from tool.logs import debug\n"
        "\n"
        "\n"
        "@for_app('{app}')\n"
        "def match(command):\n"
        "    debug('{word}?')\n"
        "    return '{word}' in command.parts() and 'error' in command.output\n"
        "\n"
        "\n"
        "def get_new_command(command):\n"
        "    debug('fixing {word}')\n"
        "    return command.script.replace('{word}', '{word} --all')\n"
    )
    test = (
        "from tool.rules.{name} import match, get_new_command\n"
        "from tool.types import Command\n"
        "\n"
        "\n"
        "def test_match(command_factory):\n"
        "    assert match(command_factory('git {word}', '{output}'))\n"
        "\n"
        "\n"
        "def test_get_new_command():\n"
        "    command = Command('git {word}', '{output}')\n"
        "    assert get_new_command(command) == 'git {fixed}'\n"
    )
    return {
        "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['.']\n",
        "tool/__init__.py": "",
        "tool/types.py": (
            '"""Types every rule and test uses."""\n'
            "\n"
            "\n"
            "class Command:\n"
            "    def __init__(self, script, output):\n"
            "        self.script = script\n"
            "        self.output = output\n"
            "\n"
            "    def parts(self):\n"
            + (PARTS_BUG if bug == "hub" else PARTS_OK)
            + "\n"
            "    def update(self, **changes):\n"
            "        return Command(changes.get('script', self.script), changes.get('output', self.output))\n"
        ),
        "tool/logs.py": (
            "import sys\n\n\ndef debug(message):\n    sys.stderr.write(message + '\\n')\n\n\n"
            "def failed(message):\n    sys.stderr.write('failed: ' + message + '\\n')\n"
        ),
        "tool/utils.py": (
            "import functools\n"
            "\n"
            "\n"
            "def for_app(*apps):\n"
            "    def decorator(fn):\n"
            "        @functools.wraps(fn)\n"
            "        def wrapper(command):\n"
            "            return command.script.split()[0] in apps and fn(command)\n"
            "        return wrapper\n"
            "    return decorator\n"
        ),
        "tool/rules/__init__.py": "",
        "tool/rules/git_push.py": rule,
        "tool/rules/git_pull.py": other_rule.format(app="git", word="pull"),
        "tool/rules/git_add.py": other_rule.format(app="git", word="add"),
        "tests/__init__.py": "",
        "tests/conftest.py": (
            "import pytest\n\nfrom tool.types import Command\n\n\n"
            "@pytest.fixture\ndef command_factory():\n    return Command\n"
        ),
        "tests/rules/__init__.py": "",
        "tests/rules/test_git_push.py": test.format(
            name="git_push", word="push", output="! [rejected]", fixed="push --force-with-lease"
        ),
        "tests/rules/test_git_pull.py": test.format(name="git_pull", word="pull", output="error", fixed="pull --all"),
        "tests/rules/test_git_add.py": test.format(name="git_add", word="add", output="error", fixed="add --all"),
        "tests/test_types.py": (
            "from tool.types import Command\n\n\n"
            "def test_update():\n    assert Command('a', 'b').update(script='c').script == 'c'\n"
        ),
    }


def node_files(bug: str) -> dict[str, str]:
    rule = (
        "'use strict';\n"
        "const { Command } = require('../types');\n"
        "\n"
        "function match(command) {\n"
        "  return command.parts().includes('{word}') && command.output.includes('{output}');\n"
        "}\n"
        "\n"
        "function getNewCommand(command) {\n"
        "  return command.script.replace('{word}', '{replacement}');\n"
        "}\n"
        "\n"
        "module.exports = { match, getNewCommand, Command };\n"
    )
    test = (
        "const test = require('node:test');\n"
        "const assert = require('node:assert');\n"
        "const { Command } = require('../lib/types');\n"
        "const { match, getNewCommand } = require('../lib/rules/{name}');\n"
        "\n"
        "test('{name} matches', () => {\n"
        "  assert.ok(match(new Command('git {word}', '{output}')));\n"
        "});\n"
        "\n"
        "test('{name} fixes', () => {\n"
        "  assert.strictEqual(getNewCommand(new Command('git {word}', '{output}')), 'git {fixed}');\n"
        "});\n"
    )

    parts = "    return this.script.split(' ')" + (".map((p) => p.missing.trim());\n" if bug == "hub" else ";\n")
    push_fix = "pull --force" if bug == "push" else "push --force"
    return {
        "package.json": '{"name": "tool", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
        "lib/types.js": (
            "'use strict';\n"
            "\n"
            "class Command {\n"
            "  constructor(script, output) {\n"
            "    this.script = script;\n"
            "    this.output = output;\n"
            "  }\n"
            "\n"
            "  parts() {\n" + parts + "  }\n"
            "}\n"
            "\n"
            "module.exports = { Command };\n"
        ),
        "lib/rules/push.js": fill(rule, word="push", output="rejected", replacement=push_fix),
        "lib/rules/pull.js": fill(rule, word="pull", output="error", replacement="pull --all"),
        "test/push.test.js": fill(test, name="push", word="push", output="rejected", fixed="push --force"),
        "test/pull.test.js": fill(test, name="pull", word="pull", output="error", fixed="pull --all"),
    }


def rust_files(bug: str) -> dict[str, str]:
    push_fix = '"pull --force"' if bug == "push" else '"push --force"'
    parts = "self.script.split(' ').map(String::from).collect()"
    if bug == "hub":
        parts = "self.script.split(' ').map(|p| p[8..].to_string()).collect()"
    rule = (
        "use crate::types::Command;\n"
        "\n"
        "pub fn matches(command: &Command) -> bool {\n"
        "    command.parts().iter().any(|p| p == \"{word}\") && command.output.contains(\"{output}\")\n"
        "}\n"
        "\n"
        "pub fn new_command(command: &Command) -> String {\n"
        "    command.script.replace(\"{word}\", {replacement})\n"
        "}\n"
        "\n"
        "#[cfg(test)]\n"
        "mod tests {\n"
        "    use super::*;\n"
        "\n"
        "    #[test]\n"
        "    fn {word}_matches() {\n"
        "        assert!(matches(&Command::new(\"git {word}\", \"{output}\")));\n"
        "    }\n"
        "\n"
        "    #[test]\n"
        "    fn {word}_fixes() {\n"
        "        assert_eq!(new_command(&Command::new(\"git {word}\", \"{output}\")), \"git {fixed}\");\n"
        "    }\n"
        "}\n"
    )

    return {
        "Cargo.toml": '[package]\nname = "tool"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
        "src/lib.rs": "pub mod rules;\npub mod types;\n",
        "src/types.rs": (
            "pub struct Command {\n"
            "    pub script: String,\n"
            "    pub output: String,\n"
            "}\n"
            "\n"
            "impl Command {\n"
            "    pub fn new(script: &str, output: &str) -> Self {\n"
            "        Command { script: script.to_string(), output: output.to_string() }\n"
            "    }\n"
            "\n"
            "    pub fn parts(&self) -> Vec<String> {\n"
            f"        {parts}\n"
            "    }\n"
            "}\n"
        ),
        "src/rules/mod.rs": "pub mod pull;\npub mod push;\n",
        "src/rules/push.rs": fill(
            rule, word="push", output="rejected", replacement=push_fix, fixed="push --force"
        ),
        "src/rules/pull.rs": fill(
            rule, word="pull", output="error", replacement='"pull --all"', fixed="pull --all"
        ),
    }
