"""Billing as a running process, seen from outside: what the lease flows' tests send it and
read back from its topics and ledger.

``send`` publishes a payload at billing's (fast) clock; ``lease_events`` reads a lease's
events on ``billing.leases`` (its item of an aggregated ``leases.settled`` as one of them),
``of_type`` picks one type's payloads of them; ``balance`` reads a ledger account.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.domain.ledger import AccountKey, AccountKind
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.money import Currency
from gpux_contracts.topics import BILLING_LEASES, Topic
from gpux_devinfra.testing import waiting
from gpux_devinfra.testing.kafka import publish, published
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
