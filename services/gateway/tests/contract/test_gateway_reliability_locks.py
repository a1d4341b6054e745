"""The reliability view's writes on PostgreSQL take their row locks in key order: the topic is
keyed by offer, so one seller's changes reach views instances by different partitions, and two
units holding crosswise batches ([O1/S1, O2/S2] and [O3/S2, O4/S1]) must take turns, never
deadlock.

The interleaving is made, not hoped for: a third transaction holds O1's row, so the first unit
stops at it holding what it locked before; the second unit then runs as far as it can; only
then is O1 let go.
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from gpux_contracts.ids import new_id
from gpux_contracts.reliability import ReliabilityChanged, ReliabilityCounts
from gpux_devinfra.testing.waiting import eventually
from gpux_gateway.adapters.memory.unit_of_work import EPOCH
from gpux_gateway.adapters.postgres.unit_of_work import PostgresGatewayUnitOfWork
from gpux_gateway.reliability.repository import SellerReliability
from gpux_platform.clock import ManualClock

from ..reliability_events import counts, reliability_changed

pytestmark = pytest.mark.integration

WAITING = "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'"
"""1 while the backend ``$1`` waits for a lock."""


def change(seller_id: str, offer_id: str, total: int) -> ReliabilityChanged:
    return reliability_changed(seller_id, offer_id, counts(total), counts(total))


async def waits_or_ends(pool: asyncpg.Pool, pid: int, task: asyncio.Task[Any]) -> None:
    """Return once the backend ``pid`` waits for a lock or ``task`` has ended."""

    async def stopped() -> bool:
        return task.done() or await pool.fetchval(WAITING, pid) == 1

    await eventually(stopped, what=f"backend {pid} waiting for a lock", interval_s=0.01)


async def committed(
    pool: asyncpg.Pool, changes: list[ReliabilityChanged], started: asyncio.Future[int]
) -> None:
    """Apply ``changes`` in one unit and commit it, telling ``started`` its backend's pid."""
    async with PostgresGatewayUnitOfWork(pool, ManualClock(EPOCH)) as uow:
        for each in changes:
            await uow.reliability.apply(each)
        started.set_result(await uow.conn.fetchval("SELECT pg_backend_pid()"))
        await uow.commit()


async def test_two_units_of_crosswise_batches_take_turns(pool: asyncpg.Pool) -> None:
    s1, s2 = new_id(), new_id()
    o1, o2, o3, o4 = (new_id() for _ in range(4))
    pairs = ((o1, s1), (o2, s2), (o3, s2), (o4, s1))
    async with PostgresGatewayUnitOfWork(pool, ManualClock(EPOCH)) as uow:
        for offer_id, seller_id in pairs:  # rows to lock: every write below updates one
            await uow.reliability.apply(change(seller_id, offer_id, 1))
        await uow.commit()
    first = [change(s1, o1, 2), change(s2, o2, 2)]
    second = [change(s2, o3, 3), change(s1, o4, 3)]
    loop = asyncio.get_running_loop()
    async with pool.acquire() as holder, holder.transaction():
        await holder.execute(
            "SELECT 1 FROM gateway.offer_reliability WHERE offer_id = $1 FOR UPDATE", o1
        )
        a_pid, b_pid = loop.create_future(), loop.create_future()
        a = asyncio.create_task(committed(pool, first, a_pid))
        await waits_or_ends(pool, await a_pid, a)
        b = asyncio.create_task(committed(pool, second, b_pid))
        await waits_or_ends(pool, await b_pid, b)
    outcomes = await asyncio.gather(a, b, return_exceptions=True)
    assert list(outcomes) == [None, None]
    async with PostgresGatewayUnitOfWork(pool, ManualClock(EPOCH)) as uow:
        held = [await uow.reliability.of_seller(s, [o1, o2, o3, o4]) for s in (s1, s2)]
    three, two = ReliabilityCounts(ready_in_time=3), ReliabilityCounts(ready_in_time=2)
    assert held == [
        SellerReliability(seller=three, offers={o1: two, o4: three}),
        SellerReliability(seller=three, offers={o2: two, o3: three}),
    ]
