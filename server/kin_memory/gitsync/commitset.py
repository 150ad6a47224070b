"""What a sync commits and what it takes in: kin's decision, never a synced file's.

The set is the store's memory files (`*.md` below the root, no hidden folder on the way, the index
MEMORY.md included) and, in the synced folder `.kin-sync/`, the files kin writes under the names it
writes them: `machines/<16 hex>.json` and `conflicts/<40 hex>.json`, each within its size. Nothing else
is committed, whatever a `.gitignore` says (the store's own git reads none for this: the index is built
by plumbing from this list), and nothing else that arrives is written into the store or kept in the
branch: a `.gitignore`, a `.gitattributes`, the hidden folder, a link, a gitlink, a path with `..` or a
spelling of `.git` (`.GIT`, `.git.`, `git~1`), a file over the memory size cap.

Every git command of a sync also reads `.git/info/attributes` (repo.py), which outranks any in-tree
`.gitattributes`: no filter, no end-of-line or encoding conversion, the built-in text merge. Blobs are
the files' bytes; merges are kin's (merge.py), with a record for every conflict.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..store.paths import INDEX_NAME, SYNC_DIR, SYNC_MACHINES, is_memory_rel, virtual_of_rel
from ..tool.guard import EDIT_LIMIT
from . import git
from .records import RECORD_LIMIT

MEMORY_LIMIT = EDIT_LIMIT  # bytes: the memory tool's cap on a file; a larger one is not synced
MACHINE_LIMIT = 256 * 1024  # bytes of a machine file (store/workspace_aliases.py reads no more)
RECORDS = "conflicts"
_MACHINE = re.compile(r"^[0-9a-f]{16}\.json$")
_RECORD = re.compile(r"^[0-9a-f]{40}\.json$")
_GIT_NAMES = {".git", "git~1"}  # what git itself refuses on some filesystem (case, trailing dots/spaces)
_FILE_MODES = ("100644", "100755")


def _gitlike(part: str) -> bool:
    return part.lower().rstrip(". ") in _GIT_NAMES


def limit_of(rel: str) -> int | None:
    """The size a path of the set may have; None when the path is not one kin syncs."""
    parts = tuple(rel.split("/"))
    if not rel or rel.startswith("/") or "\0" in rel or "\\" in rel:
        return None
    if any(p in ("", ".", "..") or _gitlike(p) for p in parts):
        return None
    if is_memory_rel(parts) or parts == (INDEX_NAME,):
        return MEMORY_LIMIT
    if len(parts) == 3 and parts[0] == SYNC_DIR:
        if parts[1] == SYNC_MACHINES and _MACHINE.match(parts[2]):
            return MACHINE_LIMIT
        if parts[1] == RECORDS and _RECORD.match(parts[2]):
            return RECORD_LIMIT
    return None


def refusal(rel: str, mode: str, size: int | None) -> str | None:
    """Why an entry of a tree is not taken (the end of a sentence after its path), None when it is."""
    limit = limit_of(rel)
    if limit is None:
        return "is not a place in the store a sync writes: it was left out."
    if mode not in _FILE_MODES:
        return "came in as a link or a repository, not a file: it was left out."
    if size is None or size > limit:
        return f"is over {size_words(limit)}, the most such a file may be: it was left out."
    return None


def size_words(n: int) -> str:
    return f"{n // (1024 * 1024)} MB" if n >= 1024 * 1024 else f"{n // 1024} KB"


def quiet(rel: str) -> bool:
    """An entry left out without a sentence: git's own files of another repository's habits."""
    return rel in (".gitignore", ".gitattributes")


@dataclass
class Local:
    paths: list[str] = field(default_factory=list)  # the set's files here, relative, sorted
    too_large: list[str] = field(default_factory=list)  # files of the set's kind over their cap


def scan(root: Path) -> Local:
    """The set's files in the store now (links never followed, the hidden folder never entered)."""
    out = Local()
    stack = [""]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(root, folder) if folder else root))
        except OSError:
            continue
        for e in entries:
            rel = f"{folder}/{e.name}" if folder else e.name
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if not e.name.startswith(".") or rel in (SYNC_DIR, f"{SYNC_DIR}/{SYNC_MACHINES}",
                                                         f"{SYNC_DIR}/{RECORDS}"):  # fmt: skip
                    stack.append(rel)
                continue
            limit = limit_of(rel)
            if limit is None or not stat.S_ISREG(st.st_mode):
                continue
            (out.paths if st.st_size <= limit else out.too_large).append(rel)
    out.paths.sort()
    out.too_large.sort()
    return out


def stage(root: Path) -> tuple[str, list[str]]:
    """The store's index made to hold exactly the set (by plumbing: no ignore file is read), its tree,
    and the sentences for files left out as too large (their last synced version stays)."""
    found = scan(root)
    tracked = [r for r in git.run(root, ["ls-files", "-z"], what="Recording this machine's changes")
               .out.decode("utf-8", "surrogateescape").split("\0") if r]  # fmt: skip
    large = set(found.too_large)
    mine = set(found.paths)
    missing = [r for r in tracked if r not in mine and r not in large and limit_of(r) is not None]
    # tracked but no longer a file of the set: another kind of path, or a link or folder in its place
    replaced = {r for r in missing if os.path.lexists(os.path.join(root, r))}
    foreign = [r for r in tracked if limit_of(r) is None] + sorted(replaced)
    gone = [r for r in missing if r not in replaced]
    if foreign:
        _update(root, ["--force-remove"], foreign)
    _update(root, ["--add", "--remove"], [*found.paths, *gone])
    _not_ours(root)
    tree = git.one(git.run(root, ["write-tree"], what="Recording this machine's changes").out)
    said = [f"{virtual_of_rel(r)} is over {size_words(limit_of(r) or 0)}, the most such a file may be: "
            "it is not synced." for r in found.too_large]  # fmt: skip
    return tree, said


def _not_ours(root: Path) -> None:
    """A file that holds exactly what the last fetch brought for it (a sync stopped half-way through
    writing them) is no change of this machine's: its index entry goes back to the branch's, so it is
    not committed as this machine's work and the merge brings it with its own machine and time."""
    from . import repo

    tracking = repo.head(root, repo.TRACKING)
    head = repo.head(root)
    if tracking is None or tracking == head:
        return
    args = ["diff-index", "--cached", "-z", "--no-renames", "--no-abbrev", head] if head else None
    if args is None:
        return
    out = git.run(root, args, what="Recording this machine's changes").out.split(b"\0")
    fetched = _leaves(root, tracking)
    back: list[bytes] = []
    for meta, raw in zip(out[0::2], out[1::2], strict=False):
        if not meta:
            continue
        old_mode, _new_mode, old_oid, new_oid, _status = meta.decode().lstrip(":").split(" ")
        rel = raw.decode("utf-8", "surrogateescape")
        new = None if set(new_oid) <= {"0"} else new_oid
        if fetched.get(rel) == new:
            entry = f"{old_mode} {old_oid}\t" if set(old_oid) - {"0"} else f"0 {'0' * 40}\t"
            back.append(entry.encode() + raw + b"\0")
    if back:
        git.run(root, ["update-index", "-z", "--index-info"], what="Recording this machine's changes",
                data=b"".join(back))  # fmt: skip


def _leaves(root: Path, commit: str) -> dict[str, str]:
    """Every file of a commit's tree: its object by path."""
    done = git.run(
        root, ["ls-tree", "-r", "-z", "--full-tree", commit], what="Recording this machine's changes"
    )
    out = {}
    for item in done.out.split(b"\0"):
        meta, _, raw = item.partition(b"\t")
        if raw:
            out[raw.decode("utf-8", "surrogateescape")] = meta.decode().split(" ")[2]
    return out


def _update(root: Path, flags: list[str], rels: list[str]) -> None:
    if rels:
        data = b"".join(r.encode("utf-8", "surrogateescape") + b"\0" for r in rels)
        git.run(root, ["update-index", *flags, "-z", "--stdin"], what="Recording this machine's changes",
                data=data)  # fmt: skip


def clean(root: Path, commit: str, message: str, identity: list[str]) -> tuple[str, list[str]]:
    """The remote's commit with every entry the set does not take left out: the commit itself when
    nothing is, else a commit on top of it (so the push that follows is a fast-forward). The sentences
    say what was left out."""
    from . import objects

    done = git.run(root, ["ls-tree", "-r", "-l", "-z", "--full-tree", commit], what="Reading what came in")
    kept: list[tuple[str, str, str]] = []
    said: list[str] = []
    dropped = False
    for item in done.out.split(b"\0"):
        if not item:
            continue
        meta, _, raw = item.partition(b"\t")
        mode, _kind, oid, size = meta.decode().split()
        rel = raw.decode("utf-8", "surrogateescape")
        why = refusal(rel, mode, int(size) if size.isdigit() else None)
        if why is None:
            kept.append((mode, oid, rel))
            continue
        dropped = True
        if not quiet(rel):
            said.append(f"{git.clean(virtual_of_rel(rel), 200)} {why}")
    if not dropped:
        return commit, []
    tree = objects.tree_from(root, kept)
    return objects.commit_tree(root, tree, [commit], message, identity), said
