"""Recall quality evaluation on a labeled set of memories, user turns and hover cases.

Entry point: ``make recall-eval`` (``python scripts/recall_eval/run.py``). The set lives in ``data/`` as
YAML; ``dataset`` loads it and writes it out as a store of memory files, ``metrics`` scores ranked
results against the labels, ``systems`` wraps kin-memory's recall and the two baselines.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH_DIR = REPO / ".bench"  # git-ignored: results of local runs
