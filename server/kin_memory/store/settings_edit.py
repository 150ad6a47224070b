"""Turning memory on or off: `memory_enabled` in the GLOBAL settings file, every other byte kept.

The dashboard switch of the seed. Only the global file is ever written (a project file belongs to its
repository, and the product never writes into a repository's `.kin` folder). The one top-level
`memory_enabled = …` line is replaced in place (its indentation and trailing comment kept) or, when the
file has none, a line is added before the first table; the result must parse and say what was asked,
or nothing is written. A global file that is a link (a dotfiles repository) is written where it points.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from .atomic import Changed, create_at, make_dirs, write_at
from .home import home_relative
from .reader import Refused, read_file
from .settings import MAX_SETTINGS_BYTES, global_settings_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

KEY = "memory_enabled"
_ASSIGN = re.compile(
    rb"^(?P<head>[ \t]*memory_enabled[ \t]*=[ \t]*)(?P<value>[^#\r\n]*?)(?P<tail>[ \t]*(?:#[^\r\n]*)?)$"
)
_TABLE = re.compile(rb"^[ \t]*\[")


class SettingsEditError(Exception):
    """The global settings file could not be changed; the message is a sentence naming it."""


def edited(data: bytes, enabled: bool) -> bytes:
    """The file's bytes with `memory_enabled` set: the top-level assignment's value replaced, or a line
    added before the first table (at the end when there is none)."""
    value = b"true" if enabled else b"false"
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    lines = data.splitlines(keepends=True)
    for n, line in enumerate(lines):
        body = line.rstrip(b"\r\n")
        if _TABLE.match(body):
            lines.insert(n, KEY.encode() + b" = " + value + newline)
            return b"".join(lines)
        m = _ASSIGN.match(body)
        if m:
            lines[n] = m["head"] + value + m["tail"] + line[len(body) :]
            return b"".join(lines)
    if data and not data.endswith(b"\n"):
        data += newline
    return data + KEY.encode() + b" = " + value + newline


def set_memory_enabled(enabled: bool, home: Path | None = None) -> Path:
    """Write the switch into the global settings file (created when absent); returns the file written."""
    path = global_settings_path(home)
    shown = str(home_relative(path))
    target = Path(os.path.realpath(path)) if os.path.islink(path) else path
    try:
        expect: os.stat_result | None = os.stat(target, follow_symlinks=False)
        data = read_file(target, MAX_SETTINGS_BYTES).data
    except FileNotFoundError:
        expect, data = None, b""
    except Refused as exc:
        raise SettingsEditError(f"{shown} is {exc.reason}, so it was not changed.") from None
    except OSError as exc:
        raise SettingsEditError(f"{shown} could not be read ({exc.strerror or 'unknown reason'}).") from None
    new = edited(data, enabled)
    try:
        parsed = tomllib.loads(new.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise SettingsEditError(
            f"{shown} is not valid TOML, so it was not changed; fix it first, then switch memory again."
        ) from None
    if parsed.get(KEY) is not enabled:
        raise SettingsEditError(
            f"{shown} sets {KEY} in a form that cannot be changed safely; edit it by hand."
        )
    _write(target, new, expect, shown)
    return path


def _write(target: Path, data: bytes, expect: os.stat_result | None, shown: str) -> None:
    try:
        make_dirs(target.parent)
        fd = os.open(target.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            if expect is None:
                create_at(fd, target.name, data)
            else:
                write_at(fd, target.name, data, expect)
        finally:
            os.close(fd)
    except (Changed, FileExistsError):
        raise SettingsEditError(f"{shown} changed while it was being written; try again.") from None
    except OSError as exc:
        raise SettingsEditError(
            f"{shown} could not be written ({exc.strerror or 'unknown reason'})."
        ) from None
