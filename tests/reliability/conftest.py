"""Fixtures for the reliability suite and the end-of-run totals for the README's reliability table."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from reliability_support import COUNTS, RawServer


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def root(home: Path) -> Path:
    r = home / ".kin" / "memory"
    r.mkdir(parents=True)
    return r


@pytest.fixture
def server_factory(root: Path, home: Path):
    started: list[RawServer] = []

    def start(**kwargs) -> RawServer:
        s = RawServer(kwargs.pop("store", root), home, **kwargs)
        started.append(s)
        return s

    yield start
    for s in started:
        s.kill()


def pytest_terminal_summary(terminalreporter) -> None:
    if not COUNTS:
        return
    terminalreporter.section("kin-memory reliability totals")
    for key in sorted(COUNTS):
        terminalreporter.write_line(f"{key}: {COUNTS[key]}")
    target = os.environ.get("KIN_RELIABILITY_COUNTS")
    if target:
        Path(target).write_text(json.dumps(dict(sorted(COUNTS.items())), indent=2) + "\n", encoding="utf-8")
