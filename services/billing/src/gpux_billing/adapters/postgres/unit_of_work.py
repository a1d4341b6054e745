"""Billing's unit of work on PostgreSQL: one transaction, its repositories, Redis after it.

Committing first writes what the unit's handlers staged (``service.flush``: the order
funding and the trades' leases, a statement each, one balance read, one count of the lease
outcomes for sellers' reliability), then the outbox. The wallets a unit touched are
refreshed in Redis once it committed (``after_commit``: one query and one pipeline for the
whole unit, a batch of records or a settlement batch).
"""

from __future__ import annotations

import logging
from datetime import datetime

import asyncpg
from redis.asyncio import Redis
from redis.exceptions import RedisError

from gpux_billing.adapters.postgres.best_asks import PostgresBestAsks
from gpux_billing.adapters.postgres.holds import PostgresHolds
from gpux_billing.adapters.postgres.interruptions import PostgresPendingInterruptions
from gpux_billing.adapters.postgres.leases import PostgresLeases
from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.adapters.postgres.payouts import PostgresPayouts
from gpux_billing.adapters.postgres.rates import PostgresRates
from gpux_billing.adapters.postgres.reliability import PostgresReliability
from gpux_billing.adapters.postgres.reports import PostgresPendingReports
from gpux_billing.adapters.postgres.wallets import PostgresWallets
from gpux_billing.adapters.redis import balances
from gpux_billing.domain.ledger import Wallet
from gpux_billing.domain.rules import Rules
from gpux_billing.service import flush
from gpux_billing.service.unit_of_work import Staged
from gpux_platform.clock import Clock
from gpux_platform.settings import GpuxSettings
from gpux_platform.unit_of_work import PostgresUnitOfWork

SCHEMA = "billing"
log = logging.getLogger("gpux.billing.unit_of_work")


class PostgresBillingUnitOfWork(PostgresUnitOfWork):
    """One billing transaction; ``redis`` None: no read model (tools, benchmarks)."""

    ledger: PostgresLedger
    wallets: PostgresWallets
    holds: PostgresHolds
    leases: PostgresLeases
    pending_interruptions: PostgresPendingInterruptions
    pending_reports: PostgresPendingReports
    rates: PostgresRates
    best_asks: PostgresBestAsks
    payouts: PostgresPayouts
    reliability: PostgresReliability

    def __init__(
        self,
        pool: asyncpg.Pool,
        *,
        rules: Rules,
        clock: Clock,
        redis: Redis | None = None,
        settings: GpuxSettings | None = None,
        watch: balances.Watch | None = None,
    ) -> None:
        super().__init__(pool, SCHEMA)
        self.rules = rules
        self.clock = clock
        self.redis = redis
        self.settings = settings
        self.watch = watch
        self.now: datetime = clock.now()
        self.touched: set[Wallet] = set()
        self.staged = Staged()

    def _begun(self) -> None:
        self.now = self.clock.now()
        self.touched = set()
        self.staged = Staged()
        conn = self.conn
        self.ledger = PostgresLedger(conn)
        self.wallets = PostgresWallets(conn)
        self.holds = PostgresHolds(conn)
        self.leases = PostgresLeases(conn)
        self.pending_interruptions = PostgresPendingInterruptions(conn)
        self.pending_reports = PostgresPendingReports(conn)
        self.rates = PostgresRates(conn)
        self.best_asks = PostgresBestAsks(conn)
        self.payouts = PostgresPayouts(conn)
        self.reliability = PostgresReliability(conn)

    async def commit(self) -> None:
        """Write what the handlers staged (``service.flush``), then the outbox; commit."""
        await flush(self)
        await super().commit()

    async def after_commit(self) -> None:
        """Refresh the touched wallets in Redis (a failure is logged and told to the watch, which
        rebuilds the balances once Redis answers)."""
        touched, self.touched = sorted(self.touched), set()
        if self.redis is None or self.settings is None or not touched:
            return
        try:
            await balances.refresh(
                self.ledger, self.redis, self.settings, touched, self.clock.now()
            )
        except (RedisError, OSError, asyncpg.PostgresError) as exc:
            log.warning("balances not refreshed in Redis", extra={"error": repr(exc)})
            if self.watch is not None:
                self.watch.failed()  # the balances' watch rebuilds them once Redis answers
