"""A Memory: one file version, parsed once; everything downstream reads it."""

from __future__ import annotations

import os
import re
import stat as stat_mod
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .categories import effective_category
from .freshness import UNSURE, kept_key
from .frontmatter import Frontmatter, parse_frontmatter, split_lines, workspace_stamp
from .reader import Refused, read_file
from .slotted import quick_init

MAX_READ_BYTES = 16 * 1024 * 1024  # beyond this a file is reported, not parsed
BODY_CAP = 64 * 1024
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


@quick_init
@dataclass(frozen=True, slots=True)
class Memory:
    # Where the file is, as a string: at 100k memories a Path object each (its parts list included) cost
    # tens of MB for something read only when a file is read again. `path` makes the Path on demand.
    location: str
    vpath: str
    text: str
    lines: tuple[str, ...]
    frontmatter: Frontmatter
    category: str  # effective (after the read-time fallback)
    raw_category: object  # None when absent
    stamp: object  # raw `workspace` value, None when absent
    mtime: float
    size: int
    decode_error: int | None = None  # byte offset of the first invalid UTF-8 byte
    has_nul: bool = False
    read_error: str = ""  # why the file could not be read (unreadable, too big, not a file)
    is_index: bool = False  # the root MEMORY.md
    compact: bool = False  # text, lines and frontmatter entries dropped to save memory (see compacted)
    kept_title: str = ""  # the title of a compacted memory
    key: int = UNSURE  # the file's freshness key when read (store/freshness.py); UNSURE for a text not read

    def compacted(self) -> Memory:
        """What a closed file keeps between changes: enough for the listing, visibility, lifecycle and
        completion. At 100k memories the full text, lines and YAML spans of every file would cost
        several hundred MB; the Store re-reads a compacted file when something needs the whole of it."""
        if self.compact or self.is_index:
            return self
        fm = Frontmatter(
            self.frontmatter.status,
            self.frontmatter.open_line,
            self.frontmatter.close_line,
            body_line=self.frontmatter.body_line,
        )
        return replace(self, text="", lines=(), frontmatter=fm, compact=True, kept_title=self.title)

    @property
    def path(self) -> Path:
        return Path(self.location)

    @property
    def body_line(self) -> int:
        return self.frontmatter.body_line if self.frontmatter.status not in ("none", "bare") else 0

    @property
    def body(self) -> str:
        return "\n".join(self.lines[self.body_line :])

    @property
    def title(self) -> str:
        if self.compact:
            return self.kept_title
        for line in self.lines[self.body_line : self.body_line + 40]:
            m = _HEADING.match(line) if line[:1] == "#" else None  # a heading starts with `#`
            if m:
                return m.group(1)
        return self.path.stem


_PLAIN = (str, int, float, bool, type(None))
Record = list[Any]  # see record_of
StrPath = str | os.PathLike[str]


def record_of(memory: Memory) -> Record | None:
    """A closed file's compact form as plain values (what a cache keeps of it), or None when it cannot
    be written as plain values: an unreadable file, MEMORY.md, or a YAML value such as a date or a list
    as category or stamp (rare; such a file is simply read again)."""
    if memory.is_index or memory.read_error or not isinstance(memory.raw_category, _PLAIN):
        return None
    if not isinstance(memory.stamp, _PLAIN):
        return None
    fm = memory.frontmatter
    return [
        memory.category,
        memory.raw_category,
        memory.stamp,
        memory.decode_error,
        memory.has_nul,
        fm.status,
        fm.open_line,
        fm.close_line,
        fm.body_line,
        memory.title,
    ]


def _shared(value: Any) -> Any:
    """One string object for the values thousands of memories repeat (categories, stamps, statuses):
    at 100k memories each copy would cost its own tens of bytes."""
    return sys.intern(value) if isinstance(value, str) and len(value) < 4096 else value


def from_record(
    path: StrPath, vpath: str, mtime: float, size: int, record: Record, key: int = UNSURE
) -> Memory:
    """The compacted memory a record was made from (see record_of)."""
    category, raw_category, stamp, decode_error, has_nul, status, open_line, close_line, body_line, title = (
        record
    )
    return Memory(
        os.fspath(path),
        vpath,
        "",
        (),
        Frontmatter(_shared(status), open_line, close_line, body_line=body_line),
        _shared(category),
        _shared(raw_category),
        _shared(stamp),
        mtime,
        size,
        decode_error,
        has_nul,
        compact=True,
        kept_title=title,
        key=key,
    )


def from_text(
    path: StrPath,
    vpath: str,
    text: str,
    mtime: float,
    size: int,
    *,
    decode_error: int | None = None,
    has_nul: bool = False,
    is_index: bool = False,
    key: int = UNSURE,
) -> Memory:
    lines = split_lines(text)
    fm = parse_frontmatter(text, lines) if not is_index else Frontmatter("none")
    cat_entry = fm.readable("category")
    raw_cat = cat_entry.value if cat_entry else None
    stamp = workspace_stamp(lines, fm)  # placed by its stamp even when its YAML is broken
    return Memory(
        os.fspath(path),
        vpath,
        text,
        tuple(lines),
        fm,
        effective_category(raw_cat),
        raw_cat,
        stamp,
        mtime,
        size,
        decode_error,
        has_nul,
        "",
        is_index,
        key=key,
    )


def decode(data: bytes) -> tuple[str, int | None, bool]:
    try:
        text = data.decode("utf-8")
        bad = None
    except UnicodeDecodeError as exc:
        bad = exc.start
        text = data.decode("utf-8", errors="replace")
    has_nul = "\x00" in text
    if has_nul:
        text = text.replace("\x00", "\ufffd")
    return text, bad, has_nul


def _read_all(fd: int, size: int) -> bytes:
    """The file's bytes, at most MAX_READ_BYTES + 1. Asked for a byte more than its size: a regular
    file's short read is its end, so a file read whole takes one read of its own size, not a 1 MB
    buffer and a second read to find the end."""
    chunks = []
    remaining = MAX_READ_BYTES + 1
    want = size + 1
    while remaining > 0:
        chunk = os.read(fd, min(remaining, want))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
        if len(chunk) < want:
            break
        want = 1 << 20  # it grew since: read on in big pieces
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def load(path: StrPath, vpath: str, *, is_index: bool = False) -> Memory:
    """Read and parse one file; never raises. Unreadable or odd files carry a read_error."""
    read_at = time.time()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if getattr(exc, "errno", None) == 40:  # ELOOP: the file itself is a symlink
            return _resolve_symlink(path, vpath, is_index)
        return _unreadable(path, vpath, f"cannot read: {exc.strerror or 'the system refused'}", is_index)
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            return _unreadable(path, vpath, "not a regular file", is_index, st.st_mtime)
        if st.st_size > MAX_READ_BYTES:
            return _unreadable(
                path,
                vpath,
                f"file is {st.st_size // (1024 * 1024)} MB: too large to read as a memory",
                is_index,
                st.st_mtime,
                st.st_size,
            )
        data = _read_all(fd, st.st_size)
    except OSError as exc:
        return _unreadable(path, vpath, f"cannot read: {exc.strerror or 'the system refused'}", is_index)
    finally:
        os.close(fd)
    text, bad, nul = decode(data)
    return from_text(path, vpath, text, st.st_mtime, len(data), decode_error=bad, has_nul=nul,
                     is_index=is_index, key=kept_key(st, read_at))  # fmt: skip


def _resolve_symlink(path: StrPath, vpath: str, is_index: bool) -> Memory:
    # The scanner only hands over symlinks whose target stays inside the store.
    try:
        target = Path(os.path.realpath(path, strict=True))
    except (OSError, RuntimeError):
        return _unreadable(path, vpath, "symlink loop or dangling symlink: not read", is_index)
    return load_plain(target, path, vpath, is_index)


def load_plain(target: StrPath, path: StrPath, vpath: str, is_index: bool) -> Memory:
    """A symlinked memory's target (containment is the scan's job): read bounded and never blocking, so
    a target swapped for a FIFO or a device between the check and the read cannot hang the reader."""
    read_at = time.time()
    try:
        bounded = read_file(Path(target), MAX_READ_BYTES)
    except Refused as exc:
        size = exc.size or 0
        reason = "file is too large to read as a memory" if exc.kind == "too-large" else exc.reason
        return _unreadable(path, vpath, reason, is_index, 0.0, size)
    except OSError as exc:
        return _unreadable(path, vpath, f"cannot read: {exc.strerror or 'the system refused'}", is_index)
    text, bad, nul = decode(bounded.data)
    return from_text(
        path,
        vpath,
        text,
        bounded.st.st_mtime,
        len(bounded.data),
        decode_error=bad,
        has_nul=nul,
        is_index=is_index,
        key=kept_key(bounded.st, read_at),
    )


def _unreadable(
    path: StrPath, vpath: str, reason: str, is_index: bool, mtime: float = 0.0, size: int = 0
) -> Memory:
    return Memory(
        os.fspath(path),
        vpath,
        "",
        ("",),
        Frontmatter("none"),
        effective_category(None),
        None,
        None,
        mtime,
        size,
        read_error=reason,
        is_index=is_index,
    )
