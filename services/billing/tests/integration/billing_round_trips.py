"""Round trips of billing's real unit of work, counted: the integration tests' helpers.

``units(pool, rules, clock)`` makes billing's real units of work; ``counting(pool, rules,
clock)`` lends one connection of the pool, wrapped so that it counts
its round trips (statements, and a transaction's begin and end), and a factory of billing's
unit of work on it; ``apply`` runs a batch through ``BatchHandler`` with billing's handlers
and ``prepare`` hook, as the topic's subscriber does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, cast

import asyncpg

from gpux_billing.adapters.postgres.unit_of_work import PostgresBillingUnitOfWork
from gpux_billing.domain.rules import Rules
from gpux_billing.service import HANDLERS_BY_TOPIC, prepare
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.topics import Topic
from gpux_devinfra.testing.round_trips import Counted, OneConnection
from gpux_platform.batches import BatchHandler, Outcome
from gpux_platform.clock import Clock

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def event(payload: Payload) -> Envelope[Any]:
    """``payload`` as the gateway publishes it at ``NOW``."""
    return wrap(payload, producer="gateway", occurred_at=NOW)


async def apply(unit_of_work: Any, topic: Topic, events: Sequence[Envelope[Any]]) -> Outcome:
    """Apply ``events`` as the topic's subscriber does: one batch, billing's handlers."""
    batch = BatchHandler(topic, HANDLERS_BY_TOPIC[topic], unit_of_work, prepare=prepare)
    return await batch.apply(events)


def units(
    pool: asyncpg.Pool, rules: Rules, clock: Clock
) -> Callable[[], PostgresBillingUnitOfWork]:
    """A factory of billing's real unit of work on ``pool``."""
    return lambda: PostgresBillingUnitOfWork(pool, rules=rules, clock=clock)


@asynccontextmanager
async def counting(
    pool: asyncpg.Pool, rules: Rules, clock: Clock
) -> AsyncIterator[tuple[Callable[[], PostgresBillingUnitOfWork], Counted]]:
    """A unit-of-work factory on one counted connection of ``pool``, and the connection."""
    async with pool.acquire() as raw:
        counted = Counted(raw)
        yield units(cast(asyncpg.Pool, OneConnection(counted)), rules, clock), counted
