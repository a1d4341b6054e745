"""The best asks billing knows (``billing.best_asks``), for holding market orders without a cap."""

from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import Decimal

from gpux_billing.adapters.postgres.repository import PostgresRepository
from gpux_billing.domain.holds import Ask, Book, cheapest
from gpux_contracts.money import Currency
from gpux_contracts.prices import ALL_REGIONS, BestAskChanged


class PostgresBestAsks(PostgresRepository):
    """Best asks on the unit of work's connection."""

    async def record(self, change: BestAskChanged) -> None:
        """Keep a book's best ask unless a newer one is stored."""
        prices = None
        if change.best is not None:
            prices = json.dumps({c.value: format(p, "f") for c, p in change.best.prices.items()})
        await self.conn.execute(
            "INSERT INTO billing.best_asks (gpu, tier, region, prices, as_of)"
            " VALUES ($1, $2, $3, $4::jsonb, $5) ON CONFLICT (gpu, tier, region) DO UPDATE"
            " SET prices = EXCLUDED.prices, as_of = EXCLUDED.as_of"
            " WHERE billing.best_asks.as_of <= EXCLUDED.as_of",
            change.gpu,
            change.tier,
            change.region,
            prices,
            change.as_of,
        )

    async def best_many(self, asks: Iterable[Ask]) -> dict[Ask, Decimal | None]:
        """The cheapest best ask each (gpu, tier, region, currency) could take, per GPU-hour in
        its currency (None: none): one query for their books."""
        wanted = set(asks)
        books = sorted({(gpu, region or ALL_REGIONS) for gpu, _, region, _ in wanted})
        rows = await self.conn.fetch(
            "SELECT b.gpu, b.tier, b.region, b.prices::text AS prices FROM billing.best_asks b"
            " JOIN unnest($1::text[], $2::text[]) AS k (gpu, region)"
            " ON b.gpu = k.gpu AND b.region = k.region",
            [gpu for gpu, _ in books],
            [region for _, region in books],
        )
        quotes: dict[Book, dict[Currency, Decimal]] = {
            (r["gpu"], r["tier"], r["region"]): {
                Currency(c): Decimal(p) for c, p in json.loads(r["prices"]).items()
            }
            for r in rows
            if r["prices"] is not None
        }
        return {ask: cheapest(ask, quotes) for ask in wanted}
