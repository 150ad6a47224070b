"""Every subcommand of `kin-memory`, run as a real process on a fresh HOME and store: the happy path and
one bad input each. The exit code is the documented one (0 done, 1 findings or nothing found, 2 a usage
or I/O problem), nothing prints a traceback or a Python exception's name, and the output has its shape
(JSON that parses, a linter line, a sentence on stderr)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from reflect.fake_models import FakeModel, openai_stop, openai_tool_calls

FACT = "---\ncategory: project-fact\n---\n# API\n\nThe API listens on port 8080.\n"
EXCEPTION_NAME = re.compile(r"\b[A-Z][A-Za-z]+(Error|Exception)\b|Traceback")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".kin" / "memory" / "facts").mkdir(parents=True)
    (h / ".kin" / "memory" / "facts" / "api.md").write_text(FACT)
    (h / "transcript.md").write_text("user: remember that the cache is Redis\n")
    (h / "repo").mkdir()
    (h / "repo" / "README.md").write_text("# Widget\n\nWidget renders dashboards.\n")
    return h


def run(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("KIN_MEMORY_DIR", "XDG_CACHE_HOME")}
    out = subprocess.run(
        [sys.executable, "-m", "kin_memory", *args],
        input=stdin, capture_output=True, text=True, timeout=120, cwd=str(home), env={**env, "HOME": str(home)},
    )  # fmt: skip
    both = out.stdout + out.stderr
    assert not EXCEPTION_NAME.search(both), (args, both)
    return out


def is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


Check = Callable[[subprocess.CompletedProcess], bool]
V = "/memories/facts/api.md"
CASES: list[tuple[str, list[str], int, Check]] = [
    ("check", ["check"], 0, lambda o: "KM300 information" in o.stdout),
    ("check json", ["check", "--format", "json"], 0, lambda o: isinstance(json.loads(o.stdout), list)),
    ("check bad", ["check", "/nonexistent/store"], 2, lambda o: "no such file or folder" in o.stderr),
    ("info", ["info", "--json"], 0, lambda o: json.loads(o.stdout)["rootSource"] == "default"),
    ("info bad", ["info", "--workspace", "./relative"], 2, lambda o: "relative path" in o.stderr),
    ("search", ["search", "which port does the api listen on"], 0, lambda o: V in o.stdout),
    (
        "search json",
        ["search", "port", "--json"],
        0,
        lambda o: json.loads(o.stdout)["results"][0]["path"] == V,
    ),
    ("search bad", ["search", "port", "--limit", "zero"], 2, lambda o: "--limit" in o.stderr),
    ("index-preview", ["index-preview"], 0, lambda o: o.stdout.startswith("# Memory\n")),
    ("index-preview bad", ["index-preview", "--workspace", "a\x1bb"], 2, lambda o: "\\x1b" in o.stderr),
    ("reindex", ["reindex", "--json"], 0, lambda o: json.loads(o.stdout)["files"] == 1),
    ("tool", ["tool", json.dumps({"command": "view", "path": V})], 0, lambda o: "8080" in o.stdout),
    ("tool bad", ["tool", "{nope"], 2, lambda o: "not valid JSON" in o.stderr),
    ("sweep", ["sweep", "--dry-run"], 0, lambda o: "nothing deleted" in o.stdout + o.stderr),
    ("sweep bad", ["sweep", "--workspace", "./x"], 2, lambda o: "relative path" in o.stderr),
    ("reflect bad", ["reflect", "transcript.md"], 2, lambda o: "reflection is not configured" in o.stderr),
    ("init bad", ["init", "repo"], 2, lambda o: "no model is configured" in o.stderr),
    ("consolidate", ["consolidate", "--json"], 0, lambda o: json.loads(o.stdout) == {"candidates": []}),
    ("consolidate bad", ["consolidate", "--provider", "nope"], 2, lambda o: "--provider" in o.stderr),
    ("proposal list", ["proposal", "list"], 0, lambda o: "Traceback" not in o.stdout),
    ("proposal bad", ["proposal", "apply", "0000000000000000"], 2, lambda o: o.stderr.strip() != ""),
    ("history", ["history", V], 0, lambda o: "outside the editor" in o.stdout),
    ("history bad", ["history", "/memories/nope.md"], 1, lambda o: "no versions kept" in o.stderr),
    ("restore", ["restore", V, "1"], 0, lambda o: "restored" in o.stdout + o.stderr),
    (
        "restore bad",
        ["restore", V, "99999999999999999999999"],
        2,
        lambda o: "99999999999999999999999" in o.stderr,
    ),
    ("changes", ["changes", "--json"], 0, lambda o: json.loads(o.stdout) == {"changes": []}),
    ("accept", ["accept", "--all"], 0, lambda o: "accepted 0 changes" in o.stdout + o.stderr),
    ("accept bad", ["accept"], 2, lambda o: "--all" in o.stderr),
    ("revert", ["revert", "--all"], 0, lambda o: "reverted 0 memories" in o.stdout + o.stderr),
    ("revert bad", ["revert"], 2, lambda o: "--all" in o.stderr),
    ("fix", ["fix", "--json"], 0, lambda o: json.loads(o.stdout)["changes"] == []),
    ("fix bad", ["fix", "--root", "/nonexistent/store", "--yes"], 2, lambda o: "no memory store" in o.stderr),
    ("restamp", ["restamp", "/gone/repo", "global", "--json"], 0, lambda o: is_json(o.stdout)),
    ("restamp bad", ["restamp", "/gone/repo", "./relative"], 2, lambda o: o.stderr.strip() != ""),
    (
        "stats",
        ["stats", "--json"],
        0,
        lambda o: json.loads(o.stdout)["byCategory"]["project-fact"]["total"] == 1,
    ),
    ("stats bad", ["stats", "--workspace", "./x"], 2, lambda o: "relative path" in o.stderr),
    ("mcp help", ["mcp", "--help"], 0, lambda o: "claude mcp add" in o.stdout),
    ("mcp bad", ["mcp", "--tool-mode", "nope"], 2, lambda o: "--tool-mode" in o.stderr),
    ("serve bad", ["serve", "--port", "x"], 2, lambda o: "--port" in o.stderr),
]


@pytest.mark.parametrize(("name", "args", "code", "check"), CASES, ids=[c[0] for c in CASES])
def test_subcommand(home: Path, name: str, args: list[str], code: int, check: Check) -> None:
    if name.startswith(("history", "restore")):
        run(home, "changes")  # the first look keeps the store's versions
    out = run(home, *args)
    assert out.returncode == code, (args, out.stdout, out.stderr)
    assert check(out), (args, out.stdout, out.stderr)


def test_serve_answers_initialize_and_exits_on_exit(home: Path) -> None:
    def frame(obj: dict) -> str:
        body = json.dumps(obj)
        return f"Content-Length: {len(body.encode())}\r\n\r\n{body}"

    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]  # fmt: skip
    out = run(home, "serve", stdin="".join(frame(m) for m in messages))
    assert out.returncode == 0, out.stderr
    assert '"id":1' in out.stdout.replace(" ", "") and '"capabilities"' in out.stdout


def test_reflect_and_init_with_a_model_apply_with_yes_and_exit_zero(home: Path) -> None:
    create = {
        "command": "create",
        "path": "/memories/facts/cache.md",
        "file_text": "---\ncategory: project-fact\n---\n# Cache\n\nThe cache is Redis.\n",
    }
    with FakeModel([openai_tool_calls(create), openai_stop("Remembered the cache.")]) as fake:
        out = run(home, "reflect", "transcript.md", "--provider", "openai", "--model", "m", "--base-url",
                  fake.url + "/v1", "--api-key-env", "HOME", "--yes")  # fmt: skip
    assert out.returncode == 0, (out.stdout, out.stderr)
    assert (home / ".kin" / "memory" / "facts" / "cache.md").exists()
    with FakeModel([openai_stop("Nothing durable.")]) as fake:
        out = run(home, "init", "repo", "--provider", "openai", "--model", "m", "--base-url", fake.url + "/v1",
                  "--api-key-env", "HOME", "--json")  # fmt: skip
    assert out.returncode == 0, (out.stdout, out.stderr)
    assert is_json(out.stdout)
