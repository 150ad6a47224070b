"""A sync finishes what it starts: a lock git left behind in a crash is cleared (kin holds its own sync
lock), a push that races another (its ref moved or locked meanwhile) fetches, merges and pushes again,
and files a stopped sync had already brought in go out with their own machine, not this one."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import hostile
import pytest
from sync_machines import DEPLOY, Machine, git

from kin_memory.gitsync import engine
from kin_memory.gitsync.git import SyncError


def test_a_stale_index_lock_is_cleared(laptop: Machine) -> None:
    laptop.write("facts/a.md", DEPLOY)
    laptop.sync()
    lock = laptop.root / ".git" / "index.lock"
    lock.write_text("")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    laptop.write("facts/b.md", DEPLOY)
    assert [c.path for c in laptop.sync().outgoing] == ["/memories/facts/b.md"]
    assert not lock.exists()


def test_a_fresh_index_lock_is_a_git_at_work(laptop: Machine) -> None:
    laptop.write("facts/a.md", DEPLOY)
    laptop.sync()
    (laptop.root / ".git" / "index.lock").write_text("")
    with pytest.raises(SyncError, match="Another git command is working in the store's repository"):
        laptop.sync()


def test_a_push_that_races_another_fetches_merges_and_pushes_again(laptop: Machine, remote: Path) -> None:
    laptop.write("facts/a.md", DEPLOY)
    laptop.sync()
    other = hostile.blob(remote, b"---\ncategory: project-fact\n---\n# Other\n\nFrom the race.\n")[2]
    hook = remote / "hooks" / "pre-receive"
    # the first push meets another machine's commit landing while it is received: "cannot lock ref"
    hook.write_text(f"""#!/bin/sh
marker="$GIT_DIR/raced"
[ -e "$marker" ] && exit 0
touch "$marker"
unset GIT_QUARANTINE_PATH
tree=$(printf '100644 blob {other}\\tother.md\\n' | git mktree)
top=$(git rev-parse refs/heads/main)
base=$(git rev-parse "$top^{{tree}}")
merged=$( (git ls-tree "$base"; printf '100644 blob {other}\\tracer.md\\n') | git mktree)
commit=$(printf 'Race\\n\\nKin-Machine: 00000000000000bb racer\\n' | GIT_AUTHOR_NAME=r GIT_AUTHOR_EMAIL=r@x \
  GIT_COMMITTER_NAME=r GIT_COMMITTER_EMAIL=r@x git commit-tree "$merged" -p "$top")
git update-ref refs/heads/main "$commit" "$top"
exit 0
""")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    laptop.write("facts/b.md", DEPLOY)
    report = laptop.sync()
    assert (remote / "raced").exists()
    assert "/memories/facts/b.md" in [c.path for c in report.outgoing]
    assert (laptop.root / "racer.md").is_file()
    files = hostile.flat(remote, hostile.head(remote))
    assert "facts/b.md" in files and "racer.md" in files


def test_files_a_stopped_sync_brought_in_keep_their_machine(laptop: Machine, desktop: Machine,
                                                             remote: Path) -> None:  # fmt: skip
    laptop.write("facts/a.md", DEPLOY)
    laptop.sync()
    desktop.sync()
    laptop.write("facts/new.md", DEPLOY.replace("Deploy", "New"))
    laptop.write("facts/a.md", DEPLOY.replace("main", "trunk"))
    laptop.sync()
    # the desktop's sync fetched and wrote both files, then was stopped before its branch moved
    engine.fetch(desktop.root)
    desktop.write("facts/new.md", laptop.read("facts/new.md"))
    desktop.write("facts/a.md", laptop.read("facts/a.md"))
    report = desktop.sync()
    assert report.outgoing == []
    assert sorted((c.path, c.machine) for c in report.incoming) == [
        ("/memories/facts/a.md", "laptop"), ("/memories/facts/new.md", "laptop")]  # fmt: skip
    log = git(desktop.root, "log", "--format=%(trailers:key=Kin-Machine,valueonly)", "--no-merges", "--",
              "facts/new.md")  # fmt: skip
    assert "desktop" not in log and "laptop" in log
