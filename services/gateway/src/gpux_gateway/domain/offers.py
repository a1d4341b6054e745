"""Rules on offers that need the current time (pure: the time is an argument)."""

from __future__ import annotations

from datetime import datetime, timedelta

MAX_WINDOW = timedelta(days=366)


def check_window(available_until: datetime | None, now: datetime) -> str | None:
    """Why an offer's availability window is unacceptable, or None when it is fine."""
    if available_until is None:
        return None
    if available_until <= now:
        return "available_until: must be in the future"
    if available_until - now > MAX_WINDOW:
        return "available_until: at most 366 days ahead"
    return None
