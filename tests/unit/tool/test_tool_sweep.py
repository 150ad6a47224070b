from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import pytest

from kin_memory.cli import main
from kin_memory.store.lifecycle import Thresholds
from kin_memory.tool.review import ReviewError, mark_reviewed
from kin_memory.tool.sweep import apply_sweep, plan_sweep, plan_token

DAY = 86400


def put(root: Path, rel: str, category: str | None, age_days: float) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text((f"---\ncategory: {category}\n---\n" if category else "") + f"{rel}\n")
    t = time.time() - age_days * DAY
    os.utime(p, (t, t))
    return p


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    put(root, "episodes/old.md", "episodic", 43)
    put(root, "episodes/fresh.md", "episodic", 41)
    put(root, "sessions/yesterday.md", "session", 1.1)
    put(root, "sessions/today.md", "session", 0.5)
    put(root, "facts/ancient.md", "project-fact", 900)
    put(root, "prefs/ancient.md", "preference", 900)
    put(root, "legacy.md", None, 900)  # no frontmatter: project-fact, never swept
    put(root, "typo.md", "episodc", 900)  # unknown category reads as project-fact
    put(root, "MEMORY.md", None, 900)
    put(root, "notes.txt", None, 900)
    return root


EXPIRED = ["/memories/episodes/old.md", "/memories/sessions/yesterday.md"]


def test_plan_lists_only_expired_episodic_and_session(store):
    plan = plan_sweep(store)
    assert [e.vpath for e in plan.expired] == EXPIRED
    assert [e.category for e in plan.expired] == ["episodic", "session"]
    assert plan.total == 8 and plan.kept == 6


def test_thresholds_are_settings(store):
    plan = plan_sweep(store, Thresholds(episodic_days=40, session_hours=12))
    assert [e.vpath for e in plan.expired] == [
        "/memories/episodes/fresh.md",
        *EXPIRED[:1],
        "/memories/sessions/today.md",
        EXPIRED[1],
    ]


def test_apply_deletes_and_audits(store):
    plan = plan_sweep(store)
    seen: list[tuple[int, int]] = []
    result = apply_sweep(store, plan, progress=lambda d, t: seen.append((d, t)))
    assert result.to_json() == {"swept": EXPIRED, "kept": 6}
    assert seen == [(1, 2), (2, 2)]
    assert not (store / "episodes/old.md").exists() and not (store / "sessions/yesterday.md").exists()
    for rel in (
        "episodes/fresh.md",
        "sessions/today.md",
        "facts/ancient.md",
        "prefs/ancient.md",
        "legacy.md",
        "typo.md",
        "MEMORY.md",
        "notes.txt",
    ):
        assert (store / rel).exists(), rel
    audit = [json.loads(x) for x in (store / ".kin-index" / "audit.jsonl").read_text().splitlines()]
    assert [(a["command"], a["paths"], a["outcome"]) for a in audit] == [
        ("delete", [p], "ok") for p in EXPIRED
    ]


def test_touched_after_the_listing_is_kept(store):
    plan = plan_sweep(store)
    os.utime(store / "episodes/old.md", None)  # the user reviewed it between the dry run and the sweep
    (store / "sessions/yesterday.md").write_text("---\ncategory: project-fact\n---\nkeep me\n")
    os.utime(store / "sessions/yesterday.md", (time.time() - 3 * DAY,) * 2)
    result = apply_sweep(store, plan)
    assert result.swept == [] and result.kept == 8
    assert (store / "episodes/old.md").exists()


def test_changed_since_the_listing_is_kept_and_reported(store):
    plan = plan_sweep(store)
    path = store / "sessions/yesterday.md"
    mtime = path.stat().st_mtime
    path.write_text("---\ncategory: session\n---\nrewritten since the listing, still old\n")
    os.utime(path, (mtime, mtime))  # as old as before: only the size tells it is not the listed file
    result = apply_sweep(store, plan)
    assert result.swept == ["/memories/episodes/old.md"]
    assert result.changed == ["/memories/sessions/yesterday.md"] and path.exists()


def test_plan_token_names_exactly_the_list_and_the_thresholds(store):
    t = Thresholds()
    token = plan_token(store, plan_sweep(store, t), t)
    assert token == plan_token(store, plan_sweep(store, t), t)
    assert token != plan_token(
        store, plan_sweep(store, Thresholds(session_hours=25)), Thresholds(session_hours=25)
    )
    os.utime(store / "episodes/old.md", (time.time() - 50 * DAY,) * 2)  # still expired, another mtime
    assert token != plan_token(store, plan_sweep(store, t), t)


def test_cancel_stops_between_files(store):
    result = apply_sweep(store, plan_sweep(store), cancelled=lambda: True)
    assert result.cancelled and result.swept == [] and (store / "episodes/old.md").exists()


def test_expired_symlink_to_outside_is_not_followed(store, tmp_path):
    outside = put(tmp_path / "outside", "victim.md", "episodic", 100)
    (store / "episodes" / "link.md").symlink_to(outside)
    plan = plan_sweep(store)
    assert "/memories/episodes/link.md" not in [e.vpath for e in plan.expired]
    apply_sweep(store, plan)
    assert outside.exists()


# ---------------------------------------------------------------- CLI


def cli(
    store: Path, *args: str, stdin: str = "", tty: bool = False, monkeypatch, capsys
) -> tuple[int, str, str]:
    fake = io.StringIO(stdin)
    fake.isatty = lambda: tty  # type: ignore[method-assign]
    monkeypatch.setattr("sys.stdin", fake)
    monkeypatch.setattr("sys.stderr.isatty", lambda: tty, raising=False)
    rc = main(["sweep", "--root", str(store), *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_dry_run(store, monkeypatch, capsys):
    rc, out, _ = cli(store, "--dry-run", monkeypatch=monkeypatch, capsys=capsys)
    assert rc == 0
    lines = out.splitlines()
    assert [ln.split("\t")[:2] for ln in lines[:2]] == [[EXPIRED[0], "episodic"], [EXPIRED[1], "session"]]
    assert lines[2:] == ["2 expired memories, 6 kept", "dry run: nothing deleted"]
    assert (store / "episodes/old.md").exists()


def test_cli_not_a_terminal_lists_only(store, monkeypatch, capsys):
    rc, out, err = cli(store, monkeypatch=monkeypatch, capsys=capsys)
    assert rc == 0 and "2 expired memories, 6 kept" in out
    assert err.strip() == "not a terminal: nothing deleted (pass --yes to delete)"
    assert (store / "episodes/old.md").exists()


def test_cli_terminal_asks(store, monkeypatch, capsys):
    rc, out, err = cli(store, stdin="n\n", tty=True, monkeypatch=monkeypatch, capsys=capsys)
    assert "Delete 2 expired memories? [y/N]" in err and (store / "episodes/old.md").exists()
    rc, out, err = cli(store, stdin="y\n", tty=True, monkeypatch=monkeypatch, capsys=capsys)
    assert rc == 0 and out.splitlines()[-1] == "swept 2, kept 6"
    assert not (store / "episodes/old.md").exists()


def test_cli_yes_json(store, monkeypatch, capsys):
    rc, out, _ = cli(store, "--yes", "--json", monkeypatch=monkeypatch, capsys=capsys)
    assert rc == 0 and json.loads(out) == {"swept": EXPIRED, "kept": 6, "token": None, "changed": []}
    rc, out, _ = cli(store, "--yes", "--json", monkeypatch=monkeypatch, capsys=capsys)
    assert json.loads(out) == {"swept": [], "kept": 6, "token": None, "changed": []}


def test_cli_dry_run_json_and_bad_threshold(store, monkeypatch, capsys):
    rc, out, _ = cli(store, "--dry-run", "--json", monkeypatch=monkeypatch, capsys=capsys)
    assert json.loads(out) == {"swept": EXPIRED, "kept": 6, "token": None, "changed": []}
    rc, _, err = cli(store, "--episodic-days", "0", monkeypatch=monkeypatch, capsys=capsys)
    assert rc == 2 and "must be positive" in err


# ---------------------------------------------------------------- mark reviewed


def test_mark_reviewed_touches_only_mtime(store):
    p = store / "facts/ancient.md"
    before = p.read_bytes()
    mark_reviewed(store, "/memories/facts/ancient.md")
    assert time.time() - p.stat().st_mtime < 5 and p.read_bytes() == before
    assert plan_sweep(store).total == 8


@pytest.mark.parametrize(
    ("rel", "kind"),
    [
        ("episodes/old.md", "an episodic memory"),
        ("sessions/yesterday.md", "a session memory"),
        ("sessions/today.md", "a session memory"),
        ("prefs/ancient.md", "a preference"),
    ],
)
def test_mark_reviewed_refuses_anything_but_a_project_fact(store, rel, kind):
    p = store / rel
    before = (p.stat().st_mtime, p.read_bytes())
    with pytest.raises(ReviewError) as info:
        mark_reviewed(store, "/memories/" + rel)
    assert str(info.value).startswith(f"Only project facts can be marked reviewed: /memories/{rel} is {kind}")
    assert (p.stat().st_mtime, p.read_bytes()) == before
    # Files that read as project facts (no frontmatter, an unknown category) are still reviewable.
    for fact in ("legacy.md", "typo.md"):
        mark_reviewed(store, "/memories/" + fact)
        assert time.time() - (store / fact).stat().st_mtime < 5


def test_mark_reviewed_refuses_outside_and_bad_paths(store, tmp_path):
    outside = put(tmp_path / "outside", "fact.md", "project-fact", 300)
    mtime = outside.stat().st_mtime
    (store / "facts" / "link.md").symlink_to(outside)
    for vpath, text in [
        ("/memories/facts/link.md", "Path would escape /memories directory via symlink"),
        (
            "/memories/../outside/fact.md",
            "Path /memories/../outside/fact.md would escape /memories directory",
        ),
        ("/memories/nope.md", "The path /memories/nope.md does not exist"),
        ("/memories/facts", "The path /memories/facts is not a file."),
        ("/memories", "The path /memories is not a file."),
    ]:
        with pytest.raises(ReviewError) as info:
            mark_reviewed(store, vpath)
        assert str(info.value) == text
    assert outside.stat().st_mtime == mtime


def test_sweep_removes_temp_files_of_dead_writers_only(store, tmp_path):
    stale = store / "episodes" / ".kin-tmp-0123456789abcdef"
    fresh = store / "episodes" / ".kin-tmp-fedcba9876543210"
    other = store / "episodes" / ".keep-me"
    for p in (stale, fresh, other):
        p.write_text("partial")
    os.utime(stale, (time.time() - 7200,) * 2)
    os.utime(other, (time.time() - 7200,) * 2)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".kin-tmp-0000000000000000").write_text("not ours")
    os.utime(outside / ".kin-tmp-0000000000000000", (1, 1))
    (store / "linked").symlink_to(outside)
    apply_sweep(store, plan_sweep(store))
    assert not stale.exists() and fresh.exists() and other.exists()
    assert (outside / ".kin-tmp-0000000000000000").exists()
