"""This machine as the sync knows it: a random id (names can repeat, ids do not) and a display name.

Kept in the store's hidden folder (`machine.json`), which is never synced: each copy of the store has
its own. Made on first use; the name defaults to the hostname and can be changed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path

from .atomic import write_at
from .paths import HiddenRefused, open_hidden_dir, open_hidden_file

FILE_NAME = "machine.json"
NAME_LIMIT = 64  # characters of a display name
_ID = re.compile(r"^[0-9a-f]{16}$")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
READ_LIMIT = 4096


class MachineError(Exception):
    """This machine's identity cannot be kept or read; the message is a sentence for people."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Machine:
    id: str  # 16 hex digits
    name: str  # one line, shown to people

    def trailer(self) -> str:
        return f"Kin-Machine: {self.id} {self.name}"


def clean_name(name: str) -> str:
    """A display name fit for a commit trailer and a sentence: one line, no control characters."""
    text = " ".join(_UNSAFE.sub(" ", name).split())
    return text[:NAME_LIMIT] or "this machine"


def parse_trailer(value: str) -> Machine | None:
    """`<id> <name>` as written by Machine.trailer; None when it is not one."""
    ident, _, name = value.strip().partition(" ")
    return Machine(ident, clean_name(name)) if _ID.match(ident) else None


def _hidden(root: Path) -> int:
    try:
        return open_hidden_dir(root, create=True)
    except HiddenRefused as exc:
        raise MachineError(f"This machine's identity cannot be kept in the store: {exc.reason}.") from None
    except OSError as exc:
        raise MachineError(f"This machine's identity cannot be kept in the store: {exc.strerror}.") from None


def _read(dir_fd: int) -> Machine | None:
    try:
        fd = open_hidden_file(dir_fd, FILE_NAME, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except HiddenRefused as exc:
        raise MachineError(f"This machine's identity cannot be read: {exc.reason}.") from None
    try:
        raw = os.read(fd, READ_LIMIT)
    finally:
        os.close(fd)
    with contextlib.suppress(ValueError, AttributeError, TypeError):
        data = json.loads(raw)
        if _ID.match(str(data.get("id", ""))):
            return Machine(data["id"], clean_name(str(data.get("name", ""))))
    return None  # unreadable: made again (the id only labels commits; a new one loses nothing)


def _write(dir_fd: int, machine: Machine) -> None:
    body = json.dumps({"id": machine.id, "name": machine.name}, indent=2).encode() + b"\n"
    write_at(dir_fd, FILE_NAME, body)


def this_machine(root: Path) -> Machine:
    """This machine's identity in the store at root, made on first use."""
    dir_fd = _hidden(root)
    try:
        found = _read(dir_fd)
        if found is None:
            found = Machine(secrets.token_hex(8), clean_name(socket.gethostname()))
            _write(dir_fd, found)
        return found
    finally:
        os.close(dir_fd)


def rename_machine(root: Path, name: str) -> Machine:
    """Give this machine another display name (its id stays)."""
    current = this_machine(root)
    renamed = Machine(current.id, clean_name(name))
    dir_fd = _hidden(root)
    try:
        _write(dir_fd, renamed)
    finally:
        os.close(dir_fd)
    return renamed
