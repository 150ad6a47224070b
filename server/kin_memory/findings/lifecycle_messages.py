"""What KM400–KM404 say, from a memory's category and lifecycle alone. Kept apart from the checker (which
builds spans and fixes from the parsed file) so a check answered from its summary can bring an aged
message up to date without reading the file or loading the parser."""

from __future__ import annotations

from ..store.categories import EPISODIC, PROJECT_FACT, SESSION
from ..store.lifecycle import Lifecycle, Thresholds
from ..wording import untouched


def lifecycle_message(category: str, life: Lifecycle, t: Thresholds) -> tuple[str, str] | None:
    """(code, message) of the lifecycle finding, None when there is none."""
    if category == PROJECT_FACT and life.status == "stale":
        return (
            "KM400",
            f"project fact {untouched(life.age_days)} (stale after {t.stale_days:g} days): review it, "
            "then mark it reviewed",
        )
    if category == EPISODIC:
        if life.status == "expired":
            return "KM402", f"episodic memory {life.label}"
        if life.status == "expiring":
            return "KM401", f"episodic memory {life.label}"
    if category == SESSION:
        if life.status == "expired":
            return "KM404", f"session memory {life.label}: the next sweep deletes it"
        if life.status == "expiring":
            return "KM403", f"session memory {life.label}"
    return None
