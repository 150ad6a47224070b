"""The atomic writers live in store/atomic.py (the settings switch writes with them too, and the store
imports nothing above it). Kept for the commands that still import them from here."""

from __future__ import annotations

from ..store.atomic import Changed, create_at, make_dirs, write_at

__all__ = ["Changed", "create_at", "make_dirs", "write_at"]
