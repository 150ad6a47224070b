"""What `init` reads from a repository: its agent and project documents, bounded, never through a link out.

Read, from the repository folder only: `AGENTS.md`, `CLAUDE.md`, `STATUS.md`, `README*`, `CONTRIBUTING*`
at its top, and markdown below `docs/`. Everything in a cloned repository is untrusted: each file goes
through the bounded reader (store/reader.py) with the repository as its allowed folder, so a link
pointing out of it (`docs/x.md -> ~/.ssh/id_rsa`), a FIFO or a device is refused and listed; linked
folders are never entered; a link into a hidden place of the repository itself (`docs/gitconfig.md ->
../.git/config`) is not read, nor anything that is not a text document: a README or CONTRIBUTING file
whose extension is not a text one (TEXT_SUFFIXES: `README.png`), or any file holding NUL bytes or not
valid UTF-8. At most FILE_CAP bytes of one file and TOTAL_CAP bytes in all are read,
the newest files first (the shortest first among equally new ones: in a fresh clone every file is
equally new, and many short documents say more than the first part of one long one). The outcome lists
what was read, what was cut short and what was not read, with why.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..sinks.prompt import field as one_line
from ..store.reader import Refused, describe_size, read_file

TOTAL_CAP = 200 * 1024
FILE_CAP = 64 * 1024
MIN_USEFUL = 512  # less than this left of the total: the rest is listed as not read
TOP_NAMES = ("AGENTS.md", "CLAUDE.md", "STATUS.md")
TOP_PREFIXES = ("README", "CONTRIBUTING")
TEXT_SUFFIXES = ("", ".md", ".markdown", ".txt", ".text", ".rst", ".adoc", ".org")  # of those at the top
NOT_TEXT = "not a text document"
DOCS = "docs"
MAX_DOCS_DEPTH = 8
MAX_ENTRIES = 5000  # entries looked at below docs/ at most: a huge tree is not walked to its end


@dataclass(frozen=True)
class Document:
    rel: str  # posix path relative to the repository
    text: str
    size: int  # bytes on disk
    cut: bool  # only the first part was read


@dataclass
class Sources:
    repo: Path
    documents: list[Document] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (rel, why not read)

    @property
    def bytes_read(self) -> int:
        return sum(len(d.text.encode("utf-8")) for d in self.documents)

    def summary(self) -> str:
        """Sentences for the proposal: every file read, cut or left out (names escaped to one line)."""
        if not self.documents:
            head = "No documents were read from the repository"
        else:
            names = ", ".join(one_line(d.rel) for d in self.documents)
            head = f"Read {len(self.documents)} document{'s' if len(self.documents) != 1 else ''} " \
                   f"({describe_size(self.bytes_read)}): {names}"  # fmt: skip
        out = [head + "."]
        cut = [d for d in self.documents if d.cut]
        if cut:
            out.append("Cut short: " + ", ".join(f"{one_line(d.rel)} (first {describe_size(len(d.text.encode()))} "
                                                  f"of {describe_size(d.size)})" for d in cut) + ".")  # fmt: skip
        if self.skipped:
            out.append(
                "Not read: " + ", ".join(f"{one_line(rel)} ({why})" for rel, why in self.skipped) + "."
            )
        return " ".join(out)


def _candidates(repo: Path) -> tuple[list[tuple[str, os.stat_result]], list[tuple[str, str]]]:
    """(rel, lstat) of every file to consider, and entries refused while looking."""
    found: list[tuple[str, os.stat_result]] = []
    refused: list[tuple[str, str]] = []
    try:
        top = sorted(os.scandir(repo), key=lambda e: e.name)
    except OSError:
        return [], []
    for entry in top:
        name = entry.name
        if name in TOP_NAMES or name.upper().startswith(TOP_PREFIXES):
            if name not in TOP_NAMES and Path(name).suffix.lower() not in TEXT_SUFFIXES:
                refused.append((name, NOT_TEXT))
                continue
            try:
                found.append((name, entry.stat(follow_symlinks=False)))
            except OSError:
                continue
    docs = repo / DOCS
    try:
        st = os.lstat(docs)
    except OSError:
        return found, refused
    if stat.S_ISLNK(st.st_mode):
        refused.append((DOCS + "/", "a linked folder: not followed"))
    elif stat.S_ISDIR(st.st_mode):
        _walk_docs(docs, DOCS, 1, found, refused, [0])
    return found, refused


def _walk_docs(folder: Path, rel: str, depth: int, found: list[tuple[str, os.stat_result]],
               refused: list[tuple[str, str]], seen: list[int]) -> None:  # fmt: skip
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        seen[0] += 1
        if seen[0] > MAX_ENTRIES or entry.name.startswith("."):
            continue
        sub = f"{rel}/{entry.name}"
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            if depth < MAX_DOCS_DEPTH:
                _walk_docs(Path(entry.path), sub, depth + 1, found, refused, seen)
        elif stat.S_ISLNK(st.st_mode) and not entry.name.lower().endswith(".md"):
            continue
        elif entry.name.lower().endswith(".md"):
            found.append((sub, st))


def _hidden_after_links(repo: Path, rel: str) -> str | None:
    """Why a candidate is not read when, links resolved, it lies in a hidden place of the repository
    (`docs/gitconfig.md -> ../.git/config` stays inside the repository and holds its credentials)."""
    real = os.path.relpath(os.path.realpath(repo / rel), repo)
    if real == ".." or real.startswith(".." + os.sep):
        return None  # outside the repository: the bounded reader refuses it and says so
    if any(part.startswith(".") for part in Path(real).parts):
        return "a link into a hidden folder or file: not read"
    return None


def _as_text(data: bytes, truncated: bool) -> str | None:
    """The document's text, or None when it is not a text document (NUL bytes, or not UTF-8 beyond a
    character cut at the read's end)."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if truncated and exc.start >= len(data) - 3:
            return data[: exc.start].decode("utf-8", "replace")
        return None


def read_sources(repo: Path, total: int = TOTAL_CAP, per_file: int = FILE_CAP) -> Sources:
    """The repository's documents, newest first (shortest first among equals), within the caps."""
    repo = Path(os.path.realpath(repo))
    out = Sources(repo)
    found, out.skipped = _candidates(repo)
    used = 0
    for rel, _ in sorted(found, key=lambda f: (-int(f[1].st_mtime), f[1].st_size, f[0])):
        left = total - used
        if left < MIN_USEFUL:
            out.skipped.append((rel, f"the {describe_size(total)} total was reached"))
            continue
        hidden = _hidden_after_links(repo, rel)
        if hidden:
            out.skipped.append((rel, hidden))
            continue
        try:
            got = read_file(repo / rel, min(per_file, left), within=repo, truncate=True)
        except Refused as exc:
            out.skipped.append((rel, exc.reason))
            continue
        except OSError as exc:
            out.skipped.append((rel, f"unreadable: {exc.strerror or 'error'}"))
            continue
        text = _as_text(got.data, got.truncated)
        if text is None:
            out.skipped.append((rel, NOT_TEXT))
            continue
        out.documents.append(Document(rel, text, got.size, got.truncated))
        used += len(got.data)
    return out
