"""Rung "properties": methods the tests read as attributes (`<bound method Account.balance of ...>`): made properties, asked of no model.

A test that writes `account.balance == 100` where the code defines `def balance(self)` compares
the bound method itself, and fails with pytest showing `<bound method BankAccount.balance of
<...>>` (pytest 9 on the host: `where balance = <bank.BankAccount object at 0x..>.balance`).
Whether the tests or the code chose wrongly, the tests are the spec (and in `fix` they cannot
change): a method of `self` alone becomes a `@property`. That change is known before the
round, so it is the round's first candidate, as a SEARCH/REPLACE reply asked of no model, and the
tests judge it like any other (code that calls `balance()` itself then fails, and it is not kept).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from greenloop.agent.changes.syntax import parse
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.ladder_rung import LadderState, Rung
from greenloop.agent.repair.rungs.blocks import blocks_on
from greenloop.agent.repair.splice import unique_prefix
from greenloop_sandbox import TestReport

# pytest's two ways of showing a bound method compared: its repr, or (pytest 9 on the host) its name, `where balance =
# <bank.Account object at 0x..>.balance` (a value read from an attribute shows as the value instead)
_BOUND = re.compile(r"<bound method (?P<owner>[\w.]+)\.(?P<name>\w+) of <"
                    r"|where (?P<named>\w+) = <(?:[\w.]+\.)?(?P<cls>\w+) object at 0x[0-9a-fA-F]+>\.(?P=named)\b")
_SELF_ONLY = re.compile(r"^\(\s*self\s*,?\s*\)$")


def property_reply(report: TestReport, copy: WorkingCopy, is_test: Callable[[str], bool]) -> tuple[str, str]:
    """(the file, a SEARCH/REPLACE reply decorating each such method of it with `@property`); ("", "") for none.
    One file per reply: the first the failures name a method of."""
    wanted: dict[tuple[str, str], None] = {}
    for failure in report.failures:
        for match in _BOUND.finditer(f"{failure.message}\n{failure.traceback}"):
            owner, name = (match["owner"], match["name"]) if match["owner"] else (match["cls"], match["named"])
            wanted[(owner.rsplit(".", 1)[-1], name)] = None
    if not wanted:
        return "", ""
    for path in copy.paths():
        if is_test(path) or not path.endswith(".py"):
            continue
        source = copy.read(path) or ""
        lines = source.splitlines(keepends=True)
        blocks = [_block(path, lines, line) for line in _plain_methods(path, source, wanted)]
        if blocks:
            return path, "\n".join(blocks)
    return "", ""


def _plain_methods(path: str, source: str, wanted: dict[tuple[str, str], None]) -> list[int]:
    """0-based lines of the `def` of each wanted method that takes `self` alone and has no decorator."""
    tree = parse(path, source)
    found: list[int] = []
    stack = [tree.root_node] if tree is not None else []
    while stack:
        node = stack.pop()
        if node.type == "class_definition":
            owner = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            for child in body.named_children if body is not None else ():
                name = child.child_by_field_name("name") if child.type == "function_definition" else None
                params = child.child_by_field_name("parameters")
                if (name is not None and params is not None and owner is not None
                        and ((owner.text or b"").decode(), (name.text or b"").decode()) in wanted
                        and _SELF_ONLY.match((params.text or b"").decode())):
                    found.append(child.start_point[0])
        stack.extend(node.named_children)
    return sorted(found)


def _block(path: str, lines: list[str], first: int) -> str:
    line = lines[first]
    indent = line[: len(line) - len(line.lstrip())]
    newline = "\r\n" if line.endswith("\r\n") else "\n"
    prefix = unique_prefix(line, lines, first)
    search = prefix + line
    replace = prefix + f"{indent}@property{newline}" + line
    return f"{path}\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


class Properties(Rung):
    name = "properties"

    def applies(self, state: LadderState) -> list[Approach]:
        made, known = property_reply(state.report, state.copy, state.tests.is_test)
        if not known:
            return []
        # `<bound method A.b of ...>` compared: the change is known, its round's first candidate
        return [blocks_on(made, "methods the tests read as attributes, made properties", state, given=known)]


RUNG = Properties()
