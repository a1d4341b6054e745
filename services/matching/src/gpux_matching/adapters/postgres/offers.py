"""The offers the book was given (``matching.offers``): owner and the revision the book holds.

Within a unit of work the repository answers from what it read or saved before
(``preload`` reads a whole batch's offers in one query) and writes its saves in one insert
when the unit reads owners or commits (``flush``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import asyncpg


class PostgresOffers:
    """Offers on one connection (inside the caller's transaction)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self._revisions: dict[str, int | None] = {}
        self._pending: dict[str, tuple[str, str, int]] = {}

    async def preload(self, offer_ids: Iterable[str]) -> None:
        """Read the revision of each of these offers, in one query."""
        missing = sorted({i for i in offer_ids if i not in self._revisions})
        if not missing:
            return
        rows = await self.conn.fetch(
            "SELECT offer_id, revision FROM matching.offers WHERE offer_id = ANY($1::text[])",
            missing,
        )
        found = {row["offer_id"]: row["revision"] for row in rows}
        self._revisions.update((i, found.get(i)) for i in missing)

    async def revision(self, offer_id: str) -> int | None:
        """The last revision of an offer the book was given, or None."""
        if offer_id not in self._revisions:
            await self.preload([offer_id])
        return self._revisions[offer_id]

    async def save(self, offer_id: str, seller_id: str, gpu: str, revision: int) -> None:
        """Remember an offer's owner (kept from its first save) and the revision it holds."""
        pending = self._pending.get(offer_id)
        owner = (seller_id, gpu) if pending is None else pending[:2]
        self._pending[offer_id] = (*owner, revision)
        self._revisions[offer_id] = revision

    async def flush(self) -> None:
        """Write the saves of this unit so far, in one insert."""
        if not self._pending:
            return
        ids, rows = list(self._pending), list(self._pending.values())
        self._pending = {}
        await self.conn.execute(
            "INSERT INTO matching.offers (offer_id, seller_id, gpu, revision)"
            " SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[])"
            " ON CONFLICT (offer_id) DO UPDATE SET revision = EXCLUDED.revision",
            ids,
            [seller for seller, _, _ in rows],
            [gpu for _, gpu, _ in rows],
            [revision for _, _, revision in rows],
        )

    async def owners(self, offer_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(seller id, gpu) of each known offer."""
        await self.flush()
        rows = await self.conn.fetch(
            "SELECT offer_id, seller_id, gpu FROM matching.offers WHERE offer_id = ANY($1::text[])",
            list(offer_ids),
        )
        return {row["offer_id"]: (row["seller_id"], row["gpu"]) for row in rows}
