"""Account events in memory."""

from __future__ import annotations

from datetime import datetime

from gpux_gateway.adapters.memory.state import StateRepository
from gpux_gateway.notifications.events import AccountEvent


class MemoryAccountEvents(StateRepository):
    """Account events in ``GatewayState.account_events``, in the order recorded (webhook
    deliveries are PostgreSQL's: the memory unit keeps no endpoints)."""

    async def record(self, *events: AccountEvent) -> None:
        """Record each event whose id is not recorded yet."""
        for event in events:
            self._state.account_events.setdefault(event.id, event)

    async def purge(self, before: datetime, limit: int) -> int:
        """Delete up to ``limit`` events created before ``before``, oldest first."""
        old = sorted(
            (e for e in self._state.account_events.values() if e.created_at < before),
            key=lambda e: e.created_at,
        )[:limit]
        for event in old:
            del self._state.account_events[event.id]
        return len(old)
