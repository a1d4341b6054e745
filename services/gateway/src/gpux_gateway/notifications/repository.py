"""What the notifications store: the account events, recorded with the views' changes."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from gpux_gateway.notifications.events import AccountEvent


class AccountEventsRepository(Protocol):
    """The account_events table (and the webhook deliveries queued with each event)."""

    async def record(self, *events: AccountEvent) -> None:
        """Record events (one already recorded, by id, is not recorded again) and queue one
        webhook delivery per enabled endpoint of its account subscribed to its type.

        Written when the unit of work commits, after the views, all of the unit's events in
        one statement; nothing in the same unit reads them back.
        """
        ...

    async def purge(self, before: datetime, limit: int) -> int:
        """Delete up to ``limit`` events created before ``before`` whose deliveries are all
        finished (with those deliveries); returns how many events."""
        ...
