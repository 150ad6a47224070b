"""The staging overlay: a private copy of the store the model's tool calls run against.

Every memory file is hard-linked into a folder inside the store's hidden folder (same filesystem, so
linking is cheap); the memory tool never writes in place (temporary file + rename, see store/atomic.py),
so an edit in staging replaces the staging link and the original inode is never modified. Where linking
fails (another filesystem, no link support) the file is copied instead. Symlinks are not mirrored: the
model never reaches anything through them.

`diff()` compares staging with what was linked in, by inode: a file whose inode moved to another path was
renamed (the tool renames by link + unlink, keeping the inode), one with a new inode was edited, new paths
were created, missing ones deleted. Every file diff() reads (staged or in the store) goes through the
bounded reader: a FIFO or a device swapped in is refused at once, never read.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..store.memory import MAX_READ_BYTES
from ..store.paths import HIDDEN_DIR, HiddenRefused, open_hidden_dir, virtual_of_rel
from ..store.reader import Refused, read_file
from ..store.store import MAX_DEPTH
from .changes import Change

log = logging.getLogger("kin_memory.reflect")

PREFIX = "reflect-"
_NO_LINK = (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EACCES)


@dataclass(frozen=True)
class Base:
    ino: int  # the staging file's inode when staged
    real: tuple[int, int, int]  # (inode, size, mtime_ns) of the store's file when staged


def _walk(top: Path, depth: int = 0) -> tuple[dict[str, os.stat_result], set[str], bool]:
    """Regular files and folders below top (relative posix paths), hidden names and symlinks skipped,
    and whether anything lay deeper than the scan goes (top being `depth` folders below the root).

    Iterative, with the scan's nesting limit: a tree a thousand folders deep (made outside the tool)
    neither overflows the stack nor gets mirrored; the model sees what the scan sees."""
    files: dict[str, os.stat_result] = {}
    dirs: set[str] = set()
    too_deep = False
    pending: list[tuple[str, str, int]] = [(os.fspath(top), "", depth)]  # (folder, its rel prefix, depth)
    while pending:
        folder, prefix, level = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            with contextlib.suppress(OSError):
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    if level + 1 > MAX_DEPTH:
                        too_deep = True
                        continue
                    dirs.add(prefix + entry.name)
                    pending.append((entry.path, prefix + entry.name + "/", level + 1))
                elif stat.S_ISREG(st.st_mode):
                    files[prefix + entry.name] = st
    return files, dirs, too_deep


@dataclass
class Staging:
    root: Path
    dir: Path = field(init=False)
    base: dict[str, Base] = field(default_factory=dict)
    base_dirs: set[str] = field(default_factory=set)
    copied: int = 0  # files copied because linking failed
    linked: int = 0
    # Which store files the pass may see (relative posix path, real path → bool); others are not staged,
    # so for the model they do not exist: another workspace's memories stay out of its reach.
    visible: Callable[[str, Path], bool] | None = None
    hidden: int = 0  # files left out by `visible`
    unread: list[tuple[str, str]] = field(default_factory=list)  # (rel, why) of files the reader refused

    def __post_init__(self) -> None:
        self.root = Path(os.path.realpath(self.root))
        self.dir = self._make_dir()
        try:
            self._populate()
        except BaseException:
            self.close()
            raise

    def _make_dir(self) -> Path:
        """A fresh folder in the store's hidden folder, made through a descriptor that refuses a hidden
        folder planted as a link (staging would otherwise hard-link every memory to wherever it points)."""
        name = PREFIX + secrets.token_hex(6)
        try:
            if self.root.is_dir():
                dir_fd = open_hidden_dir(self.root, create=True)
                try:
                    os.mkdir(name, 0o700, dir_fd=dir_fd)
                finally:
                    os.close(dir_fd)
                return self.root / HIDDEN_DIR / name
        except HiddenRefused as exc:
            log.warning("reflection stages outside the store's hidden folder: %s", exc.reason)
        except OSError:
            pass  # a read-only store: stage in the temp folder (files are then copied)
        return Path(tempfile.mkdtemp(prefix=PREFIX))

    def _populate(self) -> None:
        if not self.root.is_dir():
            return
        files, dirs, _ = _walk(self.root)
        for d in sorted(dirs):
            os.makedirs(self.dir / d, mode=0o700, exist_ok=True)
        self.base_dirs = dirs
        for rel, st in files.items():
            src, dst = self.root / rel, self.dir / rel
            if self.visible is not None and not self.visible(rel, src):
                self.hidden += 1
                continue
            try:
                os.link(src, dst, follow_symlinks=False)
                self.linked += 1
            except OSError as exc:
                if exc.errno not in _NO_LINK:
                    raise
                if not self._copy(rel, src, dst):
                    continue
                self.copied += 1
            self.base[rel] = Base(os.lstat(dst).st_ino, (st.st_ino, st.st_size, st.st_mtime_ns))

    def _copy(self, rel: str, src: Path, dst: Path) -> bool:
        """Copy a file that could not be linked, read through the bounded reader (a device swapped in
        since the walk is not copied for ever); False, and noted in `unread`, when it is refused."""
        try:
            data = read_file(src, MAX_READ_BYTES, within=self.root).data
        except Refused as exc:
            self.unread.append((rel, exc.reason))
            return False
        fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        shutil.copystat(src, dst, follow_symlinks=False)  # times and mode, as a link would show them
        return True

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what changed -----------------------------------------------------------------------------
    def _real_before(self, rel: str) -> tuple[bytes | None, bool]:
        """The store's current bytes for rel and whether they are still what was staged."""
        try:
            got = read_file(self.root / rel, MAX_READ_BYTES, within=self.root)
        except (Refused, OSError):  # gone, or no longer a memory file: the change is a conflict
            return None, False
        st = got.st
        return got.data, (st.st_ino, st.st_size, st.st_mtime_ns) == self.base[rel].real

    def _dir_as_staged(self, d: str) -> bool:
        """A folder may be deleted only when the store holds nothing in it that was not staged."""
        if not (self.root / d).is_dir():
            return False
        files, _, too_deep = _walk(self.root / d, d.count("/") + 1)
        return not too_deep and all(f"{d}/{rel}" in self.base for rel in files)

    def _read(self, rel: str) -> bytes | None:
        """A staged file's bytes; None (and noted in `unread`) when the bounded reader refuses it."""
        try:
            return read_file(self.dir / rel, MAX_READ_BYTES, within=self.dir).data
        except Refused as exc:
            self.unread.append((rel, exc.reason))
        except OSError as exc:
            self.unread.append((rel, f"unreadable: {exc.strerror or 'error'}"))
        return None

    def diff(self) -> list[Change]:
        """What the model did in the staging copy, as changes to the real store: deletions that make
        room for a rename's target first, then the renames, the writes, and the removals."""
        now_files, now_dirs, _ = _walk(self.dir)
        now = {rel: st.st_ino for rel, st in now_files.items()}
        renames = self._renames(now)
        sources = {s for s, _ in renames}
        targets = {t for _, t in renames}
        first = [self._deleted(rel) for rel in sorted(targets & set(self.base)) if rel not in sources]
        moves = [self._moved(src, dst) for src, dst in renames]
        writes: list[Change] = []
        removals: list[Change] = []
        for rel in sorted(set(self.base) - targets):
            if rel in now:
                writes += self._written(rel, now[rel], rel in sources)
            elif rel not in sources:
                removals.append(self._deleted(rel))
        for rel in sorted(set(now) - set(self.base) - targets):
            if (created := self._read(rel)) is not None:
                writes.append(Change("create", virtual_of_rel(rel), after=created))
        return first + moves + writes + self._without_gone_dirs(removals, now_dirs)

    def _renames(self, now: dict[str, int]) -> list[tuple[str, str]]:
        """(from, to) for each staged file that now lives under another name (its inode moved)."""
        by_ino = {b.ino: rel for rel, b in self.base.items()}
        return [
            (src, rel)
            for rel, ino in sorted(now.items())
            if (src := by_ino.get(ino)) is not None and src != rel and now.get(src) != ino
        ]

    def _deleted(self, rel: str) -> Change:
        before, same = self._real_before(rel)
        return Change("delete", virtual_of_rel(rel), before=before, conflict=not same)

    def _moved(self, src: str, dst: str) -> Change:
        before, same = self._real_before(src)
        return Change("rename", virtual_of_rel(dst), old_path=virtual_of_rel(src), before=before,
                      after=before, conflict=not same)  # fmt: skip

    def _written(self, rel: str, ino: int, renamed_away: bool) -> list[Change]:
        """The change to a staged file still present: none while its staged link is untouched."""
        if ino == self.base[rel].ino:
            return []
        after = self._read(rel)
        if after is None:
            return []
        before, same = self._real_before(rel)
        if renamed_away:  # the original moved and a new file took its name
            return [Change("create", virtual_of_rel(rel), after=after)]
        if before == after and same:
            return []
        return [Change("edit", virtual_of_rel(rel), before=before, after=after, conflict=not same)]

    def _without_gone_dirs(self, removals: list[Change], now_dirs: set[str]) -> list[Change]:
        """A folder removed whole is one removal, not one per file in it."""
        gone = self.base_dirs - now_dirs
        gone_dirs = sorted(d for d in gone if not any(d.startswith(g + "/") for g in gone))
        kept = [c for c in removals if not any(c.path.startswith(virtual_of_rel(g) + "/") for g in gone_dirs)]
        return kept + [
            Change("delete", virtual_of_rel(d), is_dir=True, conflict=not self._dir_as_staged(d))
            for d in gone_dirs
        ]
