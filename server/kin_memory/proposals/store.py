"""Proposals kept in the store's hidden folder (`.kin-index/proposals/<id>.json`, 0600) for 7 days.

The language server and the CLI share them: a proposal made in the editor can be applied from a terminal
and the other way round. Ids are random and checked before they name a file. A proposal this process made
is loaded (so applied) only while its file holds exactly the bytes saved: the editor was shown the proposal
itself, not the file, so a file swapped in meanwhile (under the same id) is refused, never applied unseen.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import stat
import time
from pathlib import Path

from ..sinks.controls import escape_controls
from ..store.paths import HIDDEN_DIR, HiddenRefused, open_hidden_dir
from .model import Proposal

FOLDER = "proposals"
KEEP_SECONDS = 7 * 86400
MAX_BYTES = 16 * 1024 * 1024  # a proposal holds whole memories (64 KB bodies), never this much
_ID = re.compile(r"^[0-9a-f]{16}$")
_SAVED: dict[tuple[str, str], str] = {}  # (store, id) → sha256 of the bytes this process saved for it


class ProposalError(Exception):
    """The message is a sentence for the user."""


def new_id() -> str:
    return secrets.token_hex(8)


def _folder(root: Path, *, create: bool) -> Path:
    """The proposals folder; the hidden folder and this one are never links (they could point out of
    the store), so nothing is kept or read elsewhere."""
    try:
        hidden_fd = open_hidden_dir(root, create=create)
    except HiddenRefused as exc:
        raise ProposalError(f"proposals cannot be kept: {exc}") from None
    except FileNotFoundError:
        raise ProposalError("no proposals have been made in this store") from None
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(FOLDER, 0o700, dir_fd=hidden_fd)
        st = os.stat(FOLDER, dir_fd=hidden_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise ProposalError("no proposals have been made in this store") from None
    finally:
        os.close(hidden_fd)
    if not stat.S_ISDIR(st.st_mode):
        raise ProposalError(f"{HIDDEN_DIR}/{FOLDER} is not a folder: proposals cannot be kept")
    return root / HIDDEN_DIR / FOLDER


def _path(root: Path, proposal_id: str) -> Path:
    if not _ID.match(proposal_id):
        raise ProposalError(
            f"there is no proposal `{escape_controls(proposal_id[:80])}`"
        )  # any text: shown escaped
    return _folder(root, create=False) / f"{proposal_id}.json"


def _key(root: Path, proposal_id: str) -> tuple[str, str]:
    return os.path.realpath(root), proposal_id


def save(root: Path, proposal: Proposal) -> None:
    folder = _folder(root, create=True)
    data = json.dumps(proposal.to_json(), ensure_ascii=False).encode("utf-8")
    temp = folder / f".{proposal.id}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, folder / f"{proposal.id}.json")
    _SAVED[_key(root, proposal.id)] = hashlib.sha256(data).hexdigest()


def load(root: Path, proposal_id: str, now: float | None = None) -> Proposal:
    path = _path(root, proposal_id)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        raise ProposalError(f"there is no proposal {proposal_id} (applied, discarded or expired)") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            raise ProposalError(f"the proposal {proposal_id} is not readable")
        data = os.read(fd, MAX_BYTES + 1)
    finally:
        os.close(fd)
    saved = _SAVED.get(_key(root, proposal_id))
    if saved is not None and saved != hashlib.sha256(data).hexdigest():
        raise ProposalError(
            f"the proposal {proposal_id} changed since it was made, so it is not what was shown; "
            "discard it and run the pass again"
        )
    try:
        proposal = Proposal.from_json(json.loads(data))
    except (ValueError, KeyError, TypeError):
        raise ProposalError(
            f"the proposal {proposal_id} is damaged; discard it and run the pass again"
        ) from None
    if (now if now is not None else time.time()) - proposal.created > KEEP_SECONDS:
        discard(root, proposal_id)
        raise ProposalError(f"the proposal {proposal_id} expired (proposals are kept for 7 days)")
    from .apply import as_on_disk  # late: applying imports the tool's writers

    return as_on_disk(root, proposal)


def discard(root: Path, proposal_id: str) -> None:
    try:
        os.unlink(_path(root, proposal_id))
    except FileNotFoundError:
        pass
    _SAVED.pop(_key(root, proposal_id), None)


def list_all(root: Path, now: float | None = None) -> list[Proposal]:
    """Every live proposal, newest first; expired ones are removed on the way."""
    try:
        folder = _folder(root, create=False)
    except ProposalError:
        return []
    out = []
    for entry in sorted(os.listdir(folder)):
        if entry.endswith(".json") and _ID.match(entry[: -len(".json")]):
            try:
                out.append(load(root, entry[: -len(".json")], now))
            except ProposalError:
                continue
    return sorted(out, key=lambda p: p.created, reverse=True)
