"""The gateway's fake unit of work: every table in memory, committed or restored as a whole."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from gpux_gateway.adapters.memory.account_events import MemoryAccountEvents
from gpux_gateway.adapters.memory.accounts import MemoryAccounts, MemoryIdempotency, MemoryKeys
from gpux_gateway.adapters.memory.lease_access import MemoryLeaseAccess
from gpux_gateway.adapters.memory.leases import MemoryLeases, MemoryLedger
from gpux_gateway.adapters.memory.offers import MemoryOffers, MemoryOrders
from gpux_gateway.adapters.memory.payouts import MemoryPayouts
from gpux_gateway.adapters.memory.reliability import MemoryReliability
from gpux_gateway.adapters.memory.sessions import MemorySessions
from gpux_gateway.adapters.memory.ssh_keys import MemorySshKeys
from gpux_gateway.adapters.memory.state import GatewayState
from gpux_gateway.adapters.memory.webhooks import MemoryWebhooks
from gpux_platform.broker import Outgoing
from gpux_platform.clock import Clock, ManualClock
from gpux_platform.unit_of_work import MemoryUnitOfWork

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class MemoryGatewayUnitOfWork(MemoryUnitOfWork):
    """What the service tests run handlers and resource services on.

    One object plays every unit in turn (``async with uow:`` for each); ``state`` holds the
    tables, ``published`` the committed events, ``commits`` how many units committed.
    """

    state: GatewayState
    accounts: MemoryAccounts
    keys: MemoryKeys
    ssh_keys: MemorySshKeys
    sessions: MemorySessions
    offers: MemoryOffers
    orders: MemoryOrders
    leases: MemoryLeases
    ledger: MemoryLedger
    lease_access: MemoryLeaseAccess
    payouts: MemoryPayouts
    reliability: MemoryReliability
    idempotency: MemoryIdempotency
    account_events: MemoryAccountEvents
    webhooks: MemoryWebhooks

    def __init__(
        self,
        clock: Clock | None = None,
        state: GatewayState | None = None,
        committed: Callable[[Sequence[Outgoing]], None] | None = None,
    ) -> None:
        super().__init__(state or GatewayState())
        self.clock = clock or ManualClock(EPOCH)
        self.committed = committed
        """Told the events of each unit that committed, as the PostgreSQL unit tells them."""
        self.now = self.clock.now()
        self._begun()

    def _begun(self) -> None:
        self.now = self.clock.now()
        state = self.state
        self.accounts = MemoryAccounts(state)
        self.keys = MemoryKeys(state)
        self.ssh_keys = MemorySshKeys(state)
        self.sessions = MemorySessions(state)
        self.offers = MemoryOffers(state)
        self.orders = MemoryOrders(state)
        self.leases = MemoryLeases(state)
        self.ledger = MemoryLedger(state)
        self.lease_access = MemoryLeaseAccess(state)
        self.payouts = MemoryPayouts(state)
        self.reliability = MemoryReliability(state)
        self.idempotency = MemoryIdempotency(state)
        self.account_events = MemoryAccountEvents(state)
        self.webhooks = MemoryWebhooks(state)

    async def commit(self) -> None:
        """Write the reliability counts kept, keep the state, publish the queued events, and
        tell ``committed`` of them."""
        self.reliability.flush()
        messages = list(self.outbox.messages)
        await super().commit()
        if self.committed is not None and messages:
            self.committed(messages)
