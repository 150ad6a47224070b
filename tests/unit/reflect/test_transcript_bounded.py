"""Issue 14, point 9: a transcript that is a FIFO, a device or a folder is refused at once with a clear
sentence; a huge one is read only up to its cap. Reading used to open the path and read it plainly: a
FIFO with no writer froze the caller (the whole server when it ran on the event loop)."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest

from kin_memory.reflect import transcript
from kin_memory.reflect.transcript import MAX_READ, TranscriptError


def _read_within(path: Path, seconds: float = 5.0) -> Transcript | Exception:
    """Run transcript.read in a thread; a read still blocked after `seconds` fails the test (and the
    FIFO is then opened for writing and closed, so the blocked reader gets its end of file)."""
    box: list[object] = []
    worker = threading.Thread(target=lambda: box.append(_catch(path)), daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(5)
        pytest.fail(f"reading the transcript {path.name} blocked")
    return box[0]  # type: ignore[return-value]


def _catch(path: Path) -> object:
    try:
        return transcript.read(path, path.name)
    except Exception as exc:  # noqa: BLE001 - the test inspects whatever came out
        return exc


Transcript = transcript.Transcript


def test_fifo_transcript_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    got = _read_within(fifo)
    assert isinstance(got, TranscriptError), got
    assert str(got) == "transcript is not a regular file (a FIFO), not read: session.jsonl"


def test_dev_zero_transcript_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    got = _read_within(link)
    assert isinstance(got, TranscriptError), got
    assert str(got) == "transcript is not a regular file (a device), not read: zero.jsonl"


def test_folder_transcript_keeps_its_message(tmp_path: Path) -> None:
    got = _read_within(tmp_path)
    assert isinstance(got, TranscriptError) and str(got).startswith("transcript is a folder, not a file")


def test_huge_transcript_is_read_up_to_its_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.write(b"user: hello\n" * 10)
        f.truncate(200 * 1024 * 1024)  # sparse tail
    read = 0
    real_read = os.read

    def counting(fd: int, n: int) -> bytes:
        nonlocal read
        chunk = real_read(fd, n)
        read += len(chunk)
        return chunk

    monkeypatch.setattr(os, "read", counting)
    got = _read_within(big)
    assert isinstance(got, Transcript) and got.truncated
    assert read <= MAX_READ + 1
