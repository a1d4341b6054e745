"""The catalog's outbox on memory and on PostgreSQL: an event queued again is sent again.

A deleted version record has its topic published again under the same event ids (the
records of a recreated topic): both units of work must send such an event a second time,
where the platform's outbox would skip an id it already holds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg
import pytest

from gpux_catalog.adapters.files import load_gpu_catalog
from gpux_catalog.adapters.memory.unit_of_work import MemoryCatalogUnitOfWork
from gpux_catalog.adapters.postgres.unit_of_work import PostgresCatalogUnitOfWork
from gpux_catalog.service.publication import gpu_messages
from gpux_catalog.service.unit_of_work import CatalogUnitOfWork
from gpux_contracts.ids import new_id
from gpux_platform.broker import Outgoing

pytestmark = pytest.mark.integration

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Outbox:
    """Units of work on one store, and what its relay sends next (oldest first)."""

    units: Callable[[], AbstractAsyncContextManager[CatalogUnitOfWork]]
    drain: Callable[[], Awaitable[list[str]]]
    """Sends what was queued and not sent yet; returns those event ids."""


def memory_outbox() -> Outbox:
    unit = MemoryCatalogUnitOfWork()
    sent = 0

    async def drain() -> list[str]:
        nonlocal sent
        fresh, sent = unit.published[sent:], len(unit.published)
        return [m.envelope.event_id for m in fresh]

    return Outbox(lambda: unit, drain)


def postgres_outbox(pool: asyncpg.Pool) -> Outbox:
    async def drain() -> list[str]:
        # What the relay does, without Kafka: take the unsent rows in order, mark them sent.
        rows = await pool.fetch(
            "UPDATE catalog.outbox SET published_at = now() WHERE published_at IS NULL"
            " RETURNING seq, event_id"
        )
        return [row["event_id"] for row in sorted(rows, key=lambda row: row["seq"])]

    return Outbox(lambda: PostgresCatalogUnitOfWork(pool), drain)


@pytest.fixture(params=["memory", "postgres"])
def outbox(request: pytest.FixtureRequest) -> Outbox:
    if request.param == "memory":
        return memory_outbox()
    return postgres_outbox(request.getfixturevalue("pool"))


def fresh_messages(count: int) -> list[Outgoing]:
    """Real catalog records under event ids no other test used."""
    return [
        Outgoing(m.topic, m.key, m.envelope.model_copy(update={"event_id": new_id()}))
        for m in gpu_messages(load_gpu_catalog(), NOW)[:count]
    ]


async def queue(outbox: Outbox, messages: list[Outgoing]) -> None:
    async with outbox.units() as uow:
        uow.outbox.add(*messages)
        await uow.commit()


async def test_queued_events_are_sent_once_in_order(outbox: Outbox) -> None:
    messages = fresh_messages(3)
    await queue(outbox, messages)
    assert await outbox.drain() == [m.envelope.event_id for m in messages]
    assert await outbox.drain() == []


async def test_an_event_queued_again_after_it_was_sent_is_sent_again(outbox: Outbox) -> None:
    first, second = fresh_messages(2)
    await queue(outbox, [first, second])
    await outbox.drain()
    await queue(outbox, [second])
    assert await outbox.drain() == [second.envelope.event_id]


async def test_a_unit_left_without_commit_sends_nothing(outbox: Outbox) -> None:
    async with outbox.units() as uow:
        uow.outbox.add(*fresh_messages(2))
    assert await outbox.drain() == []
