"""The service tests' desk: billing's handlers on the memory unit of work, driven as the Kafka
entrypoint drives them.

``run(topic, *items)`` wraps each payload in an envelope from the gateway at the desk's time
(or takes an envelope as it is), applies them as one batch through
``gpux_platform.batches.BatchHandler`` with the topic's handlers from
``gpux_billing.service.HANDLERS_BY_TOPIC``, and returns the outcome; ``credit(account,
amount)`` books an admin credit; ``funds(owner)`` is a wallet's (available, held);
``published(event_type)`` the committed events' payloads of a type, as JSON; ``charged()``
the charges announced in either form (a ``lease.charged``, or an item of a
``leases.settled``), in order; ``reliability()`` the latest counts announced of each offer and
seller. ``batch_and_alone`` applies events as one batch to one desk and one by one to another
and checks both end alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from gpux_billing.adapters.memory.unit_of_work import MemoryBillingUnitOfWork
from gpux_billing.domain.ledger import AccountKey, AccountKind
from gpux_billing.domain.rules import Rules
from gpux_billing.service import HANDLERS_BY_TOPIC
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.money import Currency
from gpux_contracts.reliability import ReliabilityChanged, ReliabilityCounts, supersedes
from gpux_contracts.topics import BILLING_COMMANDS, Topic
from gpux_devinfra.testing.payloads import credit_requested
from gpux_platform.batches import BatchHandler, Outcome
from gpux_platform.clock import ManualClock

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)


def envelope(payload: Payload, producer: str = "gateway", at: datetime = T0) -> Envelope[Any]:
    """``payload`` as ``producer`` publishes it at ``at``."""
    return wrap(payload, producer=producer, occurred_at=at)


class Desk:
    """One memory unit of work (dev top-ups allowed unless ``rules`` say otherwise) on a
    manual clock at ``T0``, and what the tests do with it."""

    def __init__(self, rules: Rules | None = None) -> None:
        self.clock = ManualClock(T0)
        self.uow = MemoryBillingUnitOfWork(clock=self.clock, rules=rules or Rules(dev_topups=True))

    async def run(self, topic: Topic, *items: Payload | Envelope[Any]) -> Outcome:
        """Apply ``items`` as one batch of ``topic`` (a failing batch is tried once more)."""
        events = [i if isinstance(i, Envelope) else envelope(i) for i in items]
        batch = BatchHandler(topic, HANDLERS_BY_TOPIC[topic], lambda: self.uow, retries=1)
        return await batch.apply(events)

    async def credit(self, account: str, amount: str, currency: Currency = Currency.USD) -> Outcome:
        """An admin's credit of ``amount`` to ``account``'s wallet, booked."""
        return await self.run(BILLING_COMMANDS, credit_requested(account, amount, currency))

    async def funds(self, owner: str, currency: Currency = Currency.USD) -> tuple[int, int]:
        """The wallet's (available, held) micro-units."""
        ledger = self.uow.ledger
        available = await ledger.balance(AccountKey(owner, currency, AccountKind.AVAILABLE))
        held = await ledger.balance(AccountKey(owner, currency, AccountKind.HELD))
        return available, held

    def published(self, event_type: str) -> list[dict[str, Any]]:
        """The payloads of the committed events of ``event_type``, as JSON, in order."""
        return [
            m.envelope.payload.model_dump(mode="json")
            for m in self.uow.published
            if m.envelope.event_type == event_type
        ]

    def charged(self) -> list[dict[str, Any]]:
        """Every charge announced, per lease and step, in order: each ``lease.charged`` and
        each item of each ``leases.settled`` (both carry the amounts and the totals)."""
        found: list[dict[str, Any]] = []
        for m in self.uow.published:
            payload = m.envelope.payload.model_dump(mode="json")
            if m.envelope.event_type == "lease.charged":
                found.append(payload)
            elif m.envelope.event_type == "leases.settled":
                found += payload["leases"]
        return found


CONFLATED = {"billing.balances", "billing.reliability"}
"""State topics, announced once per unit with the state it left (a batch: fewer events)."""


def answers(desk: Desk, since: int) -> dict[tuple[str, str], list[tuple[str, str, Any]]]:
    """The events published after the first ``since``, state topics left out, in order per
    topic and key: (id, type, payload)."""
    found: dict[tuple[str, str], list[tuple[str, str, Any]]] = {}
    for m in desk.uow.published[since:]:
        if m.topic.name not in CONFLATED:
            found.setdefault((m.topic.name, m.key), []).append(
                (m.envelope.event_id, m.envelope.event_type, m.envelope.payload)
            )
    return found


def last_balances(desk: Desk, since: int) -> dict[str, Any]:
    """The last ``balance.changed`` of each wallet published after the first ``since``."""
    found = {}
    for m in desk.uow.published[since:]:
        if m.topic.name == "billing.balances":
            payload = m.envelope.payload
            found[m.key] = (payload.available, payload.held)
    return found


def reliability(
    desk: Desk, since: int = 0
) -> tuple[dict[str, ReliabilityCounts], dict[str, ReliabilityCounts]]:
    """The latest counts announced after the first ``since`` events: of each offer, and of each
    seller (the counts it supersedes with, as every reader keeps them)."""
    offers: dict[str, ReliabilityCounts] = {}
    sellers: dict[str, ReliabilityCounts] = {}
    for m in desk.uow.published[since:]:
        payload = m.envelope.payload
        if isinstance(payload, ReliabilityChanged):
            assert m.key == payload.offer_id
            offers[payload.offer_id] = payload.offer
            if supersedes(payload.seller, sellers.get(payload.seller_id)):
                sellers[payload.seller_id] = payload.seller
    return offers, sellers


async def batch_and_alone(
    batch: Desk,
    alone: Desk,
    topic: Topic,
    events: Sequence[Envelope[Any]],
    state: Callable[[Desk], Awaitable[Any]],
) -> tuple[int, int]:
    """Apply ``events`` as one batch to ``batch`` and one by one to ``alone``; both publish
    the same events (state topics aside: the last balances of each wallet, the latest counts
    of each offer and seller) and end in the same ``state``.
    Returns where each desk's new events begin."""
    since = (len(batch.uow.published), len(alone.uow.published))
    outcome = await batch.run(topic, *events)
    assert (outcome.units, outcome.set_aside) == (1, 0)
    for event in events:
        await alone.run(topic, event)
    assert answers(batch, since[0]) == answers(alone, since[1])
    assert last_balances(batch, since[0]) == last_balances(alone, since[1])
    assert reliability(batch, since[0]) == reliability(alone, since[1])
    assert await state(batch) == await state(alone)
    return since
