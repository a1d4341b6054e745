"""Sellers' reliability in PostgreSQL: ``billing.reliability_counted`` (what each lease has
counted) and ``billing.reliability_counts`` (each offer's counts).

A unit counts in one round trip whatever its size (``billing.reliability_count``, migration
``0010_reliability.sql``): it locks its sellers (an advisory lock each, in key order, held to
the commit), counts (one statement: the leases' new outcomes into ``reliability_counted``,
skipping those counted already, and the offers' counts raised by what was new), then reads
its sellers' counts summed over all their offers. Every offer of a seller is counted under
the seller's lock, so two units counting for one seller take turns and the second reads what
the first committed: the last one always announces the seller's whole counts (without the
lock, each could read the other's offers as they were before, and neither would announce
their sum). Counting is the last thing a unit locks (``service.flush``), so the sellers'
locks never wait in a cycle with the leases' or the wallets'.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import asyncpg

from gpux_billing.adapters.postgres.repository import PostgresRepository
from gpux_billing.domain.reliability import Counted, Kind, Outcome, distinct
from gpux_contracts.reliability import ReliabilityCounts

_COUNT = """
SELECT lease_id, offer_id, seller_id, kind, ready_in_time, failed, reclaimed
  FROM billing.reliability_count($1::text[], $2::text[], $3::text[], $4::text[], $5)
"""

_KINDS = {k.value: k for k in Kind}


def _counts(row: asyncpg.Record) -> ReliabilityCounts:
    return ReliabilityCounts(
        ready_in_time=row["ready_in_time"], failed=row["failed"], reclaimed=row["reclaimed"]
    )


class PostgresReliability(PostgresRepository):
    """Reliability counts on the unit of work's connection."""

    async def count(self, outcomes: Sequence[Outcome], at: datetime) -> Counted:
        """Count the outcomes whose lease has not counted their kind yet, in one round trip
        (``billing.reliability_count``); the counts after, read under the sellers' locks."""
        outcomes = distinct(outcomes)
        if not outcomes:
            return Counted()
        columns = zip(
            *((o.lease_id, o.offer_id, o.seller_id, o.kind.value) for o in outcomes), strict=True
        )
        rows = await self.conn.fetch(_COUNT, *(list(c) for c in columns), at)
        counted = [r for r in rows if r["lease_id"] is not None]
        if not counted:
            return Counted()
        new = tuple(
            Outcome(r["lease_id"], r["offer_id"], r["seller_id"], _KINDS[r["kind"]])
            for r in counted
        )
        sellers = {o.seller_id for o in new}
        return Counted(
            new,
            {r["offer_id"]: _counts(r) for r in counted},
            {
                r["seller_id"]: _counts(r)
                for r in rows
                if r["lease_id"] is None and r["seller_id"] in sellers
            },
        )
