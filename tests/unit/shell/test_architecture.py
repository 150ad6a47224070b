"""The shape the shell redesign promised: a core that knows nothing of the LSP, and a thin shell."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "server" / "kin_memory"
CORE = ("store", "findings", "recall", "tool", "reflect")
LSP_ONLY = ("pygls", "lsprotocol")
MAX_FUNCTION_LINES = 60


def modules(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (PACKAGE / folder).rglob("*.py"))


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_the_core_imports_neither_pygls_nor_lsprotocol():
    offenders = {str(p.relative_to(PACKAGE)): sorted(imported(p) & set(LSP_ONLY)) for p in modules(*CORE)}
    assert {k: v for k, v in offenders.items() if v} == {}
    assert modules(*CORE), "the core packages were not found"


def test_no_shell_function_is_longer_than_sixty_lines():
    long = {}
    for path in modules("lsp"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(PACKAGE)}:{node.name}"] = length
    assert long == {}


def test_the_shell_imports_no_cli_module():
    offenders = [
        str(p.relative_to(PACKAGE))
        for p in modules("lsp")
        if any(
            isinstance(n, ast.ImportFrom) and (n.module or "").startswith(("cli", "kin_memory.cli"))
            for n in ast.walk(ast.parse(p.read_text()))
        )  # fmt: skip
    ]
    assert offenders == []


def _ts_imports(src: Path) -> dict[str, set[str]]:
    """Each module of the extension and the modules of the extension it imports (types included)."""
    import os
    import re

    modules = {p.relative_to(src).with_suffix("").as_posix(): p for p in src.rglob("*.ts")}
    pattern = re.compile(r'^(?:import|export)[^;]*?from\s+"(\.[^"]+)"', re.M)
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = {os.path.normpath(os.path.join(os.path.dirname(name), m)).replace(os.sep, "/")
                   for m in pattern.findall(path.read_text())}  # fmt: skip
        edges[name] = {t for t in targets if t in modules}
    return edges


def test_the_vscode_extension_has_no_import_circle():
    edges = _ts_imports(PACKAGE.parents[1] / "extension-vscode" / "src")
    assert len(edges) > 10

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), list(edges[start])
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(edges[node])
        return False

    assert sorted(m for m in edges if reaches(m, m)) == []


# The layers, lowest first: a package imports only from layers below its own (or its own package).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("wording", "sinks", "strict_conversion", "bounds", "plain_json", "quiet_log"),
    ("protocol_wire",),
    ("protocol_sync",),
    ("protocol",),
    ("store",),
    ("editor_settings", "findings"),
    ("caches",),
    ("recall", "tool"),
    ("history", "proposals"),
    ("gitsync",),
    ("reflect",),
    ("initialize", "consolidate"),
    ("stats",),
    ("lsp", "mcp"),
    ("agent",),
    ("cli",),
    ("__main__",),
)
MAX_MODULE_LINES = 600


def _package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every kin_memory module this one imports, at the top or inside a function."""
    name = _module_name(path)
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - node.level + 1]
                target = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                target = node.module or ""
            # `from . import x` imports the module x when there is one, not the package's __init__
            modules = {f"{target}.{a.name}" for a in node.names if _is_module(f"{target}.{a.name}")}
            out |= modules or {target}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return {t for t in out if t.startswith("kin_memory.")}


def _is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _layer(package: str) -> int:
    return next(n for n, names in enumerate(LAYERS) if package in names)


def test_every_import_runs_down_the_layers():
    """The package root (`kin_memory/__init__.py`) is the one place that wires layers together."""
    against = set()
    for path in PACKAGE.rglob("*.py"):
        source = _package_of(_module_name(path))
        if not source:
            continue
        for target in _imports(path):
            package = _package_of(target)
            if package != source and _layer(package) >= _layer(source):
                against.add(f"{path.relative_to(PACKAGE)} -> {target}")
    assert sorted(against) == []


def test_no_python_module_imports_itself_back():
    edges = {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}
    # `from .x import y` names a package or module: an edge to a package counts as one to its __init__.
    edges = {m: {t for t in ts if t in edges} for m, ts in edges.items()}

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), list(edges[start])
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(edges.get(node, ()))
        return False

    assert sorted(m for m in edges if reaches(m, m)) == []


def test_no_module_is_longer_than_six_hundred_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}  # fmt: skip
    assert long == {}


def test_no_function_is_more_complex_than_thirty():
    from radon.complexity import cc_visit

    complex_ = {f"{p.relative_to(PACKAGE)}:{block.name}": block.complexity
                for p in PACKAGE.rglob("*.py") for block in cc_visit(p.read_text())
                if block.complexity > 30}  # fmt: skip
    assert complex_ == {}
