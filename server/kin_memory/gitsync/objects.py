"""Reading and making git objects for a sync: blobs, trees compared, commits, who made a change.

Plumbing only: nothing here touches the store's files or runs a hook.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from ..store.machine import Machine, parse_trailer
from . import git, times
from .times import line as times_line

TRAILER = "Kin-Machine"
TIME_TRAILER = times.TRAILER
# commit, its time, its machine trailers; then its Kin-Time trailers
_LOG_FORMAT = (
    f"%x1e%H%x1f%ct%x1f%(trailers:key={TRAILER},valueonly,separator=%x1f)"
    f"%x1c%(trailers:key={TIME_TRAILER},valueonly,separator=%x1d)"
)
ABSENT = "absent"  # the object a deleted path has in a comparison


@dataclass(frozen=True)
class Delta:
    """One path that differs between two trees (paths are posix, relative to the store)."""

    rel: str
    status: str  # A (created), M (edited), D (deleted), T (type changed)
    old: str | None  # the object before (None: absent)
    new: str | None  # the object after (None: absent)
    new_mode: str
    old_mode: str = "000000"

    def files(self) -> list[str]:
        """The objects of this change that are regular files' contents."""
        pairs = ((self.old, self.old_mode), (self.new, self.new_mode))
        return [oid for oid, mode in pairs if oid is not None and mode.startswith("100")]


def blob(root: Path, oid: str) -> bytes:
    return git.run(root, ["cat-file", "blob", oid], what="Reading a stored version").out


def blobs(root: Path, oids: list[str]) -> dict[str, bytes]:
    """Many blobs in one command (a first sync can bring thousands of memories)."""
    wanted = list(dict.fromkeys(oids))
    if not wanted:
        return {}
    out = git.run(
        root,
        ["cat-file", "--batch"],
        what="Reading stored versions",
        data="".join(f"{o}\n" for o in wanted).encode(),
    ).out
    found: dict[str, bytes] = {}
    at = 0
    for oid in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].decode().split(" ")
        if len(header) != 3 or header[1] != "blob":
            raise git.SyncError(
                "The store's git repository is missing a version it needs: sync again after a fetch."
            )
        size = int(header[2])
        found[oid] = out[end + 1 : end + 1 + size]
        at = end + 1 + size + 1  # the content is followed by a newline
    return found


def hash_blob(root: Path, data: bytes) -> str:
    done = git.run(root, ["hash-object", "-w", "--stdin"], what="Storing a version", data=data)
    return git.one(done.out)


def empty_tree(root: Path) -> str:
    return git.one(git.run(root, ["mktree"], what="Storing an empty folder", data=b"").out)


def tree_from(root: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree holding exactly these (mode, object, path) entries, through an index of its own."""
    index = root / ".git" / f"kin-sync-index-{secrets.token_hex(6)}"
    env = {"GIT_INDEX_FILE": os.fspath(index)}
    try:
        git.run(root, ["read-tree", "--empty"], what="Reading what came in", env=env)
        data = b"".join(f"{mode} {oid}\t{rel}".encode("utf-8", "surrogateescape") + b"\0"
                        for mode, oid, rel in entries)  # fmt: skip
        git.run(root, ["update-index", "-z", "--index-info"], what="Reading what came in", env=env, data=data)
        return git.one(git.run(root, ["write-tree"], what="Reading what came in", env=env).out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(index)


def tree_of(root: Path, commit: str | None) -> str:
    if commit is None:
        return empty_tree(root)
    return git.one(git.run(root, ["rev-parse", f"{commit}^{{tree}}"], what="Reading the store's history").out)


def entry(root: Path, commit: str | None, rel: str) -> tuple[str, str] | None:
    """(mode, object) of one path in a commit, None when absent."""
    if commit is None:
        return None
    done = git.run(root, ["ls-tree", "-z", commit, "--", rel], what="Reading the store's history")
    for item in done.out.split(b"\0"):
        meta, _, name = item.partition(b"\t")
        if name.decode("utf-8", "surrogateescape") == rel:
            mode, _kind, oid = meta.decode().split(" ")
            return mode, oid
    return None


def content(root: Path, commit: str | None, rel: str) -> bytes | None:
    """A path's bytes in a commit (None: absent or not a regular file)."""
    found = entry(root, commit, rel)
    if found is None or not found[0].startswith("100"):
        return None
    return blob(root, found[1])


def _oid(raw: str) -> str | None:
    return None if set(raw) <= {"0"} else raw


def _raw_pairs(tokens: list[bytes]) -> list[tuple[str, str]]:
    """`:<modes> <oids> <status>` and path tokens of `--raw -z` output, as (meta, path) pairs."""
    pairs = []
    for meta, path in zip(tokens[0::2], tokens[1::2], strict=False):
        pairs.append((meta.decode().strip(), path.decode("utf-8", "surrogateescape")))
    return pairs


def _delta(meta: str, rel: str) -> Delta:
    old_mode, new_mode, old, new, status = meta.lstrip(":").split(" ")
    return Delta(rel, status[:1], _oid(old), _oid(new), new_mode, old_mode)


def changes(root: Path, before: str | None, after: str) -> list[Delta]:
    """What differs between two commits (before None: everything in after is new); no rename pairing:
    a memory is its path."""
    done = git.run(root, ["diff-tree", "-r", "-z", "--no-renames", "--no-abbrev", tree_of(root, before),
                          tree_of(root, after)], what="Comparing versions of the store")  # fmt: skip
    tokens = [t for t in done.out.split(b"\0") if t]
    return [_delta(meta, rel) for meta, rel in _raw_pairs(tokens)]


def is_ancestor(root: Path, older: str, newer: str) -> bool:
    done = git.run(root, ["merge-base", "--is-ancestor", older, newer], what="Comparing histories", ok=(0, 1))
    return done.code == 0


def commit_tree(root: Path, tree: str, parents: list[str], message: str, identity: list[str]) -> str:
    args = [*identity, "commit-tree", tree]
    for parent in parents:
        args += ["-p", parent]
    done = git.run(root, [*args, "-F", "-"], what="Recording the store's changes", data=message.encode())
    return git.one(done.out)


def message(title: str, machine: Machine, mtimes: dict[str, float] | None = None) -> str:
    """A commit message: the title, the machine, and the mtime of each file the commit adds or changes."""
    lines = [machine.trailer()]
    lines += [times_line(rel, t) for rel, t in sorted((mtimes or {}).items())]
    return f"{title}\n\n" + "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Touch:
    """A commit that changed a path: who made it and what the path held after it."""

    machine: Machine | None
    new: str | None
    time: float | None = None  # the file's mtime on the machine that committed it


def authors(root: Path, since: str | None, tip: str, now: float | None = None,
            paths: list[str] | None = None) -> dict[str, list[Touch]]:  # fmt: skip
    """For each path changed by the commits reachable from tip and not from since (merges left out:
    they only combine), the machines that changed it, newest first; each change's Kin-Time checked
    (times.py), never later than `now`."""
    spec = [tip] if since is None else [f"^{since}", tip]
    done = git.run(root, ["log", "-z", "--topo-order", "--full-history", "--no-merges", "--no-renames", "--raw", "--no-abbrev",
                          f"--format={_LOG_FORMAT}", *spec, "--", *(paths or [])],
                   what="Reading who changed what")  # fmt: skip
    ceiling = time.time() if now is None else now
    out: dict[str, list[Touch]] = {}
    for chunk in done.out.split(b"\x1e")[1:]:
        tokens = [t.lstrip(b"\n") for t in chunk.split(b"\0")]
        head, _, time_values = tokens[0].decode("utf-8", "replace").partition("\x1c")
        sha, committed, *trailers = head.split("\x1f")
        machines = [m for m in (parse_trailer(v) for v in trailers) if m is not None]
        stamped = times.parse(time_values, sha) if time_values else {}
        high = min(ceiling, _number(committed) + times.SLACK)
        for meta, rel in _raw_pairs([t for t in tokens[1:] if t]):
            mtime = stamped.get(rel)
            if mtime is not None:
                mtime = times.bounded(rel, mtime, times.EARLIEST, high, sha)
            out.setdefault(rel, []).append(
                Touch(machines[-1] if machines else None, _delta(meta, rel).new, mtime)
            )
    return out


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def when(touches: list[Touch] | None, final: str | None) -> tuple[float | None, bool]:
    """The mtime a file brought in as `final` takes, and whether a change left it exactly so: the
    committing machine's time, from the change that left it so; for a merge of both sides' changes, the
    newest of theirs (the writer also weighs the version it replaces, so every machine lands on the newer
    of both sides)."""
    if not touches:
        return None, False
    exact = [t.time for t in touches if t.new == final and t.time is not None]
    if exact:
        return exact[0], True
    return max((t.time for t in touches if t.time is not None), default=None), False


def who(touches: list[Touch] | None, final: str | None) -> Machine | None:
    """The machine whose change left the path as `final` (else the newest to change it)."""
    if not touches:
        return None
    for touch in touches:
        if touch.new == final and touch.machine is not None:
            return touch.machine
    return next((t.machine for t in touches if t.machine is not None), None)
