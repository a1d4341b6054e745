"""FX rates in PostgreSQL (``billing.fx_rates``): the latest rate of each currency into EUR.

The newest rate wins (``gpux_contracts.fx.supersedes``); the ``WHERE`` of the upsert says the
same: a stored rate is replaced by one as of the same time or later. The unit of work reads
the rates once and keeps them for its life, updated by what it records itself.
"""

from __future__ import annotations

from decimal import Decimal

import asyncpg

from gpux_billing.adapters.postgres.repository import PostgresRepository
from gpux_billing.domain.fx import ToReference, replaces
from gpux_contracts.money import Currency


class PostgresRates(PostgresRepository):
    """Rates on the unit of work's connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        super().__init__(conn)
        self._read: dict[Currency, ToReference] | None = None

    async def all(self) -> dict[Currency, ToReference]:
        """The latest rate of each currency into the reference currency."""
        if self._read is None:
            rows = await self.conn.fetch("SELECT currency, rate, as_of FROM billing.fx_rates")
            self._read = {
                Currency(r["currency"]): ToReference(
                    Currency(r["currency"]), Decimal(r["rate"]), r["as_of"]
                )
                for r in rows
            }
        return dict(self._read)

    async def record(self, rate: ToReference) -> None:
        """Keep a rate unless a newer one is stored."""
        await self.conn.execute(
            "INSERT INTO billing.fx_rates (currency, rate, as_of) VALUES ($1, $2, $3)"
            " ON CONFLICT (currency) DO UPDATE SET rate = EXCLUDED.rate, as_of = EXCLUDED.as_of"
            " WHERE billing.fx_rates.as_of <= EXCLUDED.as_of",
            rate.currency.value,
            format(rate.rate, "f"),
            rate.as_of,
        )
        if self._read is not None and replaces(rate, self._read.get(rate.currency)):
            self._read[rate.currency] = rate
