"""How greenloop's LSP payloads cross the wire: camelCase both ways, and a strict reading that says what is wrong.

A string where a list of strings belongs is an error, not a list of characters; a bad argument is
`InvalidParams` naming the field (`outDir: expected a string`), never a crash of the daemon.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from lsprotocol import converters
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import default_converter

from greenloop.lsp.protocol import PAYLOADS


def camel(name: str) -> str:
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part.title() for part in rest)


def _strict_primitives(converter: cattrs.Converter) -> None:
    def exact(kind: type, label: str) -> Callable[[Any, type], Any]:
        def hook(value: Any, _: type) -> Any:
            ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                return float(value)
            if not ok:
                raise TypeError(f"expected {label}, got {type(value).__name__}")
            return value

        return hook

    converter.register_structure_hook(str, exact(str, "a string"))
    converter.register_structure_hook(int, exact(int, "an integer"))
    converter.register_structure_hook(float, exact(float, "a number"))
    converter.register_structure_hook(bool, exact(bool, "a boolean"))

    def string_list(value: Any, _: type) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TypeError("expected a list of strings")
        return list(value)

    converter.register_structure_hook_func(lambda t: t == list[str], string_list)


def _strict_converter() -> cattrs.Converter:
    strict = converters.get_converter(cattrs.Converter(forbid_extra_keys=False))
    _strict_primitives(strict)
    return strict


_STRICT = _strict_converter()


def _register(converter: cattrs.Converter, cls: type) -> None:
    """camelCase both ways; nulls are kept when writing (the extension reads `null`, not absence)."""
    names = {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}
    converter.register_unstructure_hook(cls, make_dict_unstructure_fn(cls, converter, **names))  # type: ignore[arg-type]
    converter.register_structure_hook(cls, make_dict_structure_fn(cls, _STRICT, **names))  # type: ignore[arg-type]
    _STRICT.register_structure_hook(cls, make_dict_structure_fn(cls, _STRICT, **names))  # type: ignore[arg-type]


def make_converter() -> cattrs.Converter:
    """pygls' converter plus hooks for every greenloop payload type."""
    converter = default_converter()
    for cls in PAYLOADS:
        _register(converter, cls)
    return converter


_CONVERTER = make_converter()
T = TypeVar("T")


def to_json(value: Any) -> Any:
    """A payload as JSON-ready data (camelCase keys)."""
    return _CONVERTER.unstructure(value)


def parse(kind: type[T], value: Any, *, what: str) -> T:
    """Structure one JSON object into `kind`, or raise InvalidParams saying what is wrong."""
    if not isinstance(value, dict):
        raise JsonRpcInvalidParams(f"{what}: expected a JSON object, got {_json_type(value)}")
    try:
        return _STRICT.structure(value, kind)
    except cattrs.ClassValidationError as exc:
        problems = "; ".join(_humane(line) for line in cattrs.transform_error(exc, path=""))
        raise JsonRpcInvalidParams(f"{what}: {problems}") from exc
    except (TypeError, ValueError, KeyError) as exc:
        raise JsonRpcInvalidParams(f"{what}: {exc}") from exc


def parse_command_args(kind: type[T], command: str, arguments: Sequence[Any]) -> T:
    """`workspace/executeCommand` arguments: exactly one JSON object (none counts as `{}`)."""
    if not arguments:
        return parse(kind, {}, what=command)
    if len(arguments) != 1:
        raise JsonRpcInvalidParams(
            f"{command}: expected one argument (a JSON object in a list), got {len(arguments)}"
        )
    return parse(kind, arguments[0], what=command)


def _humane(line: str) -> str:
    """cattrs' 'required field missing @ $.outDir' -> 'outDir: required field missing'."""
    text, _, where = line.rpartition(" @ ")
    where = ".".join(camel(part) for part in where.lstrip("$").lstrip(".").split("."))
    if "not in literal" in text:  # "unknown error (java not in literal typing.Literal['python', ...])"
        allowed = text.partition("Literal[")[2].rstrip("])").replace("'", "")
        text = f"must be one of {allowed}"
    elif text.startswith("invalid value for type, expected "):
        text = "expected " + text.removeprefix("invalid value for type, expected ").replace("str", "string")
    return f"{where}: {text}" if where and text else line


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )
