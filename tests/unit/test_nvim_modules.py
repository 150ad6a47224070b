"""The Neovim plugin's Lua modules stay small and require each other one way only.

Every `require('kin_memory…')` counts, the lazy ones inside functions too (a lazy require is a circle
all the same: the two modules cannot be read or changed apart). A `require(...)` written inside a
message string or a comment is text, not a require. The generated `protocol.lua` counts like the rest.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LUA = REPO / "extension-nvim" / "lua"
MAX_LINES = 600

# A Lua token the scan cares about: a comment, a string, a name, or one character.
_LONG_BRACKET = re.compile(r"\[(=*)\[")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _skip_long(text: str, i: int) -> tuple[int, str] | None:
    """At a `[[` / `[==[` opener: the index after its closer and the text between, else None."""
    opener = _LONG_BRACKET.match(text, i)
    if not opener:
        return None
    closer = "]" + opener.group(1) + "]"
    end = text.find(closer, opener.end())
    end = len(text) if end == -1 else end
    return end + len(closer), text[opener.end() : end]


def _skip_quoted(text: str, i: int) -> tuple[int, str]:
    """At a `'` or `"`: the index after the closing quote and the string's raw content."""
    quote, j = text[i], i + 1
    while j < len(text) and text[j] != quote and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return j + 1, text[i + 1 : j]


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, value) for names, strings and punctuation; comments and blanks dropped."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        c = text[i]
        if text.startswith("--", i):
            long = _skip_long(text, i + 2)
            eol = text.find("\n", i)
            i = long[0] if long else (len(text) if eol == -1 else eol)
        elif c in "'\"":
            i, value = _skip_quoted(text, i)
            out.append(("string", value))
        elif c == "[" and _LONG_BRACKET.match(text, i):
            i, value = _skip_long(text, i) or (i + 1, "")
            out.append(("string", value))
        elif name := _NAME.match(text, i):
            out.append(("name", name.group()))
            i = name.end()
        else:
            if not c.isspace():
                out.append(("punct", c))
            i += 1
    return out


def required(text: str) -> set[str]:
    """The `kin_memory…` modules a Lua source requires: `require('m')`, `require 'm'`, `require "m"`."""
    tokens = _tokens(text)
    found: set[str] = set()
    for n, (kind, value) in enumerate(tokens):
        if kind != "name" or value != "require":
            continue
        rest = tokens[n + 1 : n + 3]
        arg = rest[1] if rest[:1] == [("punct", "(")] and len(rest) > 1 else (rest[0] if rest else None)
        if arg and arg[0] == "string" and (arg[1] == "kin_memory" or arg[1].startswith("kin_memory.")):
            found.add(arg[1])
    return found


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "init":
        parts.pop()
    return ".".join(parts)


def require_graph(root: Path) -> dict[str, set[str]]:
    return {
        module_name(f, root): required(f.read_text(encoding="utf-8")) for f in sorted(root.rglob("*.lua"))
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every require circle, each once, as the path of module names that closes it."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def walk(module: str, path: list[str]) -> None:
        for dep in sorted(graph.get(module, set())):
            if dep in path:
                loop = path[path.index(dep) :] + [dep]
                if frozenset(loop) not in seen:
                    seen.add(frozenset(loop))
                    found.append(loop)
            elif dep in graph:
                walk(dep, path + [dep])

    for start in sorted(graph):
        walk(start, [start])
    return found


def test_the_scan_counts_lazy_requires_and_not_text() -> None:
    source = """
local core = require('kin_memory.core')
local function later() return require "kin_memory.review" end
local f = require 'kin_memory.server'
-- require('kin_memory.commented')
--[[ require('kin_memory.block_comment') ]]
local hint = "require('kin_memory').setup({ cmd = … })"
local long = [==[ require('kin_memory.long_string') ]==]
local other = require('vim.lsp')
"""
    assert required(source) == {"kin_memory.core", "kin_memory.review", "kin_memory.server"}


def test_the_circle_search_finds_a_lazy_back_edge() -> None:
    graph = {"kin_memory": {"kin_memory.bulk"}, "kin_memory.bulk": {"kin_memory"}, "kin_memory.core": set()}
    assert circles(graph) == [["kin_memory", "kin_memory.bulk", "kin_memory"]]


def test_neovim_modules_require_each_other_without_circles() -> None:
    graph = require_graph(LUA)
    assert "kin_memory" in graph and "kin_memory.core" in graph
    assert circles(graph) == []


def test_no_neovim_module_requires_the_plugin_entry() -> None:
    # `kin_memory` (init.lua) is the top: setup() and the public API. Below it, nothing reaches up.
    back = sorted(m for m, deps in require_graph(LUA).items() if "kin_memory" in deps)
    assert back == []


def test_every_neovim_module_is_at_most_600_lines() -> None:
    sizes = {
        f.relative_to(REPO).as_posix(): len(f.read_text(encoding="utf-8").splitlines())
        for f in sorted(LUA.rglob("*.lua"))
    }
    assert sizes, "no Lua module found"
    assert {path: n for path, n in sizes.items() if n > MAX_LINES} == {}
