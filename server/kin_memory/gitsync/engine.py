"""One sync of the store with its remote: commit what changed here, fetch, merge, write back, push.

1. The store is made a git repository on first use; every local change is committed, the commit naming
   this machine in a `Kin-Machine:` trailer (the other machines label what came from it).
2. The remote is fetched (none set: a sentence says how to set it; an empty remote: just push).
3. Both sides are merged in git's object database, never in the files (merge.py): no conflict marker
   ever reaches a memory; conflicts leave a record in `.kin-sync/conflicts/`, synced like the memories.
4. The files are brought to the merged commit one by one through the product's own writes
   (writeback.py), and the branch and index follow.
5. The result is pushed; when someone pushed meanwhile it is fetched and merged once more.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

from ..store.machine import Machine
from ..store.paths import HiddenRefused, is_hidden, open_hidden_dir, open_hidden_file, virtual_of_rel
from . import commitset, files, git, merge, objects, repo, trust, writeback
from .git import SyncError, machine_of
from .records import FOLDER, decode
from .report import Change, ChangeKind, Conflict, Side, SyncReport

ATTEMPTS = 2  # merges of the files tried when they change here while a sync writes them
PUSHES = 4  # fetch, merge and push rounds when the remote moves (or its ref is locked) meanwhile
STALE_LOCK = 60.0  # seconds: git's own lock this old, while kin holds the sync lock, was left by a crash
_GIT_LOCKS = (
    "index.lock",
    "HEAD.lock",
    "packed-refs.lock",
    "refs/heads/main.lock",
    "refs/remotes/origin/main.lock",
)
LOCK_NAME = "sync.lock"
NO_REMOTE = (
    "This store has no remote to sync with yet: run `kin-memory sync --remote URL` once "
    "(a folder, an ssh address or a hosting service's git URL)."
)
_KIND: dict[str, ChangeKind] = {"A": "create", "D": "delete"}
_RACED = re.compile(r"\[rejected\]|fetch first|non-fast-forward|cannot lock ref|failed to update ref|"
                    r"failed to lock|\[remote rejected\].*(lock|expected)")  # fmt: skip


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """One sync of a store at a time (an editor's and the command line's)."""
    try:
        dir_fd = open_hidden_dir(root, create=True)
    except (HiddenRefused, OSError) as exc:
        raise SyncError(
            f"The store's hidden folder cannot be used: {getattr(exc, 'reason', exc.strerror)}."
        ) from None
    try:
        fd = open_hidden_file(dir_fd, LOCK_NAME, os.O_RDWR | os.O_CREAT)
    finally:
        os.close(dir_fd)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SyncError("Another sync of this store is running: sync again when it is done.") from None
        yield
    finally:
        os.close(fd)


def sync(root: Path, *, remote: str | None = None, now: float | None = None) -> SyncReport:
    """Sync the store at root with its remote (`remote`: set it first); what came in, what went out,
    what conflicted. SyncError (a sentence) when it cannot be done."""
    root = Path(os.path.realpath(os.fspath(root)))
    if not root.is_dir():
        raise SyncError(f"The store's folder {root} does not exist.")
    git.require_version()
    with _locked(root):
        machine = machine_of(root)
        repo.ensure_repo(root)
        _clear_stale_locks(root)
        if remote is not None:
            repo.set_remote(root, remote)
        if repo.remote_url(root) is None:
            raise SyncError(NO_REMOTE)
        return _sync(root, machine, now if now is not None else time.time())


def _sync(root: Path, machine: Machine, when: float) -> SyncReport:
    identity = repo.identity_args(root, machine)
    report = SyncReport()
    local = commit_local(root, machine, identity, report)
    for attempt in range(PUSHES):
        if attempt:
            time.sleep(0.2 * attempt)  # another machine is pushing: let it finish
        fetched = theirs = fetch(root)
        report.remote_was_empty = theirs is None
        if theirs is not None:  # what the set does not take is left out before anything is written
            title = f"Sync on {machine.name}: left out what a sync does not take"
            theirs, said = commitset.clean(root, theirs, objects.message(title, machine), identity)
            report.skipped += [s for s in said if s not in report.skipped]
        local = integrate(root, local, theirs, machine, identity, when, report)
        if local is not None:  # records on the branch are checked even when nothing new came in
            trust.update(root, local, local, machine, {})
        if local is None or local == fetched:
            return report
        if push(root):
            report.outgoing = outgoing(root, theirs, local, machine)
            return report
    raise SyncError("Other machines kept sending changes while this one synced: sync again in a moment.")


def _clear_stale_locks(root: Path) -> None:
    """git's lock files left by a sync that was stopped (kin holds its own lock, so no other sync runs):
    removed when older than STALE_LOCK; a newer one is a person's git at work."""
    now = time.time()
    for name in _GIT_LOCKS:
        path = root / ".git" / name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if now - st.st_mtime < STALE_LOCK:
            raise SyncError(
                "Another git command is working in the store's repository: sync again in a minute."
            )
        with contextlib.suppress(OSError):
            os.unlink(path)


def commit_local(
    root: Path, machine: Machine, identity: list[str], report: SyncReport | None = None
) -> str | None:
    """Commit every change made here since the last sync (none: no commit); the branch's commit. What
    is committed is kin's set (commitset.py), never what an ignore file says."""
    tree, said = commitset.stage(root)
    if report is not None:
        report.skipped += said
    head = repo.head(root)
    if head is not None and objects.tree_of(root, head) == tree:
        return head
    title = f"Memory changes on {machine.name}"
    commit = objects.commit_tree(
        root, tree, [head] if head else [], objects.message(title, machine, _mtimes(root, head)), identity
    )
    git.run(root, ["update-ref", repo.REF, commit, head or ""], what="Recording this machine's changes")
    return commit


def _mtimes(root: Path, head: str | None) -> dict[str, float]:
    """The mtime of each file this commit adds or changes (staged just before), by path."""
    args = (
        ["diff", "--cached", "--name-only", "-z", "--no-renames", "--diff-filter=AMT", head]
        if head
        else ["ls-files", "-z"]
    )
    names = git.run(root, args, what="Recording this machine's changes").out.split(b"\0")
    out = {}
    for raw in names:
        rel = raw.decode("utf-8", "surrogateescape")
        if rel:
            with contextlib.suppress(OSError):
                out[rel] = os.lstat(os.path.join(root, rel)).st_mtime
    return out


def fetch(root: Path) -> str | None:
    """The remote's newest commit (None: the remote is empty)."""
    git.run(root, ["fetch", "--prune", "--no-tags", repo.REMOTE, f"+refs/heads/*:refs/remotes/{repo.REMOTE}/*"],
            what="Fetching from the remote", timeout=git.NETWORK_TIMEOUT)  # fmt: skip
    return repo.head(root, repo.TRACKING)


def integrate(root: Path, local: str | None, theirs: str | None, machine: Machine, identity: list[str],
              when: float, report: SyncReport) -> str | None:  # fmt: skip
    """Merge the remote's commit into this machine's and bring the files there; the branch's commit.

    A file changed here while the files were being brought is left alone; it is then committed on top
    of what it was changed from and merged once more (so it is merged with what came in, not written
    over it); changed yet again meanwhile, it simply goes out with the next sync."""
    base = local
    own: dict[str, bytes] = {}
    for attempt in range(ATTEMPTS):
        merged = merge.combine(root, base, theirs, machine, identity, when)
        _add_conflicts(report, merged.conflicts)
        if merged.commit is None or merged.commit == base:
            break
        brought = writeback.bring(root, base, merged.commit, objects.authors(root, base, merged.commit, when))
        _add_incoming(report, brought.incoming)
        report.skipped += brought.skipped
        own.update(merged.records)
        trust.update(root, merged.commit, local, machine, own)
        _keep_losers(root, merged.records, machine)
        _add_conflicts(report, _arrived(root, brought.arrived, machine))
        if not brought.changed_here:
            break
        if attempt == ATTEMPTS - 1:
            report.skipped += [writeback.skipped_sentence(rel) for rel in brought.changed_here]
            break
        base = merge.with_files_now(root, base, brought.changed_here, machine, identity)
    if merged.commit is None or merged.commit == local:
        return local
    writeback.move_branch(root, repo.REF, merged.commit, local)
    return merged.commit


KEPT_SOURCE = "sync-kept"  # history's label of the version this machine kept in a conflict


def _keep_losers(root: Path, written: dict[str, bytes], machine: Machine) -> None:
    """Where this machine's merge kept its own version, the other machine's is kept in this machine's
    history too, labelled with that machine (then the file's own content again, as the newest): both
    sides of a conflict are versions on both machines (the other machine keeps this one's as the
    version its file was replaced with)."""
    from ..history.versions import Observed, keep, observe

    for data in written.values():
        record = decode(data)
        if record is None or record.kept_id != machine.id:
            continue
        other = next((v for v in record.versions if v.machine_id != machine.id), None)
        if other is None or other.content is None:
            continue
        keep(root, [Observed(record.path, other.content)], f"{writeback.SOURCE}:{other.machine}")
        keep(root, observe(root, [record.path]), KEPT_SOURCE)


def _add_conflicts(report: SyncReport, found: list[Conflict]) -> None:
    known = {c.path for c in report.conflicts}
    report.conflicts += [c for c in found if c.path not in known]


def _add_incoming(report: SyncReport, found: list[Change]) -> None:
    known = {c.path for c in report.incoming}
    report.incoming += [c for c in found if c.path not in known]


def _arrived(root: Path, rels: list[str], machine: Machine) -> list[Conflict]:
    """Conflicts another machine recorded, as this machine sees them."""
    out = []
    for rel in rels:
        if not rel.startswith(f"{FOLDER}/"):
            continue
        data = _read(root, rel) if trust.accepted(root, rel) else None
        record = decode(data) if data is not None else None
        if record is None:
            continue
        others = [v for v in record.versions if v.machine_id != machine.id]
        kept: Side = "mine" if record.kept_id == machine.id else "theirs"
        deleted: Side | None = None
        for v in record.versions:
            if v.content is None and record.kind != "overlap":
                deleted = "mine" if v.machine_id == machine.id else "theirs"
        out.append(
            Conflict(record.path, record.kind, kept, others[0].machine if others else record.kept, deleted)
        )
    return out


def _read(root: Path, rel: str) -> bytes | None:
    with contextlib.suppress(files.NotAFile, OSError):
        return files.read(root, rel)
    return None


def push(root: Path) -> bool:
    """Send the branch; False when the remote moved meanwhile (fetch and merge again)."""
    done = git.run(root, ["push", "--porcelain", repo.REMOTE, f"{repo.REF}:{repo.REF}"],
                   what="Sending to the remote", ok=(0, 1), timeout=git.NETWORK_TIMEOUT)  # fmt: skip
    if done.code == 0:
        return True
    said = done.out.decode("utf-8", "replace")
    if any(line.startswith("!") and _RACED.search(line) for line in said.splitlines()):
        return False  # the remote moved, or another push held its ref: fetch, merge and push again
    if _RACED.search(done.err):
        return False
    raise SyncError(git.failure("Sending to the remote", done.err))


def outgoing(root: Path, theirs: str | None, pushed: str, machine: Machine) -> list[Change]:
    """What the push changed on the remote (memories only: the ignore file and records are plumbing)."""
    return [Change(virtual_of_rel(d.rel), _KIND.get(d.status, "edit"), machine.name)
            for d in objects.changes(root, theirs, pushed) if not is_hidden(tuple(d.rel.split("/")))]  # fmt: skip
