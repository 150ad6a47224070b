"""Every message the server, the language server shell and the command line can show reads as a sentence
in the editor's terms: no Python exception class name, and no VS Code setting name (`kinMemory.*`),
since server text is shared by VS Code and Neovim (only the translator that names a setting as the
user's editor spells it may write one).

The templates are collected from the package's source, not listed by hand: every string literal and
f-string outside docstrings and logging calls (the diagnostic catalog, diagnostic messages and fix titles,
command refusals, usage errors, progress titles, CLI output, the memory tool's strings…). An f-string's
expressions are checked too: `__name__`, `__class__` or a repr of an exception would put a class name in
the text at run time.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass
from pathlib import Path

import kin_memory
from kin_memory.findings.catalog import CATALOG

PACKAGE = Path(kin_memory.__file__).parent
LOGGING = {"debug", "info", "warning", "error", "exception", "critical", "log"}
# Where `kinMemory.` or `__name__` is not a message: (module, enclosing function or "<module>"), and why.
ALLOWED = {
    ("lsp/session.py", "setting_label"): "the translator: a setting as the user's editor spells it",
    ("lsp/features/actions.py", "<module>"): "client command identifiers the editors register, not text",
    ("lsp/handlers.py", "handler"): "copies a handler's function name for pygls",
    ("lsp/server.py", "report_server_error"): "recognises pygls's error type; the user sees a sentence",
}
BUILTIN_EXCEPTIONS = {
    name for name, obj in vars(builtins).items() if isinstance(obj, type) and issubclass(obj, BaseException)
}
CLASS_NAME = re.compile(
    r"\b(?:[A-Z][A-Za-z]*(?:Error|Exception|Warning)|Traceback|"
    + "|".join(sorted(BUILTIN_EXCEPTIONS))
    + r")\b"
)
RUNTIME_CLASS_NAME = re.compile(
    r"__name__|__class__|\btype\(|\brepr\((?:exc|err|error|e)\b|\b(?:exc|err|e)!r"
)


@dataclass(frozen=True)
class Template:
    where: str  # module:line
    scope: tuple[str, str]  # (module, enclosing function)
    call: str  # the call the string is an argument of ("" at top level)
    text: str  # literal text, `{…}` for each expression
    expressions: tuple[str, ...]  # an f-string's expressions, as written


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            out.add(id(body[0].value))
    return out


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, source: str) -> None:
        self.module, self.source = module, source
        self.functions: list[str] = []
        self.calls: list[str] = []
        self.found: list[Template] = []
        self.docstrings: set[int] = set()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Call(self, node: ast.Call) -> None:
        name = _call_name(node)
        if name in LOGGING and isinstance(node.func, ast.Attribute):
            return  # the server log, for whoever debugs it
        self.calls.append(name)
        self.generic_visit(node)
        self.calls.pop()

    def _add(self, node: ast.AST, text: str, expressions: tuple[str, ...]) -> None:
        scope = (self.module, self.functions[0] if self.functions else "<module>")
        call = self.calls[-1] if self.calls else ""
        self.found.append(Template(f"{self.module}:{node.lineno}", scope, call, text, expressions))  # type: ignore[attr-defined]

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        parts, expressions = [], []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                source = ast.get_source_segment(self.source, value) or ""
                expressions.append(source)
                parts.append("{…}")
        self._add(node, "".join(parts), tuple(expressions))  # nested constants are part of this one

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and id(node) not in self.docstrings:
            self._add(node, node.value, ())


def templates() -> list[Template]:
    found: list[Template] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        collector = _Collector(path.relative_to(PACKAGE).as_posix(), source)
        collector.docstrings = _docstrings(tree)
        collector.visit(tree)
        found += collector.found
    for code, (_severity, description) in CATALOG.items():
        found.append(Template(f"catalog:{code}", ("findings/catalog.py", "<module>"), "", description, ()))
    return found


TEMPLATES = templates()


def shown(t: Template) -> str:
    return f"{t.where} ({t.call or 'literal'}): {t.text!r}"


def test_the_collector_finds_every_kind_of_message() -> None:
    by_call: dict[str, int] = {}
    for t in TEMPLATES:
        by_call[t.call] = by_call.get(t.call, 0) + 1
    # Enough of each kind that a collector missing one (or the package moving) is noticed.
    assert by_call.get("Finding", 0) >= 30 and by_call.get("Fix", 0) >= 15, by_call
    assert by_call.get("CommandFailed", 0) >= 8 and by_call.get("UsageError", 0) >= 10, by_call
    assert by_call.get("print", 0) >= 30, by_call
    texts = {t.text for t in TEMPLATES}
    assert {"Reindexing memories", "Memory reflection", "hostile or invalid workspace stamp"} <= texts
    assert "The file {…} no longer exists (may have been deleted or renamed concurrently)." in texts
    assert sum(t.where.startswith("catalog:") for t in TEMPLATES) == len(CATALOG)


def test_no_message_names_a_python_exception_class() -> None:
    offenders = [
        shown(t)
        for t in TEMPLATES
        if t.scope not in ALLOWED
        and (CLASS_NAME.search(t.text) or any(RUNTIME_CLASS_NAME.search(e) for e in t.expressions))
    ]
    assert offenders == []


def test_no_message_names_a_setting_of_one_editor() -> None:
    """VS Code's `kinMemory.*` and Neovim's `require('kin_memory').setup` names come only from the
    translator, which asks which editor is connected."""
    editor_names = ("kinMemory.", "require('kin_memory')", ":KinMemory")
    offenders = [
        shown(t) for t in TEMPLATES if any(n in t.text for n in editor_names) and t.scope not in ALLOWED
    ]
    assert offenders == []


def test_the_checks_catch_what_they_are_for() -> None:
    """The patterns themselves: each kind of mistake the tests above look for is caught."""
    assert CLASS_NAME.search("cannot read: PermissionError")
    assert CLASS_NAME.search("settings TOML does not parse: TOMLDecodeError")
    assert CLASS_NAME.search("failed: KeyError")
    assert RUNTIME_CLASS_NAME.search("exc.__class__.__name__") and RUNTIME_CLASS_NAME.search("type(value)")
    assert RUNTIME_CLASS_NAME.search("exc!r")
    assert not CLASS_NAME.search("the model endpoint answered with an error")
