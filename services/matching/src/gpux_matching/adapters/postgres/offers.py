"""The offers the book was given (``matching.offers``): owner and the revision the book holds."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg


class PostgresOffers:
    """Offers on one connection (inside the caller's transaction)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def revision(self, offer_id: str) -> int | None:
        """The last revision of an offer the book was given, or None."""
        revision: int | None = await self.conn.fetchval(
            "SELECT revision FROM matching.offers WHERE offer_id = $1", offer_id
        )
        return revision

    async def save(self, offer_id: str, seller_id: str, gpu: str, revision: int) -> None:
        """Remember an offer's owner and the revision the book holds."""
        await self.conn.execute(
            "INSERT INTO matching.offers (offer_id, seller_id, gpu, revision)"
            " VALUES ($1, $2, $3, $4)"
            " ON CONFLICT (offer_id) DO UPDATE SET revision = EXCLUDED.revision",
            offer_id,
            seller_id,
            gpu,
            revision,
        )

    async def owners(self, offer_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(seller id, gpu) of each known offer."""
        rows = await self.conn.fetch(
            "SELECT offer_id, seller_id, gpu FROM matching.offers WHERE offer_id = ANY($1::text[])",
            list(offer_ids),
        )
        return {row["offer_id"]: (row["seller_id"], row["gpu"]) for row in rows}
