"""Lifecycle from mtime ("untouched"): stale project facts, expiring and expired episodes and sessions."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from .categories import EPISODIC, PROJECT_FACT, SESSION


@dataclass(frozen=True)
class Thresholds:
    stale_days: float = 180
    episodic_days: float = 42
    session_hours: float = 24
    expiring_days: float = 7  # episodic "expires within" window
    session_warn_hours: float = 2


@dataclass(frozen=True, init=False)
class Lifecycle:
    """Where a memory is in its life: its status, how old it is, when it turns, and how that is said."""

    status: str  # ok, stale, expiring, expired
    age_days: float
    due: datetime | None  # when it turns stale / is swept, when that applies
    wording: str  # the label, "{when}" where the due date goes
    now: datetime | None = field(default=None, compare=False)

    def __init__(
        self, status: str, age_days: float, due: datetime | None, wording: str, now: datetime | None = None
    ) -> None:
        # One step, not a frozen __setattr__ call per field: a whole-store check makes one per memory.
        self.__dict__.update(status=status, age_days=age_days, due=due, wording=wording, now=now)

    @property
    def label(self) -> str:
        """Human summary, e.g. "expires 2026-12-20, in 18 days": made when asked (a whole-store check
        needs the status of every memory and the label of a few)."""
        if self.due is None or self.now is None:
            return self.wording
        return self.wording.replace("{when}", _when(self.due, self.now))


_DATES: dict[int, str] = {}  # a day (its ordinal) → how it is written: most labels of a store share a few


def _date(due: datetime) -> str:
    day = due.toordinal()
    written = _DATES.get(day)
    if written is None:
        if len(_DATES) >= 4096:
            _DATES.clear()
        written = _DATES[day] = due.strftime("%Y-%m-%d")
    return written


def _when(due: datetime, now: datetime) -> str:
    delta = due - now
    days = delta.total_seconds() / 86400
    due = due.astimezone(timezone.utc)
    date = _date(due)
    if abs(days) < 1:
        hours = round(abs(delta.total_seconds()) / 3600)
        rel = f"in {hours} hours" if delta.total_seconds() >= 0 else f"{hours} hours ago"
        return f"{date} {due.strftime('%H:%M')} UTC, {rel}"
    n = round(abs(days))
    unit = "day" if n == 1 else "days"
    return f"{date}, in {n} {unit}" if days >= 0 else f"{date}, {n} {unit} ago"


_last_now: tuple[float, datetime] = (math.nan, datetime.fromtimestamp(0, timezone.utc))


def _now_dt(now: float) -> datetime:
    """`now` as a UTC datetime; a whole-store check asks for the same instant once per memory."""
    global _last_now
    if _last_now[0] != now:
        _last_now = (now, datetime.fromtimestamp(now, timezone.utc))
    return _last_now[1]


def lifecycle(category: str, mtime: float, now: float, t: Thresholds) -> Lifecycle:
    age = max(now - mtime, 0.0)
    age_days = age / 86400
    now_dt = _now_dt(now)
    touched = datetime.fromtimestamp(mtime, timezone.utc)
    if category == PROJECT_FACT:
        due = touched + timedelta(days=t.stale_days)
        if age_days > t.stale_days:
            return Lifecycle("stale", age_days, due, "stale since {when}", now_dt)
        return Lifecycle("ok", age_days, due, "never deleted; turns stale {when}", now_dt)
    if category == EPISODIC:
        due = touched + timedelta(days=t.episodic_days)
        if age_days > t.episodic_days:
            return Lifecycle("expired", age_days, due, "expired {when}; the next sweep deletes it", now_dt)
        if age_days > t.episodic_days - t.expiring_days:
            return Lifecycle("expiring", age_days, due, "expires {when}", now_dt)
        return Lifecycle("ok", age_days, due, "expires {when}", now_dt)
    if category == SESSION:
        due = touched + timedelta(hours=t.session_hours)
        if age > t.session_hours * 3600:
            return Lifecycle("expired", age_days, due, "expired {when}", now_dt)
        if age > t.session_warn_hours * 3600:
            return Lifecycle("expiring", age_days, due, "expires {when}", now_dt)
        return Lifecycle("ok", age_days, due, "expires {when}", now_dt)
    return Lifecycle("ok", age_days, None, "never deleted")


def _next_grid(due: float, now: float, step: float) -> float:
    """The first instant after `now` at which `due - t` is a whole multiple of `step`."""
    k = math.floor((due - now) / step)
    t = due - k * step
    return t if t > now else due - (k - 1) * step


def next_change(category: str, mtime: float, now: float, t: Thresholds) -> float:
    """The next instant at which `lifecycle(category, mtime, …)` can say something else: a status turns
    (stale, expiring, expired) or its label's rounded "in N days" / "N hours ago" moves on. Labels
    round to whole hours within a day of the due date and to whole days beyond it, so they can only
    change where `due - t` is a multiple of half an hour (near the due date) or half a day. A stale
    fact's message also counts whole days untouched, which move on where `t - mtime` is a whole day."""
    if category == PROJECT_FACT:
        due = mtime + t.stale_days * 86400
        turns = [due]
    elif category == EPISODIC:
        due = mtime + t.episodic_days * 86400
        turns = [due, mtime + (t.episodic_days - t.expiring_days) * 86400]
    elif category == SESSION:
        due = mtime + t.session_hours * 3600
        turns = [due, mtime + t.session_warn_hours * 3600]
    else:
        return math.inf
    step = 1800.0 if abs(due - now) < 1.5 * 86400 else 43200.0
    return min([_next_grid(due, now, step), _next_grid(mtime, now, 86400.0), *(x for x in turns if x > now)])
