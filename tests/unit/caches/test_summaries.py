"""Check summaries kept as files in the hidden folder (caches/summaries.py): read back as written, never
through a link, nothing kept past its age or count, and anything not written by this code ignored."""

from __future__ import annotations

import os
import time
from pathlib import Path

from kin_memory.caches import summaries
from kin_memory.store.paths import HIDDEN_DIR

KEY = "0123456789abcdef" * 4


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    return root


def test_a_summary_reads_back_as_written(tmp_path: Path) -> None:
    root = _root(tmp_path)
    summaries.write(root, KEY, 10.0, 20.5, {"/r": "probe"}, b"packed\nbytes\x00")
    assert summaries.read(root, KEY) == (10.0, 20.5, {"/r": "probe"}, b"packed\nbytes\x00")
    assert summaries.read(root, KEY, header_only=True) == (10.0, 20.5, {"/r": "probe"}, b"")
    assert oct(os.stat(root / HIDDEN_DIR / (summaries.PREFIX + KEY)).st_mode & 0o777) == "0o600"
    assert [p.name for p in (root / HIDDEN_DIR).iterdir()] == [summaries.PREFIX + KEY]  # no part left


def test_a_link_is_never_followed(tmp_path: Path) -> None:
    root = _root(tmp_path)
    (root / HIDDEN_DIR).mkdir()
    outside = tmp_path / "outside"
    outside.write_bytes(b'{"since": 1, "valid_until": 2, "probes": {}}\nsecret')
    link = root / HIDDEN_DIR / (summaries.PREFIX + KEY)
    link.symlink_to(outside)
    assert summaries.read(root, KEY) is None
    summaries.write(root, KEY, 1.0, 2.0, {}, b"mine")
    assert outside.read_bytes().endswith(b"secret")  # the link was replaced, not written through
    assert not link.is_symlink() and summaries.read(root, KEY) == (1.0, 2.0, {}, b"mine")


def test_a_linked_hidden_folder_gets_nothing(tmp_path: Path) -> None:
    root = _root(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / HIDDEN_DIR).symlink_to(elsewhere)
    summaries.write(root, KEY, 1.0, 2.0, {}, b"x")
    assert list(elsewhere.iterdir()) == []
    assert summaries.read(root, KEY) is None


def test_what_this_code_did_not_write_is_ignored(tmp_path: Path) -> None:
    root = _root(tmp_path)
    (root / HIDDEN_DIR).mkdir()
    path = root / HIDDEN_DIR / (summaries.PREFIX + KEY)
    for junk in (b"", b"no header line", b'{"since": "x"}\nout', b"[1, 2]\nout", b'{"since": 1}\nout'):
        path.write_bytes(junk)
        assert summaries.read(root, KEY) is None
    assert summaries.read(root, "../../etc/passwd") is None
    summaries.write(root, "../escape", 1.0, 2.0, {}, b"x")
    assert not (tmp_path / "escape").exists() and not list(tmp_path.glob("*escape*"))


def test_old_and_surplus_summaries_are_removed(tmp_path: Path) -> None:
    root = _root(tmp_path)
    keys = [f"{n:064x}" for n in range(summaries.KEEP + 3)]
    for n, key in enumerate(keys):
        summaries.write(root, key, 1.0, 2.0, {}, b"x")
        at = time.time() - 1_000 + n  # in order, all within the day
        os.utime(root / HIDDEN_DIR / (summaries.PREFIX + key), (at, at))
    old = root / HIDDEN_DIR / (summaries.PREFIX + "f" * 64)
    old.write_bytes(b"{}\n")
    os.utime(old, (time.time() - 2 * summaries.MAX_AGE,) * 2)
    summaries.write(root, "e" * 64, 1.0, 2.0, {}, b"newest")
    kept = sorted(p.name[len(summaries.PREFIX) :] for p in (root / HIDDEN_DIR).iterdir())
    assert len(kept) == summaries.KEEP and "e" * 64 in kept and "f" * 64 not in kept
    assert set(kept) - {"e" * 64} == set(keys[-(summaries.KEEP - 1) :])  # the newest of the others
