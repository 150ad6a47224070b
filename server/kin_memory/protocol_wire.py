"""How command arguments and results cross the wire: camelCase keys, strict conversion, and errors that
name the key. The types themselves are protocol.py's; this module imports none of them (a type that reads
its own argument has a `from_wire` class method)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from .strict_conversion import camel, strict_converter

T = TypeVar("T")
# The modules whose attrs classes are converted with wire keys (protocol.py and its parts it re-exports).
PROTOCOL_MODULES = frozenset({"kin_memory.protocol", "kin_memory.protocol_sync"})


class ProtocolError(ValueError):
    """Arguments that do not fit the command's parameter type; the message names the key."""


# Python field → wire key, where camelCase alone is not it.
WIRE_NAMES: dict[tuple[type, str], str] = {}


def wire_name(cls: type, field: str) -> str:
    return WIRE_NAMES.get((cls, field), camel(field))


# -- conversion ----------------------------------------------------------------------------------


def _make_converter() -> cattrs.Converter:
    conv = strict_converter()

    def is_protocol_class(cls: object) -> bool:
        return attrs.has(cls) and getattr(cls, "__module__", "") in PROTOCOL_MODULES  # type: ignore[arg-type]  # any object

    def structure_factory(cls: type) -> Any:
        renames: dict[str, Any] = {f.name: override(rename=wire_name(cls, f.name)) for f in attrs.fields(cls)}
        return make_dict_structure_fn(cls, conv, **renames)

    def unstructure_factory(cls: type) -> Any:
        renames: dict[str, Any] = {f.name: override(rename=wire_name(cls, f.name)) for f in attrs.fields(cls)}
        return make_dict_unstructure_fn(cls, conv, **renames)

    conv.register_structure_hook_factory(is_protocol_class, structure_factory)
    conv.register_unstructure_hook_factory(is_protocol_class, unstructure_factory)
    return conv


converter = _make_converter()


def _describe(exc: BaseException, cls: type, path: str = "") -> list[str]:
    """One readable line per bad key, in wire names ("limit: expected an integer")."""
    if isinstance(exc, cattrs.ClassValidationError):
        out: list[str] = []
        for inner, note in exc.group_exceptions()[0]:
            key = wire_name(cls, note.name)
            inner_cls = note.type if attrs.has(note.type) else cls
            if isinstance(inner, KeyError):
                out.append(f"missing required key: {path}{key}")
            else:
                out += (
                    _describe(inner, inner_cls, f"{path}{key}.")
                    if isinstance(inner, cattrs.BaseValidationError)
                    else [f"{path}{key}: {_reason(inner)}"]
                )
        for inner in exc.group_exceptions()[1]:  # attrs validators: "'limit' must be >= 1: 0"
            match = _VALIDATOR.match(str(inner))
            out.append(f"{path}{wire_name(cls, match[1])}: must be {match[2]}" if match else _reason(inner))
        return out
    if isinstance(exc, cattrs.BaseValidationError):
        return [line for inner in exc.exceptions for line in _describe(inner, cls, path)]
    return [f"{path.rstrip('.')}: {_reason(exc)}" if path else _reason(exc)]


_VALIDATOR = re.compile(r"'(\w+)' must be ([^:]+)")


def _reason(exc: BaseException) -> str:
    text = str(exc)
    return text if text.startswith(("expected", "must")) else "invalid value"


def parse(cls: type[T], value: object) -> T:
    """Structure a command argument (a JSON object, or nothing for `{}`); raises ProtocolError."""
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise ProtocolError("the argument must be a JSON object")
    from_wire = getattr(cls, "from_wire", None)
    if from_wire is not None:  # a type that reads its own argument (the memory tool's input)
        return from_wire(value)
    try:
        return converter.structure(dict(value), cls)
    except (cattrs.BaseValidationError, TypeError, ValueError) as exc:
        raise ProtocolError("; ".join(_describe(exc, cls))) from None


def dump(result: object) -> Any:
    """A result as JSON-ready data with wire keys."""
    return converter.unstructure(result)
