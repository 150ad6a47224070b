"""The labeled contradiction pairs are well formed, and the phrasing batch (the same fact said in other
words, written before the detector learned to match subjects across phrasing) is there in full."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

PAIRS = Path(__file__).resolve().parents[3] / "scripts" / "contradictions" / "pairs.jsonl"
BATCHES = {"first", "held-out", "phrasing", "phrasing-held-out"}
# The pair the detector missed when only its second sentence was phrased differently.
STAGING = (
    "The staging Postgres database listens on port 5432 on db-staging.internal.",
    "Staging Postgres runs on db-staging.internal, port 5433.",
)


def pairs() -> list[dict[str, Any]]:
    return [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_every_pair_is_well_formed_and_unique() -> None:
    rows = pairs()
    for n, pair in enumerate(rows, 1):
        assert set(pair) <= {"a", "b", "contradiction", "note", "batch"}, f"line {n}: {sorted(pair)}"
        assert isinstance(pair["a"], str) and pair["a"].strip(), f"line {n}"
        assert isinstance(pair["b"], str) and pair["b"].strip(), f"line {n}"
        assert pair["a"] != pair["b"], f"line {n}"
        assert isinstance(pair["contradiction"], bool), f"line {n}"
        assert isinstance(pair["note"], str) and pair["note"].strip(), f"line {n}"
        assert pair.get("batch", "first") in BATCHES, f"line {n}: {pair.get('batch')}"
    seen = Counter(frozenset((p["a"], p["b"])) for p in rows)
    assert [sorted(k) for k, n in seen.items() if n > 1] == []


def test_phrasing_batch_has_both_labels_in_about_equal_numbers() -> None:
    phrasing = [p for p in pairs() if p.get("batch") == "phrasing"]
    assert len(phrasing) >= 24
    true = sum(p["contradiction"] for p in phrasing)
    assert abs(true - (len(phrasing) - true)) <= 2, (true, len(phrasing))


def test_phrasing_batch_holds_the_staging_port_pair_as_a_contradiction() -> None:
    found = [p for p in pairs() if p.get("batch") == "phrasing" and (p["a"], p["b"]) == STAGING]
    assert len(found) == 1
    assert found[0]["contradiction"] is True


def test_phrasing_hard_negatives_share_a_subject_with_a_contradiction() -> None:
    # A negative of this batch reuses a sentence of one of its contradictions (the same subject
    # phrased differently), so that telling them apart takes more than spotting the subject.
    phrasing = [p for p in pairs() if p.get("batch") == "phrasing"]
    sentences = {s for p in phrasing if p["contradiction"] for s in (p["a"], p["b"])}
    negatives = [p for p in phrasing if not p["contradiction"]]
    sharing = [p for p in negatives if p["a"] in sentences or p["b"] in sentences]
    assert len(sharing) * 2 >= len(negatives), f"{len(sharing)} of {len(negatives)}"
