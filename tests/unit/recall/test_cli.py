"""The recall subcommands of the real CLI, run as a process on a real store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.memfiles import memory, write

WS = "/srv/repos/app"


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(root.parent), "KIN_MEMORY_DIR": str(root)}
    return subprocess.run(
        [sys.executable, "-m", "kin_memory", *args, "--root", str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def fill(root: Path) -> None:
    write(
        root,
        "facts/build.md",
        memory(
            "project-fact", "# Build\n\nThe build uses bazel with a remote cache on the shared runners.\n", WS
        ),
    )
    write(
        root,
        "facts/build-again.md",
        memory(
            "project-fact",
            "# Build again\n\nThe build uses bazel with a remote cache on the shared runners today.\n",
            WS,
        ),
    )
    write(
        root,
        "facts/foreign.md",
        memory("project-fact", "# Foreign\n\nThe other build uses make.\n", "/srv/repos/other"),
    )
    write(
        root,
        "notes/evil.md",
        memory("episodic", "# \x1b[31mred\x1b[0m\n\nbuild \x1b]0;pwned\x07 output\n", "global"),
    )
    write(root, "MEMORY.md", "# Index\n" + "".join(f"- line {i}\n" for i in range(300)))


def test_search_json_and_workspace_filter(store: Path) -> None:
    fill(store)
    out = cli(store, "search", "bazel remote cache", "--json", "--workspace", WS)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)["results"]
    assert {r["path"] for r in results} == {"/memories/facts/build.md", "/memories/facts/build-again.md"}
    assert results[0]["uri"].startswith("file://")
    hidden = json.loads(cli(store, "search", "make", "--json", "--workspace", WS).stdout)["results"]
    assert all(r["path"] != "/memories/facts/foreign.md" for r in hidden)
    operator = json.loads(cli(store, "search", "make", "--json", "--workspace", "none").stdout)["results"]
    assert operator[0]["path"] == "/memories/facts/foreign.md"


def test_search_text_output_strips_terminal_escapes(store: Path) -> None:
    fill(store)
    out = cli(store, "search", "build output", "--workspace", WS)
    assert out.returncode == 0
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout
    assert "evil.md" in out.stdout
    nothing = cli(store, "search", '((" NEAR AND', "--workspace", WS)
    assert nothing.returncode == 1 and "no matching memories" in nothing.stderr
    assert "Traceback" not in nothing.stderr


def test_index_preview_reports_the_cut(store: Path) -> None:
    fill(store)
    out = cli(store, "index-preview", "--json", "--workspace", WS)
    data = json.loads(out.stdout)
    assert data["truncated"] is True and data["lines"] == 200 and data["cut"] > 0
    assert data["bytes"] == len(data["text"].encode())
    assert data["hidden"] == 1 and "foreign.md" not in data["text"]
    text = cli(store, "index-preview", "--workspace", WS)
    assert "lines past the 200-line cap are not inlined" in text.stderr


def test_reindex_and_check_duplicates(store: Path) -> None:
    fill(store)
    out = cli(store, "reindex", "--json")
    assert json.loads(out.stdout)["files"] == 4
    check = cli(store, "check", "--duplicates", "--format", "json", "--workspace", WS)
    km601 = [r for r in json.loads(check.stdout) if r["code"] == "KM601"]
    assert {Path(r["path"]).name for r in km601} == {"build.md", "build-again.md"}
    plain = cli(store, "check", "--format", "json", "--workspace", WS)
    assert not [r for r in json.loads(plain.stdout) if r["code"] == "KM601"]
