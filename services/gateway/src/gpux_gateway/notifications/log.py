"""What a stream of account events reads: an account's events after a cursor, and where "now"
is (read outside any unit of work: a stream holds no transaction open)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol

from gpux_gateway.notifications.cursor import Cursor, Snapshot
from gpux_gateway.notifications.events import AccountEvent


class Logged(NamedTuple):
    """An account event with its place in the log."""

    cursor: Cursor
    event: AccountEvent


class AccountEventsLog(Protocol):
    """The account events table as streams read it."""

    async def after(self, account_id: str, cursor: Cursor, limit: int) -> list[Logged]:
        """Up to ``limit`` of the account's events after ``cursor``, in order: only those no
        later commit can precede."""
        ...

    async def now(self) -> Snapshot:
        """Which transactions have committed now: a stream from now reads from its cursor on
        and passes over the rows of those."""
        ...

    async def follow(self, wake: Callable[[], None]) -> None:
        """Call ``wake`` whenever events may have been recorded (each commit that recorded
        some), until cancelled; a lost connection is logged and opened again."""
        ...
