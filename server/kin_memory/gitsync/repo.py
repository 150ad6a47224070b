"""The store as a git repository: made on first use (branch `main`), what it ignores, its one remote.

The hidden folder (indexes, history, this machine's identity) and the atomic writer's temporary files are
never committed. A commit identity is given on the command line only when the person's git has none:
their own configuration is never written.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..store.atomic import TEMP_PREFIX, write_at
from ..store.machine import Machine
from ..store.paths import HIDDEN_DIR
from . import git
from .git import SyncError

BRANCH = "main"
REF = f"refs/heads/{BRANCH}"
REMOTE = "origin"
TRACKING = f"refs/remotes/{REMOTE}/{BRANCH}"
IGNORE_NAME = ".gitignore"
# What the product keeps in the store for this machine only: its hidden folder and the atomic writer's
# temporary files (at any depth). Editors' swap and backup files are not memories either.
IGNORED = (f"/{HIDDEN_DIR}/", f"{TEMP_PREFIX}*", ".*.swp", "*~", ".DS_Store")
_IGNORE_HEADER = "# Kept by kin-memory on each machine only: never synced.\n"
_READ_LIMIT = 1024 * 1024
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def is_repo(root: Path) -> bool:
    return os.path.isdir(root / ".git") and not os.path.islink(root / ".git")


def ensure_repo(root: Path) -> bool:
    """Make the store a git repository on branch main unless it is one; its ignore file is kept up to
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
    ensure_ignore(root)
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


def _read_ignore(root_fd: int) -> str | None:
    try:
        st = os.stat(IGNORE_NAME, dir_fd=root_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise SyncError(f"The store's {IGNORE_NAME} is not a regular file: sync will not use it.")
    fd = os.open(IGNORE_NAME, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=root_fd)
    try:
        return os.read(fd, _READ_LIMIT).decode("utf-8", "surrogateescape")
    finally:
        os.close(fd)


def ensure_ignore(root: Path) -> None:
    """The store's .gitignore names everything in IGNORED (lines the person added stay)."""
    root_fd = os.open(os.fspath(root), _DIR_FLAGS)
    try:
        text = _read_ignore(root_fd)
        have = set((text or "").splitlines())
        missing = [line for line in IGNORED if line not in have]
        if not missing:
            return
        body = text if text is not None else _IGNORE_HEADER
        if body and not body.endswith("\n"):
            body += "\n"
        body += "".join(f"{line}\n" for line in missing)
        write_at(root_fd, IGNORE_NAME, body.encode("utf-8", "surrogateescape"))
    finally:
        os.close(root_fd)


def head(root: Path, ref: str = REF) -> str | None:
    """The commit a ref names, None when it has none."""
    done = git.run(root, ["rev-parse", "-q", "--verify", f"{ref}^{{commit}}"], what="Reading the store's history",
                   ok=(0, 1, 128))  # fmt: skip
    return git.one(done.out) if done.code == 0 and done.out.strip() else None


def _checked_url(url: str) -> str:
    url = url.strip()
    if not url or any(ord(c) < 32 or ord(c) == 127 for c in url):
        raise SyncError("The remote's address must be one line of text, like a folder or a git URL.")
    if url.startswith("-"):
        raise SyncError("A remote's address cannot begin with a dash.")
    return _absolute_if_folder(url)


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
    url = _checked_url(url)
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
