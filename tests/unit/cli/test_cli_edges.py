"""Issue 33, item 7, at the command line (real processes): numbers out of range are refused with a
sentence and exit 2 (never a traceback), an agent write too large for history is refused before it is
written, and a search over a recall index that cannot be used says so instead of "no match"."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kin_memory.store.paths import HIDDEN_DIR

FACT = "---\ncategory: project-fact\n---\n# Harbour\n\nThe harbour crane lifts containers.\n"
EXCEPTION_NAME = re.compile(r"\b[A-Z][A-Za-z]+(Error|Exception)\b|Traceback")
HUGE = "99999999999999999999999"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".kin" / "memory" / "facts").mkdir(parents=True)
    (h / ".kin" / "memory" / "facts" / "crane.md").write_text(FACT)
    return h


def root(home: Path) -> Path:
    return home / ".kin" / "memory"


def run(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("KIN_MEMORY_DIR", "XDG_CACHE_HOME")}
    out = subprocess.run(
        [sys.executable, "-m", "kin_memory", *args],
        input=stdin, capture_output=True, text=True, timeout=120, cwd=str(home), env={**env, "HOME": str(home)},
    )  # fmt: skip
    assert not EXCEPTION_NAME.search(out.stderr), out.stderr
    return out


def kept_versions(home: Path, vpath: str) -> list[int]:
    out = run(home, "history", vpath, "--json")
    assert out.returncode == 0, out.stderr
    return [v["version"] for v in json.loads(out.stdout)["versions"]]


def test_restore_of_a_version_number_sqlite_cannot_hold_is_a_sentence(home: Path) -> None:
    versions = kept_versions(home, "/memories/facts/crane.md")
    assert len(versions) == 1
    out = run(home, "restore", "/memories/facts/crane.md", HUGE)
    assert out.returncode == 2
    assert out.stderr.strip() == (
        f"kin-memory: /memories/facts/crane.md has no version {HUGE}: its only version is {versions[0]}."
    )
    assert (root(home) / "facts" / "crane.md").read_text() == FACT  # nothing was written
    out = run(home, "restore", "/memories/facts/crane.md", "-" + HUGE)
    assert out.returncode == 2 and f"has no version -{HUGE}" in out.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["serve", "--tcp", "--port", HUGE], f"argument --port: must be a whole number from 0 to 65535, not {HUGE}"),
        (["sweep", "--dry-run", "--episodic-days", "inf"], "argument --episodic-days: must be a number from 0 to 36500, not infinity"),
        (["sweep", "--dry-run", "--session-hours", "nan"], "argument --session-hours: must be a number from 0 to 876000, not NaN"),
        (["search", "crane", "--limit", HUGE], f"argument --limit: must be a whole number from 1 to 100, not {HUGE}"),
        (["reflect", "x.md", "--max-tool-calls", HUGE], f"argument --max-tool-calls: must be a whole number from 1 to 1000, not {HUGE}"),
        (["reflect", "x.md", "--timeout", "1e400"], "argument --timeout: must be a number from 0 to 86400, not infinity"),
    ],
)  # fmt: skip
def test_every_numeric_option_is_bounded_with_a_sentence(home: Path, args: list[str], said: str) -> None:
    out = run(home, *args)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].endswith(said)


def test_a_create_too_large_for_history_is_refused_before_it_is_written(home: Path) -> None:
    big = json.dumps({"command": "create", "path": "/memories/facts/big.md", "file_text": "x" * (17 << 20)})
    out = run(home, "tool", "-", stdin=big)
    assert out.returncode == 1
    assert out.stdout.strip() == (
        "The file /memories/facts/big.md would be 17 MB: too large for the memory tool (the limit is 16 MB). "
        "Nothing was written."
    )
    assert not (root(home) / "facts" / "big.md").exists()
    changes = run(home, "changes", "--json")
    assert json.loads(changes.stdout) == {"changes": []}


def test_an_edit_that_would_grow_a_memory_past_the_limit_is_refused(home: Path) -> None:
    grow = {"command": "str_replace", "path": "/memories/facts/crane.md", "old_str": "lifts",
            "new_str": "y" * (16 << 20)}  # fmt: skip
    out = run(home, "tool", "-", stdin=json.dumps(grow))
    assert out.returncode == 1
    assert "too large for the memory tool (the limit is 16 MB). Nothing was written." in out.stdout
    assert (root(home) / "facts" / "crane.md").read_text() == FACT


def test_search_over_a_linked_index_folder_is_incomplete_never_no_match(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root(home) / HIDDEN_DIR).symlink_to(elsewhere, target_is_directory=True)
    out = run(home, "search", "harbour crane", "--json")
    assert out.returncode == 0
    assert json.loads(out.stdout) == {"results": [], "complete": False, "hidden": 0, "note": None}
    out = run(home, "search", "harbour crane")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1] == (
        f"kin-memory: the recall index cannot be used ({HIDDEN_DIR} is a symbolic link): this search could "
        "not look at every memory"
    )
    assert list(elsewhere.iterdir()) == []  # nothing was made where the link points


def test_search_with_a_usable_index_stays_complete(home: Path) -> None:
    out = run(home, "search", "harbour crane", "--json")
    found = json.loads(out.stdout)
    assert found["complete"] is True and [r["path"] for r in found["results"]] == ["/memories/facts/crane.md"]


def test_history_and_restore_take_the_path_forms_check_takes(home: Path) -> None:
    """Issue 46: an absolute path, a store-relative path and ~/… name the same memory as /memories/…;
    a file outside the store is a sentence (exit 2), not "no versions kept"."""
    expected = kept_versions(home, "/memories/facts/crane.md")
    assert expected
    for form in (str(root(home) / "facts" / "crane.md"), "facts/crane.md", "~/.kin/memory/facts/crane.md"):
        out = run(home, "history", form, "--json")
        assert out.returncode == 0, (form, out.stderr)
        found = json.loads(out.stdout)
        assert (
            found["path"] == "/memories/facts/crane.md"
            and [v["version"] for v in found["versions"]] == expected
        )
    out = run(home, "history", str(root(home) / "facts" / "crane.md"))
    assert out.returncode == 0 and str(expected[0]) in out.stdout
    (home / "elsewhere.md").write_text(FACT)
    out = run(home, "history", str(home / "elsewhere.md"))
    assert out.returncode == 2 and "is not inside the store" in out.stderr, out.stderr
    restored = run(home, "restore", "facts/crane.md", str(expected[0]))
    assert restored.returncode == 0, restored.stderr
