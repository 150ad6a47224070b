"""Finding the newest Claude Code or Codex session of a workspace (on a fake home), and what
`kin-memory reflect --help` and `--latest` tell the user."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kin_memory.reflect.sessions import CLAUDE_CODE, CODEX, claude_folders, first_prompt, latest_session

WS = "/srv/repos/my.app"


def _write(path: Path, text: str, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


def claude(home: Path, name: str, mtime: float, workspace: str = WS) -> Path:
    folder = workspace.replace("/", "-").replace(".", "-")
    return _write(home / ".claude" / "projects" / folder / f"{name}.jsonl", '{"type":"user"}\n', mtime)


def codex(home: Path, name: str, mtime: float, cwd: str = WS, *, wrapped: bool = True) -> Path:
    meta = (
        {"type": "session_meta", "payload": {"id": name, "cwd": cwd}} if wrapped else {"id": name, "cwd": cwd}
    )
    return _write(home / ".codex" / "sessions" / "2026" / "12" / "04" / f"rollout-{name}.jsonl",
                  json.dumps(meta) + "\n", mtime)  # fmt: skip


def test_claude_code_folder_names() -> None:
    assert claude_folders("/srv/repos/my.app") == ["-srv-repos-my-app"]
    assert claude_folders("/home/a/my_app") == ["-home-a-my_app", "-home-a-my-app"]


def test_newest_claude_code_session_by_mtime(tmp_path: Path) -> None:
    claude(tmp_path, "old", 1_000)
    new = claude(tmp_path, "new", 2_000)
    claude(tmp_path, "other", 3_000, workspace="/srv/repos/other")
    found = latest_session(WS, env={}, home=tmp_path)
    assert found is not None and (found.path, found.agent) == (new, CLAUDE_CODE)


def test_newest_codex_rollout_of_the_workspace(tmp_path: Path) -> None:
    codex(tmp_path, "a", 1_000)
    mine = codex(tmp_path, "b", 2_000)
    codex(tmp_path, "c", 3_000, cwd="/srv/repos/other")  # newer, but another workspace
    found = latest_session(WS, env={}, home=tmp_path)
    assert found is not None and (found.path, found.agent) == (mine, CODEX)


def test_older_rollout_without_wrapper_counts(tmp_path: Path) -> None:
    old = codex(tmp_path, "legacy", 1_000, wrapped=False)
    found = latest_session(WS, env={}, home=tmp_path)
    assert found is not None and found.path == old


def test_newest_wins_across_both_agents(tmp_path: Path) -> None:
    claude(tmp_path, "cc", 2_000)
    rollout = codex(tmp_path, "cx", 3_000)
    assert latest_session(WS, env={}, home=tmp_path).path == rollout  # type: ignore[union-attr]
    newer = claude(tmp_path, "cc2", 4_000)
    assert latest_session(WS, env={}, home=tmp_path).path == newer  # type: ignore[union-attr]


def test_agent_homes_from_the_environment(tmp_path: Path) -> None:
    claude(tmp_path / "elsewhere", "ignored", 5_000)
    rollout = codex(tmp_path / "cx", "x", 1_000)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "none"), "CODEX_HOME": str(tmp_path / "cx" / ".codex")}
    found = latest_session(WS, env=env, home=tmp_path / "elsewhere")
    assert found is not None and found.path == rollout


def test_links_and_missing_homes_are_not_sessions(tmp_path: Path) -> None:
    assert latest_session(WS, env={}, home=tmp_path) is None
    real = _write(tmp_path / "outside.jsonl", "{}\n", 9_000)
    link = claude(tmp_path, "real", 1_000).parent / "linked.jsonl"
    link.symlink_to(real)
    found = latest_session(WS, env={}, home=tmp_path)
    assert found is not None and found.path.name == "real.jsonl"


def _cli(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        k: v for k, v in os.environ.items() if k not in ("KIN_MEMORY_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME")
    }
    return subprocess.run([sys.executable, "-m", "kin_memory", *args], capture_output=True, text=True,
                          timeout=120, cwd=str(cwd), env={**env, "HOME": str(home)})  # fmt: skip


def test_reflect_help_names_both_formats_and_places(tmp_path: Path) -> None:
    out = _cli(tmp_path, tmp_path, "reflect", "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    for words in ("Claude Code sessions ~/.claude/projects/", "Codex CLI rollouts ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl",
                  "--latest", "newest turns always reach the model"):  # fmt: skip
        assert words in text, words


def test_reflect_latest_without_a_session_names_where_it_looked(
    tmp_path: Path, store: Path, workspace: str
) -> None:
    out = _cli(tmp_path, Path(workspace), "reflect", "--latest", "--root", str(store), "--provider", "openai",
               "--model", "m", "--base-url", "http://127.0.0.1:9/v1")  # fmt: skip
    assert out.returncode == 2 and "Traceback" not in out.stderr
    folder = workspace.replace("/", "-").replace(".", "-")
    assert f"no Claude Code or Codex session of {workspace} was found" in out.stderr
    assert str(tmp_path / ".claude" / "projects" / folder) in out.stderr
    assert str(tmp_path / ".codex" / "sessions") in out.stderr


def test_reflect_wants_a_transcript_or_latest_not_both(tmp_path: Path, store: Path, workspace: str) -> None:
    common = (
        "--root",
        str(store),
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
    )
    both = _cli(tmp_path, Path(workspace), "reflect", "t.jsonl", "--latest", *common)
    neither = _cli(tmp_path, Path(workspace), "reflect", *common)
    for out in (both, neither):
        assert out.returncode == 2 and "give either a TRANSCRIPT or --latest" in out.stderr


def test_the_language_server_names_the_newest_session_of_its_workspace(tmp_path: Path) -> None:
    """`kin.memory.latestSession`, which both editors' reflect command offers first."""
    import json as _json
    import os as _os

    from support.rawlsp import RawClient

    home = tmp_path / "home"
    repo = tmp_path / "repo"
    repo.mkdir()
    real = _os.path.realpath(repo)
    folder = home / ".claude" / "projects" / real.replace("/", "-").replace(".", "-")
    folder.mkdir(parents=True)
    (folder / "old.jsonl").write_text(
        _json.dumps({"type": "user", "message": {"role": "user", "content": "x"}}) + "\n"
    )
    _os.utime(folder / "old.jsonl", (1_000_000, 1_000_000))
    (folder / "new.jsonl").write_text(
        _json.dumps({"type": "user", "message": {"role": "user", "content": "y"}}) + "\n"
    )
    store = tmp_path / "memory"
    store.mkdir()
    env = {k: v for k, v in _os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    client = RawClient.started({**env, "HOME": str(home), "KIN_MEMORY_DIR": str(store)}, (repo,))
    reply = client.call(
        "workspace/executeCommand", {"command": "kin.memory.latestSession", "arguments": [{}]}
    )
    assert "Traceback" not in client.close()
    result = reply["result"]
    assert result["path"] == str(folder / "new.jsonl") and result["agent"] == "Claude Code"
    assert str(folder) in result["searched"]
    # What tells sessions apart in the editors' pick: its date, its size and what the person asked first.
    new = folder / "new.jsonl"
    assert result["modified"] == new.stat().st_mtime and result["size"] == new.stat().st_size
    assert result["firstPrompt"] == "y"


def _records(path: Path, *records: object, tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail, encoding="utf-8")
    return path


def test_first_prompt_of_a_claude_code_session_skips_the_agents_own_tags(tmp_path: Path) -> None:
    user = lambda text: {"type": "user", "message": {"role": "user", "content": text}}  # noqa: E731
    session = _records(
        tmp_path / "s.jsonl",
        {"type": "summary", "summary": "earlier"},
        user("<command-name>/clear</command-name>"),
        user("Fix the  flaky\nlogin test\x1b[31m"),
        user("second"),
    )
    assert first_prompt(session) == "Fix the flaky login test [31m"  # one line, the escape character gone


def test_first_prompt_of_a_codex_rollout_skips_its_environment_context(tmp_path: Path) -> None:
    said = lambda text: {  # noqa: E731
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
    }
    rollout = _records(
        tmp_path / "rollout-1.jsonl",
        {"type": "session_meta", "payload": {"cwd": WS}},
        said("<environment_context>cwd</environment_context>"),
        said("Rename the widget"),
    )
    assert first_prompt(rollout) == "Rename the widget"


def test_first_prompt_is_read_within_its_bound_and_cut_to_one_short_line(tmp_path: Path) -> None:
    chat = lambda text: {"role": "user", "content": text}  # noqa: E731
    # The only prompt lies past the bound: none is found (the file is not read further).
    late = _records(tmp_path / "late.jsonl", {"role": "assistant", "content": "x" * 5000}, chat("late"))
    assert first_prompt(late, limit=1000) is None
    long = _records(tmp_path / "long.jsonl", chat("word " * 100))
    got = first_prompt(long)
    assert got is not None and len(got) == 200 and got.endswith("…") and "\n" not in got
    # A FIFO, a folder or a missing file is no session: no prompt, and no wait for a writer.
    os.mkfifo(tmp_path / "fifo.jsonl")
    assert first_prompt(tmp_path / "fifo.jsonl") is None
    assert first_prompt(tmp_path / "missing.jsonl") is None
