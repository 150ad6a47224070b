"""The packed form of a whole-store check's output, kept in the findings cache.

A summary is the output cut into one segment per file, in print order. Reading one back is the hot part
of a warm `kin-memory check` (a 10k store prints some 2 MB), so the packed form is laid out to be used
without decoding it: the printed text is one block, the validity of each segment and where it ends are
plain arrays, and each segment's details (its findings rows, to bring an aged lifecycle message up to
date) are a JSON text of their own, decoded only for the segments that aged.

    header (JSON) | until[n] (float64) | text end[n] (int64) | detail end[n] (int64) | text | details
"""

from __future__ import annotations

import json
import struct
import sys
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import accumulate
from operator import itemgetter

from .. import plain_json

MAGIC = b"KMS2"
_LENGTHS = struct.Struct("<4sQ")  # magic, header length


@dataclass
class Segment:
    """One file's part: its virtual path, the instant its findings can next change, what is printed for
    it, the severity of each finding, and (for a file whose findings can age) the findings as rows
    [code, severity, message, line, col, end line, end col] with [category, mtime]."""

    vpath: str
    until: float
    piece: str
    severities: list[str]
    rows: list[list] | None = None
    life: list | None = None
    # The details (vpath, severities, rows, life) already encoded as the summary keeps them, when they
    # were encoded where the segment was made (a worker of a split check sends them so, not as rows).
    detail: bytes | None = field(default=None, compare=False, repr=False)


def pack(files: int, segments: list[Segment]) -> bytes:
    counts: dict[str, int] = {}
    for seg in segments:
        count_severities(counts, seg.severities)
    return pack_rows(files, counts, [row_of(seg) for seg in segments])


PackedRow = tuple[str, float, bytes, bytes]  # a segment as packed: vpath, until, printed bytes, details


def row_of(seg: Segment, detail: bytes | None = None) -> PackedRow:
    """A segment as the summary packs it; its details as given, else its own."""
    return (seg.vpath, seg.until, _piece_bytes(seg), _detail_bytes(seg) if detail is None else detail)


def count_severities(counts: dict[str, int], severities: Iterable[str]) -> None:
    """One more in `counts` for each finding's severity."""
    for severity in severities:
        counts[severity] = counts.get(severity, 0) + 1


def pack_rows(files: int, counts: dict[str, int], rows: list[PackedRow]) -> bytes:
    """The packed form of segments already encoded (in print order), with their severities counted."""
    return b"".join(packed_parts(files, counts, rows))


def packed_parts(
    files: int, counts: dict[str, int], rows: list[PackedRow], text: bytes | None = None
) -> list[bytes]:
    """pack_rows' bytes in the parts they are made of, to be written as they are. `text`: every row's
    printed bytes joined, when the caller has them (what the check prints: joined once for both). At
    100k memories the summary is 40 MB: its 200,000 pieces, written one by one, cost more than joining
    them."""
    if text is None:
        text = b"".join(map(itemgetter(2), rows))
    header = json.dumps({"files": files, "counts": counts, "n": len(rows)}).encode()
    return [
        _LENGTHS.pack(MAGIC, len(header)),
        header,
        _le(array("d", map(itemgetter(1), rows))),
        _le(_ends(map(len, map(itemgetter(2), rows)))),
        _le(_ends(map(len, map(itemgetter(3), rows)))),
        text,
        b"".join(map(itemgetter(3), rows)),
    ]


class Packed:
    """A packed summary, read in place; segments are decoded and replaced one at a time."""

    def __init__(self, files: int, counts: dict[str, int], until: array, text_ends: array,
                 detail_ends: array, text: memoryview, details: memoryview) -> None:  # fmt: skip
        self.files = files
        self.counts = counts
        self.until = until
        self._text_ends = text_ends
        self._detail_ends = detail_ends
        self._text = text
        self._details = details
        self._replaced: dict[int, Segment] = {}

    @classmethod
    def unpack(cls, blob: bytes) -> Packed | None:
        """None when the blob is not a summary this code wrote whole."""
        try:
            magic, header_len = _LENGTHS.unpack_from(blob)
            if magic != MAGIC:
                return None
            at = _LENGTHS.size
            header = json.loads(blob[at : at + header_len])
            at += header_len
            n = int(header["n"])
            files = int(header["files"])
            counts = {str(k): int(v) for k, v in header["counts"].items()}
            until, at = _array("d", blob, at, n)
            text_ends, at = _array("q", blob, at, n)
            detail_ends, at = _array("q", blob, at, n)
        except (struct.error, ValueError, KeyError, TypeError, AttributeError):
            return None
        text_len = text_ends[-1] if n else 0
        details_len = detail_ends[-1] if n else 0
        if (
            len(blob) != at + text_len + details_len
            or not _ascending(text_ends)
            or not _ascending(detail_ends)
        ):
            return None
        view = memoryview(blob)
        return cls(files, counts, until, text_ends, detail_ends, view[at : at + text_len],
                   view[at + text_len :])  # fmt: skip

    def __len__(self) -> int:
        return len(self.until)

    def aged(self, now: float) -> list[int]:
        return [i for i, until in enumerate(self.until) if not until > now]

    def segment(self, i: int) -> Segment:
        """Segment i, decoded; raises ValueError when its bytes are not what pack wrote."""
        if i in self._replaced:
            return self._replaced[i]
        vpath, severities, rows, life = json.loads(bytes(_slice(self._details, self._detail_ends, i)))
        if not isinstance(vpath, str) or not isinstance(severities, list):
            raise ValueError("not a segment")
        piece = bytes(_slice(self._text, self._text_ends, i)).decode("utf-8", "surrogatepass")
        return Segment(vpath, self.until[i], piece, severities, rows, life)

    def replace(self, i: int, seg: Segment) -> None:
        for severity in self.segment(i).severities:
            self.counts[severity] -= 1
        count_severities(self.counts, seg.severities)
        self.counts = {k: v for k, v in self.counts.items() if v}
        self._replaced[i] = seg
        self.until[i] = seg.until

    def text(self) -> bytes:
        """Every segment's printed part, in order, as UTF-8 (as it is printed)."""
        return self._joined(self._text, self._text_ends, _piece_bytes)

    def segments(self) -> list[Segment]:
        return [self.segment(i) for i in range(len(self))]

    def repack(self) -> bytes:
        """The summary as it is now, packed again: unchanged segments are copied, not decoded."""
        header = json.dumps({"files": self.files, "counts": self.counts, "n": len(self)}).encode()
        text = self._joined(self._text, self._text_ends, _piece_bytes)
        details = self._joined(self._details, self._detail_ends, _detail_bytes)
        return b"".join(
            [
                _LENGTHS.pack(MAGIC, len(header)),
                header,
                _le(self.until),
                _le(self._ends_now(self._text_ends, _piece_bytes)),
                _le(self._ends_now(self._detail_ends, _detail_bytes)),
                text,
                details,
            ]
        )

    def _joined(self, data: memoryview, ends: array, encode: Callable[[Segment], bytes]) -> bytes:
        """The bytes of every segment: runs of unchanged ones copied whole, replaced ones encoded."""
        parts: list[bytes | memoryview] = []
        start = 0
        for i in sorted(self._replaced):
            parts.append(data[start : ends[i - 1] if i else 0])
            parts.append(encode(self._replaced[i]))
            start = ends[i]
        parts.append(data[start:])
        return b"".join(parts)

    def _ends_now(self, ends: array, encode: Callable[[Segment], bytes]) -> array:
        now = array("q")
        total = previous = 0
        for i, end in enumerate(ends):
            seg = self._replaced.get(i)
            total += end - previous if seg is None else len(encode(seg))
            previous = end
            now.append(total)
        return now


def _piece_bytes(seg: Segment) -> bytes:
    return seg.piece.encode("utf-8", "surrogatepass")


def _detail_bytes(seg: Segment) -> bytes:
    if seg.detail is not None:
        return seg.detail
    return detail_of(seg)


def detail_of(seg: Segment) -> bytes:
    """A segment's details as the summary keeps them."""
    return detail_of_fields(seg.vpath, seg.severities, seg.rows, seg.life)


def detail_of_fields(vpath: str, severities: list[str], rows: list[list] | None, life: list | None) -> bytes:
    return plain_json.dumps([vpath, severities, rows, life]).encode("utf-8", "surrogatepass")


def detail_with_rows(vpath: str, severities: list[str], rows_json: bytes, life: list | None) -> bytes:
    """detail_of for a segment whose rows are already JSON (a file's cache payload holds them as its
    check made them): the same bytes, the rows spliced in rather than encoded again."""
    head = f"[{plain_json.dumps(vpath)}, {plain_json.dumps(severities)}, "
    tail = f", {plain_json.dumps(life)}]"
    return head.encode("utf-8", "surrogatepass") + rows_json + tail.encode("utf-8", "surrogatepass")


def _ends(lengths: Iterable[int]) -> array:
    return array("q", accumulate(lengths))


def _slice(data: memoryview, ends: array, i: int) -> memoryview:
    return data[ends[i - 1] if i else 0 : ends[i]]


def _ascending(ends: array) -> bool:
    previous = 0
    for end in ends:
        if end < previous:
            return False
        previous = end
    return True


def _le(values: array) -> bytes:
    """Arrays are stored little-endian, whatever the machine."""
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _array(typecode: str, blob: bytes, at: int, n: int) -> tuple[array, int]:
    values = array(typecode)
    end = at + n * values.itemsize
    if end > len(blob):
        raise ValueError("truncated")
    values.frombytes(blob[at:end])
    if sys.byteorder == "big":
        values.byteswap()
    return values, end
