"""Definitions and references from tree-sitter tags queries, checked against real code."""

from __future__ import annotations

import ast
import random

import pytest

from greenloop.retrieval.tags import extract
from tests.retrieval.conftest import STDLIB


def _ast_definitions(source: str) -> set[tuple[str, int, int]]:
    """(name, first line incl. decorators, last line) of every def/class, from Python's own parser."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            out.add((node.name, first, node.end_lineno or node.lineno))
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_python_definitions_match_the_interpreters_parser(seed: int) -> None:
    files = sorted(p for p in STDLIB.glob("*.py") if p.stat().st_size < 200_000)
    for path in random.Random(seed).sample(files, 25):
        source = path.read_text("utf-8")
        try:
            expected = _ast_definitions(source)
        except SyntaxError:
            continue
        symbols = extract(path.name, source.encode())
        found = {(d.name, d.start_line): d.end_line for d in symbols.definitions}
        assert set(found) == {(name, start) for name, start, _ in expected}, path
        lines = source.splitlines()
        for name, start, end in expected:
            # tree-sitter keeps trailing comments inside a block; the ast ends at the last statement
            extra = lines[end : found[(name, start)]]
            assert found[(name, start)] >= end and all(not x.strip() or x.strip().startswith("#") for x in extra)


def test_python_methods_signatures_and_references() -> None:
    source = (STDLIB / "json" / "decoder.py").read_bytes()
    symbols = extract("json/decoder.py", source)
    by_symbol = {d.symbol: d for d in symbols.definitions}
    decode = by_symbol["JSONDecoder.decode"]
    assert decode.kind == "method" and decode.parent == "JSONDecoder"
    assert decode.signature == "def decode(self, s, _w=WHITESPACE.match):"
    assert "raw_decode" in decode.refs  # self.raw_decode(...) inside decode
    assert by_symbol["JSONDecoder"].kind == "class"
    assert by_symbol["py_scanstring"].kind == "function"
    assert "scanner" in symbols.imports or "json" in symbols.imports


def test_javascript_definitions_in_npm() -> None:
    npm = next(p for p in ("/usr/lib/node_modules/npm", "/usr/local/lib/node_modules/npm") if __import__("os").path.isdir(p))
    from pathlib import Path

    sources = sorted(Path(npm, "lib").rglob("*.js"))
    assert sources, "npm's own sources are the real JavaScript under test"
    kinds = set()
    for path in sources[:60]:
        symbols = extract(path.name, path.read_bytes())
        for d in symbols.definitions:
            assert 1 <= d.start_line <= d.end_line <= symbols.line_count
            kinds.add(d.kind)
    assert {"class", "method", "function"} <= kinds


def test_javascript_and_typescript_shapes() -> None:
    js = b"const add = (a, b) => a - b;\nfunction mul(a, b) {\n  return add(a, b);\n}\nclass K extends Base {\n  run(x) { return mul(x, 2); }\n}\nmodule.exports = { add, mul };\n"
    symbols = extract("src/math.js", js)
    assert [(d.symbol, d.kind, d.start_line, d.end_line) for d in symbols.definitions] == [
        ("add", "function", 1, 1), ("mul", "function", 2, 4), ("K", "class", 5, 7), ("K.run", "method", 6, 6)
    ]
    assert symbols.definitions[0].signature == "const add = (a, b) =>"
    assert "add" in symbols.definitions[1].refs and "Base" in symbols.definitions[2].refs
    ts = b"import { x } from './util';\nexport interface Shape { area(): number }\nexport class Sq implements Shape {\n  constructor(private s: number) {}\n  area(): number { return x(this.s); }\n}\n"
    symbols = extract("src/shape.ts", ts)
    assert {(d.symbol, d.kind) for d in symbols.definitions} >= {
        ("Shape", "interface"), ("Sq", "class"), ("Sq.area", "method")
    }
    assert "util" in symbols.imports
    assert extract("src/view.tsx", b"export function View() { return <div>{f()}</div>; }\n").definitions[0].name == "View"


def test_rust_impl_methods_and_test_module() -> None:
    rs = b"""pub struct Counter { n: u32 }
impl Counter {
    pub fn incr(&mut self) -> u32 { self.n += 2; helper(self.n) }
}
fn helper(x: u32) -> u32 { x }
#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn it_works() { let mut c = Counter { n: 0 }; assert_eq!(c.incr(), 1); }
}
"""
    symbols = extract("src/lib.rs", rs)
    by_symbol = {d.symbol: d for d in symbols.definitions}
    assert by_symbol["Counter.incr"].kind == "method"
    assert by_symbol["Counter.incr"].signature == "pub fn incr(&mut self) -> u32"
    assert "helper" in by_symbol["Counter.incr"].refs
    assert by_symbol["tests.it_works"].start_line == 10
    assert {"Counter", "incr"} <= set(by_symbol["tests.it_works"].refs)  # names inside assert_eq!(...)


def test_broken_and_unknown_files_never_crash() -> None:
    broken = extract("bad.py", b"def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass C:\n    def m(self): return ok()\n")
    assert broken.has_errors and broken.note
    assert "ok" in {d.name for d in broken.definitions}
    garbage = extract("x.rs", bytes(range(256)) * 10)
    assert garbage.language == "rust"
    unknown = extract("notes/readme.md", b"# title\n\ntext\n")
    assert unknown.language is None and unknown.definitions == () and unknown.line_count == 3
    assert extract("empty.py", b"").definitions == ()


def test_names_pair_with_their_definitions_and_imports_keep_file_order() -> None:
    # The query runs once for all captures (no per-match pairing): a name belongs to the nearest
    # definition above it, the first of definitions sharing a range stands for it, imports in file order.
    js = extract(
        "a.js",
        b"const a = () => 1, b = () => 2;\n"
        b"(function () { function g() { return q(1); } }).h = () => k;\n"
        b"const z = require('zeta'); import y from 'ypsilon';\nexport { w } from 'omega';\n",
    )
    assert [(d.symbol, d.kind, d.refs) for d in js.definitions] == [
        ("a", "function", ()), ("h", "function", ()), ("h.g", "function", ("q",)),
    ]
    assert js.imports == ("zeta", "ypsilon", "omega") and js.module_refs == ("require",)
    ts_file = extract("b.ts", b"export const f = (x: T) => g(x), h = function () { return f; };\n")
    assert [(d.symbol, d.calls) for d in ts_file.definitions] == [("f", ("g",))]
    rust = extract(
        "d.rs",
        b"use std::collections::HashMap;\nmod m { use crate::x::Y; }\n"
        b"impl<T: Clone> Wrap<T> { fn get(&self) -> T { helper(self.0.clone()) } }\n",
    )
    assert [(d.symbol, d.kind) for d in rust.definitions] == [("m", "module"), ("Wrap", "impl"), ("Wrap.get", "method")]
    assert rust.imports == ("std", "collections", "HashMap", "m", "crate", "x", "Y")
    python = extract("c.py", b"@dec(x)\n@other.attr\ndef f(a: int) -> T:\n    return g(a)\nimport os.path, json as j\n")
    (f,) = python.definitions
    assert (f.start_line, f.refs, f.calls) == (1, ("dec", "x", "other", "attr", "int", "T", "g", "a"), ("dec", "g"))
    assert python.imports == ("os", "path", "json")
