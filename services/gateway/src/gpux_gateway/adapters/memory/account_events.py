"""Account events in memory."""

from __future__ import annotations

from gpux_gateway.adapters.memory.state import GatewayState
from gpux_gateway.notifications.events import AccountEvent


class MemoryAccountEvents:
    """Account events in ``GatewayState.account_events``, in the order recorded (webhook
    deliveries are PostgreSQL's: the memory unit keeps no endpoints)."""

    def __init__(self, state: GatewayState) -> None:
        self._state = state

    async def record(self, *events: AccountEvent) -> None:
        """Record each event whose id is not recorded yet."""
        for event in events:
            self._state.account_events.setdefault(event.id, event)
