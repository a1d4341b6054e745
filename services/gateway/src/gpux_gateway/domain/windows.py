"""Deadlines that requests carry (an offer's availability, a GTD order's expiry): pure."""

from __future__ import annotations

from datetime import datetime, timedelta

MAX_WINDOW = timedelta(days=366)


def window_problem(until: datetime | None, now: datetime) -> str | None:
    """Why a deadline is unacceptable (not in the future, or over 366 days ahead), or None."""
    if until is None:
        return None
    if until <= now:
        return "must be in the future"
    if until - now > MAX_WINDOW:
        return "at most 366 days ahead"
    return None
