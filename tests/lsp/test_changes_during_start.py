"""Files that change while the server starts are not missed: the start-up check lists the store once,
the file watcher arms after it, and the catch-up compares the disk with what the check saw."""

from __future__ import annotations

import os
from pathlib import Path

from support.memfiles import memory, write
from support.rawlsp import RawClient


def _codes(client: RawClient, uri: str) -> set[str]:
    return {d.get("code") for d in client.diagnostics().get(uri, [])}


def test_files_written_during_and_right_after_the_start_up_check_get_their_diagnostics(
    tmp_path: Path,
) -> None:
    store = tmp_path / "memory"
    for i in range(1500):  # enough that the check takes a moment
        write(store, f"bulk/n{i:04}.md", memory("episodic", f"# Note {i}\n\nroutine filler text {i}\n"))
    edited = write(store, "bulk/n0007.md", memory("episodic", "# Note 7\n\nfine for now\n"))
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(tmp_path)})
    try:
        client.initialize()
        during = write(store, "facts/during.md", "---\ncategory: project-fact\nno closing fence\n")
        client.wait_checked()
        # The moment the check is over: the watcher may not be armed yet.
        after = write(store, "facts/after.md", "---\ncategory: project-fact\nno closing fence either\n")
        edited.write_text("---\ncategory: episodic\nbroken now\n", encoding="utf-8")
        for path in (during, after, edited):
            uri = path.resolve().as_uri()
            client.wait(lambda m, uri=uri: "KM101" in _codes(client, uri), 30)
    finally:
        client.close()
