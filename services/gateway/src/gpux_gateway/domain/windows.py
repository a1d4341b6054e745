"""Deadlines that requests carry (an offer's availability, a GTD order's expiry): pure."""

from __future__ import annotations

from datetime import datetime, timedelta

MAX_WINDOW = timedelta(days=366)


def check_window(
    until: datetime | None, now: datetime, field: str = "available_until"
) -> str | None:
    """Why a deadline is unacceptable (not in the future, or over 366 days ahead), or None."""
    if until is None:
        return None
    if until <= now:
        return f"{field}: must be in the future"
    if until - now > MAX_WINDOW:
        return f"{field}: at most 366 days ahead"
    return None
