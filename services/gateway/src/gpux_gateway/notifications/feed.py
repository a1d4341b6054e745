"""The account event streams of one gateway process: one follower of the log's notifications
for all of them, each stream reading its own account's events when woken.

A stream holds no connection: it reads a page of its account's events on the pool when the
follower wakes it (a commit recorded events: ``pg_notify``) or after ``POLL_S`` without a
wake (a missed notification, or rows not readable yet because an older transaction was still
running when it came), and waits otherwise. The follower is one ``LISTEN`` connection,
opened when the first stream starts and closed when the last one ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator

from gpux_gateway.notifications.cursor import Cursor
from gpux_gateway.notifications.log import AccountEventsLog, Logged
from gpux_platform.waiting import woken

log = logging.getLogger("gpux.gateway.notifications")

POLL_S = 1.0
"""How long a stream waits for a wake before it reads anyway."""
PAGE = 100
"""How many events one read takes."""


class Waiter:
    """One stream's wake-up call."""

    def __init__(self) -> None:
        self._woken = asyncio.Event()

    def wake(self) -> None:
        """Events may be there: the next ``wait`` returns at once."""
        self._woken.set()

    async def wait(self, timeout_s: float) -> None:
        """Until woken, or ``timeout_s`` passed."""
        await woken(self._woken, timeout_s)
        self._woken.clear()


class AccountEventsFeed:
    """The process's one follower of the log and the streams it wakes."""

    def __init__(self, events: AccountEventsLog, *, poll_s: float = POLL_S, page: int = PAGE):
        self.events = events
        self.poll_s = poll_s
        self.page = page
        self._waiters: set[Waiter] = set()
        self._following: asyncio.Task[None] | None = None

    @property
    def streams(self) -> int:
        """How many streams follow now."""
        return len(self._waiters)

    @contextlib.asynccontextmanager
    async def listen(self) -> AsyncIterator[Waiter]:
        """A waiter woken at each notification, for the ``with`` block's time."""
        waiter = Waiter()
        self._waiters.add(waiter)
        if self._following is None or self._following.done():  # none yet, or it failed
            # A context of its own: it outlives the request that started it, whose id its
            # log lines must not carry.
            self._following = asyncio.create_task(
                self._follow(), name="account events feed", context=contextvars.Context()
            )
        try:
            yield waiter
        finally:
            self._waiters.discard(waiter)
            if not self._waiters and self._following is not None:
                following, self._following = self._following, None
                following.cancel()

    def _wake_all(self) -> None:
        for waiter in self._waiters:
            waiter.wake()

    async def _follow(self) -> None:
        try:
            await self.events.follow(self._wake_all)
        except Exception:  # the streams go on polling; the next stream to start follows again
            log.exception("account events follower failed")

    async def read(self, account_id: str, cursor: Cursor) -> list[Logged]:
        """The next page of the account's events after ``cursor``."""
        return await self.events.after(account_id, cursor, self.page)
