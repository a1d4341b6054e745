"""The book's subscriber on real Kafka and PostgreSQL: a burst is one unit and one offset commit.

Funded orders are published to ``orders.book`` before the service starts, all for one GPU model
(one partition), so its first fetch holds them all. The service's units of work and its
consumers' offset commits are counted by wrapping ``PostgresBookUnitOfWork.commit`` and
``AIOKafkaConsumer.commit``. A second test loses the offset commit of a burst (as a crash
between the database commit and the offset commit would) and restarts the service: the burst
comes again and changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer

from gpux_contracts.orders import OrderFunded, OrderType
from gpux_contracts.topics import ORDERS_BOOK, REGISTRY
from gpux_devinfra.testing.kafka import publish_payloads
from gpux_devinfra.testing.services import running
from gpux_devinfra.testing.waiting import eventually
from gpux_matching.adapters.postgres.unit_of_work import PostgresBookUnitOfWork
from gpux_matching.bootstrap import SPEC
from gpux_matching.entrypoints.kafka import BOOK_GROUP
from gpux_platform.broker import ensure_topics
from gpux_platform.settings import GpuxSettings

from .matching_feed import funded, order

BURST = 200
RUN: dict[str, Any] = {"snapshot_every": 10_000, "expiry_interval_s": 0.2}


class Counted:
    """The book's units of work (commands each logged) and the book group's offset commits."""

    def __init__(self, settings: GpuxSettings) -> None:
        self.group = settings.group(BOOK_GROUP)
        self.units: list[int] = []
        self.offset_commits = 0
        self.lose_offset_commits = False


@pytest.fixture
def counted(module_settings: GpuxSettings, monkeypatch: pytest.MonkeyPatch) -> Counted:
    seen = Counted(module_settings)
    unit_commit = PostgresBookUnitOfWork.commit
    offset_commit = AIOKafkaConsumer.commit

    async def commit_unit(self: PostgresBookUnitOfWork) -> None:
        await unit_commit(self)
        seen.units.append(len(self.journal.seqs))

    async def commit_offsets(self: AIOKafkaConsumer, *args: Any, **kwargs: Any) -> None:
        if getattr(self, "_group_id", None) == seen.group:
            seen.offset_commits += 1
            if seen.lose_offset_commits:
                return  # as if the process died right after its database commit
        await offset_commit(self, *args, **kwargs)

    monkeypatch.setattr(PostgresBookUnitOfWork, "commit", commit_unit)
    monkeypatch.setattr(AIOKafkaConsumer, "commit", commit_offsets)
    return seen


def funded_bids(gpu: str, count: int) -> list[tuple[str, OrderFunded]]:
    """Limit bids that rest (nothing to trade with): one command and one status each."""
    orders = [
        order(
            gpu,
            1 + i % 3,
            OrderType.LIMIT,
            Decimal("0.10") + Decimal(i % 7) / 100,
            buyer_id=f"buyer-{i % 5}",
        )
        for i in range(count)
    ]
    return [(gpu, funded(o, held=Decimal("10"))) for o in orders]


async def logged(conn: asyncpg.Connection, gpu: str) -> int:
    count: int = await conn.fetchval(
        "SELECT count(*) FROM matching.commands WHERE body->>'gpu' = $1", gpu
    )
    return count


async def outbox_rows(conn: asyncpg.Connection) -> int:
    count: int = await conn.fetchval("SELECT count(*) FROM matching.outbox")
    return count


@contextlib.asynccontextmanager
async def burst_published(settings: GpuxSettings, gpu: str) -> AsyncIterator[asyncpg.Connection]:
    """A burst of funded bids for ``gpu`` on ``orders.book``; a database connection meanwhile."""
    await ensure_topics(settings, REGISTRY)
    await publish_payloads(settings, ORDERS_BOOK, "billing", funded_bids(gpu, BURST))
    conn = await asyncpg.connect(settings.database_url.get_secret_value())
    try:
        yield conn
    finally:
        await conn.close()


async def run_until_logged(
    settings: GpuxSettings, conn: asyncpg.Connection, gpu: str, counted: Counted
) -> None:
    """Run the service until the gpu's commands are logged and the batch's offsets committed."""
    async with running(SPEC, settings, **RUN):

        async def done() -> bool:
            return await logged(conn, gpu) >= BURST and counted.offset_commits >= 1

        await eventually(done, what="the burst logged and its offsets committed", interval_s=0.05)
        await asyncio.sleep(0.5)  # anything after the offset commit would show by now


async def test_a_burst_of_funded_orders_is_one_unit_of_work_and_one_offset_commit(
    module_settings: GpuxSettings, counted: Counted
) -> None:
    settings = module_settings
    gpu = "gpu-burst"
    async with burst_published(settings, gpu) as conn:
        await run_until_logged(settings, conn, gpu, counted)
        assert counted.units == [BURST]  # one transaction logged the whole burst
        assert counted.offset_commits == 1
        assert await logged(conn, gpu) == BURST
        assert await conn.fetchval("SELECT count(*) FROM matching.inbox") == BURST
        # Per order its open status; then, once for the unit, the levels of both books (bids
        # for any tier show in both).
        assert await outbox_rows(conn) == BURST + 2


async def test_a_burst_whose_offsets_were_not_committed_comes_again_and_changes_nothing(
    module_settings: GpuxSettings, counted: Counted
) -> None:
    settings = module_settings
    gpu = "gpu-again"
    async with burst_published(settings, gpu) as conn:
        counted.lose_offset_commits = True
        await run_until_logged(settings, conn, gpu, counted)
        assert counted.units == [BURST]
        inbox = await conn.fetchval("SELECT count(*) FROM matching.inbox")
        rows = await outbox_rows(conn)

        # Restarted, the service reads the burst again from the last committed offset.
        counted.lose_offset_commits = False
        counted.offset_commits = 0
        await run_until_logged(settings, conn, gpu, counted)
        assert counted.units[1:] == [0]  # the burst again, in one unit that logged nothing
        assert counted.offset_commits == 1
        assert await logged(conn, gpu) == BURST
        assert await conn.fetchval("SELECT count(*) FROM matching.inbox") == inbox
        assert await outbox_rows(conn) == rows
