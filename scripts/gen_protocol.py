"""Generates the editors' mirror of the command protocol from `server/kin_memory/protocol.py`.

Writes `extension-vscode/src/protocol.ts` (TypeScript interfaces and a command → [params, result] map
that types the extension's requests) and `extension-nvim/lua/kin_memory/protocol.lua` (LuaLS
annotations). The Python declaration is the only source: edit it, then run

    python scripts/gen_protocol.py           # rewrite both files
    python scripts/gen_protocol.py --check   # exit 1 if either file is stale (run by the unit tests)

Rules: one type per attrs class reachable from `protocol.COMMANDS`, under the Python class's name, with
the wire keys (`protocol.wire_name`); `Optional` is `T | null`; a field with a default is optional only
in a *parameters* type (the server always sends every result field); `Literal` aliases of the module
(Category, Status, …) become named string unions. `ToolParams` is the raw memory-tool input object.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import io
import sys
import tokenize
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

REPO = Path(__file__).resolve().parent.parent
TS_OUT = REPO / "extension-vscode" / "src" / "protocol.ts"
LUA_OUT = REPO / "extension-nvim" / "lua" / "kin_memory" / "protocol.lua"
COMMAND = "python scripts/gen_protocol.py"


def load_protocol() -> types.ModuleType:
    # This checkout's protocol, not whichever kin-memory happens to be installed in the environment.
    sys.path.insert(0, str(REPO / "server"))
    return importlib.import_module("kin_memory.protocol")


# -- reading the Python declaration -----------------------------------------------------------


@attrs.frozen
class Field:
    wire: str
    type: Any
    optional_key: bool  # may be left out (a parameter with a default)
    doc: str


@attrs.frozen
class Shape:
    name: str
    doc: str
    fields: list[Field]
    params: bool


class Model:
    """The protocol module read once: its wire classes in declaration order, aliases and commands."""

    def __init__(self, protocol: types.ModuleType) -> None:
        self.protocol = protocol
        self.aliases: dict[str, Any] = {
            name: value
            for name, value in vars(protocol).items()
            if typing.get_origin(value) is typing.Literal and not name.startswith("_")
        }
        self.commands = list(protocol.COMMANDS)
        params = {c.params for c in self.commands}
        reachable: set[type] = set()
        for c in self.commands:
            self._reach(c.params, reachable)
            self._reach(c.result, reachable)
        comments: dict[str, dict[str, dict[str, str]]] = {}  # by module: a class may live in a part of it
        for cls in vars(protocol).values():
            if isinstance(cls, type) and attrs.has(cls) and cls.__module__ not in comments:
                comments[cls.__module__] = _field_comments(sys.modules[cls.__module__])
        self.shapes = [
            self._shape(cls, cls in params, comments[cls.__module__].get(cls.__name__, {}))
            for cls in vars(protocol).values()
            if isinstance(cls, type) and cls in reachable
        ]

    def _reach(self, cls: type, seen: set[type]) -> None:
        if cls in seen:
            return
        seen.add(cls)
        for hint in typing.get_type_hints(cls).values():
            for inner in _walk(hint):
                if attrs.has(inner):
                    self._reach(inner, seen)

    def _shape(self, cls: type, params: bool, comments: dict[str, str]) -> Shape:
        doc = inspect.cleandoc(cls.__doc__ or "") if "__doc__" in vars(cls) else ""
        if cls is self.protocol.ToolParams:
            return Shape(cls.__name__, doc, [], params)  # rendered specially: the raw tool input
        hints = typing.get_type_hints(cls)
        fields = [
            Field(
                wire=self.protocol.wire_name(cls, f.name),
                type=hints[f.name],
                optional_key=params and f.default is not attrs.NOTHING,
                doc=comments.get(f.name, ""),
            )
            for f in attrs.fields(cls)
        ]
        return Shape(cls.__name__, doc, fields, params)

    def alias_of(self, hint: Any) -> str | None:
        for name, value in self.aliases.items():
            if hint == value:
                return name
        return None


def _walk(hint: Any):
    yield hint
    for arg in typing.get_args(hint):
        yield from _walk(arg)


def _field_comments(module: types.ModuleType) -> dict[str, dict[str, str]]:
    """The `# …` comments on each class field's lines: they document the wire, so they travel with it."""
    source = inspect.getsource(module)
    by_line: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            by_line[tok.start[0]] = tok.string.lstrip("#").strip()
    out: dict[str, dict[str, str]] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        fields = out.setdefault(node.name, {})
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                end = item.end_lineno or item.lineno
                found = [by_line[n] for n in range(item.lineno, end + 1) if n in by_line]
                if found:
                    fields[item.target.id] = " ".join(found)
    return out


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _split_optional(hint: Any) -> tuple[list[Any], bool]:
    if not _is_union(hint):
        return [hint], False
    args = list(typing.get_args(hint))
    return [a for a in args if a is not type(None)], type(None) in args


def _unsupported(hint: Any) -> typing.NoReturn:
    raise SystemExit(f"gen_protocol: no mapping for the type {hint!r}; extend scripts/gen_protocol.py")


# -- TypeScript -------------------------------------------------------------------------------


def ts_type(model: Model, hint: Any) -> str:
    parts, nullable = _split_optional(hint)
    rendered = [_ts_one(model, p) for p in parts]
    if nullable:
        rendered.append("null")
    return " | ".join(rendered)


def _ts_one(model: Model, hint: Any) -> str:
    alias = model.alias_of(hint)
    if alias:
        return alias
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return " | ".join(_ts_literal(v) for v in typing.get_args(hint))
    if origin is list:
        (item,) = typing.get_args(hint)
        inner = ts_type(model, item)
        return f"({inner})[]" if " " in inner else f"{inner}[]"
    if origin is dict and typing.get_args(hint):
        key, value = typing.get_args(hint)
        return f"Record<{ts_type(model, key)}, {ts_type(model, value)}>"
    if origin is dict or hint is dict:
        return "Record<string, unknown>"
    if _is_union(hint):
        return ts_type(model, hint)
    simple = {str: "string", bool: "boolean", int: "number", float: "number", typing.Any: "unknown"}
    if hint in simple:
        return simple[hint]
    if attrs.has(hint):
        return hint.__name__
    _unsupported(hint)


def _ts_literal(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    _unsupported(value)


def _ts_doc(text: str, indent: str) -> list[str]:
    if not text:
        return []
    lines = text.replace("*/", "*\\/").splitlines()
    if len(lines) == 1:
        return [f"{indent}/** {lines[0]} */"]
    return [f"{indent}/**", *[f"{indent} * {line}".rstrip() for line in lines], f"{indent} */"]


def render_ts(model: Model) -> str:
    out = [
        "// Generated from server/kin_memory/protocol.py by scripts/gen_protocol.py. Do not edit: change the",
        f"// Python protocol and run `{COMMAND}` (the unit tests fail while this file is stale).",
        "",
    ]
    for name, value in model.aliases.items():
        out.append(f"export type {name} = {' | '.join(_ts_literal(v) for v in typing.get_args(value))};")
    for shape in model.shapes:
        out.append("")
        out += _ts_doc(shape.doc, "")
        if shape.name == model.protocol.ToolParams.__name__:
            out.append(f"export interface {shape.name} {{")
            out.append("  command: string;")
            out.append("  [key: string]: unknown;")
            out.append("}")
        elif not shape.fields:
            # An interface with no members would accept any object; `{}` on the wire is exactly this.
            out.append(f"export type {shape.name} = Record<string, never>;")
        else:
            out.append(f"export interface {shape.name} {{")
            for f in shape.fields:
                out += _ts_doc(f.doc, "  ")
                key = f.wire + ("?" if f.optional_key else "")
                out.append(f"  {key}: {ts_type(model, f.type)};")
            out.append("}")
    out += ["", "/** Every `kin.memory.*` command: its parameter type, then its result type. */"]
    out.append("export interface CommandMap {")
    for c in model.commands:
        out += _ts_doc(c.summary, "  ")
        out.append(f'  "{c.name}": [{c.params.__name__}, {c.result.__name__}];')
    out += [
        "}",
        "",
        "export type CommandName = keyof CommandMap;",
        "export type ParamsOf<K extends CommandName> = CommandMap[K][0];",
        "export type ResultOf<K extends CommandName> = CommandMap[K][1];",
        "",
    ]
    return "\n".join(out)


# -- Lua (LuaLS annotations) -----------------------------------------------------------------

LUA_KEYWORDS = set(
    "and break do else elseif end false for function goto if in local nil not or repeat return then true "
    "until while".split()
)


def lua_type(model: Model, hint: Any) -> str:
    parts, nullable = _split_optional(hint)
    rendered = [_lua_one(model, p) for p in parts]
    if nullable:
        rendered.append("nil")
    return "|".join(rendered)


def _lua_one(model: Model, hint: Any) -> str:
    alias = model.alias_of(hint)
    if alias:
        return f"KinMemory.{alias}"
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return "|".join(_ts_literal(v) for v in typing.get_args(hint))
    if origin is list:
        (item,) = typing.get_args(hint)
        inner = lua_type(model, item)
        return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if origin is dict and typing.get_args(hint):
        key, value = typing.get_args(hint)
        return f"table<{lua_type(model, key)},{lua_type(model, value)}>"
    if origin is dict or hint is dict:
        return "table<string,any>"
    if _is_union(hint):
        return lua_type(model, hint)
    simple = {str: "string", bool: "boolean", int: "integer", float: "number", typing.Any: "any"}
    if hint in simple:
        return simple[hint]
    if attrs.has(hint):
        return f"KinMemory.{hint.__name__}"
    _unsupported(hint)


def _lua_key(wire: str) -> str:
    return f'["{wire}"]' if wire in LUA_KEYWORDS or not wire.isidentifier() else wire


def render_lua(model: Model) -> str:
    out = [
        "-- Generated from server/kin_memory/protocol.py by scripts/gen_protocol.py. Do not edit: change the",
        f"-- Python protocol and run `{COMMAND}` (the unit tests fail while this file is stale).",
        "-- LuaLS annotations for the `kin.memory.*` commands' arguments and results; nothing at run time.",
        "",
    ]
    for name, value in model.aliases.items():
        out.append(f"---@alias KinMemory.{name} {'|'.join(_ts_literal(v) for v in typing.get_args(value))}")
    for shape in model.shapes:
        out.append("")
        out += [f"--- {line}".rstrip() for line in shape.doc.splitlines()]
        out.append(f"---@class KinMemory.{shape.name}")
        if shape.name == model.protocol.ToolParams.__name__:
            out.append("---@field command string")
            out.append("---@field [string] any")
            continue
        for f in shape.fields:
            key = _lua_key(f.wire) + ("?" if f.optional_key else "")
            doc = f" # {f.doc}" if f.doc else ""
            out.append(f"---@field {key} {lua_type(model, f.type)}{doc}")
    out += ["", "---@alias KinMemory.CommandName"]
    for c in model.commands:
        out.append(f'---| "{c.name}" # {c.params.__name__} -> {c.result.__name__}: {c.summary}')
    out += ["", "return {}", ""]
    return "\n".join(out)


# -- main -----------------------------------------------------------------------------------

OUTPUTS: list[tuple[Path, Callable[[Model], str]]] = [(TS_OUT, render_ts), (LUA_OUT, render_lua)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    args = parser.parse_args(argv)
    model = Model(load_protocol())
    stale = []
    for path, render in OUTPUTS:
        text = render(model)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if args.check:
            stale.append(path.relative_to(REPO).as_posix())
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(REPO).as_posix()}")
    if stale:
        print(
            f"out of date with server/kin_memory/protocol.py: {', '.join(stale)}; run `{COMMAND}`",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
