"""Precision and recall of the contradiction detector (KM604) on the labeled pairs next to this script.

    .venv/bin/python scripts/contradictions/evaluate.py [--verbose]

Each line of pairs.jsonl is `{a, b, contradiction, note, batch?}`: two memory bodies and whether they
contradict each other. The first batch (52 pairs) was written before the detector; the `held-out` batch
(16 pairs) after it, and the detector was not changed for it. Prints the counts, precision and recall, and with --verbose every pair the detector got wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

from kin_memory.findings.conflicts import contradiction  # noqa: E402 - after the path above

PAIRS = Path(__file__).with_name("pairs.jsonl")


@dataclass(frozen=True)
class Score:
    tp: int
    fp: int
    fn: int
    tn: int
    wrong: list[tuple[dict, str]]
    batches: dict[str, list[int]]  # batch → [tp, fp, fn, tn]

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def evaluate(path: Path = PAIRS) -> Score:
    tp = fp = fn = tn = 0
    wrong: list[tuple[dict, str]] = []
    batches: dict[str, list[int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        pair = json.loads(line)
        found = contradiction(pair["a"], pair["b"])
        said = found is not None
        row = batches.setdefault(pair.get("batch", "first"), [0, 0, 0, 0])
        row[(0 if pair["contradiction"] else 1) if said else (2 if pair["contradiction"] else 3)] += 1
        if said and pair["contradiction"]:
            tp += 1
        elif said:
            fp += 1
            wrong.append((pair, f"false positive: {found.reason if found else ''}"))
        elif pair["contradiction"]:
            fn += 1
            wrong.append((pair, "missed"))
        else:
            tn += 1
    return Score(tp, fp, fn, tn, wrong, batches)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="print every pair the detector got wrong")
    args = parser.parse_args()
    s = evaluate()
    total = s.tp + s.fp + s.fn + s.tn
    print(f"pairs: {total} ({s.tp + s.fn} contradictions, {s.fp + s.tn} not)")
    print(f"true positives {s.tp}, false positives {s.fp}, missed {s.fn}, true negatives {s.tn}")
    print(f"precision {s.precision:.2f}, recall {s.recall:.2f}")
    for name, (btp, bfp, bfn, btn) in s.batches.items():
        p = btp / (btp + bfp) if btp + bfp else 1.0
        r = btp / (btp + bfn) if btp + bfn else 1.0
        print(f"  batch {name}: {btp + bfp + bfn + btn} pairs, precision {p:.2f}, recall {r:.2f}")
    if args.verbose:
        for pair, why in s.wrong:
            print(f"- {why} [{pair['note']}]\n    a: {pair['a']!r}\n    b: {pair['b']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
