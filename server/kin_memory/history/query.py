"""Reading history: a memory's versions, newest first, and one version's content."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..bounds import in_range, shown
from .db import HistoryDB, HistoryUnavailable, database

SHOWN_VERSIONS = 10  # versions a "no such version" sentence lists (the newest)


class HistoryError(Exception):
    """Why a history request cannot be answered; the message is a sentence naming virtual paths only."""


@dataclass(frozen=True)
class Version:
    version: int
    time: float
    source: str
    bytes: int
    deleted: bool
    sha: str | None


def history_of(root: Path | str, vpath: str) -> list[Version]:
    """The kept versions of one memory, newest first (empty when none was ever kept)."""
    try:
        with database(root).transaction() as conn:
            rows = HistoryDB.versions(conn, vpath)
            return [
                Version(r.id, r.time, r.source, HistoryDB.blob_size(conn, r.sha) if r.sha else 0, r.sha is None,
                        r.sha)
                for r in rows
            ]  # fmt: skip
    except HistoryUnavailable as exc:
        raise HistoryError(f"The history of {vpath} cannot be read: {exc.reason}.") from None


def current_version(root: Path | str, vpath: str, versions: list[Version]) -> int | None:
    """The kept version the file holds now: the newest, when the file's bytes are exactly its bytes (or
    the file is gone and the newest is its deletion); None when the file changed since it was last kept.
    Every door marks "now" by this, never by the order alone."""
    from .versions import observe, sha256

    if not versions:
        return None
    newest = versions[0]
    seen = [o for o in observe(Path(root), [vpath]) if o.vpath == vpath]
    if not seen:
        return None
    data = seen[0].data
    if data is None:
        return newest.version if newest.deleted else None
    return newest.version if newest.sha == sha256(data) else None


def content_of(root: Path | str, vpath: str, version: int) -> bytes:
    """The exact bytes `vpath` had at `version`; HistoryError when it is not one of its versions, is its
    deletion, or its content was dropped by retention."""
    try:
        with database(root).transaction() as conn:
            # a number SQLite cannot hold is no version of anything (and must not reach the query)
            row = HistoryDB.version(conn, version) if in_range(version) else None
            if row is None or row.vpath != vpath:
                raise HistoryError(
                    no_version(vpath, version, [r.id for r in HistoryDB.versions(conn, vpath)])
                )
            if row.sha is None:
                raise HistoryError(f"Version {version} of {vpath} is its deletion: it has no content.")
            data = HistoryDB.blob(conn, row.sha)
    except HistoryUnavailable as exc:
        raise HistoryError(f"The history of {vpath} cannot be read: {exc.reason}.") from None
    if data is None:
        raise HistoryError(f"The content of version {version} of {vpath} is no longer kept.")
    return data


def kept_mtime(root: Path | str, vpath: str, sha: str) -> float | None:
    """The file's time when it last held the content `sha` (None when no version recorded one)."""
    try:
        with database(root).transaction() as conn:
            return HistoryDB.mtime_of(conn, vpath, sha)
    except HistoryUnavailable:
        return None


def no_version(vpath: str, version: int, kept: list[int]) -> str:
    """ "/memories/a.md has no version 7: its versions are 1, 4 and 5." (the newest few when there are many)."""
    asked = shown(version) or str(version)
    if not kept:
        return f"{vpath} has no version {asked}: no version of it is kept."
    ids = sorted(kept)
    listed = ", ".join(map(str, ids[-SHOWN_VERSIONS:]))
    if len(ids) > SHOWN_VERSIONS:
        return f"{vpath} has no version {asked}: its newest versions are {listed}."
    if len(ids) == 1:
        return f"{vpath} has no version {asked}: its only version is {ids[0]}."
    head, _, last = listed.rpartition(", ")
    return f"{vpath} has no version {asked}: its versions are {head} and {last}."
