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


class ScaledClock:
    """Time that runs ``speed`` times faster than the wall clock from ``epoch`` on.

    For demos and end-to-end tests (never prod): at speed 60 an hour passes in a minute, so
    an hourly lease crosses its hour boundary without an hour's sleep. Every process given
    the same speed and epoch tells the same time.
    """

    def __init__(self, speed: int, epoch: datetime, wall: Clock | None = None) -> None:
        if speed < 1:
            raise ValueError("the speed factor is a whole number of at least 1")
        if epoch.tzinfo is None:
            raise ValueError("ScaledClock needs a timezone-aware epoch")
        self._speed = speed
        self._epoch = epoch.astimezone(UTC)
        self._wall = wall or SystemClock()

    def now(self) -> datetime:
        """The epoch plus ``speed`` times the wall time since it."""
        return self._epoch + (self._wall.now() - self._epoch) * self._speed
