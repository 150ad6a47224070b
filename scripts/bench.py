"""Kept for old habits: ``python scripts/bench.py`` runs the benchmark package (``scripts/bench/run.py``)."""

from __future__ import annotations

import runpy
from pathlib import Path

if __name__ == "__main__":
    runpy.run_path(str(Path(__file__).with_name("bench") / "run.py"), run_name="__main__")
