"""Automatic sync: off by default; on a timer or a minute after the last write when the settings ask;
only ever for a store that already has its remote; a real sync when due."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from tests.support.gitrepos import isolate_git

from kin_memory.editor_settings import Settings, SyncSettings
from kin_memory.gitsync import engine
from kin_memory.lsp.auto_sync import AFTER_WRITES_QUIET, AutoSync, _has_remote
from kin_memory.store.events import StoreEvent, StoreEvents
from kin_memory.store.machine import rename_machine


def session(root: Path, sync: SyncSettings) -> SimpleNamespace:
    return SimpleNamespace(
        root=root,
        settings=Settings(sync=sync),
        events=StoreEvents(),
        active=lambda: (),
        forget_active=lambda: None,
    )


def auto(root: Path, sync: SyncSettings, said: list) -> AutoSync:
    return AutoSync(
        session(root, sync),
        SimpleNamespace(),
        lambda text, warning: said.append((text, warning)),
        lambda: None,
    )  # type: ignore[arg-type]


def test_off_by_default(tmp_path: Path) -> None:
    a = auto(tmp_path, SyncSettings(), [])
    a._on_event(StoreEvent("changed", "/memories/a.md"))
    assert not a.due(a.last_sync + 24 * 3600)


def test_on_a_timer(tmp_path: Path) -> None:
    a = auto(tmp_path, SyncSettings(interval_minutes=10), [])
    assert not a.due(a.last_sync + 9 * 60)
    assert a.due(a.last_sync + 10 * 60)


def test_after_writes_once_the_store_is_quiet_and_not_for_typing(tmp_path: Path) -> None:
    a = auto(tmp_path, SyncSettings(after_writes=True), [])
    a._on_event(StoreEvent("changed", "/memories/a.md", overlay=True, buffer=True))  # a keystroke in a buffer
    assert not a.due(a.last_sync + 3600)
    a._on_event(StoreEvent("changed", "/memories/a.md"))
    assert a.last_change is not None
    assert not a.due(a.last_change + AFTER_WRITES_QUIET - 1)
    assert a.due(a.last_change + AFTER_WRITES_QUIET)


def test_a_store_without_a_remote_is_never_synced_automatically(tmp_path: Path) -> None:
    assert not _has_remote(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n\tbare = false\n")
    assert not _has_remote(tmp_path)


def test_a_due_sync_sends_the_store_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path, monkeypatch)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    store = tmp_path / "store"
    (store / "facts").mkdir(parents=True)
    rename_machine(store, "laptop")
    engine.sync(store, remote=str(remote))
    assert _has_remote(store)
    (store / "facts" / "a.md").write_text(
        "---\ncategory: project-fact\n---\n# A\n\nThe API uses port 8080.\n"
    )
    said: list = []
    auto(store, SyncSettings(after_writes=True), said).sync_now()
    shown = subprocess.run(
        ["git", "--git-dir", str(remote), "show", "main:facts/a.md"], capture_output=True, text=True
    )
    assert "port 8080" in shown.stdout
    assert said == []  # no conflict: nothing to say in a message
