"""The newest agent session of a workspace, found where the agents keep them.

- Claude Code: `~/.claude/projects/<folder>/<session>.jsonl` (or under `$CLAUDE_CONFIG_DIR`), where the
  folder is the session's working directory with `/` and `.` turned into `-` (newer versions turn every
  character that is not a letter or a digit into `-`; both names are looked at). Newest by mtime. A
  session started in a subfolder of the repository has a folder whose name continues the repository's
  with `-…`: such a folder counts when the working directory its session records (`cwd`) is inside the
  workspace (the name alone cannot tell `/repo/a-b` from `/repo/a/b`). An older Claude Code kept a
  subagent's traffic beside the sessions as `agent-*.jsonl`: never taken for a session (the current one
  keeps it in `<session>/subagents/`, which transcript.read reads with its session).
- Codex CLI: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (or under `$CODEX_HOME`), whose first record,
  `session_meta`, names the working directory in `payload.cwd` (older rollouts: `cwd` at the top); a
  working directory anywhere inside the workspace's repository counts.

A working directory belongs to the workspace by the doors' own rule (store.workspace.canonical_workspace:
its repository's top level). The newest session across both wins. Only regular files count (a link is
not followed), and the first record of a rollout is read through the bounded reader.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..store.reader import Refused, read_file
from .transcript_content import Tally
from .transcript_formats import render_record

META_READ = 1024 * 1024  # a session_meta record carries the base instructions: tens of KB
PROMPT_READ = 64 * 1024  # the first prompt is looked for in this much of the session's start
PROMPT_CHARS = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CWD = re.compile(r'"cwd"\s*:\s*("(?:[^"\\]|\\.)*")')

CLAUDE_CODE = "Claude Code"
CODEX = "Codex"


@dataclass(frozen=True)
class Session:
    path: Path
    agent: str  # CLAUDE_CODE or CODEX
    mtime: float


def claude_home(env: Mapping[str, str], home: Path) -> Path:
    return Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"


def codex_home(env: Mapping[str, str], home: Path) -> Path:
    return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"


def claude_folders(workspace: str) -> list[str]:
    """The names Claude Code gives a working directory's project folder (older, then newer rule)."""
    names = [re.sub(r"[/.]", "-", workspace), re.sub(r"[^A-Za-z0-9]", "-", workspace)]
    return list(dict.fromkeys(names))


def where(workspace: str, env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """The places looked at, for a message when nothing is found."""
    env, home = _defaults(env, home)
    projects = claude_home(env, home) / "projects"
    return [projects / name for name in claude_folders(workspace)] + [codex_home(env, home) / "sessions"]


def latest_session(
    workspace: str, env: Mapping[str, str] | None = None, home: Path | None = None
) -> Session | None:
    """The newest Claude Code or Codex session whose working directory is `workspace` (a realpath)."""
    env, home = _defaults(env, home)
    best = _newest_claude(workspace, claude_home(env, home) / "projects")
    codex = _newest_codex(workspace, codex_home(env, home) / "sessions", best.mtime if best else None)
    return codex or best


def _defaults(env: Mapping[str, str] | None, home: Path | None) -> tuple[Mapping[str, str], Path]:
    return (os.environ if env is None else env), (Path.home() if home is None else home)


def _regular_mtime(path: Path) -> float | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_mtime if stat.S_ISREG(st.st_mode) else None


def belongs(cwd: str, workspace: str) -> bool:
    """Whether a session's working directory is the workspace or inside its repository."""
    from ..store.workspace import canonical_workspace

    return workspace in (cwd, os.path.realpath(cwd)) or canonical_workspace(cwd) == workspace


def _claude_sessions(folder: Path) -> list[Session]:
    found = []
    for entry in folder.glob("*.jsonl"):
        if entry.name.startswith("agent-"):
            continue  # an older Claude Code's subagent log, not a session
        mtime = _regular_mtime(entry)
        if mtime is not None:
            found.append(Session(entry, CLAUDE_CODE, mtime))
    return found


def _subfolder_projects(workspace: str, projects: Path) -> list[Path]:
    """Project folders whose name continues one of the workspace's (sessions started in a subfolder)."""
    prefixes = tuple(name + "-" for name in claude_folders(workspace))
    try:
        names = [e.name for e in os.scandir(projects) if e.name.startswith(prefixes)]
    except OSError:
        return []
    return [projects / n for n in sorted(names)]


def _newest_claude(workspace: str, projects: Path) -> Session | None:
    found: list[Session] = []
    for name in claude_folders(workspace):
        folder = projects / name
        if folder.is_dir() and not folder.is_symlink():
            found += _claude_sessions(folder)
    for folder in _subfolder_projects(workspace, projects):
        if not folder.is_dir() or folder.is_symlink():
            continue
        for session in _claude_sessions(folder):  # counted when the session says it ran inside
            cwd = claude_cwd(session.path, projects)
            if cwd is not None and belongs(cwd, workspace):
                found.append(session)
    return max(found, key=lambda s: s.mtime, default=None)


def _newest_codex(workspace: str, sessions: Path, newer_than: float | None) -> Session | None:
    """The newest rollout of `workspace` that is newer than `newer_than` (rollouts are checked newest
    first, so only the first record of the few newest ones is read)."""
    if not sessions.is_dir() or sessions.is_symlink():
        return None
    candidates: list[Session] = []
    for entry in sessions.rglob("rollout-*.jsonl"):
        mtime = _regular_mtime(entry)
        if mtime is not None:
            candidates.append(Session(entry, CODEX, mtime))
    for session in sorted(candidates, key=lambda s: s.mtime, reverse=True):
        if newer_than is not None and session.mtime <= newer_than:
            return None
        cwd = rollout_cwd(session.path, sessions)
        if cwd is not None and belongs(cwd, workspace):
            return session
    return None


def rollout_cwd(path: Path, within: Path) -> str | None:
    """The working directory a rollout's first record names, or None."""
    try:
        head = read_file(path, META_READ, within=within, truncate=True).data
    except (OSError, Refused):
        return None
    first = head.split(b"\n", 1)[0].decode("utf-8", errors="replace")
    try:
        record = json.loads(first)
    except (ValueError, RecursionError):
        record = None
    if isinstance(record, dict):
        payload = record.get("payload")
        cwd = payload.get("cwd") if isinstance(payload, dict) else record.get("cwd")
        return cwd if isinstance(cwd, str) else None
    found = _CWD.search(first)  # a first record longer than META_READ: its cwd comes early
    if not found:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def claude_cwd(path: Path, within: Path, lines: int = 50) -> str | None:
    """The working directory a Claude Code session records (`cwd` of its first records that have one: a
    summary or a snapshot first carries none), or None."""
    try:
        head = read_file(path, META_READ, within=within, truncate=True).data
    except (OSError, Refused):
        return None
    for line in head.split(b"\n")[:lines]:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        cwd = record.get("cwd") if isinstance(record, dict) else None
        if isinstance(cwd, str):
            return cwd
    return None


def first_prompt(path: Path, limit: int = PROMPT_READ) -> str | None:
    """The first thing the person asked in a session (what the editors show to tell sessions apart), from
    its first `limit` bytes only, on one line of at most PROMPT_CHARS characters; None when there is none.
    Tags an agent wraps around its own context (`<environment_context>`, `<command-name>`) are not it."""
    try:
        got = read_file(path, limit, within=path.parent, truncate=True)
    except (OSError, Refused):
        return None
    lines = got.data.split(b"\n")
    if got.truncated:
        lines = lines[:-1]  # the cut fell inside a record
    tally = Tally()
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        turn = render_record(record, tally) if isinstance(record, dict) else None
        if not turn or not turn.startswith("user: "):
            continue
        # One line of plain text: no control character (an escape sequence) reaches the editor.
        text = " ".join(_CONTROL.sub(" ", turn[len("user: ") :]).split())
        if text and not text.startswith("<"):
            return text if len(text) <= PROMPT_CHARS else text[: PROMPT_CHARS - 1] + "…"
    return None
