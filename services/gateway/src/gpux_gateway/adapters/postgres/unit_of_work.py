"""The gateway's real unit of work: one PostgreSQL transaction with every repository on it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import asyncpg

from gpux_gateway.adapters.postgres.account_events import PostgresAccountEvents
from gpux_gateway.adapters.postgres.accounts import PostgresAccounts, PostgresKeys
from gpux_gateway.adapters.postgres.deferred import Deferred
from gpux_gateway.adapters.postgres.idempotency import PostgresIdempotency
from gpux_gateway.adapters.postgres.lease_access import PostgresLeaseAccess
from gpux_gateway.adapters.postgres.leases import PostgresLeases, PostgresLedger
from gpux_gateway.adapters.postgres.offers import PostgresOffers
from gpux_gateway.adapters.postgres.orders import PostgresOrders
from gpux_gateway.adapters.postgres.payouts import PostgresPayouts
from gpux_gateway.adapters.postgres.reliability import PostgresReliability
from gpux_gateway.adapters.postgres.sessions import PostgresSessions
from gpux_gateway.adapters.postgres.ssh_keys import PostgresSshKeys
from gpux_gateway.adapters.postgres.webhooks import PostgresWebhooks
from gpux_platform.broker import Outgoing
from gpux_platform.clock import Clock
from gpux_platform.unit_of_work import PostgresUnitOfWork

SCHEMA = "gateway"

Committed = Callable[[Sequence[Outgoing]], None]
"""Told the events of each unit that committed (the key cache drops what they change)."""


class PostgresGatewayUnitOfWork(PostgresUnitOfWork):
    """A request's or a batch's transaction in the ``gateway`` schema.

    The views written from consumed events are deferred (``Deferred``) and written at the
    commit, before the outbox rows and in the order they were given; the reliability view's
    changes are reduced to each row's largest and written after them in one statement. Once
    it committed, ``committed`` is told the unit's events.
    """

    accounts: PostgresAccounts
    keys: PostgresKeys
    ssh_keys: PostgresSshKeys
    sessions: PostgresSessions
    offers: PostgresOffers
    orders: PostgresOrders
    leases: PostgresLeases
    ledger: PostgresLedger
    lease_access: PostgresLeaseAccess
    payouts: PostgresPayouts
    reliability: PostgresReliability
    idempotency: PostgresIdempotency
    account_events: PostgresAccountEvents
    webhooks: PostgresWebhooks

    def __init__(
        self, pool: asyncpg.Pool, clock: Clock, committed: Committed | None = None
    ) -> None:
        super().__init__(pool, SCHEMA)
        self._clock = clock
        self._committed = committed
        self.now: datetime = clock.now()
        self._deferred = Deferred()

    def _begun(self) -> None:
        self.now = self._clock.now()
        self._deferred = Deferred()
        conn = self.conn
        self.accounts = PostgresAccounts(conn)
        self.keys = PostgresKeys(conn)
        self.ssh_keys = PostgresSshKeys(conn)
        self.sessions = PostgresSessions(conn)
        self.offers = PostgresOffers(conn, self._deferred)
        self.orders = PostgresOrders(conn, self._deferred)
        self.leases = PostgresLeases(conn, self._deferred)
        self.ledger = PostgresLedger(conn, self._deferred)
        self.lease_access = PostgresLeaseAccess(conn)
        self.payouts = PostgresPayouts(conn, self._deferred)
        self.reliability = PostgresReliability(conn)
        self.idempotency = PostgresIdempotency(conn)
        self.account_events = PostgresAccountEvents(conn)
        self.webhooks = PostgresWebhooks(conn)

    async def commit(self) -> None:
        """Write the deferred statements, the reliability counts, the account events, then the
        outbox rows, and commit."""
        await self._deferred.run(self.conn)
        await self.reliability.flush()
        await self.account_events.flush()
        await super().commit()

    async def after_commit(self) -> None:
        """Tell ``committed`` the events this unit wrote to the outbox."""
        if self._committed is not None and self.outbox.messages:
            self._committed(self.outbox.messages)
