"""The node and rust templates generate and pass, in the Docker sandbox (their real toolchains)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import events as ev
from greenloop.agent.generate import GenerateRequest, generate
from tests.agent.conftest import collect
from tests.agent.generate.conftest import WC_INTERFACES, file_oracle, plan_json, planned, tree

pytestmark = pytest.mark.docker

NODE_FILES = {
    "src/words.js": "function countWords(text) {\n  return text.split(/\\s+/).filter(Boolean).length;\n}\n\n"
    "module.exports = { countWords };\n",
    "test/words.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "const { countWords } = require('../src/words.js');\n\n"
    "test('counts words', () => {\n  assert.strictEqual(countWords('a bb  ccc'), 3);\n});\n\n"
    "test('empty text', () => {\n  assert.strictEqual(countWords(''), 0);\n});\n",
}
RUST_FILES = {
    "src/lib.rs": "pub mod words;\n\npub use words::count_words;\n",
    "src/words.rs": "pub fn count_words(text: &str) -> usize {\n    text.split_whitespace().count()\n}\n",
    "tests/words.rs": "use word_count::count_words;\n\n#[test]\nfn counts_words() {\n"
    '    assert_eq!(count_words("a bb  ccc"), 3);\n}\n\n#[test]\nfn empty() {\n'
    '    assert_eq!(count_words(""), 0);\n}\n',
}


@pytest.mark.parametrize(
    ("template", "files", "fence", "manifest"),
    [("node", NODE_FILES, "javascript", "package.json"), ("rust", RUST_FILES, "rust", "Cargo.toml")],
)
async def test_template_generates_and_passes(
    template: str,
    files: dict[str, str],
    fence: str,
    manifest: str,
    tmp_path: Path,
    scripted_llm: Any,
    make_settings: Any,
) -> None:
    specs = [
        planned(
            p,
            depends_on=tuple(q for q in files if q != p and not q.startswith("test")),
            test=p.startswith("test"),
        )
        for p in files
    ]
    scripted_llm.script(WC_INTERFACES, step="generate_interfaces")
    scripted_llm.script(plan_json(*specs, name="word count"), step="generate_plan")
    scripted_llm.script(file_oracle(files, fence=fence), step="generate_file")
    out = tmp_path / "out"
    settings = make_settings(tmp_path, backend="docker", loop={"diagnosis": False})
    seen, done = await collect(generate(GenerateRequest("a word counter", out, template=template), settings))

    assert done.outcome == "green", done.summary + done.evidence
    ran = [e for e in seen if isinstance(e, ev.TestsRan)]
    assert ran and ran[0].passed == 2 and ran[0].failed == 0
    assert sorted(tree(out)) == sorted([".greenloop/plan.md", manifest, *files])
    plan_request = scripted_llm.requests_for("generate_plan")[0]
    assert template in str(plan_request.messages)
