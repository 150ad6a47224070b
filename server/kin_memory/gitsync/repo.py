"""The store as a git repository: made on first use (branch `main`), its own rules, its one remote.

The hidden folder (indexes, history, this machine's identity) and the atomic writer's temporary files are
never committed (commitset.py decides what is). A commit identity is given on the command line only when the person's git has none:
their own configuration is never written.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..store.atomic import TEMP_PREFIX, write_at
from ..store.machine import Machine
from ..store.paths import HIDDEN_DIR
from . import git
from .git import SyncError

BRANCH = "main"
REF = f"refs/heads/{BRANCH}"
REMOTE = "origin"
TRACKING = f"refs/remotes/{REMOTE}/{BRANCH}"
# What the product keeps in the store for this machine only: its hidden folder and the atomic writer's
# temporary files (at any depth). Editors' swap and backup files are not memories either. Written to the
# repository's own `info/exclude` (never synced) so that the person's `git status` agrees; a sync itself
# reads no ignore file (commitset.py chooses what it commits).
IGNORED = (f"/{HIDDEN_DIR}/", f"{TEMP_PREFIX}*", ".*.swp", "*~", ".DS_Store")
_EXCLUDE_HEADER = "# Kept by kin-memory on each machine only: never synced.\n"
# `info/attributes` outranks every `.gitattributes` in the tree, synced or not: the store's files are
# bytes (no filter, no end-of-line or encoding conversion) and merged by git's built-in text merge,
# whose conflicts kin settles and records (merge.py): no merge driver, no union merge.
ATTRIBUTES = (
    "# Written by kin-memory: the store's files are bytes, merged by kin's own rules.\n"
    "* -text -filter -ident !eol !working-tree-encoding !diff merge=text\n"
)
_READ_LIMIT = 1024 * 1024
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def is_repo(root: Path) -> bool:
    return os.path.isdir(root / ".git") and not os.path.islink(root / ".git")


def ensure_repo(root: Path) -> bool:
    """Make the store a git repository on branch main unless it is one; its own rules are kept up to
    date either way. True when the repository was made now."""
    dot_git = root / ".git"
    made = False
    if os.path.lexists(dot_git) and not is_repo(root):
        raise SyncError(
            "The store's .git is not a folder (a link or a file): sync uses only a repository of its own."
        )
    if not is_repo(root):
        git.run(None, ["init", "-q", f"--initial-branch={BRANCH}", os.fspath(root)],
                what="Making the store a git repository", cwd=root)  # fmt: skip
        made = True
    _ensure_branch(root)
    ensure_rules(root)
    return made


def _ensure_branch(root: Path) -> None:
    done = git.run(root, ["symbolic-ref", "-q", "HEAD"], what="Reading the store's branch", ok=(0, 1))
    current = git.one(done.out)
    if current == REF:
        return
    if done.code == 0 and head(root, current) is None:  # no commit yet: simply start on main
        git.run(root, ["symbolic-ref", "HEAD", REF], what="Choosing the store's branch")
        return
    shown = current.removeprefix("refs/heads/") if current else "no branch (a detached HEAD)"
    raise SyncError(
        f"The store's git repository is on {shown}; sync works on the branch {BRANCH}: "
        f"switch the store's repository to {BRANCH}, then sync again."
    )


def _info_fd(root: Path) -> int:
    """The repository's `info` folder (made when missing), opened without following a link."""
    fd = os.open(os.fspath(root / ".git"), _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0))
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir("info", 0o755, dir_fd=fd)
        return os.open("info", _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0), dir_fd=fd)
    finally:
        os.close(fd)


def _read_at(dir_fd: int, name: str) -> bytes | None:
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, _READ_LIMIT)
    finally:
        os.close(fd)


def ensure_rules(root: Path) -> None:
    """The repository's own rules, kept on this machine only: `info/attributes` as ATTRIBUTES, and
    `info/exclude` naming everything in IGNORED (lines the person added stay)."""
    try:
        info = _info_fd(root)
    except OSError as exc:
        raise SyncError(f"The store's git repository cannot be used: {exc.strerror}.") from None
    try:
        if _read_at(info, "attributes") != ATTRIBUTES.encode():
            write_at(info, "attributes", ATTRIBUTES.encode())
        text = (_read_at(info, "exclude") or b"").decode("utf-8", "surrogateescape")
        missing = [line for line in IGNORED if line not in set(text.splitlines())]
        if missing:
            body = text or _EXCLUDE_HEADER
            body += ("" if body.endswith("\n") else "\n") + "".join(f"{line}\n" for line in missing)
            write_at(info, "exclude", body.encode("utf-8", "surrogateescape"))
    finally:
        os.close(info)


def head(root: Path, ref: str = REF) -> str | None:
    """The commit a ref names, None when it has none."""
    done = git.run(root, ["rev-parse", "-q", "--verify", f"{ref}^{{commit}}"], what="Reading the store's history",
                   ok=(0, 1, 128))  # fmt: skip
    return git.one(done.out) if done.code == 0 and done.out.strip() else None


_SCHEMES = ("file", "ssh", "https", "http")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_SCP = re.compile(r"^(?:[^@/]+@)?(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):(?!//)")
ADDRESSES = "a folder, file://, ssh://, an ssh address like host:path, https:// or http://"


def _checked_url(url: str, root: Path | None = None) -> str:
    """The remote's address as git will use it, or SyncError: only a folder, `file://`, `ssh://`, ssh's
    `host:path`, `https://` and `http://`; never a transport helper (`fd::`, `ext::`, …: they run
    commands or wait on a descriptor), never the store itself or a folder inside it."""
    url = url.strip()
    if not url or any(ord(c) < 32 or ord(c) == 127 for c in url):
        raise SyncError("The remote's address must be one line of text, like a folder or a git URL.")
    if url.startswith("-"):
        raise SyncError("A remote's address cannot begin with a dash.")
    scheme = _SCHEME.match(url)
    head = url.split("/", 1)[0]
    if scheme is not None:
        if scheme.group(1).lower() not in _SCHEMES:
            raise SyncError(f"A remote's address must be {ADDRESSES}: {git.redact(url)} is none of these.")
    elif "::" in head or (":" in head and not _SCP.match(url)):
        raise SyncError(f"A remote's address must be {ADDRESSES}: {git.redact(url)} is none of these.")
    url = _absolute_if_folder(url)
    if root is not None:
        folder = _folder_of(url)
        real_root = os.path.realpath(root)
        if folder is not None and (folder == real_root or folder.startswith(real_root + os.sep)):
            raise SyncError("The store cannot be its own remote: give a repository outside the store.")
    return url


def _folder_of(url: str) -> str | None:
    """The realpath a local address names (None for a network address)."""
    if url.lower().startswith("file://"):
        return os.path.realpath(unquote(urlsplit(url).path))
    if os.path.isabs(url):
        return os.path.realpath(url)
    return None


def _absolute_if_folder(url: str) -> str:
    """A folder given relative to where the person is (not to the store, where git runs) made absolute;
    URLs (`scheme://`) and ssh's `host:path` stay as given."""
    head = url.split("/", 1)[0]
    if "://" in url or (":" in head and not os.path.isabs(url)):
        return url
    return os.path.abspath(os.path.expanduser(url))


def remote_url(root: Path) -> str | None:
    done = git.run(root, ["config", "--get", f"remote.{REMOTE}.url"], what="Reading the store's remote",
                   ok=(0, 1))  # fmt: skip
    url = git.one(done.out)
    return url if done.code == 0 and url else None


def set_remote(root: Path, url: str) -> None:
    """The remote every sync uses (`origin`): added, or its address changed. The address is stored as
    given: credentials stay with the person's git."""
    url = _checked_url(url, root)
    verb = "set-url" if remote_url(root) is not None else "add"
    git.run(root, ["remote", verb, REMOTE, url], what="Setting the store's remote")


def _configured(root: Path, key: str) -> bool:
    done = git.run(root, ["config", "--get", key], what="Reading git's settings", ok=(0, 1))
    return done.code == 0 and bool(done.out.strip())


def identity_args(root: Path, machine: Machine) -> list[str]:
    """`-c user.name=… -c user.email=…` for the settings the person's git lacks (nothing when both are
    set: their own name goes on their commits)."""
    args: list[str] = []
    if not _configured(root, "user.name"):
        args += ["-c", f"user.name=kin-memory ({machine.name})"]
    if not _configured(root, "user.email"):
        args += ["-c", "user.email=kin-memory@localhost"]
    return args
