"""The packed whole-store summary: what is packed is what is read back, and anything else is refused."""

from __future__ import annotations

import math

import pytest

from kin_memory.cli.check_summary import Packed, Segment, pack


def _segments() -> list[Segment]:
    return [
        Segment("/memories/a.md", math.inf, "a.md:1:1: KM201 error: bad\n", ["error"]),
        Segment(
            "/memories/b.md",
            100.0,
            "b.md:2:1: KM401 warning: expires in 2 hours\nb.md:3:1: KM303 hint: é ✓\n",
            ["warning", "hint"],
            [["KM401", "warning", "expires in 2 hours", 1, 0, 1, 4], ["KM303", "hint", "é ✓", 2, 0, 2, 3]],
            ["episodes", 12.5],
        ),
        Segment("/memories/c.md", 50.0, "", [], [], ["prefs", 3.0]),
    ]


def test_a_packed_summary_reads_back_whole() -> None:
    packed = Packed.unpack(pack(7, _segments()))
    assert packed is not None
    assert packed.files == 7
    assert packed.counts == {"error": 1, "warning": 1, "hint": 1}
    assert packed.segments() == _segments()
    assert packed.text() == "".join(seg.piece for seg in _segments()).encode()  # printed as UTF-8
    assert packed.aged(60.0) == [2]
    assert packed.aged(100.0) == [1, 2]


def test_a_replaced_segment_changes_the_text_the_counts_and_its_validity() -> None:
    packed = Packed.unpack(pack(3, _segments()))
    assert packed is not None
    packed.replace(1, Segment("/memories/b.md", 200.0, "b.md:2:1: KM402 error: expired\n", ["error"]))
    assert packed.counts == {"error": 2}
    assert packed.text() == b"a.md:1:1: KM201 error: bad\nb.md:2:1: KM402 error: expired\n"
    assert packed.aged(150.0) == [2]
    again = Packed.unpack(pack(packed.files, packed.segments()))
    assert again is not None and again.segments() == packed.segments()


def test_an_empty_summary() -> None:
    packed = Packed.unpack(pack(0, []))
    assert packed is not None
    assert (packed.text(), packed.counts, packed.aged(1e12)) == (b"", {}, [])


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:-1],  # truncated
        lambda b: b + b"x",  # trailing bytes
        lambda b: b"KMS1" + b[4:],  # another layout
        lambda b: b[:12] + b"]" + b[13:],  # a broken header
        lambda b: b"",
        lambda b: b"[1, 2, 3]",  # the older JSON form
    ],
)
def test_a_damaged_or_foreign_blob_is_refused(damage) -> None:
    assert Packed.unpack(damage(pack(3, _segments()))) is None


def test_a_damaged_segment_raises_value_error_when_read() -> None:
    blob = bytearray(pack(3, _segments()))
    at = blob.rindex(b'["/memories/c.md"')
    blob[at] = ord("{")
    packed = Packed.unpack(bytes(blob))
    assert packed is not None
    with pytest.raises(ValueError):
        packed.segment(2)


def test_a_repacked_summary_keeps_unchanged_segments_and_the_replacement() -> None:
    packed = Packed.unpack(pack(3, _segments()))
    assert packed is not None
    new = Segment("/memories/c.md", 70.0, "c.md:1:1: KM400 information: stale ✓\n", ["information"],
                  [["KM400", "information", "stale ✓", 0, 0, 0, 1]], ["prefs", 3.0])  # fmt: skip
    packed.replace(2, new)
    again = Packed.unpack(packed.repack())
    assert again is not None
    assert again.segments() == [*_segments()[:2], new]
    assert again.counts == {"error": 1, "warning": 1, "hint": 1, "information": 1}
    assert again.repack() == pack(3, again.segments())
