"""Issue 14, point 8, over LSP: while the server runs, a folder link to outside the store and a file
link to outside it are planted, and files change behind them. The cold scan refuses both; so must the
watcher: the outside text never reaches diagnostics, `kin.memory.search` or `kin.memory.indexPreview`.
"""

from __future__ import annotations

import time
from pathlib import Path

from reliability_support import COUNTS, memory, write

SECRET = "quokkaleak"


def _watcher_live(server, root: Path) -> None:
    """Files made one after another until two in a row get diagnostics: the watcher is then live."""
    streak = 0
    for k in range(40):
        path = write(root / "barrier" / f"b{k}.md", memory("prefrence", "barrier\n", None))
        try:
            server.wait_until(lambda path=path: bool(server.codes(path)), 1.0, "barrier")
            streak += 1
        except AssertionError:
            streak = 0
        if streak == 2:
            return
    raise AssertionError("the file watcher never came up")


def _settled(server, root: Path, name: str) -> None:
    """A memory written after the planted changes has its diagnostics: the changes before it are done."""
    path = write(root / name, memory("prefrence", "sentinel\n", None))
    server.wait_until(lambda: bool(server.codes(path)), 10, f"the sentinel {name}")
    time.sleep(0.5)


def test_watcher_ignores_links_out_of_the_store_like_the_scan(
    root: Path, home: Path, tmp_path: Path, server_factory
) -> None:
    write(root / "notes" / "inside.md", memory("preference", "the inside memory\n"))
    outside = tmp_path / "outside"
    write(outside / "secret.md", memory("prefrence", f"{SECRET} from outside\n"))
    write(outside / "other.md", memory("prefrence", f"{SECRET} behind a file link\n"))
    # planted before the server starts: the cold scan refuses both, but a watch armed on the store
    # follows the folder link (the file watcher walks into linked folders when it starts)
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "leak.md").symlink_to(outside / "other.md")
    server = server_factory()
    server.initialize()
    _watcher_live(server, root)

    write(outside / "fresh.md", memory("prefrence", f"{SECRET} written while serving\n"))
    write(outside / "secret.md", memory("prefrence", f"{SECRET} changed while serving\n"))
    write(outside / "other.md", memory("prefrence", f"{SECRET} changed behind a file link\n"))
    write(outside / "sub" / "nested.md", memory("prefrence", f"{SECRET} in a new folder\n"))
    _settled(server, root, "sentinel-1.md")
    # an editor's own watcher may report the same paths (and follow links the same way)
    changed = [root / "linked" / "secret.md", root / "linked" / "fresh.md", root / "leak.md"]
    server.notify(
        "workspace/didChangeWatchedFiles", {"changes": [{"uri": p.as_uri(), "type": 2} for p in changed]}
    )
    _settled(server, root, "sentinel-2.md")

    with server._cond:
        published = {uri for uri, diags in server.diagnostics.items() if diags}
    leaked = [u for u in published if "/linked/" in u or u.endswith("/leak.md")]
    assert not leaked, {u: server.diagnostics[u] for u in leaked}
    assert (root / "sentinel-2.md").as_uri() in published  # the changes were processed meanwhile

    search = server.command("kin.memory.search", {"query": SECRET, "workspace": "none"})
    # Nothing outside the store is indexed: no result holds the secret or lives behind the links (the
    # semantic layer may still answer a nonsense word with in-store memories close enough in meaning).
    found = search["result"]["results"]
    assert not [
        r for r in found if SECRET in str(r) or "/linked/" in r["path"] or r["path"].endswith("/leak.md")
    ], search
    preview = server.command("kin.memory.indexPreview", {"workspace": "none"})["result"]
    assert SECRET not in preview["text"] and "/memories/linked" not in preview["text"], preview["text"]
    assert "/memories/leak.md" not in preview["text"]
    assert "/memories/notes/inside.md" in preview["text"]
    server.assert_clean_stderr()
    assert server.shutdown() == 0
    COUNTS["links out of the store ignored by the watcher"] += 5
