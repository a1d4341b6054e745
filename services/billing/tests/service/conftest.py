"""Billing's handlers on the memory unit of work: batches applied as the Kafka entrypoint does.

Fixtures: ``run(topic, *payloads)`` wraps each payload in an envelope from the gateway at
``T0`` (or takes an envelope as it is), applies them as one batch through
``gpux_platform.batches.BatchHandler`` with the topic's handlers from
``gpux_billing.service.HANDLERS_BY_TOPIC``, and returns the outcome; ``credited(account,
amount)`` books an admin credit; ``funds(owner)`` is a wallet's (available, held);
``published(event_type)`` the committed events' payloads of a type, as JSON.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from gpux_billing.adapters.memory.unit_of_work import MemoryBillingUnitOfWork
from gpux_billing.domain.ledger import AccountKey, AccountKind
from gpux_billing.domain.rules import Rules
from gpux_billing.service import HANDLERS_BY_TOPIC
from gpux_contracts.billing import CreditRequested
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.money import Currency
from gpux_contracts.topics import BILLING_COMMANDS, Topic
from gpux_platform.batches import BatchHandler, Outcome
from gpux_platform.clock import ManualClock

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)

Run = Callable[..., Awaitable[Outcome]]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def uow(clock: ManualClock) -> MemoryBillingUnitOfWork:
    return MemoryBillingUnitOfWork(clock=clock, rules=Rules(dev_topups=True))


def envelope(payload: Payload, producer: str = "gateway", at: datetime = T0) -> Envelope[Any]:
    return wrap(payload, producer=producer, occurred_at=at)


@pytest.fixture
def run(uow: MemoryBillingUnitOfWork) -> Run:
    async def apply(topic: Topic, *items: Payload | Envelope[Any]) -> Outcome:
        events = [i if isinstance(i, Envelope) else envelope(i) for i in items]
        batch = BatchHandler(topic, HANDLERS_BY_TOPIC[topic], lambda: uow, retries=1)
        return await batch.apply(events)

    return apply


def credit(account: str, amount: str, currency: Currency = Currency.USD) -> CreditRequested:
    return CreditRequested(
        credit_id=f"credit-{account}-{amount}-{currency.value}",
        account_id=account,
        amount=Decimal(amount),
        currency=currency,
        reference="test",
        requested_by="admin",
    )


@pytest.fixture
def credited(run: Run) -> Callable[..., Awaitable[Outcome]]:
    async def give(account: str, amount: str, currency: Currency = Currency.USD) -> Outcome:
        return await run(BILLING_COMMANDS, credit(account, amount, currency))

    return give


@pytest.fixture
def funds(uow: MemoryBillingUnitOfWork) -> Callable[..., Awaitable[tuple[int, int]]]:
    async def wallet(owner: str, currency: Currency = Currency.USD) -> tuple[int, int]:
        available = await uow.ledger.balance(AccountKey(owner, currency, AccountKind.AVAILABLE))
        held = await uow.ledger.balance(AccountKey(owner, currency, AccountKind.HELD))
        return available, held

    return wallet


@pytest.fixture
def published(uow: MemoryBillingUnitOfWork) -> Callable[[str], list[dict[str, Any]]]:
    def of_type(event_type: str) -> list[dict[str, Any]]:
        return [
            m.envelope.payload.model_dump(mode="json")
            for m in uow.published
            if m.envelope.event_type == event_type
        ]

    return of_type
