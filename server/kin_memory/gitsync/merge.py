"""Combining this machine's commits with the remote's, entirely in git's object database.

`git merge-tree --write-tree` computes the merge without touching the store's files; where it found a
conflict its tree holds a file with conflict markers, which is never used: each conflicted path is set,
through a temporary index, to one whole version (rules below), so no commit a sync makes, and no file it
writes, ever contains a conflict marker. Each conflict leaves a record (records.py) in the same commit.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from ..store.machine import Machine
from ..store.paths import virtual_of_rel
from . import files, git, objects
from .records import ConflictRecord, RecordVersion, encode, record_rel
from .report import ANOTHER, Conflict, Side

_ZERO = "0" * 40


@dataclass
class Merged:
    commit: str | None  # where the branch goes (None: there is no commit anywhere yet)
    conflicts: list[Conflict] = field(default_factory=list)
    records: dict[str, bytes] = field(default_factory=dict)  # the records this merge wrote, by path


@dataclass(frozen=True)
class _Sides:
    ours: tuple[str, str] | None  # (mode, object) of this machine's version; None: deleted here
    theirs: tuple[str, str] | None


def combine(root: Path, local: str | None, remote: str | None, machine: Machine, identity: list[str],
            when: float) -> Merged:  # fmt: skip
    """The commit holding both sides' changes: one side when the other has nothing new (a fast-forward
    makes no commit), else a merge commit with both as parents."""
    if remote is None or local == remote:
        return Merged(local)
    if local is None or objects.is_ancestor(root, local, remote):
        return Merged(remote)
    if objects.is_ancestor(root, remote, local):
        return Merged(local)
    return _three_way(root, local, remote, machine, identity, when)


def _conflicted(out: bytes) -> tuple[str, dict[str, dict[int, tuple[str, str]]]]:
    """merge-tree's answer: the merged tree and, per conflicted path, its versions by stage."""
    tokens = out.split(b"\0")
    paths: dict[str, dict[int, tuple[str, str]]] = {}
    for item in tokens[1:]:
        if not item:
            break  # the conflicted-file list ends with an empty entry; messages follow
        meta, _, name = item.partition(b"\t")
        mode, oid, stage = meta.decode().split(" ")
        paths.setdefault(name.decode("utf-8", "surrogateescape"), {})[int(stage)] = (mode, oid)
    return tokens[0].decode().strip(), paths


def _three_way(root: Path, local: str, remote: str, machine: Machine, identity: list[str],
               when: float) -> Merged:  # fmt: skip
    done = git.run(root, ["merge-tree", "--write-tree", "-z", "--allow-unrelated-histories", local, remote],
                   what="Merging the remote's changes", ok=(0, 1))  # fmt: skip
    tree, stages = _conflicted(done.out)
    conflicts: list[Conflict] = []
    touched = objects.authors(root, local, remote)
    written: dict[str, bytes] = {}
    if stages:
        sides = {rel: _Sides(s.get(2), s.get(3)) for rel, s in stages.items()}
        tree, conflicts = _settle(root, tree, sides, touched, machine, when, written)
    others = sorted({t.machine.name for ts in touched.values() for t in ts
                     if t.machine is not None})  # fmt: skip
    title = f"Sync on {machine.name}" + (f": merged with {', '.join(others)}" if others else "")
    commit = objects.commit_tree(root, tree, [local, remote], objects.message(title, machine), identity)
    return Merged(commit, conflicts, written)


def _keep(sides: _Sides) -> Side:
    """Which version a conflicted path keeps.

    Both sides changed it (overlapping edits, or both created it): this machine's. The person at this
    machine keeps seeing what they last saw; the other version stays in git's history, in the conflict
    record and, once the other machine syncs, in its own history. One side deleted it: the edit, since
    a deletion loses nothing that history does not keep, and an edit that vanished would be a surprise.
    """
    if sides.ours is not None:
        return "mine"
    return "theirs"


def _settle(root: Path, tree: str, sides: dict[str, _Sides], touched: dict[str, list[objects.Touch]],
            machine: Machine, when: float, written: dict[str, bytes]) -> tuple[str, list[Conflict]]:  # fmt: skip
    """The merged tree with each conflicted path holding one whole version, plus the records."""
    entries: list[tuple[str, str, str]] = []  # (mode, object, path); mode 0: remove
    conflicts: list[Conflict] = []
    for rel, side in sorted(sides.items()):
        kept = _keep(side)
        chosen = side.ours if kept == "mine" else side.theirs
        entries.append((chosen[0], chosen[1], rel) if chosen else ("0", _ZERO, rel))
        if rel.startswith("."):
            continue  # the ignore file, a conflict record: settled, but no memory to report
        other = objects.who(touched.get(rel), side.theirs[1] if side.theirs else None)
        conflict = _conflict(rel, side, kept, other)
        conflicts.append(conflict)
        record = encode(_record(root, conflict, side, machine, other, when))
        written[record_rel(conflict.path)] = record
        entries.append(("100644", objects.hash_blob(root, record), record_rel(conflict.path)))
    return _write_tree(root, tree, entries), conflicts


def _conflict(rel: str, side: _Sides, kept: Side, other: Machine | None) -> Conflict:
    name = other.name if other is not None else ANOTHER
    if side.ours is not None and side.theirs is not None:
        return Conflict(virtual_of_rel(rel), "overlap", kept, name)
    deleted: Side = "mine" if side.ours is None else "theirs"
    return Conflict(virtual_of_rel(rel), "delete-vs-edit", kept, name, deleted)


def _content(root: Path, entry: tuple[str, str] | None) -> bytes | None:
    return None if entry is None or not entry[0].startswith("100") else objects.blob(root, entry[1])


def _record(root: Path, conflict: Conflict, side: _Sides, machine: Machine, other: Machine | None,
            when: float) -> ConflictRecord:  # fmt: skip
    them = other or Machine("", ANOTHER)
    kept = machine if conflict.kept == "mine" else them
    versions = (RecordVersion(machine.name, machine.id, _content(root, side.ours)),
                RecordVersion(them.name, them.id, _content(root, side.theirs)))  # fmt: skip
    return ConflictRecord(conflict.path, conflict.kind, kept.name, kept.id, versions, when)


def with_files_now(root: Path, base: str | None, rels: list[str], machine: Machine,
                   identity: list[str]) -> str:  # fmt: skip
    """A commit on top of base holding what these files hold on disk now (absent: removed): the changes
    made here while a sync ran, so they are merged against what they were made from."""
    entries = []
    for rel in rels:
        data = files.read(root, rel)
        entries.append(
            ("100644", objects.hash_blob(root, data), rel) if data is not None else ("0", _ZERO, rel)
        )
    tree = _write_tree(root, objects.tree_of(root, base), entries)
    title = f"Memory changes on {machine.name} during a sync"
    return objects.commit_tree(root, tree, [base] if base else [], objects.message(title, machine), identity)


def _write_tree(root: Path, tree: str, entries: list[tuple[str, str, str]]) -> str:
    """`tree` with `entries` put in, through an index of our own (the store's index is not touched)."""
    index = root / ".git" / f"kin-sync-index-{secrets.token_hex(6)}"
    env = {"GIT_INDEX_FILE": os.fspath(index)}
    try:
        git.run(root, ["read-tree", tree], what="Settling a conflict", env=env)
        lines = b"".join(f"{mode} {oid}\t{rel}".encode("utf-8", "surrogateescape") + b"\0"
                         for mode, oid, rel in entries)  # fmt: skip
        git.run(root, ["update-index", "-z", "--index-info"], what="Settling a conflict", env=env, data=lines)
        return git.one(git.run(root, ["write-tree"], what="Settling a conflict", env=env).out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(index)
