"""The memory tool's six commands (reference/memory-tool.md), confined to the store root."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kin_memory.store.paths import is_memory_rel
from kin_memory.store.root import VIRTUAL_ROOT

from . import audit, messages
from .atomic import DIR_MODE, create_exclusive, make_dirs, write_atomic
from .guard import GuardError, Target, open_for_read, resolve
from .write_rules import apply as apply_write_rules

COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
MUTATIONS = ("create", "str_replace", "insert", "delete", "rename")
MODES = ("auto", "strict", "plan")
MAX_LINES = 999_999
SNIPPET_LINES = 2
LOCK_NAME = "tool.lock"


@dataclass
class ToolContext:
    root: Path
    workspace: str | None = None
    mode: str = "auto"
    enabled: bool = True
    disabled_by: str | None = None
    confirm: Callable[[str], bool] | None = None


@dataclass
class ToolResult:
    content: str
    is_error: bool


class _Fail(Exception):
    """A command failure carrying the message shown to the model."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _before_commit(path: Path) -> None:
    """Hook between reading a file and committing its edit (tests replace it to simulate a race)."""


_thread_lock = threading.Lock()


# --------------------------------------------------------------------------- parameters


def _str_param(inp: dict, command: str, name: str, *, required: bool = True, default: str | None = None) -> str:
    if name not in inp or inp[name] is None:
        if required:
            raise _Fail(messages.missing_param(command, name))
        return default if default is not None else ""
    value = inp[name]
    if not isinstance(value, str):
        raise _Fail(messages.bad_param(command, name, "a string"))
    return value


def _int_param(inp: dict, command: str, name: str) -> int:
    if name not in inp or inp[name] is None:
        raise _Fail(messages.missing_param(command, name))
    value = inp[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Fail(messages.bad_param(command, name, "an integer"))
    return value


def _guard(root: Path, vpath: str) -> Target:
    try:
        return resolve(root, vpath)
    except GuardError as exc:
        raise _Fail(exc.message) from None


def _norm_virtual(t: Target) -> str:
    return VIRTUAL_ROOT + "".join("/" + p for p in t.parts)


# --------------------------------------------------------------------------- formatting


def format_size(n: int) -> str:
    value = float(n)
    for unit in ("B", "K", "M", "G"):
        if value < 1024 or unit == "G":
            if unit == "B":
                return f"{n}B"
            if value == int(value):
                return f"{int(value)}{unit}"
            return f"{value:.1f}{unit}"
        value /= 1024
    raise AssertionError("unreachable")


def number_lines(lines: list[str], start: int) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, start))


def _tree_size(path: str) -> int:
    total = 0
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False, onerror=lambda e: None):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.startswith("."):
                continue
            with contextlib.suppress(OSError):
                st = os.lstat(os.path.join(dirpath, name))
                if stat.S_ISREG(st.st_mode):
                    total += st.st_size
    return total


def _entry_size(path: str) -> tuple[int, bool] | None:
    """(size, is_dir) for a listing entry, None when it must not be shown (escaping link, special)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return _tree_size(path), True
    if stat.S_ISREG(st.st_mode):
        return st.st_size, False
    return None


def _inside(path: str, root_real: str) -> bool:
    real = os.path.realpath(path)
    if real != root_real and not real.startswith(root_real.rstrip(os.sep) + os.sep):
        return False
    rel = os.path.relpath(real, root_real)
    return rel == "." or not any(c.startswith(".") for c in rel.split(os.sep))


def _children(path: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(path) if not n.startswith("."))
    except OSError:
        return []


def _listing(t: Target) -> str:
    base = _norm_virtual(t)
    root_real = os.fspath(t.root_real)
    top = os.fspath(t.resolved)
    lines = [messages.dir_header(base)]
    info = _entry_size(top) if os.path.exists(top) else (0, True)
    lines.append(f"{format_size(info[0] if info else 0)}\t{base}")

    def walk(dirpath: str, vbase: str, depth: int) -> None:
        for name in _children(dirpath):
            child = os.path.join(dirpath, name)
            if not _inside(child, root_real):
                continue
            entry = _entry_size(child)
            if entry is None:
                continue
            size, is_dir = entry
            vchild = f"{vbase}/{name}"
            lines.append(f"{format_size(size)}\t{vchild}{'/' if is_dir else ''}")
            if is_dir and depth < 2:
                walk(child, vchild, depth + 1)

    if os.path.isdir(top):
        walk(top, base, 1)
    return "\n".join(lines)


# --------------------------------------------------------------------------- reading / committing


def _read_text(t: Target, *, missing: str) -> tuple[str, os.stat_result]:
    try:
        data, st = open_for_read(t)
    except GuardError as exc:
        raise _Fail(exc.message) from None
    except FileNotFoundError:
        raise _Fail(missing) from None
    except IsADirectoryError:
        raise _Fail(messages.not_a_file(t.virtual)) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Fail(messages.SYMLINK_ESCAPE) from None
        if exc.errno == errno.ENOTDIR:
            raise _Fail(missing) from None
        raise _Fail(messages.os_error(t.virtual, "read")) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Fail(messages.not_utf8(t.virtual)) from None
    return text, st


@contextlib.contextmanager
def _store_lock(root_real: Path):
    with _thread_lock:
        fd = None
        with contextlib.suppress(Exception):
            index = root_real / audit.INDEX_DIR
            if not os.path.lexists(index):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(index, DIR_MODE)
                    os.chmod(index, DIR_MODE)
            fd = os.open(index / LOCK_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fd is not None:
                os.close(fd)  # closing releases the flock


def _commit(t: Target, before: os.stat_result, new_text: str) -> None:
    """Write `new_text` unless the file changed since `before` was taken."""
    _before_commit(t.resolved)
    with _store_lock(t.root_real):
        try:
            now = os.stat(t.resolved, follow_symlinks=False)
        except FileNotFoundError:
            raise _Fail(messages.vanished(t.virtual)) from None
        if (now.st_mtime_ns, now.st_size, now.st_ino) != (before.st_mtime_ns, before.st_size, before.st_ino):
            raise _Fail(messages.conflict(t.virtual))
        try:
            write_atomic(t.resolved, new_text.encode("utf-8"))
        except FileNotFoundError:
            raise _Fail(messages.vanished(t.virtual)) from None
        except OSError:
            raise _Fail(messages.os_error(t.virtual, "write")) from None


# --------------------------------------------------------------------------- commands


def _view(inp: dict, ctx: ToolContext) -> str:
    path = _str_param(inp, "view", "path")
    t = _guard(ctx.root, path)
    real = os.fspath(t.resolved)
    if not os.path.lexists(real):
        if t.is_root:
            return _listing(t)
        raise _Fail(messages.not_found(path))
    if os.path.isdir(real):
        return _listing(t)
    if not os.path.isfile(real):
        raise _Fail(messages.unsupported(path))
    view_range = inp.get("view_range")
    if view_range is not None and not (
        isinstance(view_range, (list, tuple)) and len(view_range) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in view_range)
    ):
        raise _Fail(messages.bad_param("view", "view_range", "[start, end] integers"))
    outcome = "error"
    try:
        text, _ = _read_text(t, missing=messages.not_found(path))
        lines = text.split("\n")
        if len(lines) > MAX_LINES:
            raise _Fail(messages.too_many_lines(path))
        start = 1
        if view_range is not None:
            a, b = view_range
            start = max(1, a)
            lines = lines[start - 1:] if b == -1 else lines[start - 1:b]
        outcome = "ok"
        return messages.file_header(path) + "\n" + number_lines(lines, start)
    finally:
        audit.record(t.root_real, "view", [path], outcome)


def _create(inp: dict, ctx: ToolContext) -> str:
    path = _str_param(inp, "create", "path")
    text = _str_param(inp, "create", "file_text")
    t = _guard(ctx.root, path)
    _confirm(ctx, "create", path, f"create {path}")
    if t.is_root or os.path.lexists(t.lexical):
        raise _Fail(messages.create_exists(path))
    if is_memory_rel(t.parts):
        text = apply_write_rules(text, ctx.workspace)
    try:
        make_dirs(t.resolved.parent)
        create_exclusive(t.resolved, text.encode("utf-8"))
    except FileExistsError:
        raise _Fail(messages.create_exists(path)) from None
    except NotADirectoryError:
        raise _Fail(messages.os_error(path, "create")) from None
    except OSError:
        raise _Fail(messages.os_error(path, "create")) from None
    return messages.create_ok(path)


def _occurrence_lines(text: str, needle: str) -> list[int]:
    found: list[int] = []
    pos = text.find(needle)
    while pos != -1:
        line = text.count("\n", 0, pos) + 1
        if line not in found:
            found.append(line)
        pos = text.find(needle, pos + 1)
    return found


def _str_replace(inp: dict, ctx: ToolContext) -> str:
    path = _str_param(inp, "str_replace", "path")
    old = _str_param(inp, "str_replace", "old_str")
    new = _str_param(inp, "str_replace", "new_str", required=False, default="")
    if old == "":
        raise _Fail(messages.bad_param("str_replace", "old_str", "a non-empty string"))
    t = _guard(ctx.root, path)
    _confirm(ctx, "str_replace", path, f"str_replace in {path}")
    text, st = _read_text(t, missing=messages.not_found(path))
    count = text.count(old)
    if count == 0:
        raise _Fail(messages.no_match(old, path))
    if count > 1:
        raise _Fail(messages.multiple(old, _occurrence_lines(text, old)))
    pos = text.find(old)
    new_text = text[:pos] + new + text[pos + len(old):]
    _commit(t, st, new_text)
    changed = text.count("\n", 0, pos) + 1
    lines = new_text.split("\n")
    first = max(1, changed - SNIPPET_LINES)
    last = changed + SNIPPET_LINES + new.count("\n")
    return messages.STR_REPLACE_OK_HEADER + number_lines(lines[first - 1:last], first)


def _insert(inp: dict, ctx: ToolContext) -> str:
    path = _str_param(inp, "insert", "path")
    n = _int_param(inp, "insert", "insert_line")
    insert_text = _str_param(inp, "insert", "insert_text")
    t = _guard(ctx.root, path)
    _confirm(ctx, "insert", path, f"insert into {path} at line {n}")
    text, st = _read_text(t, missing=messages.not_found(path))
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if n < 0 or n > len(lines):
        raise _Fail(messages.bad_insert_line(n, len(lines)))
    piece = insert_text[:-1] if insert_text.endswith("\n") else insert_text
    new_lines = lines[:n] + [piece] + lines[n:]
    _commit(t, st, "\n".join(new_lines) + "\n")
    return messages.insert_ok(path)


def _delete(inp: dict, ctx: ToolContext) -> str:
    path = _str_param(inp, "delete", "path")
    t = _guard(ctx.root, path)
    if t.is_root:
        raise _Fail(messages.DELETE_ROOT)
    _confirm(ctx, "delete", path, f"delete {path}")
    target = t.lexical
    if not os.path.lexists(target):
        raise _Fail(messages.delete_missing(path))
    try:
        if not os.path.islink(target) and os.path.isdir(target):
            shutil.rmtree(target)
        else:
            os.unlink(target)
    except FileNotFoundError:
        raise _Fail(messages.vanished(path)) from None
    except OSError:
        raise _Fail(messages.os_error(path, "delete")) from None
    from .atomic import fsync_dir

    fsync_dir(target.parent)
    return messages.delete_ok(path)


def _rename(inp: dict, ctx: ToolContext) -> str:
    old_path = _str_param(inp, "rename", "old_path")
    new_path = _str_param(inp, "rename", "new_path")
    old = _guard(ctx.root, old_path)
    if old.is_root:
        raise _Fail(messages.RENAME_ROOT)
    new = _guard(ctx.root, new_path)
    _confirm(ctx, "rename", old_path, f"rename {old_path} to {new_path}")
    if not os.path.lexists(old.lexical):
        raise _Fail(messages.rename_missing(old_path))
    if new.is_root or os.path.lexists(new.lexical):
        raise _Fail(messages.rename_exists(new_path))
    try:
        make_dirs(new.lexical.parent)
        if os.path.lexists(new.lexical):
            raise _Fail(messages.rename_exists(new_path))
        os.rename(old.lexical, new.lexical)
    except FileNotFoundError:
        raise _Fail(messages.vanished(old_path)) from None
    except OSError:
        raise _Fail(messages.os_error(f"{old_path} to {new_path}", "rename")) from None
    from .atomic import fsync_dir

    fsync_dir(old.lexical.parent)
    fsync_dir(new.lexical.parent)
    return messages.rename_ok(old_path, new_path)


_HANDLERS: dict[str, Callable[[dict, ToolContext], str]] = {
    "view": _view,
    "create": _create,
    "str_replace": _str_replace,
    "insert": _insert,
    "delete": _delete,
    "rename": _rename,
}


def _confirm(ctx: ToolContext, command: str, path: str, description: str) -> None:
    if ctx.mode != "strict":
        return
    ok = False
    if ctx.confirm is not None:
        try:
            ok = bool(ctx.confirm(description))
        except Exception:
            ok = False
    if not ok:
        raise _Fail(messages.declined(command, path))


def _audit_paths(inp: dict) -> list[str]:
    return [v for k in ("path", "old_path", "new_path") if isinstance(v := inp.get(k), str)]


def run_tool(input: dict, ctx: ToolContext) -> ToolResult:  # noqa: A002 - the tool's own name
    """Run one tool call. Never raises: every failure is an is_error result naming virtual paths only."""
    if not ctx.enabled:
        return ToolResult(messages.disabled(ctx.disabled_by), True)
    if not isinstance(input, dict):
        return ToolResult(messages.bad_param("memory", "input", "an object"), True)
    command = input.get("command")
    if not isinstance(command, str) or command not in _HANDLERS:
        return ToolResult(messages.unknown_command(command), True)
    mutation = command in MUTATIONS
    try:
        if mutation and ctx.mode == "plan":
            raise _Fail(messages.plan_mode(command))
        result = ToolResult(_HANDLERS[command](input, ctx), False)
    except _Fail as exc:
        result = ToolResult(exc.message, True)
    except Exception:
        result = ToolResult(f"The {command} command failed on the memory store", True)
    if mutation:
        audit.record(ctx.root, command, _audit_paths(input), "error" if result.is_error else "ok")
    return result
