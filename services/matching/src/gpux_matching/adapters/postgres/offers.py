"""The offers the book was given (``matching.offers``): owner and the revision the book holds.

Within a unit of work the repository answers from what it read or saved before
(``preload`` reads a whole batch's offers in one query) and writes its saves in one insert
when the unit reads owners (``owners``: (seller id, gpu) of each) or commits (``flush``).
"""

from __future__ import annotations

from gpux_matching.adapters.postgres.preloaded import Preloaded


class PostgresOffers(Preloaded[int | None, tuple[str, str, int]]):
    """Offers on one connection (inside the caller's transaction)."""

    OWNERS_SQL = (
        "SELECT offer_id, seller_id, gpu FROM matching.offers WHERE offer_id = ANY($1::text[])"
    )

    INSERT_SQL = (
        "INSERT INTO matching.offers (offer_id, seller_id, gpu, revision)"
        " SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[])"
        " ON CONFLICT (offer_id) DO UPDATE SET revision = EXCLUDED.revision"
    )

    async def _fetch(self, ids: list[str]) -> dict[str, int | None]:
        rows = await self.conn.fetch(
            "SELECT offer_id, revision FROM matching.offers WHERE offer_id = ANY($1::text[])", ids
        )
        found = {row["offer_id"]: row["revision"] for row in rows}
        return {i: found.get(i) for i in ids}

    async def revision(self, offer_id: str) -> int | None:
        """The last revision of an offer the book was given, or None."""
        return await self._answer(offer_id)

    async def save(self, offer_id: str, seller_id: str, gpu: str, revision: int) -> None:
        """Remember an offer's owner (kept from its first save) and the revision it holds."""
        pending = self._pending.get(offer_id)
        owner = (seller_id, gpu) if pending is None else pending[:2]
        self._pending[offer_id] = (*owner, revision)
        self._cache[offer_id] = revision
