"""A hostile co-worker with push access to the remote: each call makes one commit with raw git plumbing
(`hash-object`, `mktree`, `commit-tree`, `update-ref`) straight in the bare remote, so the commit can
hold what no kin-memory would write: odd trailers, a `.gitignore` or `.gitattributes`, planted records
and machine files, huge blobs, and tree entries named `..`, `.GIT`, links or gitlinks."""

from __future__ import annotations

import subprocess
from pathlib import Path

Entry = tuple[str, str, str]  # (mode, type, object)
ENV = {"GIT_AUTHOR_NAME": "mallory", "GIT_AUTHOR_EMAIL": "m@example.com",
       "GIT_COMMITTER_NAME": "mallory", "GIT_COMMITTER_EMAIL": "m@example.com"}  # fmt: skip
MALLORY = "Kin-Machine: 00000000000000aa mallory"


def _git(remote: Path, *args: str, data: bytes | None = None) -> str:
    import os

    done = subprocess.run(["git", "--git-dir", str(remote), *args], input=data, capture_output=True,
                          check=True, env={**os.environ, **ENV})  # fmt: skip
    return done.stdout.decode().strip()


def blob(remote: Path, data: bytes) -> Entry:
    return ("100644", "blob", _git(remote, "hash-object", "-w", "--stdin", data=data))


def link(remote: Path, target: str) -> Entry:
    return ("120000", "blob", _git(remote, "hash-object", "-w", "--stdin", data=target.encode()))


def gitlink(commit: str) -> Entry:
    return ("160000", "commit", commit)


def head(remote: Path) -> str | None:
    done = subprocess.run(["git", "--git-dir", str(remote), "rev-parse", "-q", "--verify", "refs/heads/main"],
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip() or None


def flat(remote: Path, commit: str | None) -> dict[str, Entry]:
    """Every leaf of a commit's tree by path."""
    if commit is None:
        return {}
    out = {}
    for line in _git(remote, "ls-tree", "-r", "-z", "--full-tree", commit).split("\0"):
        if line:
            meta, _, path = line.partition("\t")
            mode, kind, oid = meta.split(" ")
            out[path] = (mode, kind, oid)
    return out


def tree(remote: Path, leaves: dict[str, Entry]) -> str:
    """A tree holding these leaves (paths split on `/`; a name may be anything mktree takes)."""
    here: dict[str, Entry] = {}
    below: dict[str, dict[str, Entry]] = {}
    for path, entry in leaves.items():
        first, _, rest = path.partition("/")
        if rest:
            below.setdefault(first, {})[rest] = entry
        else:
            here[first] = entry
    lines = [f"{m} {k} {o}\t{name}" for name, (m, k, o) in here.items()]
    lines += [f"040000 tree {tree(remote, sub)}\t{name}" for name, sub in below.items()]
    return _git(remote, "mktree", "-z", data="".join(f"{line}\0" for line in lines).encode())


def commit(remote: Path, changes: dict[str, bytes | Entry | None], message: str = "",
           trailers: tuple[str, ...] = (MALLORY,)) -> str:  # fmt: skip
    """One commit on the remote's main: the current tree with `changes` (bytes: a file; an Entry: as
    given; None: removed), the message with `trailers`; main is moved to it."""
    parent = head(remote)
    leaves = flat(remote, parent)
    for path, change in changes.items():
        if change is None:
            leaves.pop(path, None)
        else:
            leaves[path] = blob(remote, change) if isinstance(change, bytes) else change
    body = (message or "A change") + "\n\n" + "\n".join(trailers) + "\n"
    args = ["commit-tree", tree(remote, leaves)] + (["-p", parent] if parent else [])
    made = _git(remote, *args, data=body.encode())
    _git(remote, "update-ref", "refs/heads/main", made)
    return made
