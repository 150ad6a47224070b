"""Paths as shown to people and to the model: `~/…` under the home folder, so no user name leaks."""

from __future__ import annotations

import os
from pathlib import Path


def home_relative(path: Path | str | None) -> str | None:
    if path is None:
        return None
    text = os.fspath(path)
    home = os.path.expanduser("~").rstrip("/")
    if home and text.startswith(home + "/"):
        return "~" + text[len(home) :]
    return text
