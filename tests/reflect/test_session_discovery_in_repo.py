"""Reflection finds the sessions of the whole repository: a Claude Code or Codex session started in a
subfolder counts (its recorded working directory says so; a sibling repository whose folder name merely
starts the same does not), an older Claude Code's `agent-*.jsonl` subagent log is never taken for a
session, and a current session's `subagents/` files are read with it, labelled like sidechains, placed
by time, within the transcript's bounds."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from kin_memory.reflect import transcript
from kin_memory.reflect.sessions import CLAUDE_CODE, CODEX, claude_folders, latest_session


def _jsonl(path: Path, records: list[dict], mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    os.utime(path, (mtime, mtime))
    return path


def _turn(role: str, text: str, when: str, cwd: str) -> dict:
    return {"type": role, "cwd": cwd, "timestamp": when, "message": {"role": role, "content": text}}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    top = tmp_path / "work" / "mono"
    (top / "services" / "api").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    return Path(os.path.realpath(top))


def _project(home: Path, folder: str) -> Path:
    return home / ".claude" / "projects" / claude_folders(folder)[0]


def test_a_claude_code_session_started_in_a_subfolder_is_the_repositorys(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home"
    api = str(repo / "services" / "api")
    _jsonl(
        _project(home, str(repo)) / "top.jsonl",
        [_turn("user", "hi", "2026-12-01T10:00:00Z", str(repo))],
        1_000,
    )
    sub = _jsonl(_project(home, api) / "sub.jsonl",
                 [{"type": "summary", "summary": "x"}, _turn("user", "api work", "2026-12-01T11:00:00Z", api)],
                 2_000)  # fmt: skip
    # a sibling repository whose folder name starts like this one's: newer, but not this repository's
    sibling = tmp_path / "work" / "mono-web"
    sibling.mkdir()
    _jsonl(
        _project(home, str(sibling)) / "web.jsonl",
        [_turn("user", "web", "2026-12-01T12:00:00Z", str(sibling))],
        3_000,
    )
    found = latest_session(str(repo), env={}, home=home)
    assert found is not None and (found.path, found.agent) == (sub, CLAUDE_CODE)


def test_a_subagent_log_is_never_a_session(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home"
    main = _jsonl(
        _project(home, str(repo)) / "session.jsonl",
        [_turn("user", "hi", "2026-12-01T10:00:00Z", str(repo))],
        1_000,
    )
    _jsonl(
        _project(home, str(repo)) / "agent-1a2b.jsonl",
        [_turn("user", "sub", "2026-12-01T10:01:00Z", str(repo))],
        2_000,
    )
    found = latest_session(str(repo), env={}, home=home)
    assert found is not None and found.path == main


def test_a_codex_rollout_started_in_a_subfolder_is_the_repositorys(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home"
    rollout = _jsonl(home / ".codex" / "sessions" / "2026" / "12" / "01" / "rollout-a.jsonl",
                     [{"type": "session_meta", "payload": {"id": "a", "cwd": str(repo / "services" / "api")}}], 5_000)  # fmt: skip
    found = latest_session(str(repo), env={}, home=home)
    assert found is not None and (found.path, found.agent) == (rollout, CODEX)
    assert latest_session(str(repo / "services"), env={}, home=home) is None  # not a repository's top


def test_a_sessions_subagents_are_read_with_it_labelled_and_in_time_order(tmp_path: Path, repo: Path) -> None:
    project = _project(tmp_path / "home", str(repo))
    session = _jsonl(project / "s1.jsonl", [
        _turn("user", "plan the migration", "2026-12-01T10:00:00Z", str(repo)),
        _turn("assistant", "I asked a subagent", "2026-12-01T10:05:00Z", str(repo)),
    ], 1_000)  # fmt: skip
    _jsonl(project / "s1" / "subagents" / "agent-9f.jsonl", [
        _turn("user", "find the schema files", "2026-12-01T10:01:00Z", str(repo)),
        _turn("assistant", "schema lives in db/schema.sql", "2026-12-01T10:02:00Z", str(repo)),
    ], 1_000)  # fmt: skip
    got = transcript.read(session)
    turns = got.text.split("\n\n")
    assert turns[0].startswith("user: plan the migration")
    assert turns[1] == "subagent prompt: find the schema files"
    assert turns[2].startswith("subagent") and "db/schema.sql" in turns[2]
    assert turns[3].startswith("assistant: I asked a subagent")
    assert got.messages == 4


def test_subagents_share_the_sessions_read_bound(tmp_path: Path, repo: Path, monkeypatch) -> None:
    project = _project(tmp_path / "home", str(repo))
    session = _jsonl(
        project / "s2.jsonl", [_turn("user", "x" * 200, "2026-12-01T10:00:00Z", str(repo))], 1_000
    )
    big = [
        _turn("assistant", f"step {n} " + "y" * 100, f"2026-12-01T10:{n % 60:02d}:00Z", str(repo))
        for n in range(200)
    ]
    _jsonl(project / "s2" / "subagents" / "agent-1.jsonl", big, 1_000)
    monkeypatch.setattr(transcript, "MAX_READ", 4096)
    got = transcript.read(session)
    assert got.cuts.bytes_not_read > 0 and "were not read" in got.cuts.sentence()
    assert "step 199" in got.text and "step 0 " not in got.text  # the newest of it, within the bound
