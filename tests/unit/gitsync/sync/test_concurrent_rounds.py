"""Two machines syncing at the same moment, six rounds: each writes new memories and edits a shared one
between rounds, both syncs run concurrently (their pushes race), and in the end both stores hold every
memory either wrote, the same bytes on both, with no conflict marker anywhere."""

from __future__ import annotations

import threading

from sync_machines import DEPLOY, Machine, no_marker_anywhere

from kin_memory.gitsync.git import SyncError
from kin_memory.gitsync.records import FOLDER

ROUNDS = 6


def _memories(m: Machine) -> dict[str, bytes]:
    return {str(p.relative_to(m.root)): p.read_bytes() for p in m.root.rglob("*.md")
            if ".git" not in p.parts and ".kin-index" not in p.parts}  # fmt: skip


def test_two_machines_converge_over_six_rounds_of_concurrent_syncs(laptop: Machine, desktop: Machine) -> None:
    laptop.write("facts/shared.md", DEPLOY)
    laptop.sync()
    desktop.sync()
    written: set[str] = {"facts/shared.md"}
    errors: list[str] = []
    for n in range(ROUNDS):
        for m in (laptop, desktop):
            rel = f"notes/{m.name}-{n}.md"
            m.write(rel, f"---\ncategory: project-fact\n---\n# {m.name} {n}\n\nRound {n} on {m.name}.\n")
            written.add(rel)
        laptop.write(
            "facts/shared.md", laptop.read("facts/shared.md").replace("Deploy\n", f"Deploy {n}\n", 1)
        )
        desktop.write(
            "facts/shared.md", desktop.read("facts/shared.md") + f"Round {n} note from the desktop.\n"
        )

        def run(m: Machine) -> None:
            try:
                m.sync()
            except SyncError as exc:  # a sentence, never a crash; the next round retries
                errors.append(exc.message)

        threads = [threading.Thread(target=run, args=(m,)) for m in (laptop, desktop)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
    for _ in range(2):
        laptop.sync()
        desktop.sync()
    a, b = _memories(laptop), _memories(desktop)
    assert a == b
    assert written <= set(a)
    assert no_marker_anywhere(laptop.root) == [] and no_marker_anywhere(desktop.root) == []
    assert all("kept sending changes" in e for e in errors), errors
    # the desktop's appended notes and the laptop's retitles all survived or are kept in a record
    records = list((laptop.root / FOLDER).glob("*.json")) if (laptop.root / FOLDER).exists() else []
    text = a["facts/shared.md"].decode()
    assert f"Round {ROUNDS - 1} note from the desktop." in text or records
