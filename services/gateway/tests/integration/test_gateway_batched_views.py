"""The gateway's view subscribers on real Kafka and PostgreSQL: a burst of order reports is
one unit of work (one transaction, one inbox claim) and one offset commit."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar

import asyncpg
import pytest
from opentelemetry.sdk.trace import TracerProvider

from gpux_contracts.accounts import AccountStatus, Role
from gpux_contracts.events import Envelope, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.orders import OrderPlaced, OrderStatus
from gpux_contracts.topics import ORDERS_STATUS, REGISTRY
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.kafka import committed_offsets
from gpux_devinfra.testing.payloads import order_placed, order_status
from gpux_devinfra.testing.waiting import eventually
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.adapters.postgres.unit_of_work import PostgresGatewayUnitOfWork
from gpux_gateway.bootstrap import MIGRATIONS, SPEC
from gpux_gateway.entrypoints.kafka import GROUPS, views_router
from gpux_platform.broker import Outgoing, ensure_topics, make_broker, publish_many
from gpux_platform.clock import SystemClock
from gpux_platform.service import schema_of
from gpux_platform.settings import GpuxSettings

BURST = 200


class CountedUnit(PostgresGatewayUnitOfWork):
    """The real unit of work, counting what it claimed and how often it committed."""

    claims: ClassVar[list[int]] = []
    commits: ClassVar[int] = 0

    async def claim(self, topic: str, events: Sequence[Envelope[Any]]) -> list[Envelope[Any]]:
        CountedUnit.claims.append(len(events))
        return await super().claim(topic, events)

    async def commit(self) -> None:
        await super().commit()
        CountedUnit.commits += 1


@pytest.fixture(scope="module")
async def pool(module_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    """This module's own database, with the gateway's migrations applied."""
    async with migrated_pool(module_settings, schema_of(SPEC.name), MIGRATIONS) as pool:
        yield pool


async def placed_orders(pool: asyncpg.Pool, count: int) -> list[OrderPlaced]:
    """``count`` orders of one buyer, stored as the gateway stores a placed order."""
    buyer = AccountRow(new_id(), "buyer", (Role.BUYER,), AccountStatus.ACTIVE, SystemClock().now())
    orders = [
        order_placed(buyer_id=buyer.id, gpus=2, price="0.5", currency=Currency.EUR)
        for _ in range(count)
    ]
    async with PostgresGatewayUnitOfWork(pool, SystemClock()) as uow:
        await uow.accounts.add(buyer)
        for order in orders:
            await uow.orders.add(order, uow.now)
        await uow.commit()
    return orders


async def committed_offset(settings: GpuxSettings, group: str) -> int:
    """The sum of the group's committed offsets (0 before its first commit)."""
    offsets = await committed_offsets(settings, group)
    return sum(max(meta.offset, 0) for meta in offsets.values())


async def test_a_burst_of_order_reports_is_one_transaction_and_one_offset_commit(
    module_settings: GpuxSettings, pool: asyncpg.Pool, offset_commits: list[str]
) -> None:
    orders = await placed_orders(pool, BURST)
    now = SystemClock().now()
    reports = [
        Outgoing(
            ORDERS_STATUS,
            order.gpu,  # one key: one partition, in order
            wrap(
                order_status(order.order_id, OrderStatus.FILLED, buyer_id=order.buyer_id, filled=2),
                producer="matching",
                occurred_at=now,
            ),
        )
        for order in orders
    ]
    await ensure_topics(module_settings, REGISTRY)
    sender = make_broker(module_settings, "matching")
    await sender.start()
    await publish_many(sender, module_settings, reports)  # all there before the subscriber starts
    await sender.stop()

    receiver = make_broker(module_settings, "gateway")

    def units() -> CountedUnit:
        return CountedUnit(pool, SystemClock())

    receiver.include_router(views_router(module_settings, units, TracerProvider()))
    await receiver.start()
    try:
        filled = "SELECT count(*) FROM gateway.orders WHERE status = 'filled'"
        await eventually(lambda: pool.fetchval(filled), lambda n: n == BURST, what="every report")
        group = GROUPS[ORDERS_STATUS]
        await eventually(
            lambda: committed_offset(module_settings, group),
            lambda offset: offset == BURST,
            what="the batch's offsets committed",
        )
    finally:
        await receiver.stop()
    assert (CountedUnit.claims, CountedUnit.commits) == ([BURST], 1)
    assert offset_commits.count(module_settings.group(group)) == 1
    assert await pool.fetchval("SELECT count(*) FROM gateway.inbox") == BURST
