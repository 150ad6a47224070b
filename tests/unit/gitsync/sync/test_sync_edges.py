"""What a sync must never do: overwrite a file changed meanwhile, write outside the store's own places,
hang on a credential prompt, or answer with a traceback; and how a conflict is resolved."""

from __future__ import annotations

import http.server
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sync_machines import DEPLOY, Machine, git, no_marker_anywhere

from kin_memory.gitsync import git as gitrun
from kin_memory.gitsync import merge
from kin_memory.gitsync.engine import NO_REMOTE, sync
from kin_memory.gitsync.git import SyncError
from kin_memory.gitsync.records import conflicts, record_rel, resolve
from kin_memory.history.query import content_of, history_of
from kin_memory.store.machine import this_machine

FACT = "facts/deploy.md"
VFACT = "/memories/facts/deploy.md"


def _typing_during_the_sync(monkeypatch: pytest.MonkeyPatch, machine: Machine, texts: list[str]) -> None:
    """The person saves a memory after the sync committed and before it writes back: at each merge."""
    real = merge.combine

    def combine_then_type(*args, **kwargs):
        merged = real(*args, **kwargs)
        if texts:
            machine.write(FACT, texts.pop(0))
        return merged

    monkeypatch.setattr(merge, "combine", combine_then_type)


def _edited_on_both(laptop: Machine, desktop: Machine) -> str:
    laptop.write(FACT, DEPLOY)
    laptop.sync()
    desktop.sync()
    laptop.write(FACT, DEPLOY.replace("Alerts go to", "Pages go to"))
    laptop.sync()
    return DEPLOY.replace("Rollbacks use", "Roll back with")


def test_a_file_saved_during_the_sync_is_merged_not_overwritten(laptop: Machine, desktop: Machine,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    typed = _edited_on_both(laptop, desktop)
    _typing_during_the_sync(monkeypatch, desktop, [typed])
    report = desktop.sync()
    both = typed.replace("Alerts go to", "Pages go to")
    assert desktop.read(FACT) == both  # what was typed, with what came in
    assert report.skipped == [] and report.conflicts == []
    kept = [
        content_of(desktop.root, VFACT, v.version) for v in history_of(desktop.root, VFACT) if not v.deleted
    ]
    assert typed.encode() in kept
    laptop.sync()
    assert laptop.read(FACT) == both


def test_a_file_saved_at_every_merge_is_left_as_it_is(laptop: Machine, desktop: Machine,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    typed = _edited_on_both(laptop, desktop)
    again = typed.replace("Database migrations", "Schema migrations")
    _typing_during_the_sync(monkeypatch, desktop, [typed, again])
    report = desktop.sync()
    assert desktop.read(FACT) == again
    assert report.skipped == [f"{VFACT} was changed here while the sync ran: it was left as it is and goes out "
                              "with the next sync."]  # fmt: skip
    desktop.sync()
    laptop.sync()
    assert laptop.read(FACT) == again


def test_an_unreachable_remote_is_a_sentence(laptop: Machine, tmp_path: Path) -> None:
    laptop.write(FACT, DEPLOY)
    with pytest.raises(SyncError) as caught:
        sync(laptop.root, remote=str(tmp_path / "nowhere.git"))
    said = str(caught.value)
    assert said.startswith("Fetching from the remote failed: ") and said.endswith(".")
    assert "\n" not in said and "Traceback" not in said and "fatal:" not in said


class _AsksForPassword(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="memories"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def password_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AsksForPassword)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/memories.git"
    server.shutdown()
    server.server_close()


def test_a_remote_asking_for_a_password_fails_at_once(laptop: Machine, password_server: str) -> None:
    laptop.write(FACT, DEPLOY)
    with pytest.raises(SyncError) as caught:
        sync(laptop.root, remote=password_server)
    said = str(caught.value)
    assert said.startswith("Fetching from the remote failed: ")
    assert "did not finish" not in said  # it was refused at once, not stopped by the timeout
    assert "terminal prompts disabled" in said


def test_a_remote_folder_given_relative_to_where_the_person_is(laptop: Machine, remote: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    laptop.write(FACT, DEPLOY)
    monkeypatch.chdir(remote.parent)
    sync(laptop.root, remote=remote.name)
    assert git(laptop.root, "config", "remote.origin.url").strip() == str(remote)
    assert FACT in git(remote, "ls-tree", "-r", "--name-only", "main")


def test_no_remote_says_how_to_set_one(laptop: Machine) -> None:
    laptop.write(FACT, DEPLOY)
    with pytest.raises(SyncError) as caught:
        sync(laptop.root)
    assert str(caught.value) == NO_REMOTE
    assert "kin-memory sync --remote URL" in NO_REMOTE


def test_a_command_that_outlives_its_time_is_stopped_with_a_sentence(tmp_path: Path) -> None:
    with pytest.raises(SyncError) as caught:
        gitrun.run(None, ["-c", "alias.wait=!sleep 30", "wait"], what="Waiting", timeout=0.5, cwd=tmp_path)
    assert str(caught.value).startswith("Waiting did not finish within 0.5 seconds and was stopped")


def test_git_words_are_quoted_without_control_characters() -> None:
    err = "hint: ignore me\nfatal: bad \x1b[31mthing\x07 here\nmore\n"
    assert (
        gitrun.failure("Fetching from the remote", err)
        == "Fetching from the remote failed: bad [31mthing here."
    )


def test_an_old_git_is_a_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gitrun, "version", lambda: (2, 37, 1))
    with pytest.raises(SyncError, match=r"^Sync needs git 2\.38 or newer .*this machine has git 2\.37\.1\.$"):
        gitrun.require_version()


def test_a_path_into_the_hidden_folder_from_the_remote_is_refused(laptop: Machine, desktop: Machine,
                                                                  tmp_path: Path, remote: Path) -> None:  # fmt: skip
    laptop.write(FACT, DEPLOY)
    laptop.sync()
    desktop.sync()
    hostile = tmp_path / "hostile"
    git(tmp_path, "clone", "-q", str(remote), str(hostile))
    (hostile / ".kin-index").mkdir()
    (hostile / ".kin-index" / "history.sqlite3").write_text("planted")
    git(hostile, "add", "-f", ".kin-index/history.sqlite3")
    git(hostile, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "plant")
    git(hostile, "push", "-q", "origin", "main")
    report = desktop.sync()
    assert (desktop.root / ".kin-index" / "history.sqlite3").read_bytes() != b"planted"
    assert [s for s in report.skipped if "/memories/.kin-index/history.sqlite3" in s and "left out" in s]


def test_a_store_inside_another_repository_gets_a_repository_of_its_own(tmp_path: Path, remote: Path) -> None:
    home = tmp_path / "dotfiles"
    (home / "memory" / "facts").mkdir(parents=True)
    git(home, "init", "-q", "--initial-branch=main")
    (home / "memory" / FACT).write_text(DEPLOY)
    sync(home / "memory", remote=str(remote))
    assert (home / "memory" / ".git").is_dir()
    assert git(home, "log", "--oneline", "--all") == ""  # the enclosing repository is untouched


def test_two_stores_with_their_own_past_meet_without_markers(laptop: Machine, desktop: Machine) -> None:
    laptop.write(FACT, DEPLOY)
    desktop.write(FACT, DEPLOY.replace("staging", "preview"))
    desktop.write("prefs/tone.md", "---\ncategory: preference\n---\n# Tone\n\nShort commit messages.\n")
    laptop.sync()
    report = desktop.sync()  # unrelated histories: both created the same memory
    assert [(c.path, c.kind, c.kept) for c in report.conflicts] == [(VFACT, "overlap", "mine")]
    laptop.sync()
    assert laptop.read(FACT) == desktop.read(FACT) == DEPLOY.replace("staging", "preview")
    assert (laptop.root / "prefs/tone.md").is_file()
    assert no_marker_anywhere(laptop.root) == [] and no_marker_anywhere(desktop.root) == []


@pytest.fixture
def in_conflict(laptop: Machine, desktop: Machine) -> tuple[str, str]:
    laptop.write(FACT, DEPLOY)
    laptop.sync()
    desktop.sync()
    on_laptop, on_desktop = DEPLOY.replace("main", "trunk"), DEPLOY.replace("main", "release")
    laptop.write(FACT, on_laptop)
    desktop.write(FACT, on_desktop)
    laptop.sync()
    desktop.sync()
    return on_laptop, on_desktop


def test_resolving_keeps_theirs_and_the_record_goes_everywhere(laptop: Machine, desktop: Machine,
                                                               in_conflict: tuple[str, str]) -> None:  # fmt: skip
    on_laptop, _on_desktop = in_conflict
    resolve(desktop.root, VFACT, "theirs")
    assert desktop.read(FACT) == on_laptop
    assert conflicts(desktop.root) == []
    assert history_of(desktop.root, VFACT)[0].source == "sync-resolve"
    desktop.sync()
    laptop.sync()
    assert laptop.read(FACT) == on_laptop
    assert conflicts(laptop.root) == [] and not (laptop.root / record_rel(VFACT)).exists()


def test_resolving_keeps_mine_or_a_merged_text(laptop: Machine, desktop: Machine,
                                               in_conflict: tuple[str, str]) -> None:  # fmt: skip
    on_laptop, _on_desktop = in_conflict
    laptop.sync()  # the laptop now holds the desktop's version and the record
    resolve(laptop.root, VFACT, "mine")
    assert laptop.read(FACT) == on_laptop
    with pytest.raises(SyncError, match="There is no sync conflict on /memories/facts/deploy.md."):
        resolve(laptop.root, VFACT, "mine")


def test_this_machine_keeps_its_identity(laptop: Machine) -> None:
    first = this_machine(laptop.root)
    assert first == this_machine(laptop.root)
    assert first.name == "laptop" and len(first.id) == 16


def test_the_sync_branch_must_be_main(laptop: Machine) -> None:
    git(laptop.root, "init", "-q", "--initial-branch=notes")
    laptop.write(FACT, DEPLOY)
    git(laptop.root, "add", "-A")
    git(laptop.root, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "mine")
    with pytest.raises(
        SyncError, match=r"^The store's git repository is on notes; sync works on the branch main"
    ):
        laptop.sync()
    assert subprocess.run(["git", "rev-parse", "--verify", "-q", "main"], cwd=laptop.root).returncode != 0
