"""Seller payouts (``service.payouts``) on the memory unit of work: the minimum, the payable
balance, the two transfers, idempotency, the admin's rejection."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from gpux_billing.domain import transfers
from gpux_billing.domain.ledger import PLATFORM, AccountKey, AccountKind, TransferKind
from gpux_billing.domain.rules import Rules
from gpux_billing.domain.transfers import Sale
from gpux_contracts.money import Currency
from gpux_contracts.payouts import (
    PayoutConfirmRequested,
    PayoutRejectRequested,
    PayoutRequested,
)
from gpux_contracts.topics import BILLING_COMMANDS

from .billing_desk import T0, Desk

pytestmark = pytest.mark.unit

SELLER = "s1"
EUR = Currency.EUR


def request(amount: str, payout_id: str = "p1", currency: Currency = EUR) -> PayoutRequested:
    return PayoutRequested(
        payout_id=payout_id,
        seller_id=SELLER,
        currency=currency,
        amount=Decimal(amount),
        destination="IBAN DE89 ...3000",
        requested_at=T0,
    )


def confirm(payout_id: str = "p1", seller_id: str = SELLER) -> PayoutConfirmRequested:
    return PayoutConfirmRequested(
        payout_id=payout_id,
        seller_id=seller_id,
        confirmed_by="admin",
        reference="BANK-42",
        requested_at=T0 + timedelta(hours=1),
    )


def reject(payout_id: str = "p1") -> PayoutRejectRequested:
    return PayoutRejectRequested(
        payout_id=payout_id,
        seller_id=SELLER,
        rejected_by="admin",
        requested_at=T0 + timedelta(hours=1),
    )


async def earn(desk: Desk, amount_micros: int, currency: Currency = EUR) -> None:
    """A buyer's credit and a charge of ``amount_micros`` to the seller (no fee)."""
    await desk.credit("b1", "1000", currency)
    async with desk.uow as uow:
        sale = Sale("b1", SELLER, currency, amount_micros)
        charge = transfers.charge(
            f"charge:{amount_micros}", sale, 0, T0, source=AccountKind.AVAILABLE
        )
        await uow.ledger.post(charge)
        await uow.commit()


async def balance(desk: Desk, kind: AccountKind, owner: str = SELLER) -> int:
    return await desk.uow.ledger.balance(AccountKey(owner, EUR, kind))


async def where(desk: Desk) -> tuple[int, int, int]:
    """Where the seller's EUR are: (its seller payable, its payouts in transit, the
    platform's paid out)."""
    return (
        await balance(desk, AccountKind.SELLER_PAYABLE),
        await balance(desk, AccountKind.PAYOUTS_IN_TRANSIT),
        await balance(desk, AccountKind.PAID_OUT, PLATFORM),
    )


async def test_a_payout_moves_the_seller_payable_to_in_transit_and_is_pending(desk: Desk) -> None:
    await earn(desk, 80_000_000)
    await desk.run(BILLING_COMMANDS, request("50.00"))
    assert await where(desk) == (30_000_000, 50_000_000, 0)
    (status,) = desk.published("payout.status_changed")
    assert (status["status"], status["amount"], status["reference"]) == (
        "pending",
        "50.00",
        "manual",
    )
    posted = [p for p in desk.published("ledger.posted") if p["kind"] == "payout"]
    assert [(line["kind"], line["amount"]) for line in posted[0]["lines"]] == [
        ("seller_payable", "-50.00"),
        ("payouts_in_transit", "50.00"),
    ]
    assert posted[0]["transfer_id"] == "payout:p1"
    assert any(b["account_id"] == SELLER for b in desk.published("balance.changed"))
    audit = await desk.uow.ledger.verify()
    assert audit.ok  # every transfer balances: the entries sum to zero per currency


async def test_the_confirmation_books_it_paid_into_the_platform_paid_out(desk: Desk) -> None:
    await earn(desk, 80_000_000)
    await desk.run(BILLING_COMMANDS, request("50.00"), confirm())
    assert await where(desk) == (30_000_000, 0, 50_000_000)
    assert [s["status"] for s in desk.published("payout.status_changed")] == ["pending", "paid"]
    paid = desk.uow.ledger.get
    transfer = await paid("payout-paid:p1")
    assert transfer is not None
    assert transfer.kind is TransferKind.PAYOUT_PAID
    assert sum(e.amount_micros for e in transfer.entries) == 0
    (line,) = next(
        p["lines"] for p in desk.published("ledger.posted") if p["transfer_id"] == "payout-paid:p1"
    )
    assert (line["owner"], line["kind"], line["amount"]) == (
        SELLER,
        "payouts_in_transit",
        "-50.00",
    )
    stored = await desk.uow.payouts.get("p1")
    assert stored is not None
    assert (stored.status, stored.reference, stored.decided_by) == ("paid", "BANK-42", "admin")
    assert (await desk.uow.ledger.verify()).ok


async def test_below_the_minimum_is_rejected_and_moves_nothing(desk: Desk) -> None:
    await earn(desk, 80_000_000)
    await desk.run(BILLING_COMMANDS, request("9.99"))
    assert await balance(desk, AccountKind.SELLER_PAYABLE) == 80_000_000
    (status,) = desk.published("payout.status_changed")
    assert (status["status"], status["reason"]) == ("rejected", "below_minimum")
    assert not [p for p in desk.published("ledger.posted") if p["kind"] == "payout"]


async def test_the_minimum_is_the_setting(desk: Desk) -> None:
    low = Desk(Rules(payout_minimum_micros=1_000_000))
    await earn(low, 80_000_000)
    await low.run(BILLING_COMMANDS, request("5.00"))
    assert [s["status"] for s in low.published("payout.status_changed")] == ["pending"]


async def test_more_than_the_seller_payable_is_rejected_and_moves_nothing(desk: Desk) -> None:
    await earn(desk, 40_000_000)
    await desk.run(BILLING_COMMANDS, request("40.000001"))
    assert await where(desk) == (40_000_000, 0, 0)
    (status,) = desk.published("payout.status_changed")
    assert (status["status"], status["reason"]) == ("rejected", "insufficient_seller_payable")


async def test_payable_in_another_currency_does_not_count(desk: Desk) -> None:
    await earn(desk, 80_000_000, Currency.USD)
    await desk.run(BILLING_COMMANDS, request("50.00"))
    (status,) = desk.published("payout.status_changed")
    assert status["reason"] == "insufficient_seller_payable"


async def test_the_same_payout_again_moves_nothing_twice(desk: Desk) -> None:
    await earn(desk, 80_000_000)
    first = request("50.00")
    await desk.run(BILLING_COMMANDS, first, first)  # a redelivery and another command id
    await desk.run(BILLING_COMMANDS, request("50.00"))
    await desk.run(BILLING_COMMANDS, confirm(), confirm())
    await desk.run(BILLING_COMMANDS, confirm())
    assert await where(desk) == (30_000_000, 0, 50_000_000)
    assert [s["status"] for s in desk.published("payout.status_changed")] == ["pending", "paid"]
    kinds = [p["kind"] for p in desk.published("ledger.posted")]
    assert (kinds.count("payout"), kinds.count("payout_paid")) == (1, 1)


async def test_two_payouts_take_the_payable_in_turn(desk: Desk) -> None:
    await earn(desk, 80_000_000)
    await desk.run(BILLING_COMMANDS, request("50.00", "p1"), request("50.00", "p2"))
    statuses = [(s["payout_id"], s["status"]) for s in desk.published("payout.status_changed")]
    assert statuses == [("p1", "pending"), ("p2", "rejected")]
    assert await balance(desk, AccountKind.SELLER_PAYABLE) == 30_000_000


async def test_a_confirmation_of_an_unknown_or_another_sellers_payout_does_nothing(
    desk: Desk,
) -> None:
    await earn(desk, 80_000_000)
    await desk.run(BILLING_COMMANDS, confirm("nope"))
    await desk.run(BILLING_COMMANDS, request("50.00"), confirm(seller_id="s2"))
    assert [s["status"] for s in desk.published("payout.status_changed")] == ["pending"]
    assert await balance(desk, AccountKind.PAYOUTS_IN_TRANSIT) == 50_000_000


async def test_a_rejected_pending_payout_goes_back_to_the_seller(desk: Desk) -> None:
    await earn(desk, 80_000_000)
    await desk.run(BILLING_COMMANDS, request("50.00"), reject(), confirm())
    assert await where(desk) == (80_000_000, 0, 0)
    statuses = [(s["status"], s["reason"]) for s in desk.published("payout.status_changed")]
    assert statuses == [("pending", None), ("rejected", "rejected_by_admin")]
    assert (await desk.uow.ledger.verify()).ok
