"""KM800 from the conflicts on record: only for a memory of this store, with the other machine's name cut
to one clean line; the command line's `check` shows the same rows."""

from __future__ import annotations

import json
from pathlib import Path

from kin_memory.gitsync.diagnostics import conflict_findings, disk_lines
from kin_memory.gitsync.records import FOLDER, record_rel
from kin_memory.store import sync_trust
from kin_memory.store.machine import rename_machine


def plant(root: Path, vpath: str, other: str, *, rel: str | None = None, accepted: bool = True) -> None:
    """A record in the synced folder; `accepted`: as a sync of this machine would have accepted it."""
    me = json.loads((root / ".kin-index" / "machine.json").read_text())
    body = {"path": vpath, "kind": "overlap", "kept": me["name"], "kept_id": me["id"], "time": 0.0,
            "versions": [{"machine": me["name"], "machine_id": me["id"], "content": "mine\n"},
                         {"machine": other, "machine_id": "0123456789abcdef", "content": "theirs\n"}]}  # fmt: skip
    target = root / (rel or record_rel(vpath))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(body))
    if accepted:
        kept = sync_trust.read(root)[1]
        sync_trust.write(
            root, [], {**kept, (rel or record_rel(vpath)): sync_trust.digest(target.read_bytes())}
        )


def test_km800_names_the_other_machine_on_one_clean_line(tmp_path: Path) -> None:
    rename_machine(tmp_path, "desktop")
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "db.md").write_text("---\ncategory: project-fact\n---\n# DB\n")
    plant(tmp_path, "/memories/facts/db.md", "lap\x1b[31mtop\nFAKE: line")
    found = conflict_findings(tmp_path, disk_lines(tmp_path))
    [finding] = found["/memories/facts/db.md"]
    assert finding.code == "KM800" and finding.span.line == 0
    assert "\n" not in finding.message and "\x1b" not in finding.message
    assert [f.title for f in finding.fixes][0] == "Keep this machine's version"


def test_a_record_no_sync_of_this_machine_accepted_gives_nothing(tmp_path: Path) -> None:
    """Planted in the folder (an agent's write, a hand-made file): not what this machine's sync checked."""
    rename_machine(tmp_path, "desktop")
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "db.md").write_text("---\ncategory: project-fact\n---\n# DB\n")
    plant(tmp_path, "/memories/facts/db.md", "laptop", accepted=False)
    assert conflict_findings(tmp_path, disk_lines(tmp_path)) == {}
    plant(tmp_path, "/memories/facts/db.md", "laptop")
    assert list(conflict_findings(tmp_path, disk_lines(tmp_path))) == ["/memories/facts/db.md"]
    (tmp_path / record_rel("/memories/facts/db.md")).write_text("{}")  # changed since it was accepted
    assert conflict_findings(tmp_path, disk_lines(tmp_path)) == {}


def test_a_record_naming_no_memory_of_this_store_gives_nothing(tmp_path: Path) -> None:
    rename_machine(tmp_path, "desktop")
    outside = tmp_path.parent / "secret.md"
    outside.write_text("secret\n")
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "link.md").symlink_to(outside)
    for vpath in ("/memories/../secret.md", "/memories/facts/missing.md", "/memories/facts/link.md",
                  "/memories/.git/config", "/etc/passwd"):  # fmt: skip
        plant(tmp_path, vpath, "laptop")
    assert conflict_findings(tmp_path, disk_lines(tmp_path)) == {}


def test_a_record_under_another_name_than_its_path_is_not_read(tmp_path: Path) -> None:
    rename_machine(tmp_path, "desktop")
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "db.md").write_text("# DB\n")
    plant(tmp_path, "/memories/facts/db.md", "laptop", rel=f"{FOLDER}/planted.json")
    assert conflict_findings(tmp_path, disk_lines(tmp_path)) == {}


def test_no_record_makes_no_machine_identity(tmp_path: Path) -> None:
    assert conflict_findings(tmp_path, disk_lines(tmp_path)) == {}
    assert not (tmp_path / ".kin-index").exists()  # a check of an unsynced store leaves nothing behind
