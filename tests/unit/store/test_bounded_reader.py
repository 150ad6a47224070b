"""The bounded reader (store/reader.py): files a repository or an agent can plant are refused before
they are read when they are not regular files, never block, never read past the cap, and never follow a
link out of their allowed folder."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from kin_memory.store import reader
from kin_memory.store.reader import Refused, read_file


def test_reads_a_small_regular_file(tmp_path: Path) -> None:
    f = tmp_path / "a.toml"
    f.write_bytes(b"memory_enabled = true\n")
    got = read_file(f, 1024)
    assert got.data == b"memory_enabled = true\n" and got.size == 22 and not got.truncated


def test_fifo_is_refused_at_once_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def attempt() -> None:
        try:
            read_file(fifo, 1024)
        except BaseException as exc:  # noqa: BLE001 - kept for the assertions below
            outcome.append(exc)

    # Opening a FIFO with no writer blocks for ever: a thread keeps a regression from hanging the suite.
    reader = threading.Thread(target=attempt, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "reading a FIFO blocked"
    [error] = outcome
    assert isinstance(error, Refused)
    assert error.kind == "not-regular" and "FIFO" in error.reason


def test_device_is_refused_before_it_is_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda p, *a, **k: (opened.append(str(p)), real_open(p, *a, **k))[1])
    with pytest.raises(Refused) as info:
        read_file(Path("/dev/zero"), 1024)
    assert "device" in info.value.reason and opened == []


def test_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused) as info:
        read_file(tmp_path, 1024)
    assert info.value.kind == "folder"


def test_over_the_cap_is_refused_naming_the_size(tmp_path: Path) -> None:
    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate(300 * 1024 * 1024)  # sparse: costs nothing on disk
    with pytest.raises(Refused) as info:
        read_file(big, 256 * 1024)
    assert info.value.kind == "too-large" and info.value.size == 300 * 1024 * 1024
    assert info.value.reason == "over 256 KB (300 MB)"


def test_truncate_keeps_the_head_and_reads_no_further(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate(300 * 1024 * 1024)
    read_bytes = 0
    real_read = os.read

    def counting(fd: int, n: int) -> bytes:
        nonlocal read_bytes
        chunk = real_read(fd, n)
        read_bytes += len(chunk)
        return chunk

    monkeypatch.setattr(reader.os, "read", counting)
    got = read_file(big, 64 * 1024, truncate=True)
    assert got.truncated and len(got.data) == 64 * 1024 and got.size == 300 * 1024 * 1024
    assert read_bytes <= 64 * 1024 + 1


def test_a_file_that_grows_past_the_cap_is_still_bounded(tmp_path: Path) -> None:
    # /proc files report size 0: the read itself must stop at the cap
    with pytest.raises(Refused):
        read_file(Path("/proc/self/maps"), 16)


def test_link_inside_the_allowed_folder_is_followed(tmp_path: Path) -> None:
    kin = tmp_path / ".kin"
    kin.mkdir()
    (kin / "real.toml").write_bytes(b"x = 1\n")
    (kin / "settings.toml").symlink_to("real.toml")
    assert read_file(kin / "settings.toml", 1024, within=kin).data == b"x = 1\n"


def test_link_out_of_the_allowed_folder_is_refused(tmp_path: Path) -> None:
    kin = tmp_path / ".kin"
    kin.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"token")
    for target in (secret, Path("/dev/zero"), Path("/dev/stdin")):
        link = kin / "settings.toml"
        link.unlink(missing_ok=True)
        link.symlink_to(target)
        with pytest.raises(Refused) as info:
            read_file(link, 1024, within=kin)
        assert info.value.kind == "outside", target


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_file(tmp_path / "nope", 1024)
    with pytest.raises(FileNotFoundError):
        read_file(tmp_path / "nope", 1024, within=tmp_path)
