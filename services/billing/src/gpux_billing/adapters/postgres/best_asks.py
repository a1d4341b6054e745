"""The best asks billing knows (``billing.best_asks``), for holding market orders without a cap."""

from __future__ import annotations

import json
from decimal import Decimal

import asyncpg

from gpux_billing.domain.holds import tiers_of
from gpux_contracts.money import Currency
from gpux_contracts.orders import OrderTier
from gpux_contracts.prices import ALL_REGIONS, BestAskChanged


class PostgresBestAsks:
    """Best asks on the unit of work's connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

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

    async def best(
        self, gpu: str, tier: OrderTier, region: str | None, currency: Currency
    ) -> Decimal | None:
        """The cheapest best ask an order could take, per GPU-hour in ``currency`` (None: none)."""
        rows = await self.conn.fetch(
            "SELECT prices ->> $4 AS price FROM billing.best_asks"
            " WHERE gpu = $1 AND tier = ANY($2::text[]) AND region = $3 AND prices ? $4",
            gpu,
            tiers_of(tier),
            region or ALL_REGIONS,
            currency.value,
        )
        found = [Decimal(r["price"]) for r in rows if r["price"] is not None]
        return min(found) if found else None
