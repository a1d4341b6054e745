"""Seller reliability on PostgreSQL (``0010_reliability.sql``): billing's real unit of work counts
the outcomes of its trades and sellers' reports once, however often they come, and writes one
``reliability.changed`` per changed offer to the outbox; every offer's counts are its counted
rows by kind; counts only grow; and two units counting for one seller take turns, the later
reading the earlier's counts."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest

from gpux_billing.adapters.postgres.reliability import PostgresReliability
from gpux_billing.domain.reliability import Kind, Outcome
from gpux_billing.domain.rules import Rules
from gpux_contracts.ids import new_id
from gpux_contracts.leases import LeaseFailureReported, LeaseReadyReported
from gpux_contracts.reliability import ReliabilityCounts
from gpux_contracts.topics import BILLING_COMMANDS, BILLING_RELIABILITY, MARKET_TRADES
from gpux_devinfra.testing.database import migrated_pool, rolled_back
from gpux_devinfra.testing.payloads import credit_requested, trade_executed
from gpux_platform.clock import ManualClock
from gpux_platform.settings import GpuxSettings

from .billing_round_trips import NOW, apply, event, units

pytestmark = pytest.mark.integration

MISMATCHED = """
SELECT count(*) FROM billing.reliability_counts r
  FULL JOIN (SELECT offer_id, min(seller_id) AS seller_id,
                    count(*) FILTER (WHERE kind = 'ready_in_time') AS ready_in_time,
                    count(*) FILTER (WHERE kind = 'failed') AS failed,
                    count(*) FILTER (WHERE kind = 'reclaimed') AS reclaimed
               FROM billing.reliability_counted GROUP BY offer_id) c USING (offer_id)
 WHERE (r.seller_id, r.ready_in_time, r.failed, r.reclaimed)
       IS DISTINCT FROM (c.seller_id, c.ready_in_time, c.failed, c.reclaimed)
"""
"""Offers whose counts are not their counted rows by kind (or rows without counts)."""


def counts(ready: int = 0, failed: int = 0, reclaimed: int = 0) -> dict[str, int]:
    return {"ready_in_time": ready, "failed": failed, "reclaimed": reclaimed}


async def announced(pool: asyncpg.Pool, offer_ids: list[str]) -> list[tuple[str, Any]]:
    """The ``reliability.changed`` in the outbox for these offers, in order: (key, payload)."""
    rows = await pool.fetch(
        "SELECT key, body FROM billing.outbox WHERE topic = $1 AND key = ANY($2::text[])"
        " ORDER BY seq",
        BILLING_RELIABILITY.name,
        offer_ids,
    )
    return [(r["key"], json.loads(r["body"])["payload"]) for r in rows]


async def test_the_real_unit_counts_each_outcome_once_and_announces_each_offer(
    billing_pool: asyncpg.Pool,
) -> None:
    tag = new_id()[-8:].lower()
    buyer, seller, offer_a, offer_b = f"{tag}-b", f"{tag}-s", f"{tag}-oa", f"{tag}-ob"
    real = units(billing_pool, Rules(), ManualClock(NOW))
    await apply(real, BILLING_COMMANDS, [event(credit_requested(buyer, "500"))])

    def trade(lease: str, offer: str, timeout_s: int) -> Any:
        return event(
            trade_executed(
                trade_id=f"{tag}-{lease}",
                buyer_id=buyer,
                seller_id=seller,
                offer_id=offer,
                price="1.00",
                executed_at=NOW,
                provisioning_timeout_seconds=timeout_s,
            )
        )

    def report(kind: type[LeaseReadyReported | LeaseFailureReported], lease: str) -> Any:
        ids = {"lease_id": f"{tag}-{lease}", "buyer_id": buyer, "seller_id": seller}
        return event(kind(**ids, reported_at=NOW))

    # l1 opens ready (its seller's report came first); l4 has no provisioning timeout: it is
    # not measured (adapted deliberately: it counted ready in time as it opened).
    opened = [
        trade("l1", offer_a, 600),
        trade("l2", offer_b, 600),
        trade("l3", offer_a, 600),
        trade("l4", offer_a, 0),
    ]
    reports = [report(LeaseFailureReported, "l2"), report(LeaseReadyReported, "l3")]
    await apply(real, BILLING_COMMANDS, [report(LeaseReadyReported, "l1")])
    await apply(real, MARKET_TRADES, opened)
    await apply(real, BILLING_COMMANDS, [*reports, report(LeaseReadyReported, "l4")])
    await apply(real, MARKET_TRADES, [*opened, trade("l1", offer_a, 600)])  # again: nothing new
    await apply(real, BILLING_COMMANDS, [*reports, report(LeaseReadyReported, "l2")])
    found = await announced(billing_pool, [offer_a, offer_b])
    assert [(key, p["offer"], p["seller"], p["lease_id"]) for key, p in found] == [
        (offer_a, counts(ready=1), counts(ready=1), f"{tag}-l1"),
        (offer_a, counts(ready=2), counts(ready=2, failed=1), f"{tag}-l3"),
        (offer_b, counts(failed=1), counts(ready=2, failed=1), f"{tag}-l2"),
    ]
    rows = await billing_pool.fetch(
        "SELECT lease_id, kind FROM billing.reliability_counted WHERE seller_id = $1"
        " ORDER BY lease_id",
        seller,
    )
    assert [(r["lease_id"], r["kind"]) for r in rows] == [
        (f"{tag}-l1", "ready_in_time"),
        (f"{tag}-l2", "failed"),
        (f"{tag}-l3", "ready_in_time"),
    ]
    assert await billing_pool.fetchval(MISMATCHED) == 0


async def test_counts_only_grow_and_an_offer_keeps_its_seller(billing_pool: asyncpg.Pool) -> None:
    tag = new_id()[-8:].lower()
    outcome = Outcome(f"{tag}-l", f"{tag}-o", f"{tag}-s", Kind.FAILED)
    for change in (
        "SET failed = failed - 1",
        "SET ready_in_time = 0, failed = 0",
        "SET seller_id = 'someone-else'",
    ):
        async with rolled_back(billing_pool) as conn:
            await PostgresReliability(conn).count([outcome], NOW)
            with pytest.raises(asyncpg.PostgresError) as refused:
                await conn.execute(
                    f"UPDATE billing.reliability_counts {change} WHERE offer_id = $1",
                    outcome.offer_id,
                )
            assert refused.value.sqlstate == "GX005"


async def _waiting(pool: asyncpg.Pool, pid: int, task: asyncio.Task[Any]) -> None:
    """Until the backend ``pid`` waits for an advisory lock, or ``task`` (its work) finished
    (then it never waited)."""
    while not task.done():
        waiting = await pool.fetchval(
            "SELECT count(*) FROM pg_locks WHERE pid = $1 AND locktype = 'advisory'"
            " AND NOT granted",
            pid,
        )
        if waiting:
            return
        await asyncio.sleep(0.01)


async def test_two_units_counting_for_one_seller_take_turns_and_the_later_reads_both(
    gpux_settings: GpuxSettings, billing_pool: asyncpg.Pool
) -> None:
    """Without the seller's lock the later unit would read the earlier's offer as it was
    before (not committed yet), and neither would announce the seller's whole counts."""
    tag = new_id()[-8:].lower()
    seller = f"{tag}-s"
    first = Outcome(f"{tag}-l1", f"{tag}-o1", seller, Kind.READY_IN_TIME)
    second = Outcome(f"{tag}-l2", f"{tag}-o2", seller, Kind.FAILED)
    at = datetime(2026, 11, 30, 12, tzinfo=UTC)
    async with migrated_pool(gpux_settings, max_size=3) as pool:
        earlier, later = await pool.acquire(), await pool.acquire()
        try:
            async with earlier.transaction():
                counted = await PostgresReliability(earlier).count([first], at)
                assert counted.sellers == {seller: ReliabilityCounts(ready_in_time=1)}

                async def count_later() -> Any:
                    async with later.transaction():
                        return await PostgresReliability(later).count([second], at)

                task = asyncio.create_task(count_later())
                await _waiting(pool, later.get_server_pid(), task)
                assert not task.done()  # it waits for the seller's lock
            counted = await task
        finally:
            await pool.release(earlier)
            await pool.release(later)
    assert counted.sellers == {seller: ReliabilityCounts(ready_in_time=1, failed=1)}
    assert counted.offers == {second.offer_id: ReliabilityCounts(failed=1)}
    assert await billing_pool.fetchval(MISMATCHED) == 0
