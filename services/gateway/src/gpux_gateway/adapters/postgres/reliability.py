"""The offer_reliability and seller_reliability tables: billing's counts, a unit's changes
reduced to each row's largest and written at the commit in one statement."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from gpux_contracts.reliability import ReliabilityChanged, ReliabilityCounts
from gpux_gateway.domain.reliability import LargestCounts
from gpux_gateway.reliability.repository import SellerReliability

# gpux_contracts.reliability.supersedes, set-based: counts replace the held ones unless those
# counted more. Each row once (LargestCounts), in key order, so two units writing crosswise
# batches of one seller take turns instead of deadlocking. The offers' insert is a CTE the
# main statement does not read, which PostgreSQL runs after it: every unit locks its sellers
# (by seller id), then its offers (by offer id).
APPLY = (
    "WITH offer AS ("
    " INSERT INTO gateway.offer_reliability AS r"
    " (offer_id, seller_id, ready_in_time, failed, reclaimed, as_of)"
    " SELECT o, s, rt, f, c, t FROM unnest($1::text[], $2::text[], $3::bigint[],"
    " $4::bigint[], $5::bigint[], $6::timestamptz[]) AS n(o, s, rt, f, c, t) ORDER BY o"
    " ON CONFLICT (offer_id) DO UPDATE SET seller_id = excluded.seller_id,"
    " ready_in_time = excluded.ready_in_time, failed = excluded.failed,"
    " reclaimed = excluded.reclaimed, as_of = excluded.as_of"
    " WHERE excluded.ready_in_time + excluded.failed + excluded.reclaimed"
    " >= r.ready_in_time + r.failed + r.reclaimed)"
    " INSERT INTO gateway.seller_reliability AS r"
    " (seller_id, ready_in_time, failed, reclaimed, as_of)"
    " SELECT s, rt, f, c, t FROM unnest($7::text[], $8::bigint[], $9::bigint[],"
    " $10::bigint[], $11::timestamptz[]) AS n(s, rt, f, c, t) ORDER BY s"
    " ON CONFLICT (seller_id) DO UPDATE SET"
    " ready_in_time = excluded.ready_in_time, failed = excluded.failed,"
    " reclaimed = excluded.reclaimed, as_of = excluded.as_of"
    " WHERE excluded.ready_in_time + excluded.failed + excluded.reclaimed"
    " >= r.ready_in_time + r.failed + r.reclaimed"
)
OF_SELLER = (
    "SELECT NULL::text AS offer_id, ready_in_time, failed, reclaimed"
    " FROM gateway.seller_reliability WHERE seller_id = $1"
    " UNION ALL"
    " SELECT offer_id, ready_in_time, failed, reclaimed FROM gateway.offer_reliability"
    " WHERE offer_id = ANY($2::text[]) AND seller_id = $1"
)


class PostgresReliability:
    """Counts in ``gateway.offer_reliability`` and ``gateway.seller_reliability``; the unit's
    changes are kept (``LargestCounts``) and written by ``flush`` at its commit."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn
        self._changes = LargestCounts()

    async def apply(self, change: ReliabilityChanged) -> None:
        """Keep the change for the commit where it counts at least as much as the unit's."""
        self._changes.add(change)

    async def flush(self) -> None:
        """Write the unit's largest counts per offer and per seller in one statement, each
        unless the held ones counted more (nothing kept: nothing)."""
        changes, self._changes = self._changes, LargestCounts()
        if not changes:
            return
        offers, sellers = changes.by_offer(), changes.by_seller()
        await self._conn.execute(
            APPLY,
            [c.offer_id for c in offers],
            [c.seller_id for c in offers],
            *_columns([c.offer for c in offers]),
            [c.as_of for c in offers],
            [c.seller_id for c in sellers],
            *_columns([c.seller for c in sellers]),
            [c.as_of for c in sellers],
        )

    async def of_seller(self, seller_id: str, offer_ids: Sequence[str]) -> SellerReliability:
        """The seller's counts and those of the named offers of the seller's."""
        rows = await self._conn.fetch(OF_SELLER, seller_id, list(offer_ids))
        seller = ReliabilityCounts()
        offers: dict[str, ReliabilityCounts] = {}
        for row in rows:
            counts = ReliabilityCounts(
                ready_in_time=row["ready_in_time"],
                failed=row["failed"],
                reclaimed=row["reclaimed"],
            )
            if row["offer_id"] is None:
                seller = counts
            else:
                offers[row["offer_id"]] = counts
        return SellerReliability(seller=seller, offers=offers)


def _columns(counts: Sequence[ReliabilityCounts]) -> tuple[list[int], list[int], list[int]]:
    """The counts as the statement's three arrays: ready in time, failed, reclaimed."""
    return (
        [c.ready_in_time for c in counts],
        [c.failed for c in counts],
        [c.reclaimed for c in counts],
    )
