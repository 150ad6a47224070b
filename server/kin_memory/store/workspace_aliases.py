"""Stamps that follow a repository: which realpath each machine gives to which repository.

A memory keeps the realpath it was stamped with (files are never re-stamped: two machines would rewrite
each other's stamps on every sync). Instead each machine writes, in the synced folder
`.kin-sync/machines/<machine-id>.json` (one file per machine, so two machines never edit the same file):

    {"id": "…", "name": "laptop", "repositories": {"/home/me/src/api": ["url:github.com/me/api", …]}}

and, at read time, a workspace here also sees the paths other machines give to the same repository
(`repo_identity.py`: the same normalized `origin`, or, for repositories with no `origin`, a shared
first commit): `equivalent_stamps`. A path that is a folder on this
machine is never mapped (it is this machine's own workspace, whatever another machine keeps there).

These files arrive by sync, and an agent can write into the store: everything read from them is
untrusted. A file is read bounded (`store.reader`), and kept only when every path in it is an absolute,
canonical-looking stamp and every count and size is within bounds; otherwise it is ignored, with a log
line. Readings are cached with the store's one freshness rule (`store.freshness`).
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..sinks.controls import HOSTILE
from . import sync_trust
from .atomic import write_at
from .freshness import Key, kept_key, key_at, key_of, unchanged
from .machine import Machine, MachineError, this_machine
from .paths import SYNC_DIR, SYNC_MACHINES
from .reader import Refused, read_fd, read_file
from .repo_identity import comparable, identities, valid_identity
from .stamps import stamp_kind, unsafe_stamp

log = logging.getLogger("kin_memory.gitsync")
MACHINES = SYNC_MACHINES
MAX_FILE = 256 * 1024  # bytes of one machine's file
MAX_MACHINES = 64  # machine files read
MAX_REPOSITORIES = 512  # repositories of one machine
MAX_IDENTITIES = 16  # identities of one repository
NAME_LIMIT = 64
_FILE = re.compile(r"^([0-9a-f]{16})\.json$")  # the names kin writes: a machine id
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class MachineFile:
    id: str
    name: str
    repositories: Mapping[str, frozenset[str]]  # realpath on that machine → its identities


Listing = tuple[tuple[str, Key], ...]  # (file name, key kept at the reading); "" is the folder itself


def machines_dir(root: Path) -> Path:
    return Path(root) / SYNC_DIR / MACHINES


# -- validation -------------------------------------------------------------------------------------
def valid_path(path: object) -> bool:
    """An absolute, canonical-looking stamp: what a machine could have stamped a memory with."""
    return (
        isinstance(path, str)
        and path.startswith("/")
        and not path.startswith("//")
        and unsafe_stamp(path) is None
        and stamp_kind(path) == "path"
        and os.path.normpath(path) == path
    )


def _repositories(raw: object) -> dict[str, frozenset[str]] | str:
    if not isinstance(raw, dict):
        return "`repositories` is not an object"
    if len(raw) > MAX_REPOSITORIES:
        return f"over {MAX_REPOSITORIES} repositories"
    found: dict[str, frozenset[str]] = {}
    for path, ids in raw.items():
        if not valid_path(path):
            return "a repository path is not an absolute canonical path"
        if not isinstance(ids, list) or len(ids) > MAX_IDENTITIES or not all(map(valid_identity, ids)):
            return "a repository's identities are not a short list of identities"
        found[path] = frozenset(ids)
    return found


def parse(data: bytes, ident: str) -> MachineFile | str:
    """A machine's file, validated; the reason in words when it is refused."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return "not JSON"
    if not isinstance(raw, dict):
        return "not a JSON object"
    name = raw.get("name", "")
    if not isinstance(name, str) or len(name) > NAME_LIMIT or HOSTILE.search(name):
        return "the name is not one short line"
    repos = _repositories(raw.get("repositories", {}))
    if isinstance(repos, str):
        return repos
    return MachineFile(ident, name or ident, repos)


# -- reading, cached --------------------------------------------------------------------------------
def _folder_stat(root: Path) -> os.stat_result | None:
    """The machines folder's stat, None when it is missing or anything on the way is not a real folder
    (a link planted there is never followed)."""
    try:
        for part in (Path(root) / SYNC_DIR, machines_dir(root)):
            st = os.lstat(part)
            if not stat.S_ISDIR(st.st_mode):
                log.warning("ignored %s: not a folder", part)
                return None
        return st
    except OSError:
        return None


def _entries(root: Path) -> list[tuple[str, os.stat_result | None]]:
    """The machine files read, with their lstat (None when it cannot be had): this machine's first, then
    those of the machines whose own commits wrote them (`sync_trust`), then the rest by name, at most
    MAX_MACHINES: files planted under other names never push a real machine's out."""
    folder = machines_dir(root)
    try:
        names = sorted(n for n in os.listdir(folder) if _FILE.match(n))
    except OSError:
        return []
    if len(names) > MAX_MACHINES:
        log.warning("read the first %d of %d machine files in %s", MAX_MACHINES, len(names), folder)
        vouched, _records = sync_trust.read(root)
        rank = {f"{i}.json": n for n, i in enumerate((this_machine_id(root) or "", *vouched))}
        names.sort(key=lambda n: (rank.get(n, len(rank)), n))
    found: list[tuple[str, os.stat_result | None]] = []
    for name in names[:MAX_MACHINES]:
        try:
            found.append((name, os.lstat(folder / name)))
        except OSError:
            found.append((name, None))
    return found


NO_FILE: Key = 1  # the key kept for a name that could not be stat'ed (never UNSURE: not re-read each time)


def _current(root: Path) -> Listing | None:
    """The folder's and its files' keys now, None without a machines folder."""
    st = _folder_stat(root)
    if st is None:
        return None
    entries = _entries(root)
    return (("", key_of(st)), *((n, NO_FILE if s is None else key_of(s)) for n, s in entries))


def _parsed(folder: Path, name: str, st: os.stat_result | None) -> MachineFile | None:
    """One machine file read and validated; None (and a log line) when it is refused."""
    try:
        if st is None or not stat.S_ISREG(st.st_mode):
            raise Refused("not a regular file", kind="not-regular")
        got = read_file(folder / name, MAX_FILE, within=folder)
    except (Refused, OSError) as exc:
        log.warning("ignored the machine file %s: %s", name, getattr(exc, "reason", None) or exc)
        return None
    parsed = parse(got.data, name.removesuffix(".json"))
    if isinstance(parsed, str):
        log.warning("ignored the machine file %s: %s", name, parsed)
        return None
    return parsed


def _read(root: Path) -> tuple[Listing, tuple[MachineFile, ...]]:
    read_at = time.time()
    st = _folder_stat(root)
    if st is None:
        return (), ()
    folder = machines_dir(root)
    entries = _entries(root)
    # The keys of the stats taken before reading: a file changed meanwhile is read again next time.
    listing = (
        ("", kept_key(st, read_at)),
        *((n, NO_FILE if s is None else kept_key(s, read_at)) for n, s in entries),
    )
    found = (_parsed(folder, n, s) for n, s in entries)
    return listing, tuple(f for f in found if f is not None)


_files: dict[str, tuple[Listing, tuple[MachineFile, ...]]] = {}


def _fresh(kept: Listing, now: Listing | None) -> bool:
    if now is None or len(kept) != len(now):
        return False
    return all(a[0] == b[0] and unchanged(a[1], b[1]) for a, b in zip(kept, now, strict=True))


def machine_files(root: Path) -> tuple[MachineFile, ...]:
    """Every valid machine file of the store (this machine's too), read again only when one changed."""
    now = _current(root)
    if now is None:
        return ()
    hit = _files.get(str(root))
    if hit is not None and _fresh(hit[0], now):
        return hit[1]
    _files[str(root)] = read = _read(root)
    return read[1]


def mapping_key(root: Path) -> str:
    """A digest of what the machine files are now ("" without them): whatever was computed from them
    (a check's findings) holds while it stays the same."""
    now = _current(root)
    return "" if now is None else repr(now)


# -- this machine -----------------------------------------------------------------------------------
_ids: dict[str, str | None] = {}


def _machine(root: Path) -> Machine | None:
    """This machine as the sync knows it (`machine.py`, made on first use); None when it cannot be
    had (a store whose hidden folder is refused)."""
    try:
        return this_machine(Path(root))
    except (MachineError, OSError):
        return None


def this_machine_id(root: Path) -> str | None:
    """This machine's id in the store, asked once per process (it never changes)."""
    key = str(root)
    if key not in _ids:
        found = _machine(root)
        _ids[key] = None if found is None else found.id
    return _ids[key]


def _others(root: Path) -> tuple[tuple[MachineFile, ...], tuple[MachineFile, ...]]:
    """(every machine file, those of the other machines)."""
    files = machine_files(root)
    if not files:
        return files, ()
    me = this_machine_id(root)
    return files, tuple(f for f in files if f.id != me)


# -- the mapping ------------------------------------------------------------------------------------
_workspace_ids: dict[str, tuple[Key | None, frozenset[str]]] = {}
_found: dict[tuple[str, str], tuple[tuple[MachineFile, ...], frozenset[str], tuple[str, ...]]] = {}


def _identities_of(workspace: str) -> frozenset[str]:
    """The workspace's identities, asked of git again only when its `.git/config` changed."""
    key = key_at(os.path.join(workspace, ".git", "config"))
    hit = _workspace_ids.get(workspace)
    if hit is not None and hit[0] == key:
        return hit[1]
    ids = frozenset(identities(workspace))
    _workspace_ids[workspace] = (key, ids)
    return ids


def equivalent_stamps(root: Path, workspace: str) -> tuple[str, ...]:
    """The paths other machines give to the repository at `workspace` (a realpath here): the stamps a
    memory of this repository may carry when it was written there. Never a folder of this machine that
    holds another repository."""
    if not os.path.isabs(workspace):
        return ()
    files, others = _others(root)
    if not others:
        return ()  # no other machine: not even git is asked
    ids = _identities_of(workspace)
    if not ids:
        return ()
    hit = _found.get((str(root), workspace))
    if hit is not None and hit[0] is files and hit[1] == ids:
        found = hit[2]
    else:
        seen = dict.fromkeys(
            p
            for f in others
            for p, theirs in f.repositories.items()
            if p != workspace and ids & comparable(theirs)
        )
        found = tuple(seen)
        _found[(str(root), workspace)] = (files, ids, found)
    # A path that is a folder here is this machine's own: mapped only when it holds a clone of the same
    # repository (two clones on one machine), never another repository's memories.
    return tuple(p for p in found if not os.path.isdir(p) or ids & _identities_of(p))


def local_repository(root: Path, stamp: str, also: Iterable[str] = ()) -> str | None:
    """The folder of this machine that `stamp` (another machine's path) stands for: one of the
    repositories this machine recorded, or of `also` (the active workspaces), whose equivalent stamps
    hold it. None when the repository is not known here, or the stamp is a folder of this machine."""
    if not os.path.isabs(stamp) or os.path.isdir(stamp):
        return None
    files, others = _others(root)
    if not any(stamp in f.repositories for f in others):
        return None
    me = this_machine_id(root)
    mine = [p for f in files if f.id == me for p in f.repositories]
    for here in dict.fromkeys((*also, *mine)):
        if os.path.isabs(here) and os.path.isdir(here) and stamp in equivalent_stamps(root, here):
            return here
    return None


def new_homes(root: Path, stamp: str, candidates: Iterable[str]) -> tuple[str, ...]:
    """Where the repository this machine recorded at `stamp` (a path that is no folder any more: it
    moved) is now: the folders among `candidates` and this machine's recorded repositories whose identity
    is the one recorded for `stamp` (the same comparison as the mapping between machines). Only this
    machine's own record is read: the stamp is a path of this machine. () when nothing was recorded for
    it, or no folder matches; two clones of it both match (the person chooses)."""
    if not os.path.isabs(stamp) or os.path.isdir(stamp):
        return ()
    me = this_machine_id(root)
    mine = next((f for f in machine_files(root) if f.id == me), None)
    recorded = mine.repositories.get(stamp) if mine is not None else None
    if not recorded:
        return ()
    wanted = comparable(recorded)
    found = []
    for here in dict.fromkeys((*candidates, *(mine.repositories if mine else ()))):
        if here != stamp and valid_path(here) and os.path.isdir(here) and _identities_of(here) & wanted:
            found.append(here)
    return tuple(found)


# -- recording this machine's repositories ------------------------------------------------------------
def _open_dir(parent: int, name: str) -> int:
    """A folder below `parent`, made when missing; a link there is refused (ELOOP), never followed."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        os.mkdir(name, 0o700, dir_fd=parent)
        return os.open(name, _DIR_FLAGS, dir_fd=parent)


def _unchanged_at(dir_fd: int, name: str, data: bytes) -> bool:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        return read_fd(fd, MAX_FILE).data == data
    except (Refused, OSError):
        return False
    finally:
        os.close(fd)


def _write(root: Path, name: str, data: bytes) -> bool:
    """Write `.kin-sync/machines/<name>` atomically unless it already holds `data`; True when written."""
    fds = [os.open(os.fspath(root), _DIR_FLAGS)]
    try:
        fds.append(_open_dir(fds[-1], SYNC_DIR))
        fds.append(_open_dir(fds[-1], MACHINES))
        if _unchanged_at(fds[-1], name, data):
            return False  # unchanged: nothing new to sync
        write_at(fds[-1], name, data)
        return True
    finally:
        for fd in reversed(fds):
            os.close(fd)


def _repositories_here(
    workspaces: Iterable[str], before: MachineFile | None, keep: frozenset[str]
) -> dict[str, list[str]]:
    """The repositories among `workspaces` (folders here git knows an identity for) first, then those
    recorded before whose folder is still here, or that `keep` names (gone, but memories still carry
    the path: its identity is how they find the repository's new folder)."""
    repos: dict[str, list[str]] = {}
    for w in workspaces:
        if w not in repos and valid_path(w) and os.path.isdir(w):
            found = sorted(identities(w))
            if found:
                repos[w] = found
    for path, ids in before.repositories.items() if before else ():
        if path not in repos and (os.path.isdir(path) or path in keep):
            repos[path] = sorted(ids)
    return dict(list(repos.items())[:MAX_REPOSITORIES])


def record_workspaces(root: Path, workspaces: Iterable[str], keep: Iterable[str] = ()) -> bool:
    """Record, in this machine's file, the repositories among `workspaces`, with those recorded before
    whose folder is still here or which `keep` names (the stamps memories still carry). Written
    atomically, only when it changed: True then. Never raises."""
    machine = _machine(root)
    if machine is None:
        return False
    before = next((f for f in machine_files(root) if f.id == machine.id), None)
    body = {
        "id": machine.id,
        "name": machine.name[:NAME_LIMIT],
        "repositories": _repositories_here(workspaces, before, frozenset(keep)),
    }
    try:
        return _write(
            Path(root), f"{machine.id}.json", (json.dumps(body, indent=2, sort_keys=True) + "\n").encode()
        )
    except OSError as exc:  # a link or a file where a folder should be: recording is a courtesy
        log.warning("could not record this machine's repositories: %s", exc)
        return False


def record_if_synced(root: Path, workspaces: Iterable[str]) -> bool:
    """record_workspaces for a store that is synced (a git repository): a server starting on a store
    that is not synced asks git nothing and writes nothing."""
    if not os.path.isdir(os.path.join(root, ".git")):
        return False
    return record_workspaces(root, workspaces)
