"""The atomic writer takes a file in parts: what lands is the parts joined, in order, whatever their
number (more than one system call's worth of buffers) and sizes (empty ones included)."""

from __future__ import annotations

import os
import random
from pathlib import Path

from kin_memory.store.atomic import write_at


def test_parts_land_joined_in_order(tmp_path: Path) -> None:
    rnd = random.Random(5)
    parts = [bytes(rnd.randrange(256) for _ in range(rnd.choice((0, 1, 7, 300)))) for _ in range(2600)]
    parts.insert(1000, b"x" * (3 << 20))  # one part bigger than a pipe or a page
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        write_at(fd, "whole", parts, durable=False)
        write_at(fd, "plain", b"".join(parts))
        write_at(fd, "few", [b"ab", b"", b"cd"])
    finally:
        os.close(fd)
    assert (tmp_path / "whole").read_bytes() == b"".join(parts)
    assert (tmp_path / "plain").read_bytes() == b"".join(parts)
    assert (tmp_path / "few").read_bytes() == b"abcd"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["few", "plain", "whole"]  # no scratch file left
