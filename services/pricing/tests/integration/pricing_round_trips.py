"""Round trips of pricing's real unit of work, counted: the integration tests' helpers.

``counting(pool, clock)`` lends one connection of the pool, wrapped so that it counts its
round trips (statements, and a transaction's begin and end), and a factory of pricing's unit
of work on it (its read models in memory: Redis is not what is counted); ``apply`` runs a
batch through ``BatchHandler`` with pricing's handlers, as the topic's subscriber does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, cast

import asyncpg

from gpux_contracts.events import Envelope
from gpux_contracts.topics import Topic
from gpux_devinfra.testing.round_trips import Counted, OneConnection
from gpux_platform.batches import BatchHandler, Outcome
from gpux_platform.clock import Clock
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.postgres.unit_of_work import PostgresPricingUnitOfWork
from gpux_pricing.config import PricingSettings
from gpux_pricing.service import HANDLERS_BY_TOPIC
from gpux_pricing.service.market import BookCache


async def apply(unit_of_work: Any, topic: Topic, events: Sequence[Envelope[Any]]) -> Outcome:
    """Apply ``events`` as the topic's subscriber does: one batch, pricing's handlers."""
    return await BatchHandler(topic, HANDLERS_BY_TOPIC[topic], unit_of_work).apply(events)


def units(pool: asyncpg.Pool, clock: Clock) -> Callable[[], PostgresPricingUnitOfWork]:
    """A factory of pricing's real unit of work on ``pool`` (one process's books)."""
    cache, models, band_for = BookCache(), MemoryReadModels(), PricingSettings().band_for
    return lambda: PostgresPricingUnitOfWork(
        pool, cache=cache, read_models=models, clock=clock, band_for=band_for
    )


@asynccontextmanager
async def counting(
    pool: asyncpg.Pool, clock: Clock
) -> AsyncIterator[tuple[Callable[[], PostgresPricingUnitOfWork], Counted]]:
    """A unit-of-work factory on one counted connection of ``pool``, and the connection."""
    async with pool.acquire() as raw:
        counted = Counted(raw)
        yield units(cast(asyncpg.Pool, OneConnection(counted)), clock), counted
