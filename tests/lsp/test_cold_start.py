"""The cold-start shard workers publish exactly what the in-process check publishes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from support.rawlsp import RawClient


def write(path: Path, text: str, age_days: float = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if age_days:
        t = time.time() - age_days * 86400
        os.utime(path, (t, t))


def build(root: Path) -> None:
    write(
        root / "facts" / "typo.md",
        "---\ncategory: projcet-fact\nworkspace: global\n---\n# Cache\n\nThe CDN caches.\n",
    )
    write(
        root / "facts" / "stale.md",
        "---\ncategory: project-fact\nworkspace: global\n---\n# Old\n",
        age_days=400,
    )
    write(root / "facts" / "ünï.md", "---\ncategory: ‘episodic’ 😀\n---\n# Ünïcode ✓\n")
    write(
        root / "ep" / "old.md", "---\ncategory: episodic\nworkspace: /elsewhere/proj\n---\nold\n", age_days=60
    )
    write(root / "s" / "scratch.md", "---\ncategory: session\n---\nscratch\n", age_days=3)
    write(root / "broken.md", "---\ncategory: [a\n---\nbody\n")
    write(root / "ok.md", "---\ncategory: preference\n---\n# Tabs\n\nUses tabs.\n")
    for n in range(40):
        write(
            root / "bulk" / f"m{n}.md",
            f"---\ncategory: {'episodic' if n % 3 else 'bogus'}\n---\n# M{n}\n\ntext {n}\n",
            age_days=n * 3,
        )
    write(
        root / "MEMORY.md", "# Index\n\n- [typo](/memories/facts/typo.md)\n- [gone](/memories/missing.md)\n"
    )


def run(root: Path, workers: str, encodings: list[str] | None) -> tuple[dict, str]:
    env = {**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(root.parent), "KIN_MEMORY_WORKERS": workers}
    client = RawClient(env)
    try:
        client.initialize(encodings)
        message = client.wait_checked()["params"]["message"]
        assert ("by 2 worker processes" in message) == (workers == "2"), message
        time.sleep(0.3)  # let the post-load reconcile finish (it must change nothing here)
        return client.diagnostics(), client.close()
    finally:
        client.proc.kill()


@pytest.mark.parametrize("encodings", [None, ["utf-8"]], ids=["utf-16", "utf-8"])
def test_shard_workers_match_in_process_check(tmp_path: Path, encodings) -> None:
    root = tmp_path / "memory"
    build(root)
    expected, err0 = run(root, "0", encodings)
    sharded, err2 = run(root, "2", encodings)
    assert "Traceback" not in err0 + err2
    assert len(expected) >= 30  # the bulk files with bad categories, the typo, the stale fact, MEMORY.md...
    assert any(u.endswith("MEMORY.md") for u in expected)
    assert sharded == expected


def test_files_changed_after_the_workers_read_them_are_rechecked(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    build(root)
    env = {**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(tmp_path), "KIN_MEMORY_WORKERS": "2"}
    client = RawClient(env)
    try:
        time.sleep(1.0)  # the workers have read the store by now; the editor has not even initialized
        target = root / "ok.md"
        write(target, "---\ncategory: nonsense\n---\n# Tabs\n")
        client.initialize()
        client.wait_checked()
        client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == target.as_uri()
                and any(d["code"] == "KM201" for d in m["params"]["diagnostics"])
            )
        )
    finally:
        client.close()


def test_a_warm_start_takes_the_kept_listing_and_sees_what_changed_since(tmp_path: Path) -> None:
    """The workers list the store from the findings cache while no folder changed since their last walk,
    and walk it again once one did: a file added to a nested folder and one removed are seen as at a
    first start. The first start's walk met folders just made (its hidden folder, the store itself): the
    first worker walks again once they have settled, and keeps that listing."""
    from kin_memory.caches.findings import FindingsCache
    from kin_memory.caches.listing import kept

    root = tmp_path / "memory"
    build(root)
    first, _ = run(root, "2", None)
    deadline = time.monotonic() + 10
    while True:  # the first worker keeps the listing after the server has its answer
        cache = FindingsCache.open(root)
        assert cache is not None
        listed = [kept(cache.conn, str(root), (i, 2)) for i in (0, 1)]
        cache.close()
        if all(x is not None for x in listed) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert all(x is not None for x in listed)
    assert run(root, "2", None)[0] == first  # from the kept listing

    write(root / "bulk" / "new.md", "---\ncategory: bogus\n---\n# New\n")
    (root / "ep" / "old.md").unlink()
    after, err = run(root, "2", None)
    expected, _ = run(root, "0", None)
    assert "Traceback" not in err
    assert after == expected
    assert (root / "bulk" / "new.md").as_uri() in after
    assert (root / "ep" / "old.md").as_uri() not in after and (root / "ep" / "old.md").as_uri() in first
