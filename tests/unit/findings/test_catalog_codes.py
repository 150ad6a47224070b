"""One fixture file per diagnostic code: `kin-memory check --format json` reports exactly the expected codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kin_memory.findings.run import check_store
from kin_memory.store.context import Context
from kin_memory.store.store import load_store

DAY = 86400
NOW = time.time()

# rel path → (text, age in days, expected codes)
CASES: dict[str, tuple[str, float, set[str]]] = {
    "km100.md": ("category: project-fact\nbody\n", 0, {"KM100"}),
    "km101.md": ("---\ncategory: project-fact\nbody\n", 0, {"KM101"}),
    "km102.md": ("---\ncategory: [a\n---\nbody\n", 0, {"KM102"}),
    "km103.md": ("---\n- a\n- b\n---\nbody\n", 0, {"KM103"}),
    "km104.md": ("---\ncategory: preference\ncategory: episodic\n---\nbody\n", 0, {"KM104"}),
    "km105.md": ("---\ncategory: preference\nowner: ops\n---\nbody\n", 0, {"KM105"}),
    "km106.md": ("# Title\nno frontmatter\n", 0, {"KM106"}),
    "km200.md": ("---\nworkspace: global\n---\nbody\n", 0, {"KM200"}),
    "km201.md": ("---\ncategory: projcet-fact\nworkspace: global\n---\nbody\n", 0, {"KM201"}),
    "km202.md": ("---\ncategory: ' Preference '\n---\nbody\n", 0, {"KM202", "KM300"}),
    "km203.md": ("---\ncategory: 5\nworkspace: global\n---\nbody\n", 0, {"KM203"}),
    "km300.md": ("---\ncategory: episodic\n---\nbody\n", 0, {"KM300"}),
    "km301.md": (
        "---\ncategory: project-fact\nworkspace: /nonexistent/moved/repo\n---\nbody\n",
        0,
        {"KM301", "KM303"},
    ),
    "km302.md": ("---\ncategory: project-fact\nworkspace: ~/src/api/\n---\nbody\n", 0, {"KM302", "KM303"}),
    "km303.md": ("---\ncategory: project-fact\nworkspace: other-label\n---\nbody\n", 0, {"KM303"}),
    "km304.md": ('---\ncategory: project-fact\nworkspace: "a\\u0007b"\n---\nbody\n', 0, {"KM304"}),
    "km306.md": ("---\ncategory: preference\nworkspace: work-laptop\n---\nbody\n", 0, {"KM306", "KM303"}),
    "km306-global.md": ("---\ncategory: preference\nworkspace: global\n---\nbody\n", 0, set()),
    "km400.md": ("---\ncategory: project-fact\nworkspace: global\n---\nbody\n", 200, {"KM400"}),
    "km401.md": ("---\ncategory: episodic\nworkspace: global\n---\nbody\n", 38, {"KM401"}),
    "km402.md": ("---\ncategory: episodic\nworkspace: global\n---\nbody\n", 50, {"KM402"}),
    "km403.md": ("---\ncategory: session\n---\nbody\n", 0.2, {"KM403"}),
    "km404.md": ("---\ncategory: session\n---\nbody\n", 2, {"KM404"}),
    "km600.md": ("---\ncategory: preference\n---\n" + ("x" * 99 + "\n") * 700, 0, {"KM600"}),
    "km602.md": (
        "---\ncategory: preference\n---\ntoken: ghp_abcdefghijklmnopqrstuvwxyz0123456789AB\n",
        0,
        {"KM602"},
    ),
    "suppressed.md": (
        "---\ncategory: project-fact\nworkspace: global\n---\n<!-- kin-memory: disable KM400 -->\n",
        400,
        set(),
    ),
    "bad-directive.md": (
        "---\ncategory: preference\n---\n<!-- kin-memory: disable KM999 -->\n",
        0,
        {"KM901"},
    ),
    "clean.md": ("---\ncategory: preference\n---\nLikes tea.\n", 0, set()),
}


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    for rel, (text, age, _) in CASES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        if age:
            os.utime(p, (NOW - age * DAY, NOW - age * DAY))
    (root / "km603.md").write_bytes(b"---\ncategory: preference\n---\nbad \xff\n")
    (root / "MEMORY.md").write_text(
        "# Index\n- [gone](facts/missing.md)\n- [ok](clean.md)\n" + "line\n" * 210
    )
    return root


def test_every_code_reported_exactly(store: Path) -> None:
    results = check_store(load_store(store), Context(root=store, active=("/srv/active-repo",), now=NOW))
    for rel, (_, _, expected) in CASES.items():
        assert {f.code for f in results[f"/memories/{rel}"]} == expected, rel
    assert {f.code for f in results["/memories/km603.md"]} == {"KM603"}
    assert {f.code for f in results["/memories/MEMORY.md"]} == {"KM500", "KM502"}


def test_ranges_are_exact(store: Path) -> None:
    results = check_store(load_store(store), Context(root=store, now=NOW))
    (f,) = results["/memories/km201.md"]
    assert (f.span.line, f.span.col, f.span.end_line, f.span.end_col) == (1, 10, 1, 22)
    (f,) = results["/memories/km104.md"]
    assert (f.span.line, f.span.col, f.span.end_col) == (2, 0, 8)
    (f,) = results["/memories/km603.md"]
    assert (f.span.line, f.span.col) == (3, 4)
    km502 = next(f for f in results["/memories/MEMORY.md"] if f.code == "KM502")
    assert (km502.span.line, km502.span.col, km502.span.end_col) == (1, 9, 25)


def test_quick_fix_edits_only_what_they_must(store: Path) -> None:
    from kin_memory.store.memory import load

    memory = load(store / "km104.md", "/memories/km104.md")
    results = check_store(load_store(store), Context(root=store, now=NOW))
    (f,) = results["/memories/km104.md"]
    (edit,) = f.fixes[0].edits
    lines = memory.text.split("\n")
    kept = lines[: edit.span.line] + lines[edit.span.end_line :]
    assert "\n".join(kept) == "---\ncategory: preference\n---\nbody\n"


def test_cli_json_and_exit_codes(store: Path) -> None:
    env = {**os.environ, "HOME": str(store.parent)}
    out = subprocess.run(
        [sys.executable, "-m", "kin_memory", "check", str(store), "--format", "json", "--workspace", "none"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 1, out.stderr
    rows = json.loads(out.stdout)
    assert {"path", "range", "code", "severity", "message"} <= set(rows[0])
    assert any(r["code"] == "KM201" and r["path"].endswith("km201.md") for r in rows)
    missing = subprocess.run(
        [sys.executable, "-m", "kin_memory", "check", "--root", str(store / "nope")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert missing.returncode == 2 and "Traceback" not in missing.stderr and missing.stderr.count("\n") == 1


def test_clean_store_exits_zero(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "a.md").write_text("---\ncategory: preference\n---\nok\n")
    out = subprocess.run(
        [sys.executable, "-m", "kin_memory", "check", "--root", str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(tmp_path)},
        timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_project_settings_cannot_move_store(tmp_path: Path) -> None:
    from kin_memory.store.root import resolve_root
    from kin_memory.store.settings import effective_settings

    project = tmp_path / "repo"
    (project / ".kin").mkdir(parents=True)
    (project / ".kin" / "settings.toml").write_text('memory_dir = "/tmp/evil"\nmemory_enabled = "yes"\n')
    eff = effective_settings([str(project)], home=tmp_path, env={})
    assert {p.code for p in eff.problems} == {"KM700", "KM701"}
    assert resolve_root(None, env={}, home=tmp_path).path == (tmp_path / ".kin" / "memory").resolve()
