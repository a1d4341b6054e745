"""Billing as a running process, seen from outside: what the lease flows' tests send it and
read back from its topics and ledger.

``send`` publishes a payload at billing's (fast) clock; ``lease_events`` reads a lease's
events on ``billing.leases`` (its item of an aggregated ``leases.settled`` as one of them),
``of_type`` picks one type's payloads of them; ``balance`` reads a ledger account.
``fast_billing`` runs billing in-process at a fast clock; ``funded_order`` credits a buyer and
has its order funded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import asyncpg

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.bootstrap import SPEC
from gpux_billing.domain.ledger import AccountKey, AccountKind
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.topics import (
    BILLING_BALANCES,
    BILLING_COMMANDS,
    BILLING_LEASES,
    ORDERS_BOOK,
    ORDERS_COMMANDS,
    Topic,
)
from gpux_devinfra.testing import waiting
from gpux_devinfra.testing.kafka import publish, published
from gpux_devinfra.testing.payloads import GPU, credit_requested, order_placed
from gpux_devinfra.testing.services import running
from gpux_platform.clock import Clock
from gpux_platform.settings import GpuxSettings


def envelope(clock: Clock, payload: Payload, producer: str = "gateway") -> Envelope[Any]:
    """``payload`` as ``producer`` wraps it at ``clock``'s now."""
    return wrap(payload, producer=producer, occurred_at=clock.now())


async def send(
    settings: GpuxSettings, topic: Topic, key: str, payload: Payload, producer: str = "gateway"
) -> Envelope[Any]:
    """Publish one payload as ``producer`` would, at billing's (fast) clock; returns it."""
    wrapped = envelope(settings.clock(), payload, producer)
    await publish(settings, topic, [(key, wrapped)])
    return wrapped


def lease_ids(body: dict[str, Any]) -> list[str]:
    """The leases a ``billing.leases`` record reports on (an aggregated one: several)."""
    payload = body["payload"]
    if body["event_type"] == "leases.settled":
        return [item["lease_id"] for item in payload["leases"]]
    return [payload["lease_id"]]


def of_lease(body: dict[str, Any], lease_id: str) -> list[dict[str, Any]]:
    """A record as the lease's own events: of a ``leases.settled``, the lease's item."""
    if body["event_type"] != "leases.settled":
        return [body]
    items = body["payload"]["leases"]
    return [{**body, "payload": i} for i in items if i["lease_id"] == lease_id]


async def lease_events(
    settings: GpuxSettings, lease_id: str, until: str, timeout_s: float = 30
) -> list[dict[str, Any]]:
    """The lease's events on ``billing.leases``, once one of type ``until`` is among them."""

    async def bodies() -> list[dict[str, Any]]:
        found = await published(
            settings, BILLING_LEASES, lambda b: lease_id in lease_ids(b), 0.5, 5
        )
        return [e for f in found for e in of_lease(f.body, lease_id)]

    found: list[dict[str, Any]] = await waiting.eventually(
        bodies,
        lambda seen: any(b["event_type"] == until for b in seen),
        what=f"{until} of lease {lease_id}",
        timeout_s=timeout_s,
    )
    return found


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The payloads of the events of type ``kind``, in order."""
    return [e["payload"] for e in events if e["event_type"] == kind]


async def balance(pool: asyncpg.Pool, owner: str, currency: Currency, kind: AccountKind) -> int:
    """The balance of ``owner``'s ledger account of ``kind`` in ``currency``."""
    async with pool.acquire() as conn:
        return await PostgresLedger(conn).balance(AccountKey(owner, currency, kind))


@asynccontextmanager
async def fast_billing(settings: GpuxSettings, speed: float) -> AsyncIterator[GpuxSettings]:
    """Billing in-process on ``settings`` with dev top-ups, its clock ``speed`` times the wall
    clock's from now, settling every minute of it; yields the settings it runs with."""
    async with running(
        SPEC,
        settings,
        dev_topups=True,
        clock_speed=speed,
        clock_epoch=datetime.now(UTC),
        settle_every_s=60,
        settle_tick_s=0.2,
    ) as (_, running_settings):
        yield running_settings


async def funded_order(
    settings: GpuxSettings,
    buyer: str,
    currency: Currency = Currency.USD,
    credit: str = "10",
    *,
    gpus: int = 2,
    limit: str = "2.00",
) -> str:
    """Credit the buyer, place an order and wait until billing funded it; its id."""
    credit_command = credit_requested(buyer, credit, currency, credit_id=new_id())
    order = order_placed(buyer_id=buyer, gpus=gpus, price=limit, currency=currency)
    await send(settings, BILLING_COMMANDS, buyer, credit_command)
    # Credits and orders travel on different topics: wait for the credit to be booked first.
    booked = await published(
        settings, BILLING_BALANCES, lambda b: b["payload"]["account_id"] == buyer, 0.2, 30
    )
    assert booked, "billing did not book the credit"
    await send(settings, ORDERS_COMMANDS, GPU, order)
    funded = await published(
        settings,
        ORDERS_BOOK,
        lambda b: (
            b["event_type"] == "order.funded"
            and b["payload"]["order"]["order_id"] == order.order_id
        ),
        settle_s=0.2,
    )
    assert funded, "billing did not fund the order"
    return order.order_id
