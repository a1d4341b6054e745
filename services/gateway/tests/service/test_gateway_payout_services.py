"""Payouts on the memory unit of work: the request (one command, one account event, replayed
per Idempotency-Key), the minimum, tenancy, the admin's decisions, and billing's status events
applied in rank order, each the seller's ``payout.updated``."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from fastapi.exceptions import RequestValidationError

from gpux_contracts.accounts import Role
from gpux_contracts.events import wrap
from gpux_contracts.money import Currency
from gpux_contracts.payouts import PayoutRejection, PayoutStatus, PayoutStatusChanged
from gpux_contracts.topics import BILLING_PAYOUTS
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.domain.idempotency import Once
from gpux_gateway.notifications.types import AccountEventType
from gpux_gateway.payouts import service
from gpux_gateway.payouts.schemas import NewPayout
from gpux_gateway.service import HANDLERS_BY_TOPIC
from gpux_platform.batches import BatchHandler
from gpux_platform.problems import ProblemError

from .units import with_accounts

pytestmark = pytest.mark.unit

ALICE, BOB = "acct-alice", "acct-bob"
BODY = NewPayout(currency=Currency.EUR, amount=Decimal("50.00"), destination="IBAN DE89")


def unit() -> MemoryGatewayUnitOfWork:
    return with_accounts({ALICE: Role.SELLER, BOB: Role.SELLER})


def once(key: str | None) -> Once:
    return Once(scope=ALICE, key=key, fingerprint="body-1", ttl=timedelta(hours=48))


async def requested(uow: MemoryGatewayUnitOfWork, key: str | None = None) -> str:
    async with uow:
        outcome = await service.request(uow, seller_id=ALICE, body=BODY, once=once(key))
        await uow.commit()
    assert outcome.status_code == 202
    return str(outcome.body["id"])


def change(payout_id: str, status: PayoutStatus, **extra: object) -> PayoutStatusChanged:
    return PayoutStatusChanged.model_validate(
        {
            "payout_id": payout_id,
            "seller_id": ALICE,
            "currency": "EUR",
            "amount": "50.00",
            "status": status,
            "changed_at": EPOCH + timedelta(minutes=1),
            **extra,
        }
    )


async def apply(uow: MemoryGatewayUnitOfWork, *changes: PayoutStatusChanged) -> None:
    handler = BatchHandler(BILLING_PAYOUTS, HANDLERS_BY_TOPIC[BILLING_PAYOUTS], lambda: uow)
    await handler.apply([wrap(c, producer="billing", occurred_at=EPOCH) for c in changes])


async def test_a_request_is_one_command_and_one_account_event_replayed_per_key() -> None:
    uow = unit()
    first = await requested(uow, "k1")
    assert await requested(uow, "k1") == first
    commands = [m for m in uow.published if m.envelope.event_type == "payout.requested"]
    assert [(m.key, m.envelope.payload.payout_id) for m in commands] == [(ALICE, first)]
    (event,) = uow.state.account_events.values()
    assert (event.account_id, event.type) == (ALICE, AccountEventType.PAYOUT_UPDATED)
    assert event.data["status"] == "pending_request"
    stored = uow.state.payouts[first]
    assert (stored.status, stored.amount_micros) == (PayoutStatus.PENDING_REQUEST, 50_000_000)


def test_below_the_minimum_is_a_422_naming_the_amount() -> None:
    low = BODY.model_copy(update={"amount": Decimal("9.99")})
    with pytest.raises(RequestValidationError) as raised:
        service.check_minimum(low, Decimal("10.00"))
    assert raised.value.errors()[0]["loc"] == ("body", "amount")
    service.check_minimum(BODY, Decimal("10.00"))
    service.check_minimum(low, Decimal("5"))


async def test_billings_statuses_apply_in_rank_order_each_an_account_event() -> None:
    uow = unit()
    payout_id = await requested(uow)
    await apply(
        uow,
        change(payout_id, PayoutStatus.PENDING, reference="manual"),
        change(payout_id, PayoutStatus.PAID, reference="BANK-1"),
        change(payout_id, PayoutStatus.PENDING, reference="manual"),  # late: changes nothing
    )
    stored = uow.state.payouts[payout_id]
    assert (stored.status, stored.reference) == (PayoutStatus.PAID, "BANK-1")
    types = [e.type for e in uow.state.account_events.values()]
    assert types == [AccountEventType.PAYOUT_UPDATED] * 4  # the request and each event


async def test_a_rejection_keeps_its_reason() -> None:
    uow = unit()
    payout_id = await requested(uow)
    reason = PayoutRejection.INSUFFICIENT_SELLER_PAYABLE
    await apply(uow, change(payout_id, PayoutStatus.REJECTED, reason=reason))
    async with uow:
        shown = await service.get(uow, ALICE, payout_id)
    assert (shown.status, shown.reason) == (PayoutStatus.REJECTED, reason)


async def test_another_sellers_payout_is_404() -> None:
    uow = unit()
    payout_id = await requested(uow)
    async with uow:
        with pytest.raises(ProblemError) as raised:
            await service.get(uow, BOB, payout_id)
        page = await service.page(uow, BOB, limit=10, cursor=None)
    assert raised.value.status == 404
    assert page.items == []


async def test_the_admin_confirms_once_and_a_decided_payout_is_409() -> None:
    uow = unit()
    payout_id = await requested(uow)
    async with uow:
        accepted = await service.confirm(uow, payout_id, "BANK-1")
        await uow.commit()
    assert accepted.status == "confirm_requested"
    (sent,) = [m for m in uow.published if m.envelope.event_type == "payout.confirm_requested"]
    assert (sent.key, sent.envelope.payload.reference) == (ALICE, "BANK-1")
    await apply(uow, change(payout_id, PayoutStatus.PAID))
    async with uow:
        with pytest.raises(ProblemError) as raised:
            await service.confirm(uow, payout_id, "BANK-2")
        with pytest.raises(ProblemError) as missing:
            await service.reject(uow, "nope", "no")
    assert (raised.value.status, missing.value.status) == (409, 404)
