"""Time as an injected dependency: domain code never reads the clock itself."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """Something that tells the current time in UTC."""

    def now(self) -> datetime:
        """The current instant, timezone-aware UTC."""
        ...


class SystemClock:
    """The wall clock."""

    def now(self) -> datetime:
        """The current instant, timezone-aware UTC."""
        return datetime.now(UTC)


class ManualClock:
    """A clock that tests move by hand."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("ManualClock needs a timezone-aware start")
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        """The instant the test set."""
        return self._now

    def advance(self, delta: timedelta) -> None:
        """Move time forward."""
        if delta < timedelta(0):
            raise ValueError("time does not go backwards")
        self._now += delta
