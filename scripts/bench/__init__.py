"""Benchmark of the kin-memory server against the SPEC §10 budgets and against peers.

Entry point: ``python scripts/bench/run.py`` (or ``make bench``). Everything it generates or installs lives in
the git-ignored ``.bench/`` folder at the top of the checkout.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".bench"
